"""Test peers in other processes: the official a2a-sdk echo agent (``client/sdk_echo_agent.py``)
and any other agent that prints ``PORT <n>`` once it listens on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

SDK_AGENT = Path(__file__).parent / "client" / "sdk_echo_agent.py"


@contextmanager
def running_peer(command: Sequence[str], name: str) -> Iterator[str]:
    """Run ``command`` (an agent that prints ``PORT <n>`` first) and yield its base URL."""
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        try:
            line = proc.stdout.readline()
            if not line.startswith("PORT "):
                raise RuntimeError(f"{name} did not start: {line!r}")
            yield f"http://127.0.0.1:{line.split()[1]}"
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@contextmanager
def running_sdk_agent() -> Iterator[str]:
    """Run the official a2a-sdk echo agent (uvicorn in a subprocess) and yield its base URL."""
    with running_peer([sys.executable, str(SDK_AGENT)], "the SDK echo agent") as url:
        yield url
