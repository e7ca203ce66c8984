"""Shared fixtures."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SDK_AGENT = Path(__file__).parent / "client" / "sdk_echo_agent.py"


@pytest.fixture(scope="session")
def sdk_agent() -> Iterator[str]:
    """Base URL of the official a2a-sdk echo agent (uvicorn in a subprocess, one per session)."""
    with subprocess.Popen(
        [sys.executable, str(SDK_AGENT)], stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        try:
            line = proc.stdout.readline()
            if not line.startswith("PORT "):
                raise RuntimeError(f"the SDK echo agent did not start: {line!r}")
            yield f"http://127.0.0.1:{line.split()[1]}"
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@pytest.fixture
def unused_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound once, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
