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
from typing import Protocol

import trio
from hypercorn.typing import Event


class Idling(Protocol):
    """A connection as the sweeper sees it (:class:`~._connection.Connection`)."""

    def close_soon(self) -> None:
        """Close this idle connection, without waiting for it."""


class KeepAlive:
    """Closes the connections of one server that stay idle for ``timeout`` seconds, and every
    idle one at once when ``terminated`` is set; run :meth:`run` in the nursery that holds
    the connections."""

    def __init__(self, timeout: float, terminated: Event) -> None:
        self._timeout = timeout
        self._terminated = terminated
        self._idle: dict[Idling, float] = {}
        """Idle connections and their deadlines, oldest first: every deadline is its spell's
        start plus the same timeout, and a new spell is put at the end."""
        self._wait = trio.CancelScope()
        """The sweeper's current wait; its deadline is never after the oldest spell's."""
        self._swept = False
        """True once the sweeper closed the idle connections at shutdown and returned."""

    def idle(self, connection: Idling) -> None:
        """``connection`` is idle from now."""
        if self._swept:  # idle after the shutdown's sweep (accepted as the server stopped)
            connection.close_soon()
            return
        deadline = trio.current_time() + self._timeout
        self._idle.pop(connection, None)
        if not self._idle:  # the sweeper waits for nothing: it wakes at this deadline
            self._wait.deadline = deadline
        self._idle[connection] = deadline

    def busy(self, connection: Idling) -> None:
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
