"""Noticing what holds the event loop.

A skill that calls blocking code (``time.sleep``, a synchronous HTTP client or database
driver, a long computation) stops every task, stream and keepalive of the process while it
runs, and nothing fails: streams just go quiet.  :func:`watch_for_stalls` sleeps a quarter of
the threshold at a time and logs when its sleep ends later than the threshold past its time:
one step held the loop, or the process had more to do at once than it got through.  From then
on, for :data:`DIAGNOSIS` seconds, a trio instrument times every task step and names each one
that held the loop that long, with its task: a blocking call happens within one step, so a
skill that blocks on every call is named at its next call.  The instrument (two calls and two
clock reads per step) runs only after a stall; the watcher wakes four times per threshold and
does nothing else.

Time is read from ``time.perf_counter``, not trio's clock: under ``trio.testing.MockClock``
nothing is real, and nothing is watched.
"""

from __future__ import annotations

import logging
import time
from typing import Final

import trio
import trio.testing

logger = logging.getLogger("a2a_trio.runtime")

DIAGNOSIS: Final = 60.0
"""Seconds after a stall during which every task step is timed."""

ADVICE: Final = "run blocking calls with `await trio.to_thread.run_sync(...)` (docs/agents.md)"

JOB: Final = "a2a job: "
"""How a job's trio task name starts (:func:`job_task_name`)."""


def job_task_name(skill_id: str, task_id: str) -> str:
    """The trio task name of the job running ``task_id``: what a stall warning names."""
    return f"{JOB}skill {skill_id!r} on task {task_id}"


def _describe(task: trio.lowlevel.Task) -> str:
    if task.name.startswith(JOB):
        return task.name.removeprefix(JOB)
    return f"trio task {task.name!r}"


async def watch_for_stalls(threshold: float) -> None:
    """Log every time the event loop ran nothing else for more than ``threshold`` seconds,
    and name the step that held it if one did (until cancelled)."""
    if isinstance(trio.lowlevel.current_clock(), trio.testing.MockClock):
        return
    interval = threshold / 4
    timer = _StepTimer(threshold)
    try:
        while True:
            asleep = time.perf_counter()
            await trio.sleep(interval)
            woke = time.perf_counter()
            held = woke - asleep - interval
            if held > threshold:
                if not timer.named_since(asleep):  # (a step named already said it)
                    logger.warning(
                        "the event loop was held for %.1f s (a timer ran that late): a call"
                        " that blocks, or more work at once than the process gets through;"
                        " %s. A step holding it that long is named for the next minute",
                        held,
                        ADVICE,
                    )
                timer.time_steps_until(woke + DIAGNOSIS)
            timer.expire(woke)
    finally:
        timer.expire(float("inf"))


class _StepTimer(trio.abc.Instrument):
    """Times task steps while added to the run (:meth:`time_steps_until`)."""

    def __init__(self, threshold: float) -> None:
        self._threshold = threshold
        self._until: float | None = None
        self._step_started = 0.0
        self._last_named = float("-inf")

    def time_steps_until(self, until: float) -> None:
        if self._until is None:
            self._step_started = time.perf_counter()  # the step adding it ends unseen-begun
            trio.lowlevel.add_instrument(self)
        self._until = until

    def expire(self, now: float) -> None:
        """Stop timing steps if ``now`` is past the window."""
        if self._until is not None and now >= self._until:
            self._until = None
            trio.lowlevel.remove_instrument(self)

    def named_since(self, moment: float) -> bool:
        """Whether a step ending after ``moment`` was named (the watcher then says nothing)."""
        return self._last_named > moment

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self._step_started = time.perf_counter()

    def after_task_step(self, task: trio.lowlevel.Task) -> None:
        now = time.perf_counter()
        held = now - self._step_started
        if held > self._threshold:
            self._last_named = now
            logger.warning(
                "%s held the event loop for %.1f s in one step, so no other task, stream or"
                " keepalive ran meanwhile: %s",
                _describe(task),
                held,
                ADVICE,
            )
