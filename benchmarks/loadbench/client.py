"""HTTP/1.1 keep-alive connections on trio sockets, for plain requests and SSE streams.

One :class:`Connection` carries one request at a time. A connection the server closed between
requests (hypercorn closes after ``keep_alive_max_requests``) is reopened transparently; any
other failure propagates.
"""

from __future__ import annotations

import trio

from loadbench.http1 import Head, ProtocolError, ResponseParser, encode_post
from loadbench.sse import Event, SseParser

_READ = 65536
A2A_HEADERS = {"A2A-Version": "1.0"}
STREAM_HEADERS = {"A2A-Version": "1.0", "Accept": "text/event-stream"}


class Connection:
    """A keep-alive HTTP/1.1 connection to ``127.0.0.1:port``.

    Use as ``async with Connection(port) as conn``; closing is immediate (also on cancellation).
    """

    def __init__(self, port: int) -> None:
        self.port = port
        self._sock: trio.SocketStream | None = None
        self._parser = ResponseParser()
        self._sse = SseParser()
        self._fresh = False
        self._pending = b""
        self._stream_buffer: list[Event] = []

    async def __aenter__(self) -> Connection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the socket if open."""
        if self._sock is not None:
            sock, self._sock = self._sock, None
            await sock.aclose()

    async def connect(self) -> None:
        """Open the TCP connection now (otherwise the first request opens it)."""
        if self._sock is None:
            self._sock = await trio.open_tcp_stream("127.0.0.1", self.port)
            self._fresh = True
            self._parser = ResponseParser()

    async def _send(self, path: str, body: bytes, headers: dict[str, str]) -> Head:
        """Send a request and read up to the end of its head; retry once on a stale connection."""
        request = encode_post(path, body, port=self.port, headers=headers)
        for _attempt in range(2):
            await self.connect()
            assert self._sock is not None
            reused = not self._fresh
            self._fresh = False
            self._pending = b""
            try:
                await self._sock.send_all(request)
                while self._parser.head is None:
                    data = await self._sock.receive_some(_READ)
                    if not data:
                        raise ProtocolError("closed before the response head")
                    self._pending = self._parser.feed(data)
            except (ProtocolError, trio.BrokenResourceError) as exc:
                await self.aclose()
                if reused and self._parser.head is None:
                    continue
                raise ProtocolError(f"request failed: {exc}") from exc
            return self._parser.head
        raise ProtocolError("server closed two connections in a row")

    async def _end_response(self) -> None:
        head = self._parser.head
        if head is not None and head.keep_alive:
            self._parser.reset()
        else:
            await self.aclose()

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[Head, bytes]:
        """POST ``body``; return the head and the whole response body."""
        head = await self._send(path, body, headers)
        assert self._sock is not None
        chunks = [self._pending]
        while not self._parser.done:
            data = await self._sock.receive_some(_READ)
            if not data:
                self._parser.feed_eof()
                break
            chunks.append(self._parser.feed(data))
        await self._end_response()
        return head, b"".join(chunks)

    async def start_stream(self, path: str, body: bytes, headers: dict[str, str]) -> Head:
        """POST ``body`` and return once the response head is in; then call :meth:`events`."""
        head = await self._send(path, body, headers)
        self._sse = SseParser()
        self._stream_buffer = self._sse.feed(self._pending) if self._pending else []
        return head

    @property
    def comments(self) -> int:
        """Comment frames (keepalives) seen on the current stream."""
        return self._sse.comments

    async def events(self) -> list[Event] | None:
        """Wait for more of the current stream; ``None`` once it has ended.

        Returns the events completed by the bytes that arrived, possibly none (a keepalive
        comment, or part of a frame): :attr:`comments` is up to date after every call.
        """
        if self._stream_buffer:
            ready, self._stream_buffer = self._stream_buffer, []
            return ready
        if not self._parser.done:
            assert self._sock is not None
            data = await self._sock.receive_some(_READ)
            if data:
                return self._sse.feed(self._parser.feed(data))
            self._parser.feed_eof()
        await self._end_response()
        return None
