"""The watchdog: a PostgreSQL call's wait for the server's answer, bounded from the client side.

The server bounds its statements (``statement_timeout``) and the kernel a silent host
(``tcp_user_timeout``, keepalives), but a server *process* that stopped while its host runs
(``kill -STOP``, a frozen container, a stuck backend) meets neither bound: the kernel
acknowledges everything, nothing answers, and the worker thread waiting in libpq cannot be
cancelled.  So one trio task watches the calls in flight: once a call's connection has waited
longer than the bound since the call's latest statement began, its socket is shut down, which
ends the thread's wait with ``psycopg.OperationalError`` (and the pool replaces the connection).

One task for all calls, owned by the store's nursery, rather than one per call: a task per call
costs each call scheduler rounds worth more than the round trip the pool's checkout check saves.
It sleeps until the earliest moment a call in flight could be overdue, or ``bound`` when none
is: a call registered meanwhile began its wait after the sleep did, so it is not due before.

The shutdown reaches a call's own connection only while the call holds it: the thread
registers a duplicate of the connection's socket when it takes the connection, and withdraws
it, under the lock the watchdog takes to shut it down, before giving the connection back.
Without a bound (no statement bound or no ``late_answer``) nothing watches, so calls take no
duplicate: it would cost a descriptor each, and fail a call when the process is out of them.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import trio

from ..errors import StoreUnavailableError


class CallWatch:
    """One call as the watchdog sees it: its connection's socket while the call holds the
    connection, and when the call's latest statement began."""

    def __init__(self, *, watched: bool) -> None:
        self._watched = watched
        self._lock = threading.Lock()
        self._descriptor: int | None = None  # a duplicate of the connection's socket descriptor
        self._since = time.monotonic()
        self.cut = False
        """Whether the watchdog shut the call's connection down."""

    @contextmanager
    def holding(self, conn: psycopg.Connection[Any]) -> Iterator[None]:
        """Thread side: the call holds ``conn`` inside, where the watchdog may shut it down.

        Raises ``StoreUnavailableError`` when the socket cannot be duplicated (the process ran
        out of file descriptors), before the call sends anything: as every store failure, a
        call that wrote nothing and may succeed later.  Running it unwatched instead would let
        a stopped server hold the call, its thread and its connection for good, just when the
        process is short of resources.  An unwatched call (no watchdog runs) holds ``conn``
        as it is.
        """
        if not self._watched:
            yield
            return
        try:
            duplicate = os.dup(conn.pgconn.socket)
        except OSError as exc:
            raise StoreUnavailableError(
                f"the PostgreSQL store is unavailable: cannot watch the call's connection: {exc}"
            ) from exc
        with self._lock:
            self._descriptor = duplicate
            self._since = time.monotonic()
        try:
            yield
        finally:
            with self._lock:
                self._descriptor = None
            os.close(duplicate)

    def statement_begins(self) -> None:
        """Thread side: a wait for the server's answer begins now."""
        self._since = time.monotonic()

    def cut_if_overdue(self, bound: float) -> float:
        """Trio side: shut the connection down if it has waited ``bound`` seconds for an answer;
        returns the seconds until it could be overdue (``bound`` when not, or no longer,
        watched: holding no connection, or shut down already)."""
        with self._lock:
            if self._descriptor is None or self.cut:
                return bound
            left = self._since + bound - time.monotonic()
            if left > 0:
                return left
            self.cut = True
            duplicate = socket.socket(fileno=self._descriptor)
            try:
                duplicate.shutdown(socket.SHUT_RDWR)
            except OSError:  # already disconnected: the thread's wait is over anyway
                pass
            finally:
                duplicate.detach()  # the thread closes it, once it lets go of the connection
            return bound


class Watchdog:
    """The calls in flight, and the task that shuts down the connection of an overdue one."""

    def __init__(self) -> None:
        self._calls: set[CallWatch] = set()
        self.bound: float | None = None
        """Seconds a call may wait for an answer before it is cut off; ``None``: not watched."""

    @contextmanager
    def watching(self) -> Iterator[CallWatch]:
        """A call in flight inside (trio side)."""
        call = CallWatch(watched=self.bound is not None)
        self._calls.add(call)
        try:
            yield call
        finally:
            self._calls.discard(call)

    async def run(self) -> None:
        """Watch the calls until cancelled (at once without a bound)."""
        bound = self.bound
        if bound is None:
            return
        while True:
            due_in = min([bound, *(call.cut_if_overdue(bound) for call in self._calls)])
            await trio.sleep(due_in)
