"""A sans-IO Server-Sent Events parser: body bytes in, events and comment counts out.

Accepts ``\\n``, ``\\r\\n`` and ``\\r\\n``-separated frames (sse-starlette uses CRLF). Only the
fields the benchmarks look at are kept: ``id``, ``event`` and ``data``.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Event:
    """One dispatched SSE event; ``data`` is the joined ``data:`` lines."""

    data: bytes
    id: bytes | None = None
    event: bytes | None = None


class SseParser:
    """Feed body bytes; get back complete events. Comment lines (keepalives) are counted."""

    def __init__(self) -> None:
        self._buf = b""
        self._data: list[bytes] = []
        self._id: bytes | None = None
        self._event: bytes | None = None
        self.comments = 0

    def feed(self, chunk: bytes) -> list[Event]:
        """Add body bytes; return the events completed by them, in order."""
        buf = self._buf + chunk
        events: list[Event] = []
        start = 0
        while True:
            end = buf.find(b"\n", start)
            if end < 0:
                break
            line = buf[start:end]
            start = end + 1
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                if self._data:
                    events.append(Event(b"\n".join(self._data), self._id, self._event))
                self._data = []
                self._event = None
                continue
            if line[0] == 0x3A:  # ":" starts a comment
                self.comments += 1
                continue
            name, _, value = line.partition(b":")
            if value.startswith(b" "):
                value = value[1:]
            if name == b"data":
                self._data.append(value)
            elif name == b"id":
                self._id = value
            elif name == b"event":
                self._event = value
        self._buf = buf[start:]
        return events
