"""A lease tick's store work: keep this replica's running tasks fresh in the store and stop the
jobs whose task moved on elsewhere (see ``RuntimeConfig.recovery_lease``).

The runtime's tick loop (``TaskRuntime._keep_leases``) owns the timing and the recovery; this
module only writes and reads the store for one tick, and says whether the store answered.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection

import trio

from ..errors import StoreUnavailableError, TaskNotFoundError
from ..store import CallerScope, TaskStore
from ._job import Job


async def keep_leases(store: TaskStore, jobs: Collection[Job]) -> bool:
    """Freshen the tasks of the running ``jobs`` and check that each job's task, waiting ones
    included, has not moved on elsewhere (stopping the jobs whose task did).  The checks run
    side by side, the running jobs first, then the waiting jobs' tasks are read together and
    only those that moved are checked one by one.

    Whether the store answered every write (``False``: it was unavailable for one).
    Cancelling it (the tick's window ran out) leaves the remaining checks to the next tick.
    """
    failed: list[Job] = []
    async with trio.open_nursery() as checks:
        for job in jobs:
            if not job.waiting_for_input:
                checks.start_soon(_keep_lease, job, failed)
    async with trio.open_nursery() as checks:
        for job in await _moved_waiting_jobs(store, jobs):
            checks.start_soon(_keep_lease, job, failed)
    return not failed


async def _keep_lease(job: Job, failed: list[Job]) -> None:
    """Freshen ``job``'s task, or stop the job when its task moved on elsewhere.  An
    unavailable store (the job goes into ``failed``), or a task deleted meanwhile, waits
    for the next tick."""
    try:
        await job.keep_lease()
    except StoreUnavailableError:
        failed.append(job)
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
