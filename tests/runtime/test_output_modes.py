"""``ctx.accepted_output_modes`` and ``ctx.accepts``: what a task's runs see, restarts included."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from a2a_trio import Agent, TaskContext
from a2a_trio import model as m
from a2a_trio.runtime import RuntimeConfig, TaskRuntime
from a2a_trio.runtime._job import Incoming
from a2a_trio.store import ANONYMOUS, MemoryTaskStore

FAST = RuntimeConfig(poll_interval=0.01)
agent = Agent("modes", "records the output modes its handlers see")
seen: list[tuple[str, ...]] = []


@agent.skill(default=True)
async def asking(ctx: TaskContext) -> str:
    seen.append(ctx.accepted_output_modes)
    await ctx.ask("which?")
    seen.append(ctx.accepted_output_modes)
    return "ok"


@agent.skill(resumable=True)
async def endless(ctx: TaskContext) -> None:
    seen.append(ctx.accepted_output_modes)
    await trio.sleep_forever()


def request(
    *modes: str, skill: str = "", task_id: str = "", at_once: bool = False
) -> m.SendMessageRequest:
    metadata: m.JsonObject | None = {"skillId": skill} if skill else None
    return m.SendMessageRequest(
        m.text_message("hi", task_id=task_id, metadata=metadata),
        configuration=m.SendMessageConfiguration(
            accepted_output_modes=modes, return_immediately=at_once
        ),
    )


@pytest.mark.parametrize(
    ("modes", "media_type", "accepted"),
    [
        ((), "image/png", True),  # none listed: anything
        (("application/json",), "application/json", True),
        (("Application/JSON",), "application/json; charset=utf-8", True),
        (("text/plain; charset=utf-8",), "TEXT/PLAIN", True),
        (("text/*",), "text/markdown", True),
        (("text/*",), "application/json", False),
        (("*/*",), "image/png", True),
        (("image/png", "image/jpeg"), "image/gif", False),
        (("application/json",), "application/json-seq", False),
        (("text",), "text/plain", True),  # a bare type, as older A2A samples list it: text/*
        (("text",), "application/json", False),
        (("*",), "image/png", True),  # as */*
        (("", " ; q=1"), "text/plain", False),  # nothing named
    ],
)
def test_accepts_matches_media_ranges(
    modes: tuple[str, ...], media_type: str, accepted: bool
) -> None:
    ctx = TaskContext(None, Incoming(m.text_message("hi"), modes), caller=ANONYMOUS)
    assert ctx.accepts(media_type) is accepted


async def test_a_run_again_after_a_restart_sees_no_modes() -> None:
    """They are not stored with the task: a resumable task the next start runs again sees
    none (so ``accepts`` says yes to anything)."""
    seen.clear()
    store = MemoryTaskStore()
    async with trio.open_nursery() as nursery:
        first = TaskRuntime(agent, store, FAST)
        await nursery.start(first.run)
        await first.send(ANONYMOUS, request("text/csv", skill="endless", at_once=True))
        await trio.testing.wait_all_tasks_blocked()
        await first.drain(0.05)
        nursery.cancel_scope.cancel()
    async with trio.open_nursery() as nursery:
        await nursery.start(TaskRuntime(agent, store, FAST).run)
        await trio.testing.wait_all_tasks_blocked()  # the re-run started and waits
        nursery.cancel_scope.cancel()
    assert seen == [("text/csv",), ()]


async def test_an_answer_after_a_restart_brings_its_own_modes() -> None:
    """A task waiting for input when the server stopped is run again by the answer: that run
    sees the answer's modes, and the next answer's once it asks again."""
    seen.clear()
    store = MemoryTaskStore()
    async with trio.open_nursery() as nursery:
        first = TaskRuntime(agent, store, FAST)
        await nursery.start(first.run)
        waiting = await first.send(ANONYMOUS, request("text/plain"))
        nursery.cancel_scope.cancel()
    assert isinstance(waiting, m.Task)
    async with trio.open_nursery() as nursery:
        second = TaskRuntime(agent, store, FAST)
        await nursery.start(second.run)
        again = await second.send(ANONYMOUS, request("application/json", task_id=waiting.id))
        assert isinstance(again, m.Task)
        assert again.status.state is m.TaskState.INPUT_REQUIRED
        done = await second.send(ANONYMOUS, request(task_id=waiting.id))
        nursery.cancel_scope.cancel()
    assert isinstance(done, m.Task) and done.status.state is m.TaskState.COMPLETED
    assert seen == [("text/plain",), ("application/json",), ()]
