"""A keep-alive connection's idle timer that costs its requests nothing.

hypercorn times a connection's idle spells with a new task each: started (``nursery.start``,
under a lock) when a response ends, cancelled (under the lock again) when the next request
comes.  Measured on the whole server, that was about 250 of the ~1,400 Python calls of a
blocking send and a quarter of its CPU, and the lock put a scheduler round before every
request reaches the app (docs/benchmarks.md, finding 17).  Here each connection has one task
that waits for the server's shutdown for as long as the connection lives, under a cancel scope
whose deadline is the end of the current idle spell; a spell starting or ending only moves
that deadline.  The behaviour is hypercorn's: an idle connection is closed after
``keep_alive_timeout`` seconds, or at once when the server shuts down; a busy one is left to
finish its request (hypercorn closes it after that when the server is shutting down).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import AppWrapper, ConnectionState, Event, TaskGroup


class KeepAliveTimer:
    """The idle timer of one connection, in place of hypercorn's ``TrioSingleTask``: hypercorn
    calls :meth:`restart` when the connection turns idle and :meth:`stop` when a request
    comes.  Neither waits; the first ``restart`` starts the connection's watcher task, which
    runs until ``close_connection`` ran or :meth:`end` is called."""

    def __init__(
        self,
        timeout: float,
        terminated: Event,
        close_connection: Callable[[], Awaitable[None]],
    ) -> None:
        self._timeout = timeout
        self._terminated = terminated
        self._close_connection = close_connection
        self._deadline = math.inf
        """When the connection closes if it stays idle; ``inf`` while it is busy."""
        self._scope = trio.CancelScope()
        """The watcher's wait (a new one each time it waits)."""
        self._watching = False
        self._ended = False

    async def restart(self, task_group: TaskGroup, _action: object) -> None:
        """The connection is idle from now (``_action``, hypercorn's own timer, is not run)."""
        self._set_deadline(trio.current_time() + self._timeout)
        if not (self._watching or self._ended):
            self._watching = True
            task_group.spawn(self._watch)

    async def stop(self) -> None:
        """The connection is busy from now: no deadline until it is idle again."""
        self._set_deadline(math.inf)

    def end(self) -> None:
        """The client is gone (hypercorn closes the connection itself): stop watching."""
        self._ended = True
        self._scope.cancel()

    def _set_deadline(self, deadline: float) -> None:
        self._deadline = deadline
        self._scope.deadline = deadline

    async def _watch(self) -> None:
        while not self._ended:
            # A new scope for every wait: one whose deadline passed stays cancelled, even when
            # a request came before this task ran (the connection is busy, the wait goes on).
            with trio.CancelScope(deadline=self._deadline) as self._scope:
                await self._terminated.wait()
            shutting_down = self._terminated.is_set()
            if self._ended or (shutting_down and self._deadline == math.inf):
                return  # gone, or busy at shutdown: hypercorn closes it once it is answered
            if shutting_down or trio.current_time() >= self._deadline:
                with trio.CancelScope(shield=True):
                    await self._close_connection()
                return


class KeptAliveConnection(TCPServer):
    """hypercorn's trio connection (``TCPServer``) with a :class:`KeepAliveTimer` as its idle
    timer."""

    def __init__(
        self,
        app: AppWrapper,
        config: Config,
        context: WorkerContext,
        state: ConnectionState,
        stream: Any,
    ) -> None:
        super().__init__(app, config, context, state, stream)
        self.keepalive = KeepAliveTimer(
            config.keep_alive_timeout, context.terminated, self._initiate_server_close
        )
        self.idle_task = self.keepalive  # type: ignore[assignment]  # the same two methods

    async def _read_data(self) -> None:
        try:
            await super()._read_data()
        finally:
            self.keepalive.end()
