"""``TaskRuntime.is_parked``: the legacy binding answers tasks/send once a job is parked."""

from __future__ import annotations

import trio
import trio.testing

from a2a_trio import Agent, JobStatus, TaskContext
from a2a_trio import model as m
from a2a_trio.runtime import RuntimeConfig, TaskRuntime
from a2a_trio.store import ANONYMOUS, MemoryTaskStore

agent = Agent("parking")
release = trio.Event()


class Waiting:
    async def status(self) -> JobStatus:
        return JobStatus(state="completed" if release.is_set() else "running", progress=0.5)

    async def cancel(self) -> None:
        release.set()

    async def result(self) -> str:
        return "done"


@agent.skill(default=True)
async def plain(ctx: TaskContext) -> str:
    await ctx.update("working on it")
    await release.wait()
    return "plain"


@agent.skill()
async def parks(ctx: TaskContext) -> Waiting:
    return Waiting()


async def test_only_a_handler_that_returned_a_job_handle_is_parked(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    runtime = TaskRuntime(agent, MemoryTaskStore(), RuntimeConfig(poll_interval=0.01))
    await nursery.start(runtime.run)
    ids = {}
    for skill in ("plain", "parks"):
        message = m.text_message("go", metadata={"skillId": skill})
        config = m.SendMessageConfiguration(return_immediately=True)
        task = await runtime.send(ANONYMOUS, m.SendMessageRequest(message, configuration=config))
        assert isinstance(task, m.Task)
        ids[skill] = task.id
    await trio.testing.wait_all_tasks_blocked()
    assert runtime.is_parked(ANONYMOUS, ids["parks"])
    assert not runtime.is_parked(ANONYMOUS, ids["plain"])
    assert not runtime.is_parked(ANONYMOUS, "unknown")
    release.set()
    await trio.sleep(1)  # virtual time: the poller sees the release and the job ends
    assert not runtime.is_parked(ANONYMOUS, ids["parks"])  # finished: no longer a live job
