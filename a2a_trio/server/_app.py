"""The application: the JSON-RPC endpoint (raw ASGI) in front of the quart-trio app.

Lifetime: ``before_serving`` starts :meth:`A2AServer.run` in quart-trio's app nursery; it opens
the task store and runs the task runtime (whose nursery owns every job).  ``after_serving`` drains
running jobs for ``shutdown_grace`` seconds, then cancels the runtime.  The JSON-RPC endpoint is
``_jsonrpc_endpoint.py``; the agent cards, REST and legacy surfaces are Quart routes.  Every
event stream waits only on its subscription (and, for keepalives, a timer of its own), so a
client disconnect cancels just that stream; its job keeps running.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from functools import partial
from typing import TYPE_CHECKING, Any

import trio
from quart import Response, request
from quart_trio import QuartTrio

from .._one_server import served_store
from ..errors import (
    InternalError,
)
from ..runtime import Agent, TaskRuntime
from ..store import TaskStore, check_store_url, open_store
from ..wire import dumps
from . import _jsonrpc as rpc
from ._card import CardCache
from ._config import ServerConfig
from ._handler import UNEXPECTED_FAILURE, RequestHandler
from ._jsonrpc_endpoint import JsonRpcEndpoint
from ._stopping import draining

if TYPE_CHECKING:  # imported only with push on: it brings httpx along
    from ._push import PushSender

CARD_PATH = "/.well-known/agent-card.json"
V03_CARD_PATH = "/.well-known/agent.json"

logger = logging.getLogger("a2a_trio.server")

type StoreFactory = Callable[[], AbstractAsyncContextManager[TaskStore]]
"""Opens the task store: a zero-argument callable returning an async context manager."""


def store_factory_for(store: str | StoreFactory | None, *, alone: bool = True) -> StoreFactory:
    """The factory for a server's ``store=`` argument, refusing a bad one before serving.

    ``None`` is the in-memory store; a string is a store URL as ``open_store`` takes it
    (``"memory"``, ``"sqlite:///tasks.db"``, ``"postgresql://..."``), a SQLite file held for
    this server ``alone`` (one without a recovery lease: see ``_one_server``); a callable is
    used as is.

    Raises:
        ValueError: the string names no store (the message lists the accepted forms).
        TypeError: ``store`` is neither a URL, a factory nor ``None`` (e.g. an opened store,
            or ``open_store(url)``'s context manager, which can be entered only once).
    """
    if store is None:
        return partial(open_store, "memory")
    if isinstance(store, str):
        check_store_url(store)
        return served_store(store, alone=alone)
    if callable(store) and not isinstance(store, AbstractAsyncContextManager):
        return store  # (open_store(url)'s context manager is callable too: as a decorator)
    raise TypeError(
        "store must be a store URL such as 'sqlite:///tasks.db', or a zero-argument callable"
        f" returning an async context manager that yields the store, not {type(store).__name__}"
    )


class A2AServer:
    """One agent served over HTTP: its store, runtime, handler and card."""

    def __init__(
        self, agent: Agent, *, store: str | StoreFactory | None = None, config: ServerConfig
    ) -> None:
        self.agent = agent
        self.config = config
        self.cards = CardCache(agent, config)
        self._open_store = store_factory_for(store, alone=config.runtime.recovery_lease is None)
        self._runtime: TaskRuntime | None = None
        self._handler: RequestHandler | None = None
        self._push: PushSender | None = None
        self._cancel = trio.CancelScope()
        self._stopped = trio.Event()
        self._drain_deadline: float | None = None

    @property
    def runtime(self) -> TaskRuntime:
        if self._runtime is None:
            raise RuntimeError("the server is not serving yet")
        return self._runtime

    @property
    def handler(self) -> RequestHandler:
        if self._handler is None:
            raise RuntimeError("the server is not serving yet")
        return self._handler

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Open the store and run the task runtime until :meth:`stop` (or cancellation)."""
        try:
            with self._cancel:
                async with self._open_store() as store, trio.open_nursery() as nursery:
                    self._runtime = TaskRuntime(self.agent, store, self.config.runtime)
                    if self.config.push is not None:
                        from ._push import PushSender

                        self._push = PushSender(self._runtime, self.config.push)
                        self._runtime.on_recovered = self._push.take_over
                        runtime = self.config.runtime
                        resume = runtime.recover_unfinished and runtime.recovery_lease is None
                        await nursery.start(partial(self._push.run, resume=resume))
                    self._handler = RequestHandler(self._runtime, self._push)
                    await nursery.start(self._runtime.run)
                    task_status.started()
        finally:
            self._stopped.set()

    async def drain(self) -> None:
        """Refuse new tasks and wait for running jobs, then for push deliveries under way,
        until ``shutdown_grace`` seconds after the first call (a later call waits out the
        same grace, no more)."""
        if self._drain_deadline is None:
            self._drain_deadline = trio.current_time() + self.config.shutdown_grace
        if self._runtime is not None:
            await self._runtime.drain(max(0.0, self._drain_deadline - trio.current_time()))
        if self._push is not None:  # the drained tasks' last events are still to go out
            await self._push.drain(max(0.0, self._drain_deadline - trio.current_time()))

    async def stop(self) -> None:
        """Drain running jobs (see :meth:`drain`), then cancel what is left.

        A drain that starts here, as hypercorn's lifespan shutdown does under ``hypercorn
        a2a_trio.app:app``, is logged (a warning, which Python's logging shows with no
        configuration), in the words ``a2a-trio serve`` logs for a signal.  A drain started
        before (``serve``'s ``shutdown_trigger``, after which ``a2a-trio serve`` said so
        already) is not logged again.
        """
        if self._drain_deadline is None:
            logger.warning("shutdown requested: %s", draining(self.config.shutdown_grace))
        await self.drain()
        self._cancel.cancel()
        await self._stopped.wait()


def create_app(
    agent: Agent, *, store: str | StoreFactory | None = None, config: ServerConfig | None = None
) -> JsonRpcEndpoint:
    """The ASGI app serving ``agent`` (run it with hypercorn's trio worker).

    ``store`` is a store URL (``"sqlite:///tasks.db"``, the forms ``A2A_TRIO_STORE`` takes) or
    a zero-argument callable returning an async context manager that yields the task store
    (e.g. ``lambda: open_store(url, retention=...)``); the default is an in-memory store.
    A bad ``store`` raises ``ValueError`` or ``TypeError`` here (see :func:`store_factory_for`).
    An agent that declares no skills is served with a warning: every message to it is refused.
    """
    config = config or ServerConfig()
    if not agent.skills:  # a forgotten decorator: served, but every message would be refused
        logger.warning(
            "agent %r declares no skills, so every message to it is refused (declare one with"
            " @agent.skill, where agent is your Agent, on an async def taking the task's context)",
            agent.name,
        )
    server = A2AServer(agent, store=store, config=config)
    app = QuartTrio("a2a_trio")
    app.config["MAX_CONTENT_LENGTH"] = config.max_body_bytes
    app.config["RESPONSE_TIMEOUT"] = None  # long-lived event streams must never be cut
    # quart-trio gives its nursery this long after shutdown starts; our drain fits inside it.
    app.config["BACKGROUND_TASK_SHUTDOWN_TIMEOUT"] = (
        config.shutdown_grace + config.runtime.finalize_timeout + 1
    )
    app.extensions["a2a_trio"] = server

    @app.before_serving
    async def start_runtime() -> None:
        await app.nursery.start(server.run)

    @app.after_serving
    async def stop_runtime() -> None:
        await server.stop()

    @app.get(CARD_PATH, defaults={"v03": False})
    @app.get(V03_CARD_PATH, defaults={"v03": True})
    async def agent_card(v03: bool) -> Response:
        rendered = server.cards.render(request.host_url, v03=v03)
        headers = {
            "ETag": rendered.etag,
            "Cache-Control": f"public, max-age={config.card_max_age}",
            # Without public_url the card names the request's own Host: a shared cache must
            # not hand one Host's card to another.
            "Vary": "Host",
        }
        if rendered.etag in request.headers.get("If-None-Match", ""):
            return Response(b"", status=304, headers=headers)
        return Response(rendered.body, content_type="application/json", headers=headers)

    from ._legacy_app import RPC_ENDPOINT, mount_legacy  # here: both import this module
    from ._rest_app import mount_rest, problem_response

    mount_legacy(app, server)
    mount_rest(app, server)

    @app.errorhandler(500)
    async def internal_error(_error: Any) -> Response:
        """An unexpected failure in a view (Quart logged its traceback): the internal error in
        the shape of the surface asked, a legacy JSON-RPC error or else an HTTP+JSON one."""
        error = InternalError(UNEXPECTED_FAILURE)
        rule = request.url_rule
        if rule is not None and (rule.endpoint or "").startswith(RPC_ENDPOINT):
            return _json(rpc.failure(None, error), status=500)
        return problem_response(error, request.path)

    return JsonRpcEndpoint(server, app)


def _json(document: Any, *, status: int = 200) -> Response:
    return Response(dumps(document), status=status, content_type="application/json")
