"""A bare ASGI app served by ``serve_on`` (a2a_trio's worker) on 127.0.0.1, and raw
connections to it: for the tests of the served connections themselves."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import trio
from hypercorn.config import Config

from a2a_trio.server._listen import listening
from a2a_trio.server._worker import serve_on


@asynccontextmanager
async def served(
    app: Any, *, keep_alive: float = 30, shutdown: trio.Event | None = None
) -> AsyncIterator[tuple[int, trio.Nursery]]:
    """``app`` served on a free port of 127.0.0.1: its port, and the nursery serving it."""
    http = Config()
    http.accesslog = None
    http.keep_alive_timeout = keep_alive
    with listening("127.0.0.1", 0, backlog=16) as sockets:
        port = sockets.insecure_sockets[0].getsockname()[1]
        trigger: Callable[[], Awaitable[None]] | None = None if shutdown is None else shutdown.wait
        async with trio.open_nursery() as nursery:
            await nursery.start(partial(serve_on, app, http, sockets, shutdown_trigger=trigger))
            yield port, nursery
            nursery.cancel_scope.cancel()


async def connect(port: int, nursery: trio.Nursery) -> trio.SocketStream:
    """A connection to the server on ``port``, closed with the server's ``nursery``."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    nursery.start_soon(_close_when_cancelled, stream)
    return stream


async def _close_when_cancelled(stream: trio.SocketStream) -> None:
    try:
        await trio.sleep_forever()
    finally:
        stream.socket.close()


async def lifespan(receive: Any, send: Any) -> None:
    """The lifespan half of an ASGI app: start, then wait for the shutdown."""
    while (await receive())["type"] != "lifespan.shutdown":
        await send({"type": "lifespan.startup.complete"})
    await send({"type": "lifespan.shutdown.complete"})
