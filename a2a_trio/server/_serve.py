"""Serving an agent from inside a trio program."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import trio
from hypercorn.config import Config as HypercornConfig

from .._trust import trusted_context
from ..runtime import Agent
from ..store import TaskStore
from ._app import StoreFactory, create_app, store_factory_for
from ._config import ServerConfig
from ._listen import listening
from ._worker import serve_on


def hypercorn_config(host: str, port: int) -> HypercornConfig:
    """Hypercorn settings fit for long-lived event streams."""
    config = HypercornConfig()
    config.bind = [f"{host}:{port}"]
    config.accesslog = None
    config.read_timeout = None  # an idle stream is not a dead connection
    config.keep_alive_max_requests = 1_000_000
    config.backlog = 4096  # bursts of thousands of stream connects (benchmarks, fan-out)
    # hypercorn starts this idle timer before the first request is read: under a burst of
    # connects the default 5 s reset waiting connections (docs/benchmarks.md, finding 5).
    config.keep_alive_timeout = 30
    level = logging.getLogger("a2a_trio").level
    if level:  # set by the caller (a2a-trio serve --log-level): hypercorn's own lines follow it
        config.loglevel = logging.getLevelName(level)
    return config


async def serve(
    agent: Agent,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    store: str | StoreFactory | None = None,
    config: ServerConfig | None = None,
    shutdown_trigger: Callable[[], Awaitable[None]] | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``agent`` over HTTP until cancelled (or until ``shutdown_trigger`` returns).

    Reports the bound base URL (``http://host:port``) through ``task_status`` once it accepts
    connections: ``url = await nursery.start(partial(serve, agent, port=0))`` (``nursery.start``
    passes no keyword arguments, hence ``functools.partial``; ``port=0`` picks a free port).

    ``store`` is a store URL (``"sqlite:///tasks.db"``, ``"postgresql://..."``: the forms
    ``A2A_TRIO_STORE`` takes) or a factory (see :func:`create_app`).  Without one, tasks are
    kept in memory and lost when the server stops (``a2a_trio.app`` defaults to SQLite).

    The address is bound first, then (with push notifications on) the CAs to verify webhooks
    with are loaded, then the store opened, before the app starts or anything is reported: a
    failure of any raises out of ``nursery.start`` as itself (not inside an exception group),
    and leaves the port free and the store closed.

    Raises:
        ValueError, TypeError: ``store`` names no store (before anything else).
        OSError: the address cannot be listened on (a ``ListenError``, whose message says
            where and what to change, e.g. another program listening on the port), before
            the store is opened.
        Exception: whatever the store raised when it could not be opened (e.g.
            ``sqlite3.OperationalError`` for a file in a missing directory).
        TrustStoreError: with push notifications on, ``SSL_CERT_FILE`` names no file of CA
            certificates to verify HTTPS webhooks with (before the store is opened).

    Cancellation stops at once: running tasks are recorded FAILED with a "server shut down"
    message (tasks waiting for input stay resumable).  ``shutdown_trigger`` instead drains
    gracefully: new tasks are refused while running jobs get ``config.shutdown_grace`` seconds,
    their streams and blocking sends still connected so they get the final event; what is
    still running then is cancelled (recorded FAILED, told to them too), and only then does
    hypercorn close the connections.
    """
    config = config or ServerConfig()
    open_store = store_factory_for(store, alone=config.runtime.recovery_lease is None)
    http = hypercorn_config(host, port)
    with listening(host, port, backlog=http.backlog) as sockets:
        if config.push is not None:  # the CAs HTTPS webhooks are verified with, loaded first
            await trusted_context()
        async with open_store() as opened:  # before the app: its failure is the store's own
            app: Any = create_app(agent, store=partial(_already_open, opened), config=config)
            user_trigger = shutdown_trigger or trio.sleep_forever

            async def trigger() -> None:
                await user_trigger()
                # Before hypercorn's own graceful close (3 s, then connections are cancelled),
                # so the jobs end while their clients still listen.
                await app.server.drain()

            await serve_on(app, http, sockets, shutdown_trigger=trigger, task_status=task_status)


@asynccontextmanager
async def _already_open(store: TaskStore) -> AsyncIterator[TaskStore]:
    """``store``, opened by :func:`serve`, as the app's store factory gives it (and closed by
    ``serve`` when the app is done with it)."""
    yield store
