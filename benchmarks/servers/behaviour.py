"""The benchmark agents' behaviour, shared by every server so both sides do the same work.

A message picks its behaviour with ``metadata.bench``:

- ``"echo"`` (default): complete at once with one artifact holding the message text.
- ``"hold"``: go WORKING, then wait (polling every ``HOLD_POLL`` s) until the file named by
  ``metadata.file`` exists or ``HOLD_MAX`` s have passed, then complete with an artifact.
- ``"fanout"``: go WORKING, wait for ``metadata.file`` like ``hold`` (polling every
  ``FANOUT_POLL`` s), then emit ``metadata.events`` artifact updates ``metadata.interval`` s
  apart, each carrying ``emit@<unix time>`` as its text, then complete.

Servers write their port to ``--port-file`` once they listen, so the harness never parses logs.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path
from typing import Any

import attrs

HOLD_POLL = 0.25
FANOUT_POLL = 0.005
HOLD_MAX = 900.0


@attrs.frozen
class Behaviour:
    """What one message asks the agent to do."""

    kind: str = "echo"
    file: str = ""
    events: int = 0
    interval: float = 0.0

    @property
    def poll(self) -> float:
        """Seconds between checks of the release file."""
        return FANOUT_POLL if self.kind == "fanout" else HOLD_POLL

    @property
    def max_polls(self) -> int:
        """How many checks of the release file before giving up (``HOLD_MAX`` s in all)."""
        return int(HOLD_MAX / self.poll)


def behaviour_of(metadata: dict[str, Any] | None) -> Behaviour:
    """Read a message's metadata into a :class:`Behaviour` (unknown keys ignored)."""
    meta = metadata or {}
    return Behaviour(
        kind=str(meta.get("bench", "echo")),
        file=str(meta.get("file", "")),
        events=int(meta.get("events", 0)),
        interval=float(meta.get("interval", 0.0)),
    )


def released(path: str) -> bool:
    """Whether the release file exists (an empty path never releases)."""
    return bool(path) and os.path.exists(path)


def emit_text() -> str:
    """The text of one fan-out event: its emission time, for delivery latency."""
    return f"emit@{time.time():.6f}"


def server_args(description: str) -> argparse.Namespace:
    """Parse the options every benchmark server takes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--port-file", type=Path, required=True)
    parser.add_argument("--keepalive", type=float, default=15.0, help="SSE keepalive seconds")
    parser.add_argument("--release-file", default="", help="floor only: ends idle streams")
    parser.add_argument(
        "--retention-seconds", type=float, default=0.0, help="purge finished tasks (0: keep)"
    )
    return parser.parse_args()


def raise_fd_limit() -> None:
    """Lift the soft open-files limit to the hard limit (idle-stream scenarios need it)."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def write_port(path: Path, port: int) -> None:
    """Publish the bound port atomically for the harness."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(str(port))
    tmp.replace(path)
