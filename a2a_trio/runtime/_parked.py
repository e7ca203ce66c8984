"""Parked jobs: a handler hands back a handle to long-running work and the runtime polls it.

The poller runs in the job's own cancel scope inside the task nursery: it turns each *change* of
the handle's status into a WORKING status event (unchanged progress is not repeated), completes or
fails the task when the work ends, and cancels the work when the task is cancelled.
"""

from __future__ import annotations

import math
from typing import Any, Literal, Protocol, runtime_checkable

import attrs
import trio

from ._context import TaskContext
from ._outcome import TaskFailed

type JobState = Literal["running", "completed", "failed", "canceled"]

DEFAULT_POLL_INTERVAL = 1.0


@attrs.frozen
class JobStatus:
    """A snapshot of long-running work: its state, progress and a human-readable note."""

    state: JobState = "running"
    progress: float | None = None
    message: str | None = None


@runtime_checkable
class JobHandle(Protocol):
    """What a handler may return to park its task on long-running work."""

    async def status(self) -> JobStatus:
        """The work's current status; called every poll interval."""
        ...

    async def cancel(self) -> None:
        """Stop the work (called when the task is cancelled)."""
        ...

    async def result(self) -> Any:
        """The work's result once its status is ``completed`` (a handler return value)."""
        ...


async def poll_job(
    ctx: TaskContext, handle: JobHandle, *, interval: float = DEFAULT_POLL_INTERVAL
) -> Any:
    """Follow ``handle`` until it ends; returns its result (the task's completion value).

    Raises ``TaskFailed`` when the work fails; cancelling the caller cancels the work.
    """
    last: JobStatus | None = None
    try:
        while True:
            status = await handle.status()
            if status.state == "completed":
                return await handle.result()
            if status.state in ("failed", "canceled"):
                raise TaskFailed(status.message or f"the job {status.state}")
            if _changed(last, status):
                await ctx.update(status.message, progress=status.progress)
            last = status
            await trio.sleep(interval)
    except trio.Cancelled:
        with trio.CancelScope(shield=True), trio.move_on_after(5):
            await handle.cancel()
        raise


def _changed(last: JobStatus | None, new: JobStatus) -> bool:
    if last is None:
        return True
    if last.message != new.message:
        return True
    if last.progress is None or new.progress is None:
        return last.progress is not new.progress
    return not math.isclose(last.progress, new.progress)
