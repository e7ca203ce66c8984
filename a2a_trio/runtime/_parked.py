"""Parked jobs: a handler hands back a handle to long-running work and the runtime polls it.

The poller runs in the job's own cancel scope inside the task nursery: it turns each *change* of
the handle's status into a WORKING status event (unchanged progress is not repeated), completes or
fails the task when the work ends, and cancels the work when the task is cancelled.
"""

from __future__ import annotations

import logging
import math
from typing import Any, Literal, Protocol, runtime_checkable

import attrs
import trio

from .. import model as m
from ..errors import StoreUnavailableError
from ._context import TaskContext
from ._outcome import TaskFailed

type JobState = Literal["running", "completed", "failed", "canceled"]

DEFAULT_POLL_INTERVAL = 1.0
DEFAULT_MAX_STATUS_FAILURES = 30
STATUS_CHECK_FAILED = "Checking the job's status failed; retrying."

logger = logging.getLogger("a2a_trio.runtime")


class JobCanceled(Exception):
    """The parked work was cancelled on its own side; its task ends CANCELED."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


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


_PLAIN_RESULTS = (str, bytes, dict, list, int, float, bool, type(None), m.Message, m.Artifact)


def is_job_handle(value: object) -> bool:
    """Whether a handler returned a :class:`JobHandle`.  A protocol ``isinstance`` looks up
    every member (about 10 us); the plain values most handlers return skip it."""
    return not isinstance(value, _PLAIN_RESULTS) and isinstance(value, JobHandle)


async def poll_job(
    ctx: TaskContext,
    handle: JobHandle,
    *,
    interval: float = DEFAULT_POLL_INTERVAL,
    max_status_failures: int = DEFAULT_MAX_STATUS_FAILURES,
) -> Any:
    """Follow ``handle`` until it ends; returns its result (the task's completion value).

    Raises ``TaskFailed`` when the work fails, ``JobCanceled`` when it was cancelled on its own
    side.  A status check that raises is transient: the task stays WORKING with a note, and
    only ``max_status_failures`` failures in a row fail it.  So is a progress update the store
    cannot take right now: the next poll records the status.  Whenever the task ends before
    the work (the caller cancelled, the status unreadable too long), the work is cancelled
    (best effort: it may have ended already).
    """
    last: JobStatus | None = None
    failures = 0
    ended = False  # on the work's own side: nothing left to cancel
    try:
        while True:
            try:
                status = await handle.status()
                failures = 0
            except Exception:  # the work's own fault; it may well recover
                failures += 1
                logger.warning("status check %d of a parked job failed", failures, exc_info=True)
                if failures >= max_status_failures:
                    raise TaskFailed("The job's status could not be read.") from None
                progress = last.progress if last else None
                status = JobStatus("running", progress, STATUS_CHECK_FAILED)
            if status.state != "running":
                ended = True
            if status.state == "completed":
                return await handle.result()
            if status.state == "failed":
                raise TaskFailed(status.message or "The job failed.")
            if status.state == "canceled":
                raise JobCanceled(status.message or "The job was canceled.")
            if not _changed(last, status) or await _reported(ctx, status):
                last = status
            await trio.sleep(interval)
    finally:
        if not ended:  # cancelled, or given up on: the task ends, so must the work
            await _cancel_work(handle)


async def _reported(ctx: TaskContext, status: JobStatus) -> bool:
    """Record a change of the work's status; False when the store cannot take it right now.
    Progress is not worth failing long-running work for: the next poll tries again."""
    try:
        await ctx.update(status.message, progress=status.progress)
    except StoreUnavailableError as exc:
        logger.warning(
            "a parked job's progress was not recorded, retrying at the next poll: %s", exc
        )
        return False
    return True


async def _cancel_work(handle: JobHandle) -> None:
    """Best effort, bounded and shielded: the work may have ended on its own meanwhile."""
    with trio.CancelScope(shield=True), trio.move_on_after(5):
        try:
            await handle.cancel()
        except Exception:
            logger.warning("cancelling a parked job failed", exc_info=True)


def _changed(last: JobStatus | None, new: JobStatus) -> bool:
    if last is None:
        return True
    if last.message != new.message:
        return True
    if last.progress is None or new.progress is None:
        return last.progress is not new.progress
    return not math.isclose(last.progress, new.progress)
