"""A sans-IO parser for Server-Sent Events (the WHATWG ``text/event-stream`` format).

Feed it bytes as they arrive, in chunks of any size; it hands back complete events.  It follows
the spec's parsing rules: a UTF-8 BOM at the very start is skipped; lines end with CRLF, LF or a
lone CR (a CR at the end of one chunk and an LF at the start of the next make one line end);
lines starting with ``:`` are comments; ``data`` lines join with ``\\n``; ``id`` sets the last
event id once its event is complete (its blank line is in, even when it has no data), and it
persists across events (an id holding NUL is ignored); ``retry`` takes only ASCII digits; an
event with no data is not dispatched; an unfinished event at the end of the stream is dropped,
its id included, so a reader that resumes from the last event id gets that event again.  It
does no I/O, so the client and server share it and tests run it synchronously.
"""

from __future__ import annotations

import attrs

BOM = b"\xef\xbb\xbf"
DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024


class SSEError(ValueError):
    """The stream broke a limit of the parser (an event or line larger than allowed).

    ``events`` are those the same chunk completed before the breach, in order: a reader hands
    them on before it gives up on the stream.
    """

    def __init__(self, message: str, events: list[SSEEvent] | None = None) -> None:
        super().__init__(message)
        self.events = events or []


@attrs.frozen
class SSEEvent:
    """One dispatched event: its type, its data and the last event id seen so far."""

    data: str
    event: str = "message"
    id: str = ""
    retry: int | None = None


class SSEDecoder:
    """Incremental event-stream parser: ``feed(bytes) -> list[SSEEvent]``.

    Args:
        max_event_bytes: refuse (with :class:`SSEError`) an event or a line larger than this,
            so a peer cannot make the reader buffer without bound.
    """

    def __init__(self, *, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self._max = max_event_bytes
        self._buffer = bytearray()
        self._started = False
        self._skip_lf = False
        self._data: list[str] = []
        self._data_size = 0
        self._event = ""
        self._id = ""  # the id an event in progress set: the last event id once it is complete
        self.last_event_id = ""
        """The id of the last complete event that set one (what a reconnect sends as
        Last-Event-ID)."""
        self.retry: int | None = None
        """The reconnection time in milliseconds the server last asked for, if any."""
        self.comments = 0
        """How many comment lines (keepalives) were seen."""

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Parse ``chunk``; return the events it completed (possibly none)."""
        self._buffer += chunk
        if not self._started:
            if len(self._buffer) < len(BOM) and BOM.startswith(bytes(self._buffer)):
                return []
            self._started = True
            if self._buffer.startswith(BOM):
                del self._buffer[: len(BOM)]
        events: list[SSEEvent] = []
        buf = self._buffer
        start, size = 0, len(buf)
        cr = lf = -1  # next CR / LF at or after ``start``, found lazily so parsing stays linear
        while start < size:
            if self._skip_lf:
                self._skip_lf = False
                if buf[start] == 0x0A:
                    start += 1
                    continue
            if cr < start:
                cr = buf.find(b"\r", start)
                cr = size if cr < 0 else cr
            if lf < start:
                lf = buf.find(b"\n", start)
                lf = size if lf < 0 else lf
            end = min(cr, lf)
            if end == size:
                break
            self._skip_lf = buf[end] == 0x0D
            try:
                event = self._line(bytes(buf[start:end]))
            except SSEError as exc:
                exc.events = events
                raise
            if event is not None:
                events.append(event)
            start = end + 1
        del buf[:start]
        if len(buf) > self._max:
            raise SSEError(f"an event-stream line is longer than {self._max} bytes", events)
        return events

    def _line(self, raw: bytes) -> SSEEvent | None:
        if not raw:
            return self._dispatch()
        line = raw.decode("utf-8", errors="replace")
        if line.startswith(":"):
            self.comments += 1
            return None
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        match field:
            case "data":
                self._data_size += len(raw)
                if self._data_size > self._max:
                    raise SSEError(f"an event is larger than {self._max} bytes")
                self._data.append(value)
            case "event":
                self._event = value
            case "id" if "\0" not in value:
                self._id = value
            case "retry" if value.isascii() and value.isdigit():
                self.retry = int(value)
        return None

    def _dispatch(self) -> SSEEvent | None:
        data, event = self._data, self._event
        self._data, self._data_size, self._event = [], 0, ""
        self.last_event_id = self._id
        if not data:
            return None
        return SSEEvent(
            data="\n".join(data),
            event=event or "message",
            id=self.last_event_id,
            retry=self.retry,
        )
