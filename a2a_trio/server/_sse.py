"""Server-sent events framing (sans-IO): bytes for one event or one keepalive comment."""

from __future__ import annotations

KEEPALIVE = b": keepalive\n\n"

STREAM_HEADERS = {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache",
    "Connection": "keep-alive",
    "X-Accel-Buffering": "no",
}
"""Headers every event stream carries (no proxy buffering, no caching)."""

UNICODE_LINE_ENDS = (
    (b"\xc2\x85", b"\\u0085"),
    (b"\xe2\x80\xa8", b"\\u2028"),
    (b"\xe2\x80\xa9", b"\\u2029"),
)
"""U+0085, U+2028 and U+2029 in UTF-8, and as JSON escapes.  SSE ends lines only at CR and LF,
but a client reading with Python's ``str.splitlines`` rules (httpx's ``aiter_lines``, so the
official a2a-sdk) ends them here too; JSON may hold them raw only inside a string, where the
escape is the same string."""


def encode_event(data: bytes, *, event_id: int | str | None = None, event: str = "") -> bytes:
    """One SSE event.  ``data`` is one JSON document (no raw newlines), so one ``data:`` line;
    the characters in ``UNICODE_LINE_ENDS`` are written escaped."""
    if not data.isascii():  # the usual case skips the scans
        for raw, escaped in UNICODE_LINE_ENDS:
            data = data.replace(raw, escaped)
    head = b""
    if event_id is not None:
        head += b"id: " + str(event_id).encode() + b"\n"
    if event:
        head += b"event: " + event.encode() + b"\n"
    if b"\n" in data or b"\r" in data:
        lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        return head + b"".join(b"data: " + line + b"\n" for line in lines) + b"\n"
    return head + b"data: " + data + b"\n\n"


def comment(text: str) -> bytes:
    """An SSE comment frame (ignored by clients; keeps idle connections alive)."""
    return b"".join(b": " + line.encode() + b"\n" for line in text.splitlines() or [""]) + b"\n"
