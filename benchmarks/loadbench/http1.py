"""A small sans-IO HTTP/1.1 response parser and request encoder for the load generator.

Why not h11: the load generator's own CPU per request is part of every c=1 latency it reports
and of what it pays per streamed event, and ``benchmarks/client_check.py`` measured h11 on the
same trio sockets at 540-670 us of load-generator CPU per request against this parser's
320-470 (docs/benchmarks.md). This parser handles exactly what the benchmark servers send (a
status line, headers, then a Content-Length or chunked body) and nothing else: no 1xx, no
trailers beyond skipping them, no pipelining.
"""

from __future__ import annotations

import enum

import attrs


class ProtocolError(Exception):
    """The server sent bytes this parser does not understand."""


@attrs.frozen
class Head:
    """The status line and headers of a response (header names lower-cased)."""

    status: int
    headers: dict[str, str]

    @property
    def keep_alive(self) -> bool:
        """Whether the server left the connection open for another request."""
        return self.headers.get("connection", "").lower() != "close"


class _State(enum.Enum):
    HEAD = enum.auto()
    LENGTH = enum.auto()
    CHUNK_SIZE = enum.auto()
    CHUNK_DATA = enum.auto()
    CHUNK_END = enum.auto()
    TRAILER = enum.auto()
    UNTIL_CLOSE = enum.auto()
    DONE = enum.auto()


def encode_post(path: str, body: bytes, *, port: int, headers: dict[str, str]) -> bytes:
    """Return the bytes of a ``POST`` request with a JSON body."""
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
    ]
    lines.extend(f"{name}: {value}" for name, value in headers.items())
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + body


class ResponseParser:
    """Parse one response at a time; call :meth:`reset` before the next one on the connection.

    ``feed`` returns the body bytes it could decode; ``head`` is set once the headers are in and
    ``done`` once the body has ended.
    """

    def __init__(self) -> None:
        self._buf = bytearray()
        self._state = _State.HEAD
        self._remaining = 0
        self.head: Head | None = None

    def reset(self) -> None:
        """Get ready for the next response (left-over bytes would be a pipelining error)."""
        if self._buf:
            raise ProtocolError("bytes after the end of a response")
        self._state = _State.HEAD
        self.head = None

    @property
    def done(self) -> bool:
        """Whether the whole response has been read."""
        return self._state is _State.DONE

    def feed_eof(self) -> None:
        """Tell the parser the peer closed; raise if that cut a response short."""
        if self._state is _State.UNTIL_CLOSE:
            self._state = _State.DONE
        elif self._state is not _State.DONE:
            raise ProtocolError(f"connection closed in state {self._state.name}")

    def feed(self, data: bytes) -> bytes:
        """Add bytes from the socket; return the body bytes decoded so far."""
        self._buf += data
        out = bytearray()
        while True:
            state = self._state
            if state is _State.HEAD:
                end = self._buf.find(b"\r\n\r\n")
                if end < 0:
                    return bytes(out)
                self._parse_head(bytes(self._buf[:end]))
                del self._buf[: end + 4]
            elif state is _State.LENGTH:
                take = min(self._remaining, len(self._buf))
                out += self._buf[:take]
                del self._buf[:take]
                self._remaining -= take
                if self._remaining:
                    return bytes(out)
                self._state = _State.DONE
            elif state is _State.CHUNK_SIZE:
                end = self._buf.find(b"\r\n")
                if end < 0:
                    return bytes(out)
                size = int(bytes(self._buf[:end]).split(b";", 1)[0], 16)
                del self._buf[: end + 2]
                self._remaining = size
                self._state = _State.CHUNK_DATA if size else _State.TRAILER
            elif state is _State.CHUNK_DATA:
                take = min(self._remaining, len(self._buf))
                out += self._buf[:take]
                del self._buf[:take]
                self._remaining -= take
                if self._remaining:
                    return bytes(out)
                self._state = _State.CHUNK_END
            elif state is _State.CHUNK_END:
                if len(self._buf) < 2:
                    return bytes(out)
                if self._buf[:2] != b"\r\n":
                    raise ProtocolError("chunk not followed by CRLF")
                del self._buf[:2]
                self._state = _State.CHUNK_SIZE
            elif state is _State.TRAILER:
                end = self._buf.find(b"\r\n")
                if end < 0:
                    return bytes(out)
                del self._buf[: end + 2]
                if end == 0:
                    self._state = _State.DONE
            elif state is _State.UNTIL_CLOSE:
                out += self._buf
                self._buf.clear()
                return bytes(out)
            else:
                return bytes(out)

    def _parse_head(self, raw: bytes) -> None:
        lines = raw.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
            raise ProtocolError(f"bad status line {lines[0]!r}")
        status = int(parts[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if 100 <= status < 200:
            raise ProtocolError("1xx responses are not supported")
        self.head = Head(status=status, headers=headers)
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self._state = _State.CHUNK_SIZE
        elif "content-length" in headers:
            self._remaining = int(headers["content-length"])
            self._state = _State.LENGTH if self._remaining else _State.DONE
        elif status in (204, 304):
            self._state = _State.DONE
        else:
            self._state = _State.UNTIL_CLOSE
