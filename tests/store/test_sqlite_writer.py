"""SQLite's group commit: writes queued together commit together, yet each stands alone."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest
import trio

from a2a_trio.store._sql import Tx
from a2a_trio.store._sqlite_writer import MAX_GROUP, GroupWriter


@contextmanager
def a_writer(path: Path, *, timeout: float = 30) -> Iterator[tuple[GroupWriter, list[str]]]:
    """A writer on a fresh file with table ``t``, and the transactions' COMMITs as they run."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=timeout)
    with closing(conn):
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE t (n INTEGER PRIMARY KEY)")
        commits: list[str] = []
        conn.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
        yield GroupWriter(conn), commits


def insert(n: int, *, then_fail: bool = False) -> Callable[[Tx], int]:
    def write(tx: Tx) -> int:
        tx.run("INSERT INTO t (n) VALUES (?)", (n,))
        if then_fail:
            raise ValueError(f"write {n} refused")
        return n

    return write


def stored(path: Path) -> list[int]:
    with closing(sqlite3.connect(path)) as conn:
        return [n for (n,) in conn.execute("SELECT n FROM t ORDER BY n")]


async def test_writes_queued_meanwhile_commit_together_and_fail_alone(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    with a_writer(path) as (writer, commits):
        results: dict[int, object] = {}

        async def one(n: int) -> None:
            try:
                results[n] = await writer.write(insert(n, then_fail=n % 5 == 0))
            except ValueError as exc:
                results[n] = str(exc)

        async with trio.open_nursery() as nursery:
            for n in range(1, 41):
                nursery.start_soon(one, n)
        expected = {n: f"write {n} refused" if n % 5 == 0 else n for n in range(1, 41)}
        assert results == expected
        assert stored(path) == [n for n in range(1, 41) if n % 5]
        assert len(commits) == 1  # all forty were queued before the first group began


async def test_a_group_is_at_most_max_group_writes(tmp_path: Path) -> None:
    with a_writer(tmp_path / "w.db") as (writer, commits):
        async with trio.open_nursery() as nursery:
            for n in range(1, 2 * MAX_GROUP + 2):
                nursery.start_soon(writer.write, insert(n))
        assert len(commits) == 3  # MAX_GROUP, MAX_GROUP, then the last one


async def test_a_write_cancelled_while_queued_never_runs(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    with a_writer(path) as (writer, _commits):
        first_running = trio.Event()
        release = trio.Event()
        token = trio.lowlevel.current_trio_token()

        def slow(tx: Tx) -> int:
            tx.run("INSERT INTO t (n) VALUES (1)")
            trio.from_thread.run_sync(first_running.set, trio_token=token)
            trio.from_thread.run(release.wait, trio_token=token)
            return 1

        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer.write, slow)
            await first_running.wait()
            with trio.CancelScope() as queued:
                nursery.start_soon(release_after_cancel, queued, release)
                await writer.write(insert(2))
            assert queued.cancelled_caught
            await writer.write(insert(3))
        assert stored(path) == [1, 3]


async def release_after_cancel(scope: trio.CancelScope, release: trio.Event) -> None:
    await trio.testing.wait_all_tasks_blocked()
    scope.cancel()
    release.set()


async def test_a_group_that_cannot_begin_fails_every_write_in_it(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    with a_writer(path, timeout=0.05) as (writer, commits):
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("BEGIN IMMEDIATE")  # holds the write lock
            failures: list[str] = []

            async def one(n: int) -> None:
                with pytest.raises(sqlite3.OperationalError) as caught:
                    await writer.write(insert(n))
                failures.append(str(caught.value))

            async with trio.open_nursery() as nursery:
                for n in range(1, 6):
                    nursery.start_soon(one, n)
            other.execute("ROLLBACK")
        assert failures == ["database is locked"] * 5
        assert commits == []
        assert await writer.write(insert(6)) == 6
    assert stored(path) == [6]


async def test_a_write_cancelled_inside_another_waiters_group_is_committed(tmp_path: Path) -> None:
    """Cancelled after a group took it, a write waits for that group and returns its result,
    like a thread call that cannot be abandoned; the cancellation comes at the next checkpoint."""
    path = tmp_path / "w.db"
    with a_writer(path) as (writer, _commits):
        token = trio.lowlevel.current_trio_token()
        first_running, release_first = trio.Event(), trio.Event()
        group_running, release_group = trio.Event(), trio.Event()

        def held(n: int, running: trio.Event, release: trio.Event) -> Callable[[Tx], int]:
            def write(tx: Tx) -> int:
                tx.run("INSERT INTO t (n) VALUES (?)", (n,))
                trio.from_thread.run_sync(running.set, trio_token=token)
                trio.from_thread.run(release.wait, trio_token=token)
                return n

            return write

        returned: list[int] = []

        async def cancelled_later(scope: trio.CancelScope) -> None:
            with scope:
                returned.append(await writer.write(insert(3)))
                await trio.lowlevel.checkpoint()

        scope = trio.CancelScope()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer.write, held(1, first_running, release_first))
            await first_running.wait()
            nursery.start_soon(writer.write, held(2, group_running, release_group))
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(cancelled_later, scope)  # queued behind 2: in 2's group
            await trio.testing.wait_all_tasks_blocked()
            release_first.set()
            await group_running.wait()  # the group of 2 and 3 is in its transaction
            scope.cancel()
            await trio.testing.wait_all_tasks_blocked()
            release_group.set()
        assert returned == [3]
        assert scope.cancelled_caught
        assert stored(path) == [1, 2, 3]


async def test_a_group_whose_leader_is_cancelled_as_it_begins_still_commits(
    tmp_path: Path,
) -> None:
    """The leader's cancellation lands between taking the lock and starting the thread: the
    group it took must still run, for it and for the writes queued with it."""
    path = tmp_path / "w.db"
    with a_writer(path) as (writer, _commits):
        token = trio.lowlevel.current_trio_token()
        running, release = trio.Event(), trio.Event()

        def held(tx: Tx) -> int:
            tx.run("INSERT INTO t (n) VALUES (1)")
            trio.from_thread.run_sync(running.set, trio_token=token)
            trio.from_thread.run(release.wait, trio_token=token)
            return 1

        returned: list[int] = []
        leader = trio.CancelScope()

        async def lead() -> None:
            with leader:
                returned.append(await writer.write(insert(2)))
                await trio.lowlevel.checkpoint()

        async def follow() -> None:
            returned.append(await writer.write(insert(3)))

        async def hold_then_cancel_the_leader() -> None:
            await writer.write(held)
            # The lock went to the leader, which has not run yet: it is cancelled right as
            # it starts its group (no checkpoint between the release and this line).
            leader.cancel()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(hold_then_cancel_the_leader)
            await running.wait()
            nursery.start_soon(lead)
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(follow)
            await trio.testing.wait_all_tasks_blocked()
            release.set()
        assert sorted(returned) == [2, 3]
        assert leader.cancelled_caught
        assert stored(path) == [1, 2, 3]
