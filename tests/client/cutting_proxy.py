"""A TCP proxy that cuts the first event stream through it after a number of SSE events.

It sits between the client and a real server on loopback and forwards bytes unchanged; on the
first connection whose answer is an event stream it closes both sides once at least
``cut_after`` event ids (or, with ``marker=b"data:"``, events of a server that sends no ids)
have gone through, like a network drop mid-stream.  Later connections pass untouched.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

from .stub_agent import serving


class CuttingProxy:
    def __init__(self, upstream_port: int, cut_after: int, marker: bytes = b"id: ") -> None:
        self.upstream_port = upstream_port
        self.cut_after = cut_after
        self.marker = marker
        self.cuts = 0
        self.streams = 0
        self.stream_opened = trio.Event()
        """Set when a stream opens after the cut (the client has resumed)."""
        self.url = ""

    async def _connection(self, downstream: trio.SocketStream) -> None:
        upstream = await trio.open_tcp_stream("127.0.0.1", self.upstream_port)
        async with downstream, upstream, trio.open_nursery() as nursery:
            nursery.start_soon(self._pump, downstream, upstream, None)
            nursery.start_soon(self._pump, upstream, downstream, nursery.cancel_scope)

    async def _pump(
        self, source: trio.SocketStream, sink: trio.SocketStream, cut: trio.CancelScope | None
    ) -> None:
        seen = b""
        is_stream = False
        try:
            while data := await source.receive_some(65536):
                if cut is not None and not is_stream and b"text/event-stream" in seen + data:
                    is_stream = True
                    self.streams += 1
                    if self.cuts:
                        self.stream_opened.set()
                seen += data
                await sink.send_all(data)
                if is_stream and self.cuts == 0 and seen.count(self.marker) >= self.cut_after:
                    self.cuts += 1
                    assert cut is not None
                    cut.cancel()  # drop both directions without finishing the response
                    return
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        if cut is not None:
            cut.cancel()


@asynccontextmanager
async def open_cutting_proxy(
    upstream_url: str, *, cut_after: int, marker: bytes = b"id: "
) -> AsyncIterator[CuttingProxy]:
    port = int(upstream_url.rsplit(":", 1)[1].split("/")[0])
    proxy = CuttingProxy(port, cut_after, marker)
    async with serving(proxy._connection) as proxy.url:
        yield proxy
