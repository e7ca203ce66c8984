"""SQLite's one writer connection, committing the writes that queue up for it together.

SQLite has a single writer, and with ``synchronous=FULL`` each commit waits for the disk.  One
transaction per write capped a server at about 600 writes a second on the development machine,
whatever the number of tasks: 12 agents streaming 50 chunks a second each.  Writes that arrive
while a commit is running wait for it, then go in the next transaction together, each inside
its own savepoint so that one refused write (a version conflict, a taken event number) rolls
back only itself.  Every write is still committed before its caller returns.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import attrs
import outcome
import trio

from ._sql import Cursor, Tx

MAX_GROUP = 64
"""Writes committed together at most (a larger queue takes several commits)."""


class SqliteTx:
    """A :class:`~a2a_trio.store._sql.Tx` on a connection inside an open transaction."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def run(self, sql: str, params: Sequence[object] = ()) -> Cursor:
        return self._conn.execute(sql, params)


def transaction[T](conn: sqlite3.Connection, begin: str, fn: Callable[[Tx], T]) -> T:
    """``fn`` in one transaction on ``conn`` (``BEGIN``, or ``BEGIN IMMEDIATE`` to write):
    committed when it returns, rolled back when it raises.  Blocking: call it in a thread."""
    conn.execute(begin)
    with conn:
        return fn(SqliteTx(conn))


@attrs.define(eq=False)
class _Write:
    fn: Callable[[Tx], Any]
    started: bool = False
    result: outcome.Outcome[Any] | None = None


class GroupWriter:
    """Runs write functions on ``conn``, each in a transaction it may share with others.

    A write cancelled before its group starts never runs; one cancelled later waits for its
    group, so a write is committed or rolled back whole, never torn.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._queue: list[_Write] = []
        self._lock = trio.Lock()

    async def write[T](self, fn: Callable[[Tx], T]) -> T:
        write = _Write(fn)
        self._queue.append(write)
        try:
            async with self._lock:  # FIFO: the first waiter commits everything queued
                if not write.started:
                    await self._commit_group()
        except trio.Cancelled:
            if not write.started:
                self._queue.remove(write)
                raise
            # Another waiter's group took it: its result is set before that group unlocks.
            with trio.CancelScope(shield=True):
                async with self._lock:
                    pass
        assert write.result is not None  # set by the group that started it, before unlocking
        return write.result.unwrap()  # type: ignore[no-any-return]

    async def _commit_group(self) -> None:
        group = self._queue[:MAX_GROUP]
        del self._queue[:MAX_GROUP]
        for write in group:
            write.started = True
        # Shielded: the group's writes are marked started, so their callers wait for these
        # results; only the thread's start could be cancelled, and it must not be.
        fns = [write.fn for write in group]
        with trio.CancelScope(shield=True):
            committed = await trio.to_thread.run_sync(
                outcome.capture, transaction, self.conn, "BEGIN IMMEDIATE", partial(_each, fns)
            )
        if isinstance(committed, outcome.Value):
            for write, result in zip(group, committed.value, strict=True):
                write.result = result
        else:  # nothing was committed: every write of the group fails the same way
            for write in group:
                write.result = outcome.Error(committed.error)


def _each(fns: Sequence[Callable[[Tx], Any]], tx: Tx) -> list[outcome.Outcome[Any]]:
    """Run ``fns`` in the open transaction ``tx``, each in a savepoint when there are several:
    a write that raises is rolled back to its savepoint and the others go on.  Returns each
    one's outcome; a lone write's exception propagates (its transaction is rolled back)."""
    if len(fns) == 1:
        return [outcome.Value(fns[0](tx))]
    results: list[outcome.Outcome[Any]] = []
    for fn in fns:
        tx.run("SAVEPOINT write")
        result = outcome.capture(fn, tx)
        if isinstance(result, outcome.Error):
            tx.run("ROLLBACK TO write")
        tx.run("RELEASE write")
        results.append(result)
    return results
