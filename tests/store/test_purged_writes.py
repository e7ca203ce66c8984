"""A write for a task deleted while it was under way (a retention purge committing between the
write's read of the task and its event insert) raises ``TaskNotFoundError``: the task is gone,
which the runtime takes as such.  Before, the SQL stores took the failed foreign-key check for
a taken event number and raised ``ConcurrencyError`` ("already has some of events")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import pytest

from a2a_trio import model as m
from a2a_trio.errors import TaskNotFoundError
from a2a_trio.store import ANONYMOUS, TaskUpdate, open_store
from a2a_trio.store._sql import Cursor, Driver, SqlTaskStore, Tx

from .conftest import Backend


class DeletingTx:
    """A transaction that deletes the task ``task_id`` just before it logs events."""

    def __init__(self, tx: Tx, task_id: str) -> None:
        self._tx = tx
        self._task_id = task_id

    def run(self, sql: str, params: Sequence[object] = ()) -> Cursor:
        if sql.startswith("INSERT INTO a2a_task_events"):
            self._tx.run("DELETE FROM a2a_tasks WHERE id = ?", (self._task_id,))
        return self._tx.run(sql, params)


class DeletedBeforeItsEvents:
    """A SQL store's driver whose writes delete the task ``task_id`` right before logging its
    events: a purge that commits between a write's read of the task and its event insert,
    which PostgreSQL's unlocked reads allow, made deterministic (the delete runs in the
    write's own transaction, so it is rolled back with it)."""

    def __init__(self, driver: Driver, task_id: str) -> None:
        self.driver = driver
        self.dialect = driver.dialect
        self._task_id = task_id

    async def write[T](self, fn: Callable[[Tx], T], *, one_statement: bool = False) -> T:
        def deleting(tx: Tx) -> T:
            return fn(DeletingTx(tx, self._task_id))

        return await self.driver.write(deleting, one_statement=one_statement)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.driver, name)


@pytest.mark.parametrize("write", ["append_events", "update_task"])
async def test_events_for_a_task_deleted_meanwhile_say_the_task_is_gone(
    sql_backend: Backend, write: str
) -> None:
    task = m.new_task(m.text_message("hi"))
    async with open_store(sql_backend.url) as creating:
        await creating.create_task(ANONYMOUS, task, events=[(1, task)])
    # A store that did not write the task reads its row first (its one-statement write of a
    # task it wrote last would find the row gone and fall back to the same read).
    async with open_store(sql_backend.url) as store:
        assert isinstance(store, SqlTaskStore)
        store._driver = DeletedBeforeItsEvents(store._driver, task.id)
        working = m.TaskStatusUpdateEvent(
            task_id=task.id, context_id=task.context_id, status=m.TaskStatus(m.TaskState.WORKING)
        )
        attempts = {
            "append_events": partial(store.append_events, ANONYMOUS, task.id, [(2, working)]),
            "update_task": partial(
                store.update_task,
                ANONYMOUS,
                task.id,
                TaskUpdate(state=m.TaskState.WORKING),
                events=[(2, working)],
            ),
        }
        with pytest.raises(TaskNotFoundError, match=f"Task {task.id} not found"):
            await attempts[write]()
