"""A lease tick's store work: keep this replica's running tasks fresh in the store and stop the
jobs whose task moved on elsewhere (see ``RuntimeConfig.recovery_lease``).

The runtime's tick loop (``TaskRuntime._keep_leases``) owns the timing and the recovery; this
module only writes and reads the store for one tick, and says whether the store answered.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterable, Iterator

import trio

from ..errors import StoreUnavailableError, TaskNotFoundError
from ..store import CallerScope, TaskAtVersion, TaskStore
from ._job import Job


async def keep_leases(store: TaskStore, jobs: Collection[Job]) -> bool:
    """Freshen the tasks of the running ``jobs`` and check that each job's task, waiting ones
    included, has not moved on elsewhere (stopping the jobs whose task did).

    The running jobs no write holds are touched together, in one write transaction
    (``touch_tasks``), made even when there are none, so a stalled store shows at every
    replica's tick, one that runs nothing included.  A job in the middle of a write touches
    its task alone once that write is over, beside the batch, and so does, to look again, a
    job whose task the batch did not touch.  Then the waiting jobs' tasks are read together
    and only those that moved are checked one by one.

    Whether the store answered every write (``False``: it was unavailable for one).
    Cancelling it (the tick's window ran out) leaves the remaining checks to the next tick.
    """
    outages: list[StoreUnavailableError] = []
    running = [job for job in jobs if not job.waiting_for_input]
    async with trio.open_nursery() as checks:
        with _held_for_touch(running) as held:
            for job in running:
                if job not in held:
                    checks.start_soon(_keep_lease, job, outages)
            untouched = await _touch_together(store, held, outages)
        for job in untouched:
            checks.start_soon(_keep_lease, job, outages)
    async with trio.open_nursery() as checks:
        for job in await _moved_waiting_jobs(store, jobs):
            checks.start_soon(_keep_lease, job, outages)
    return not outages


@contextlib.contextmanager
def _held_for_touch(jobs: Iterable[Job]) -> Iterator[dict[Job, TaskAtVersion]]:
    """Those of ``jobs`` whose write lock is free, each with its task at the version it
    knows, their locks held for the block (:meth:`Job.hold_for_touch`)."""
    held: dict[Job, TaskAtVersion] = {}
    try:
        for job in jobs:
            task = job.hold_for_touch()
            if task is not None:
                held[job] = task
        yield held
    finally:
        for job in held:
            job.release_after_touch()


async def _touch_together(
    store: TaskStore, held: dict[Job, TaskAtVersion], outages: list[StoreUnavailableError]
) -> list[Job]:
    """Touch the tasks of ``held`` in one write; the jobs whose task it did not touch (it
    moved on elsewhere, or is gone).  An unavailable store goes into ``outages``, and leaves
    every job to the next tick."""
    try:
        touched = await store.touch_tasks(held.values())
    except StoreUnavailableError as exc:
        outages.append(exc)
        return []
    return [job for job, task in held.items() if task not in touched]


async def _keep_lease(job: Job, outages: list[StoreUnavailableError]) -> None:
    """Freshen ``job``'s task alone, or stop the job when its task moved on elsewhere.  An
    unavailable store (which goes into ``outages``), or a task deleted meanwhile, waits for
    the next tick."""
    try:
        await job.keep_lease()
    except StoreUnavailableError as exc:
        outages.append(exc)
    except TaskNotFoundError:
        pass


async def _moved_waiting_jobs(store: TaskStore, jobs: Collection[Job]) -> list[Job]:
    """Those of ``jobs`` waiting for input whose task is not at the version they know: one
    ``task_versions`` read per caller scope, not one read per job (an unavailable store leaves
    that scope's jobs to the next tick).  Read without the jobs' locks, so a job that wrote
    meanwhile is only checked again, under its lock, by ``_keep_lease``."""
    by_scope: dict[CallerScope, list[Job]] = {}
    for job in jobs:
        if job.waiting_for_input:
            by_scope.setdefault(job.scope, []).append(job)
    moved: list[Job] = []
    for scope, waiting in by_scope.items():
        with contextlib.suppress(StoreUnavailableError):
            versions = await store.task_versions(scope, [job.id for job in waiting])
            moved += [job for job in waiting if versions.get(job.id) != job.version]
    return moved
