"""One served connection: hypercorn's trio connection (``TCPServer``) with two of its costs
taken out, each measured on the whole server (docs/benchmarks.md, findings 17 and 18).

- Its idle spells are timed by the server's one :class:`~._keepalive.KeepAlive` sweeper, not
  by a new task per spell.
- What it sends goes to the socket in one non-blocking write when nothing else is sending on
  it.  hypercorn's send takes a ``trio.Lock`` (a scheduler round of its own), builds a
  shielded cancel scope and goes down trio's stream and socket layers: 74 of the 138 Python
  calls of a fanned-out frame, and because of the lock's round every subscriber of an event
  rendered its frame before the first one was sent.  Only what the socket's buffer has no
  room for takes hypercorn's way (the lock held, shielded, waiting for room), and a send
  that finds the lock taken queues behind it there, so bytes never interleave or reorder.

The connection uses four of ``TCPServer``'s internals (``idle_task``, ``send_lock``,
``_read_data``, ``_initiate_server_close``), hence pyproject's bound on hypercorn's version;
tests/server/test_keepalive.py and tests/server/test_connection.py pin the behaviour on real
sockets.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.events import Closed, RawData
from hypercorn.events import Event as ProtocolEvent
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import AppWrapper, ConnectionState, TaskGroup

from ._keepalive import KeepAlive

DIRECT_WRITES = sys.platform != "win32"
"""Whether a socket's descriptor takes ``os.write`` (not on Windows, where every send takes
hypercorn's way)."""


class Connection(TCPServer):
    """hypercorn's connection, its idle spells reported to ``keepalive`` and its sends
    written straight to the socket when it is free."""

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
        direct = DIRECT_WRITES and isinstance(stream, trio.SocketStream)
        self._socket: trio.socket.SocketType | None = stream.socket if direct else None
        """The socket written to directly; None where every send takes hypercorn's way."""

    async def protocol_send(self, event: ProtocolEvent) -> None:
        """Sends ``event``'s bytes, as hypercorn does, in one write when the socket is free
        and has room; like hypercorn's, a checkpoint, and cancelled only before any byte of
        it went out."""
        if self._socket is None or not isinstance(event, RawData) or self.send_lock.locked():
            await super().protocol_send(event)
            return
        await trio.lowlevel.checkpoint_if_cancelled()
        data = event.data
        try:
            sent = os.write(self._socket.fileno(), data)  # -1 once closed: EBADF
        except BlockingIOError:
            sent = 0
        except OSError:  # reset or closed, as hypercorn's send would have found it
            await self.protocol.handle(Closed())
            return
        if sent == len(data):
            await trio.lowlevel.cancel_shielded_checkpoint()
        else:
            await self._send_rest(memoryview(data)[sent:])

    async def _send_rest(self, rest: memoryview) -> None:
        """What the socket had no room for, sent the way hypercorn sends (nothing else may
        write in between, so the lock is taken before the first wait)."""
        self.send_lock.acquire_nowait()
        try:
            with trio.CancelScope(shield=True):
                await self.stream.send_all(rest)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            await self.protocol.handle(Closed())
        finally:
            self.send_lock.release()

    def turned_idle(self, task_group: TaskGroup) -> None:
        """Idle from now; ``task_group`` holds this connection's tasks."""
        if self._reading:
            self._group = task_group
            self._keepalive.idle(self)

    def close_soon(self) -> None:
        """Close this idle connection, in a task of its own (as hypercorn's timer does)."""
        assert self._group is not None, "only an idle connection is closed, and it has its group"
        self._group.spawn(self._close_idle)

    async def _close_idle(self) -> None:
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

    def __init__(self, keepalive: KeepAlive, connection: Connection) -> None:
        self._keepalive = keepalive
        self._connection = connection

    async def restart(self, task_group: TaskGroup, _action: object) -> None:
        """Idle from now (``_action``, hypercorn's own timer, is not run)."""
        self._connection.turned_idle(task_group)

    async def stop(self) -> None:
        self._keepalive.busy(self._connection)
