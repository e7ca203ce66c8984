"""hypercorn's trio worker, put together here from hypercorn's own parts (its lifespan, its
connections and protocols) so that its connections are :class:`Connection` s: their idle
spells timed by one :class:`KeepAlive` sweeper, their sends written straight to the socket
(:mod:`._connection`).  hypercorn's ``worker_serve`` builds its connections itself, with an
idle timer that was a sixth of a request's Python calls and a send path that was half of a
fanned-out frame's.  Serving is otherwise hypercorn's: plain HTTP/1.1 and h2c on the sockets
given, the app's lifespan around the connections, and the same graceful shutdown."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import trio
from hypercorn.config import Config, Sockets
from hypercorn.trio.lifespan import Lifespan
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState, LifespanState
from hypercorn.utils import repr_socket_addr, wrap_app

from ._connection import Connection
from ._keepalive import KeepAlive


async def serve_on(
    app: Any,
    http: Config,
    sockets: Sockets,
    *,
    shutdown_trigger: Callable[[], Awaitable[None]] | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the ASGI ``app`` on the plain-HTTP ``sockets`` until cancelled (or until
    ``shutdown_trigger`` returns); reports the first bound base URL once it accepts.

    The app's lifespan starts before the first connection is accepted and ends after the last
    one closed.  On shutdown the listeners close, idle connections close at once, and busy
    ones get ``http.graceful_timeout`` seconds to finish their request before they are
    cancelled.  Cancelling this cancels every connection at once.
    """
    asgi = wrap_app(app, http.wsgi_max_body_size, "asgi")
    lifespan_state: LifespanState = {}
    lifespan = Lifespan(asgi, http, lifespan_state)
    context = WorkerContext(None)
    listeners = [
        trio.SocketListener(trio.socket.from_stdlib_socket(s)) for s in sockets.insecure_sockets
    ]
    urls = [
        f"http://{repr_socket_addr(s.family, s.getsockname())}" for s in sockets.insecure_sockets
    ]
    async with trio.open_nursery() as lifespan_nursery:
        await lifespan_nursery.start(lifespan.handle_lifespan)
        await lifespan.wait_for_startup()
        state = ConnectionState(lifespan_state.copy())
        keepalive = KeepAlive(http.keep_alive_timeout, context.terminated)
        connection = partial(Connection, keepalive, asgi, http, context, state)
        async with trio.open_nursery() as connections:
            connections.start_soon(keepalive.run)
            for url in urls:
                await http.log.info(f"Running on {url} (CTRL + C to quit)")
            try:
                async with trio.open_nursery() as accepting:
                    accepting.start_soon(
                        partial(
                            trio.serve_listeners, connection, listeners, handler_nursery=connections
                        )
                    )
                    task_status.started(urls[0])
                    await (shutdown_trigger or trio.sleep_forever)()
                    accepting.cancel_scope.cancel()
            finally:
                await context.terminated.set()
                connections.cancel_scope.deadline = trio.current_time() + http.graceful_timeout
        await lifespan.wait_for_shutdown()
        lifespan_nursery.cancel_scope.cancel()
