"""Parked jobs whose handles misbehave: flaky status checks, work cancelled on its own side."""

from __future__ import annotations

from typing import ClassVar

import trio

from a2a_trio import Agent, JobStatus, TaskContext
from a2a_trio import model as m
from a2a_trio.runtime import RuntimeConfig, TaskRuntime
from a2a_trio.runtime._parked import STATUS_CHECK_FAILED
from a2a_trio.store import ANONYMOUS, MemoryTaskStore
from runtime.streams import read_all

agent = Agent("parking lot")


class Flaky:
    """Status checks fail ``failures`` times, then the work completes."""

    def __init__(self, failures: int) -> None:
        self.left = failures

    async def status(self) -> JobStatus:
        if self.left > 0:
            self.left -= 1
            raise ConnectionError("registry unreachable at 10.0.0.7")
        return JobStatus("completed")

    async def cancel(self) -> None:
        raise RuntimeError("already gone")

    async def result(self) -> str:
        return "made it"


class CanceledElsewhere(Flaky):
    async def status(self) -> JobStatus:
        return JobStatus("canceled", message="canceled by the parent job")


class Unreachable(Flaky):
    """Work that runs on while its status cannot be read; records being cancelled."""

    handles: ClassVar[list[Unreachable]] = []

    def __init__(self) -> None:
        super().__init__(10_000)
        self.cancelled = False
        self.handles.append(self)

    async def cancel(self) -> None:
        self.cancelled = True


@agent.skill(default=True)
async def flaky(ctx: TaskContext) -> Flaky:
    """Two failed status checks, then done."""
    return Flaky(2)


@agent.skill()
async def hopeless(ctx: TaskContext) -> Flaky:
    """Status checks that never succeed."""
    return Flaky(10_000)


@agent.skill()
async def unreachable(ctx: TaskContext) -> Unreachable:
    """Status checks that never succeed, on work that would run on."""
    return Unreachable()


@agent.skill()
async def elsewhere(ctx: TaskContext) -> CanceledElsewhere:
    """Work that gets cancelled by somebody else."""
    return CanceledElsewhere(0)


async def run(skill: str) -> list[m.StreamEvent]:
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(agent, MemoryTaskStore(), RuntimeConfig(poll_interval=0.001))
        await nursery.start(runtime.run)
        message = m.text_message("go", metadata={"skillId": skill})
        stream = await runtime.send_stream(ANONYMOUS, m.SendMessageRequest(message))
        with trio.fail_after(10):
            entries = await read_all(stream)
        nursery.cancel_scope.cancel()
    return [entry.event for entry in entries]


def final_status(events: list[m.StreamEvent]) -> m.TaskStatus:
    last = events[-1]
    assert isinstance(last, m.TaskStatusUpdateEvent)
    return last.status


async def test_failed_status_checks_are_transient() -> None:
    events = await run("flaky")
    notes = [
        e.status.message.parts
        for e in events
        if isinstance(e, m.TaskStatusUpdateEvent)
        and e.status.state is m.TaskState.WORKING
        and e.status.message is not None
    ]
    assert notes == [(m.TextPart(STATUS_CHECK_FAILED),)]  # said once, not repeated
    assert final_status(events).state is m.TaskState.COMPLETED
    assert "10.0.0.7" not in repr(events)  # the exception text is logged, never sent


async def test_status_checks_that_never_succeed_fail_the_task() -> None:
    status = final_status(await run("hopeless"))
    assert status.state is m.TaskState.FAILED


async def test_work_given_up_on_is_cancelled() -> None:
    """The task fails because the work's status cannot be read: the work is cancelled too, not
    left running with nobody following it (before: cancelled only when the task was)."""
    status = final_status(await run("unreachable"))
    assert status.state is m.TaskState.FAILED
    [handle] = Unreachable.handles
    assert handle.cancelled


async def test_work_that_ends_on_its_side_is_not_cancelled() -> None:
    events = await run("flaky")
    assert final_status(events).state is m.TaskState.COMPLETED  # Flaky.cancel would raise


async def test_work_cancelled_elsewhere_ends_the_task_canceled() -> None:
    status = final_status(await run("elsewhere"))
    assert status.state is m.TaskState.CANCELED
    assert status.message is not None
    assert status.message.parts == (m.TextPart("canceled by the parent job"),)
