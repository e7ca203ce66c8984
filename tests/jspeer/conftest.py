"""node, checked once, and the JS SDK's agent (``agent.mjs``) as a running peer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sdk_peer import running_peer

from .js_peer import HERE, node


@pytest.fixture(scope="session")
def node_path() -> str:
    """The ``node`` executable (the test skips, or fails in CI, without it or the packages)."""
    return node()


@pytest.fixture(scope="session")
def js_agent(node_path: str) -> Iterator[str]:
    """Base URL of ``agent.mjs``, the JS SDK's agent, one per session."""
    with running_peer([node_path, str(HERE / "agent.mjs")], "the JS SDK agent") as url:
        yield url
