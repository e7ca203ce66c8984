"""HTTP/1.1 keep-alive connections on trio sockets, for plain requests and SSE streams.

One :class:`Connection` carries one request at a time. A connection the server closed between
requests (hypercorn closes after ``keep_alive_max_requests``) is reopened transparently; any
other failure propagates.

Every read also says when its bytes reached the socket (:attr:`Connection.arrived`): on Linux
the kernel's receive timestamp (``SO_TIMESTAMPNS``), elsewhere the time of the read.  A fan-out
delivers a thousand frames in one burst to one load generator, which reads them one after
another; the kernel stamps each as it arrives, so a delivery time does not include the load
generator's own queue (docs/benchmarks.md, finding 16).
"""

from __future__ import annotations

import socket
import struct
import sys
import time
from typing import Final

import trio

from loadbench.http1 import Head, ProtocolError, ResponseParser, encode_post
from loadbench.sse import Event, SseParser

_READ = 65536
A2A_HEADERS = {"A2A-Version": "1.0"}
STREAM_HEADERS = {"A2A-Version": "1.0", "Accept": "text/event-stream"}

KERNEL_STAMPS: Final = sys.platform == "linux"
"""Whether reads carry the kernel's receive timestamp (Linux's ``SO_TIMESTAMPNS``)."""
_SO_TIMESTAMPNS: Final = 35  # <asm-generic/socket.h>; Python's socket module does not name it
_TIMESPEC: Final = struct.Struct("@ll")  # struct timespec: seconds, nanoseconds
_ANCILLARY: Final = socket.CMSG_SPACE(_TIMESPEC.size)


def _arrival(ancillary: list[tuple[int, int, bytes]]) -> float:
    """The kernel's receive timestamp among a read's ancillary data, else the time now."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS:
            seconds, nanoseconds = _TIMESPEC.unpack(data[: _TIMESPEC.size])
            return float(seconds + nanoseconds / 1e9)
    return time.time()


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
        self.arrived = 0.0
        """When the bytes of the last read reached the socket (``time.time()``'s clock)."""

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
            sock = trio.socket.socket()
            if KERNEL_STAMPS:  # set before connecting: it applies to packets received after
                sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
            try:
                await sock.connect(("127.0.0.1", self.port))
            except BaseException:
                sock.close()
                raise
            self._sock = trio.SocketStream(sock)  # (which sets TCP_NODELAY)
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
                    data = await self._read()
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

    async def _read(self) -> bytes:
        """The next bytes from the socket (``b""`` at its end); sets :attr:`arrived`."""
        assert self._sock is not None
        try:
            data, ancillary, _flags, _address = await self._sock.socket.recvmsg(_READ, _ANCILLARY)
        except OSError as exc:  # as trio's receive_some says it
            raise trio.BrokenResourceError(f"read failed: {exc}") from exc
        self.arrived = _arrival(ancillary)
        return data

    async def _end_response(self) -> None:
        head = self._parser.head
        if head is not None and head.keep_alive:
            self._parser.reset()
        else:
            await self.aclose()

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[Head, bytes]:
        """POST ``body``; return the head and the whole response body."""
        head = await self._send(path, body, headers)
        chunks = [self._pending]
        while not self._parser.done:
            data = await self._read()
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
            data = await self._read()
            if data:
                return self._sse.feed(self._parser.feed(data))
            self._parser.feed_eof()
        await self._end_response()
        return None
