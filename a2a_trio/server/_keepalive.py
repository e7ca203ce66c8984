"""Keep-alive timing that costs a request nothing: one sweeper per server for every idle
connection, instead of a task per idle spell.

hypercorn times a connection's idle spells with a new task each: started (``nursery.start``,
under a lock) when a response ends, cancelled (under the lock again) when the next request
comes.  Measured on the whole server, that was about 250 of the ~1,400 Python calls of a
blocking send and a sixth of its CPU, and the lock put a scheduler round before every request
reaches the app (docs/benchmarks.md, finding 17).  Here a spell starting or ending is a dict
entry put or taken; the server's one :class:`KeepAlive` sweeper sleeps until the oldest idle
spell's deadline.  A busy connection costs nothing at all, not even a parked task (a parked
task per connection was 3 KB per open stream and 10 % more CPU per fanned-out frame).

The behaviour is hypercorn's: an idle connection is closed after ``keep_alive_timeout``
seconds, or at once when the server shuts down; a busy one is left to finish its request
(hypercorn closes it after that when the server is shutting down).  One difference, on
purpose: a connection whose client left while it was idle is released at once, where
hypercorn held it, socket included, until its timeout.
"""

from __future__ import annotations

import math
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import AppWrapper, ConnectionState, Event, TaskGroup


class KeepAlive:
    """Closes the connections of one server that stay idle for ``timeout`` seconds, and every
    idle one at once when ``terminated`` is set; run :meth:`run` in the nursery that holds
    the connections."""

    def __init__(self, timeout: float, terminated: Event) -> None:
        self._timeout = timeout
        self._terminated = terminated
        self._idle: dict[KeptAliveConnection, float] = {}
        """Idle connections and their deadlines, oldest first: every deadline is its spell's
        start plus the same timeout, and a new spell is put at the end."""
        self._wait = trio.CancelScope()
        """The sweeper's current wait; its deadline is never after the oldest spell's."""
        self._swept = False
        """True once the sweeper closed the idle connections at shutdown and returned."""

    def idle(self, connection: KeptAliveConnection) -> None:
        """``connection`` is idle from now."""
        if self._swept:  # idle after the shutdown's sweep (accepted as the server stopped)
            connection.close_soon()
            return
        deadline = trio.current_time() + self._timeout
        self._idle.pop(connection, None)
        if not self._idle:  # the sweeper waits for nothing: it wakes at this deadline
            self._wait.deadline = deadline
        self._idle[connection] = deadline

    def busy(self, connection: KeptAliveConnection) -> None:
        """``connection`` has a request, or its client is gone: not idle any more.  (The
        sweeper's wait keeps its deadline: it may wake for nothing, then waits on.)"""
        self._idle.pop(connection, None)

    async def run(self) -> None:
        """Sweep until the server shuts down, then close every idle connection and return."""
        while True:
            oldest = next(iter(self._idle.values()), math.inf)
            with trio.CancelScope(deadline=oldest) as self._wait:
                await self._terminated.wait()
            if self._terminated.is_set():
                for connection in self._idle:
                    connection.close_soon()
                self._idle.clear()
                self._swept = True
                return
            now = trio.current_time()
            expired = []
            for connection, deadline in self._idle.items():
                if deadline > now:
                    break
                expired.append(connection)
            for connection in expired:
                del self._idle[connection]
                connection.close_soon()


class KeptAliveConnection(TCPServer):
    """hypercorn's trio connection (``TCPServer``) with its idle spells timed by the server's
    :class:`KeepAlive`.  It uses three of ``TCPServer``'s internals (``idle_task``,
    ``_read_data``, ``_initiate_server_close``), hence pyproject's bound on hypercorn's
    version; tests/server/test_keepalive.py pins the behaviour on real sockets."""

    def __init__(
        self,
        keepalive: KeepAlive,
        app: AppWrapper,
        config: Config,
        context: WorkerContext,
        state: ConnectionState,
        stream: Any,
    ) -> None:
        super().__init__(app, config, context, state, stream)
        self.idle_task = _IdleSpells(keepalive, self)  # type: ignore[assignment]  # same methods
        self._keepalive = keepalive
        self._group: TaskGroup | None = None
        self._reading = True
        """False once the reader ended: hypercorn closes the connection then, though its
        protocol may still report it idle (an answer finished after the client reset it)."""

    def turned_idle(self, task_group: TaskGroup) -> None:
        """Idle from now; ``task_group`` holds this connection's tasks."""
        if self._reading:
            self._group = task_group
            self._keepalive.idle(self)

    def close_soon(self) -> None:
        """Close this idle connection, in a task of its own (as hypercorn's timer does)."""
        assert self._group is not None, "only an idle connection is closed, and it has its group"
        self._group.spawn(self._close)

    async def _close(self) -> None:
        with trio.CancelScope(shield=True):
            await self._initiate_server_close()

    async def _read_data(self) -> None:
        try:
            await super()._read_data()
        finally:  # the client is gone: hypercorn closes the connection itself
            self._reading = False
            self._keepalive.busy(self)


class _IdleSpells:
    """What hypercorn calls a connection's idle timer (``restart`` when a response ended,
    ``stop`` when a request came), passed on to the server's :class:`KeepAlive`."""

    __slots__ = ("_connection", "_keepalive")

    def __init__(self, keepalive: KeepAlive, connection: KeptAliveConnection) -> None:
        self._keepalive = keepalive
        self._connection = connection

    async def restart(self, task_group: TaskGroup, _action: object) -> None:
        """Idle from now (``_action``, hypercorn's own timer, is not run)."""
        self._connection.turned_idle(task_group)

    async def stop(self) -> None:
        self._keepalive.busy(self._connection)
