"""One lease tick's store work (``keep_leases``) at a replica running several jobs."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import trio
import trio.testing

from a2a_trio import model as m
from a2a_trio.runtime import TaskRuntime
from a2a_trio.runtime._lease import keep_leases
from a2a_trio.store import ANONYMOUS, MemoryTaskStore, StoredTask, TaskAtVersion, TaskUpdate

from .test_replicas import LONG, Proxy, Quiet, Streaming, lost, quiet_runs, started, streaming_runs


class HeldWrites(Proxy):
    """Counts the touches; holds the task ``held``'s writes until ``release``."""

    def __init__(self, store: MemoryTaskStore) -> None:
        super().__init__(store)
        self.batches: list[set[TaskAtVersion]] = []
        self.alone: list[TaskAtVersion] = []
        self.held = ""
        self.holding = trio.Event()
        self.release = trio.Event()

    async def touch_tasks(self, tasks: Collection[TaskAtVersion]) -> set[TaskAtVersion]:
        self.batches.append(set(tasks))
        return await self.store.touch_tasks(tasks)

    async def touch_task(self, scope: Any, task_id: str, *, expected_version: int) -> bool:
        self.alone.append(TaskAtVersion(scope, task_id, expected_version))
        return await self.store.touch_task(scope, task_id, expected_version=expected_version)

    async def update_task(self, scope: Any, task_id: str, *args: Any, **kwargs: Any) -> StoredTask:
        if task_id == self.held:
            self.holding.set()
            await self.release.wait()
        return await self.store.update_task(scope, task_id, *args, **kwargs)


async def test_a_tick_touches_the_idle_jobs_together_and_one_mid_write_after_its_write() -> None:
    """Three quiet jobs go in one ``touch_tasks``; the streaming job, whose write is under way,
    touches alone once that write is stored, at the version it wrote.  Before, each job made
    its own write transaction, four in all."""
    store = HeldWrites(MemoryTaskStore())
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(lost, store, LONG)
        await nursery.start(runtime.run)
        quiet = []
        for number in range(3):
            text = f"quiet {number} {m.new_id()}"
            quiet_runs[text] = runs = Quiet()
            quiet.append(await started(runtime, text, "quiet"))
            await runs.started[0].wait()
        text = f"streaming {m.new_id()}"
        streaming_runs[text] = run = Streaming()
        writing = await started(runtime, text, "streaming")
        await run.at_gate.wait()
        store.held = writing.id
        nursery.start_soon(run.write_one)
        await store.holding.wait()
        jobs = list(runtime._jobs.values())
        with trio.fail_after(5):
            async with trio.open_nursery() as tick:
                tick.start_soon(keep_leases, store, jobs)
                await trio.testing.wait_all_tasks_blocked()
                assert store.batches == [{TaskAtVersion(ANONYMOUS, t.id, 1) for t in quiet}]
                assert store.alone == []  # its write holds the lock: its touch waits
                store.release.set()
        written = await store.load_task(ANONYMOUS, writing.id)
        assert written is not None and written.version == 3
        assert store.alone == [TaskAtVersion(ANONYMOUS, writing.id, 3)]
        assert len(store.batches) == 1
        assert runtime.statistics().running_jobs == 4
        nursery.cancel_scope.cancel()


async def test_a_tick_stops_a_job_whose_task_moved_on_outside_the_batch() -> None:
    """A task another replica wrote is not touched by the batch; its job looks again alone
    and stops, while the others run on."""
    store = HeldWrites(MemoryTaskStore())
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(lost, store, LONG)
        await nursery.start(runtime.run)
        tasks, runs = [], []
        for number in range(2):
            text = f"quiet {number} {m.new_id()}"
            quiet_runs[text] = quiet = Quiet()
            tasks.append(await started(runtime, text, "quiet"))
            runs.append(quiet)
            await quiet.started[0].wait()
        moved, kept = tasks
        await store.store.update_task(ANONYMOUS, moved.id, TaskUpdate())  # another replica
        with trio.fail_after(5):
            assert await keep_leases(store, list(runtime._jobs.values()))
            await runs[0].ended[0].wait()
        assert store.batches == [{TaskAtVersion(ANONYMOUS, t.id, 1) for t in tasks}]
        assert store.alone == [TaskAtVersion(ANONYMOUS, moved.id, 1)]
        assert not runs[1].ended[0].is_set()
        assert list(runtime._jobs) == [kept.id]
        nursery.cancel_scope.cancel()
