"""node, checked once, and the JS SDK's agent (``agent.mjs``) as a running peer."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from .js_peer import HERE, node


@pytest.fixture(scope="session")
def node_path() -> str:
    """The ``node`` executable (the test skips, or fails in CI, without it or the packages)."""
    return node()


@pytest.fixture(scope="session")
def js_agent(node_path: str) -> Iterator[str]:
    """Base URL of ``agent.mjs``, the JS SDK's agent, one per session."""
    command = [node_path, str(HERE / "agent.mjs")]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        try:
            line = proc.stdout.readline()
            if not line.startswith("PORT "):
                raise RuntimeError(f"the JS SDK agent did not start: {line!r}")
            yield f"http://127.0.0.1:{line.split()[1]}"
        finally:
            proc.terminate()
            proc.wait(timeout=10)
