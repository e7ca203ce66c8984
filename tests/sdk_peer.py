"""The official a2a-sdk echo agent (``client/sdk_echo_agent.py``) as a running peer."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SDK_AGENT = Path(__file__).parent / "client" / "sdk_echo_agent.py"


@contextmanager
def running_sdk_agent() -> Iterator[str]:
    """Run the official a2a-sdk echo agent (uvicorn in a subprocess) and yield its base URL."""
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
