"""The retention purge goes in batches, on every backend: a backlog of many batches is purged
whole, a cancel between batches leaves whole tasks, and other writes go in between.  Before, it
was one DELETE: on PostgreSQL a large backlog ran past the statement timeout at every tick, and
on SQLite it held the one write lock, every job write and lease tick waiting behind it."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable
from contextlib import closing
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import attrs
import psycopg
import pytest
import trio
import trio.lowlevel

from a2a_trio import model as m
from a2a_trio.store import (
    ANONYMOUS,
    Retention,
    TaskAtVersion,
    TaskQuery,
    TaskStore,
    open_postgres_store,
    open_store,
)
from a2a_trio.store._sql import Driver, SqlTaskStore, Tx

from .conftest import Backend, pg_schema_url
from .test_pg_timeouts import QUICK_LOCKS, held

BATCH = 5
TTL = timedelta(hours=1)
RETENTION = Retention(terminal_ttl=TTL, purge_batch=BATCH)
BACKLOG = 40 * BATCH
"""Forty batches: a purge seen to have started has many to go."""


async def add_task(store: TaskStore, state: m.TaskState) -> m.Task:
    """A task stored in ``state`` with two logged events and a push config."""
    task = attrs.evolve(m.new_task(m.text_message("hi")), status=m.TaskStatus(state))
    await store.create_task(ANONYMOUS, task, events=[(1, task), (2, task)])
    await store.set_push_config(
        ANONYMOUS, m.TaskPushNotificationConfig("https://hook.example", id="p", task_id=task.id)
    )
    return task


async def add_backlog(store: TaskStore, count: int) -> datetime:
    """``count`` finished tasks, written concurrently (SQLite commits them in groups); returns
    a ``now`` at which all of them have been idle for the TTL."""
    async with trio.open_nursery() as nursery:
        for _ in range(count):
            nursery.start_soon(add_task, store, m.TaskState.COMPLETED)
    return m.utcnow() + TTL


async def assert_whole(store: TaskStore, task: m.Task) -> None:
    """``task`` is stored with both its events and its push config."""
    assert await store.load_task(ANONYMOUS, task.id) is not None
    assert [seq for seq, _event in await store.load_events(ANONYMOUS, task.id)] == [1, 2]
    assert [c.id for c in await store.list_push_configs(ANONYMOUS, task.id)] == ["p"]


async def stored_count(store: TaskStore) -> int:
    return (await store.list_tasks(ANONYMOUS, TaskQuery(page_size=1))).total_size


async def stored_tasks(store: TaskStore) -> list[m.Task]:
    query = TaskQuery(page_size=100)
    tasks: list[m.Task] = []
    while True:
        page = await store.list_tasks(ANONYMOUS, query)
        tasks += page.tasks
        if not page.next_page_token:
            return tasks
        query = attrs.evolve(query, page_token=page.next_page_token)


async def wait_for_progress(store: TaskStore, before: int) -> None:
    """Return once a purge running beside has deleted some of the ``before`` tasks."""
    while await stored_count(store) >= before:
        await trio.lowlevel.checkpoint()  # the memory store's reads do not yield


class CancelAfterWrites:
    """A SQL store's driver that cancels ``scope`` once ``writes`` of its writes have
    returned, so a purge is cancelled between two batches whatever the threads' timing."""

    def __init__(self, driver: Driver, writes: int, scope: trio.CancelScope) -> None:
        self.driver = driver
        self.dialect = driver.dialect
        self._left = writes
        self._scope = scope

    async def write[T](self, fn: Callable[[Tx], T], *, one_statement: bool = False) -> T:
        result = await self.driver.write(fn, one_statement=one_statement)
        self._left -= 1
        if self._left == 0:
            self._scope.cancel()
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.driver, name)


def orphan_rows(backend: Backend) -> int:
    """Events and push configs whose task is gone (blocking; the SQL backends' tables)."""
    sql = (
        "SELECT (SELECT count(*) FROM a2a_task_events WHERE task_id NOT IN"
        " (SELECT id FROM a2a_tasks)) + (SELECT count(*) FROM a2a_push_configs"
        " WHERE task_id NOT IN (SELECT id FROM a2a_tasks))"
    )
    if backend.name == "postgres":
        with psycopg.connect(backend.url) as pg:
            row = pg.execute(sql).fetchone()
    elif backend.name == "sqlite":
        with closing(sqlite3.connect(backend.url.removeprefix("sqlite:///"))) as lite:
            row = lite.execute(sql).fetchone()
    else:
        return 0  # the memory store keeps a task's events and configs inside its row
    assert row is not None
    return int(row[0])


async def test_a_backlog_of_many_batches_is_purged_whole(backend: Backend) -> None:
    async with open_store(backend.url, retention=RETENTION) as store:
        backlog = [await add_task(store, m.TaskState.FAILED) for _ in range(5 * BATCH)]
        cutoff = m.utcnow()
        while m.utcnow() <= cutoff:  # a task written in the cutoff's microsecond is expired
            await trio.lowlevel.checkpoint()
        recent = await add_task(store, m.TaskState.COMPLETED)  # finished after the cutoff
        live = await add_task(store, m.TaskState.WORKING)
        waiting = await add_task(store, m.TaskState.INPUT_REQUIRED)
        now = cutoff + TTL
        assert await store.purge_expired(now=now) == len(backlog)
        for task in backlog:
            assert await store.load_task(ANONYMOUS, task.id) is None
        for task in (recent, live, waiting):
            await assert_whole(store, task)
        assert await trio.to_thread.run_sync(orphan_rows, backend) == 0
        assert await store.purge_expired(now=now) == 0


async def test_a_cancelled_purge_leaves_whole_tasks_and_a_later_one_finishes(
    backend: Backend,
) -> None:
    async with open_store(backend.url, retention=RETENTION) as store:
        now = await add_backlog(store, BACKLOG)
        async with trio.open_nursery() as nursery:
            if isinstance(store, SqlTaskStore):  # cancelled right after its second batch
                store._driver = CancelAfterWrites(store._driver, 2, nursery.cancel_scope)
            nursery.start_soon(partial(store.purge_expired, now=now))
            await wait_for_progress(store, BACKLOG)  # the memory store: one batch a checkpoint
            nursery.cancel_scope.cancel()
        if isinstance(store, SqlTaskStore) and isinstance(store._driver, CancelAfterWrites):
            store._driver = store._driver.driver
        left = await stored_tasks(store)
        assert 0 < len(left) < BACKLOG  # stopped part way, between batches
        for task in left:
            await assert_whole(store, task)
        assert await trio.to_thread.run_sync(orphan_rows, backend) == 0
        assert await store.purge_expired(now=now) == len(left)
        assert await stored_count(store) == 0


async def test_a_write_during_a_long_purge_goes_between_its_batches(backend: Backend) -> None:
    async with open_store(backend.url, retention=RETENTION) as store:
        now = await add_backlog(store, BACKLOG)
        purged: list[int] = []

        async def purge() -> None:
            purged.append(await store.purge_expired(now=now))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(purge)
            await wait_for_progress(store, BACKLOG)
            created = await store.create_task(ANONYMOUS, m.new_task(m.text_message("new")))
            assert purged == []  # the write finished while the purge still ran
        assert purged == [BACKLOG]
        assert await store.load_task(ANONYMOUS, created.task.id) is not None


async def purge_together(stores: list[TaskStore], now: datetime) -> list[int]:
    """What each of ``stores`` purged, all purging at once."""
    counts: list[int] = []

    async def purge(store: TaskStore) -> None:
        counts.append(await store.purge_expired(now=now))

    async with trio.open_nursery() as nursery:
        for store in stores:
            nursery.start_soon(purge, store)
    return counts


@pytest.mark.postgres
async def test_replicas_purging_together_share_the_work_and_pass_over_held_rows() -> None:
    """Two replicas purge one backlog at once while a third connection holds some of its rows:
    each task is purged once, by one of them, neither waits on a lock (QUICK_LOCKS would
    raise), and a later purge takes the rows let go.  Before, a purge locked the rows it
    chose, waiting on those another transaction held: here, for longer than the lock timeout."""
    async with (
        pg_schema_url() as url,
        open_postgres_store(url, retention=RETENTION, timeouts=QUICK_LOCKS) as first,
        open_postgres_store(url, retention=RETENTION, timeouts=QUICK_LOCKS) as second,
    ):
        now = await add_backlog(first, BACKLOG)
        held_ids = {task.id for task in (await stored_tasks(first))[:: BACKLOG // (2 * BATCH)]}
        lock = "SELECT 1 FROM a2a_tasks WHERE id = ANY (%s) FOR UPDATE"
        async with held(url, lock, list(held_ids)):
            counts = await purge_together([first, second], now)
        assert sum(counts) == BACKLOG - len(held_ids)
        assert {task.id for task in await stored_tasks(second)} == held_ids
        assert await second.purge_expired(now=now) == len(held_ids)
        assert await stored_count(first) == 0
        assert await trio.to_thread.run_sync(orphan_rows, Backend("postgres", url)) == 0


@pytest.mark.postgres
async def test_a_lease_tick_waiting_on_a_row_and_a_purge_do_not_deadlock() -> None:
    """The interleaving that would deadlock a tick and a purge locking rows in different
    orders: the tick has locked the first of two tasks (terminal and expired in the store, as
    a task still running at a replica whose peer ended it may be) and waits for the second,
    which another transaction holds.  The purge passes over both at once (QUICK_LOCKS would
    raise were it to wait), and once the second is let go the tick touches both, which are
    then no longer expired."""
    async with (
        pg_schema_url() as url,
        open_postgres_store(url + TICKING, retention=RETENTION) as ticking,
        open_postgres_store(url, retention=RETENTION, timeouts=QUICK_LOCKS) as purging,
    ):
        added = [await add_task(ticking, m.TaskState.COMPLETED) for _ in range(2)]
        tasks = sorted(added, key=lambda task: task.id)  # the tick locks them in this order
        now = m.utcnow() + TTL
        lease = [TaskAtVersion(ANONYMOUS, task.id, 1) for task in tasks]
        touched: set[TaskAtVersion] = set()

        async def tick() -> None:
            touched.update(await ticking.touch_tasks(lease))

        with trio.fail_after(20):  # a hang guard, not a timing assertion
            async with (
                trio.open_nursery() as nursery,
                held(url, "SELECT 1 FROM a2a_tasks WHERE id = %s FOR UPDATE", tasks[1].id),
            ):
                nursery.start_soon(tick)
                while not await trio.to_thread.run_sync(tick_waits_for_a_lock, url):
                    await trio.lowlevel.checkpoint()  # (each look is a connection's round trips)
                assert await purging.purge_expired(now=now) == 0
            assert touched == set(lease)
            assert await purging.purge_expired(now=now) == 0
        assert {task.id for task in await stored_tasks(purging)} == {task.id for task in tasks}


TICKING = f"&application_name=tick_{uuid.uuid4().hex[:12]}"
"""Names the ticking store's sessions, apart from other tests' on the same server."""


def tick_waits_for_a_lock(url: str) -> bool:
    """Whether a session of the ticking store waits for a lock (blocking)."""
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
            " AND wait_event_type = 'Lock'",
            (TICKING.partition("=")[2],),
        ).fetchone()
    return row is not None and row[0] > 0


def test_a_purge_batch_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="purge_batch must be at least 1"):
        Retention(purge_batch=0)
