"""A job's final write, once its handler has ended on its own, is not cut short.

The job's own cancel scope shields and bounds that write (``Job.finalizing``; a scope of its
own did before, one more per task), so what would cancel the handler, a CancelTask, a drain
or the runtime's own cancellation, must no longer reach it, and ``finalize_timeout`` still
bounds it.  The store here holds each final write until the test lets it through, so the
write is under way when those arrive.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from a2a_trio import Agent, TaskContext
from a2a_trio import model as m
from a2a_trio.errors import TaskNotCancelableError
from a2a_trio.runtime import RuntimeConfig, TaskRuntime
from a2a_trio.store import ANONYMOUS, CallerScope, MemoryTaskStore, StoredTask, TaskUpdate
from runtime.lost_answers import final_write

agent = Agent("finalizing", "echoes")


@agent.skill(default=True)
async def echo(ctx: TaskContext) -> str:
    return ctx.text


class HeldFinalWrites(MemoryTaskStore):
    """A memory store whose final writes wait for ``release`` (``started`` once one does)."""

    def __init__(self) -> None:
        super().__init__()
        self.started = trio.Event()
        self.release = trio.Event()

    async def update_task(
        self, scope: CallerScope, task_id: str, update: TaskUpdate, **kwargs: Any
    ) -> StoredTask:
        if final_write(update):
            self.started.set()
            await self.release.wait()
        return await super().update_task(scope, task_id, update, **kwargs)


async def final_write_held(
    store: HeldFinalWrites, nursery: trio.Nursery, **config: Any
) -> tuple[TaskRuntime, str]:
    """A runtime on ``store`` (in ``nursery``) and a task whose handler has ended and whose
    final write waits for ``store.release``."""
    runtime = TaskRuntime(agent, store, RuntimeConfig(**config))
    await nursery.start(runtime.run)
    at_once = m.SendMessageConfiguration(return_immediately=True)
    task = await runtime.send(
        ANONYMOUS, m.SendMessageRequest(m.text_message("hi"), configuration=at_once)
    )
    assert isinstance(task, m.Task)
    await store.started.wait()
    return runtime, task.id


async def stored_state(store: HeldFinalWrites, task_id: str) -> m.TaskState:
    stored = await store.load_task(ANONYMOUS, task_id)
    assert stored is not None
    return stored.task.status.state


async def test_a_cancel_during_the_final_write_finds_the_task_completed() -> None:
    store = HeldFinalWrites()
    async with trio.open_nursery() as nursery:
        runtime, task_id = await final_write_held(store, nursery)
        refused: list[TaskNotCancelableError] = []

        async def cancel() -> None:
            with pytest.raises(TaskNotCancelableError) as error:
                await runtime.cancel(ANONYMOUS, task_id)
            refused.append(error.value)

        nursery.start_soon(cancel)
        await trio.testing.wait_all_tasks_blocked()
        store.release.set()
        await trio.testing.wait_all_tasks_blocked()
        assert refused[0].message.endswith("COMPLETED first")
        assert await stored_state(store, task_id) is m.TaskState.COMPLETED
        nursery.cancel_scope.cancel()


async def test_a_drain_during_the_final_write_lets_it_through() -> None:
    store = HeldFinalWrites()
    async with trio.open_nursery() as nursery:
        runtime, task_id = await final_write_held(store, nursery)
        drained = trio.Event()

        async def drain() -> None:
            await runtime.drain(0)  # the grace is over at once: running jobs are stopped
            drained.set()

        nursery.start_soon(drain)
        await trio.testing.wait_all_tasks_blocked()
        assert not drained.is_set()  # it waits for the write
        store.release.set()
        await drained.wait()
        assert await stored_state(store, task_id) is m.TaskState.COMPLETED
        nursery.cancel_scope.cancel()


async def test_the_runtimes_cancellation_lets_the_final_write_through() -> None:
    store = HeldFinalWrites()

    async def release_once_all_wait() -> None:
        await trio.testing.wait_all_tasks_blocked()
        store.release.set()

    async with trio.open_nursery() as outside:
        with trio.CancelScope() as serving:  # as serve() cancelled by its caller
            async with trio.open_nursery() as nursery:
                _, task_id = await final_write_held(store, nursery)
                outside.start_soon(release_once_all_wait)
                serving.cancel()
    assert await stored_state(store, task_id) is m.TaskState.COMPLETED


async def test_finalize_timeout_still_bounds_the_final_write(
    autojump_clock: trio.testing.MockClock,
) -> None:
    store = HeldFinalWrites()  # never released: the write never ends by itself
    async with trio.open_nursery() as nursery:
        runtime, task_id = await final_write_held(store, nursery, finalize_timeout=5.0)
        await trio.sleep(4.9)
        assert runtime.has_job(ANONYMOUS, task_id)  # still writing
        await trio.sleep(0.2)
        assert not runtime.has_job(ANONYMOUS, task_id)  # the deadline cut it: retired
        assert await stored_state(store, task_id) is m.TaskState.SUBMITTED
        nursery.cancel_scope.cancel()
