"""A skill that blocks the event loop is warned of, then named (``RuntimeConfig.stall_warning``)."""

from __future__ import annotations

import logging
import re
import time

import pytest
import trio
import trio.testing

from a2a_trio import Agent, TaskContext
from a2a_trio import model as m
from a2a_trio.runtime import RuntimeConfig, TaskRuntime
from a2a_trio.store import ANONYMOUS, MemoryTaskStore

THRESHOLD = 0.3  # far above what a loaded test machine takes from a process
BLOCKED = 0.8
ADVICE = "run blocking calls with `await trio.to_thread.run_sync(...)` (docs/agents.md)"

agent = Agent("stalls", "blocks the event loop, or does not")


@agent.skill(default=True)
async def blocking(ctx: TaskContext) -> str:
    time.sleep(BLOCKED)  # noqa: ASYNC251 -- the mistake under test
    return "done"


@agent.skill()
async def polite(ctx: TaskContext) -> str:
    await trio.sleep(BLOCKED)
    return "done"


def request(skill: str) -> m.SendMessageRequest:
    return m.SendMessageRequest(m.text_message("go", metadata={"skillId": skill}))


async def warnings_after(
    caplog: pytest.LogCaptureFixture, config: RuntimeConfig, *skills: str
) -> list[str]:
    """The runtime's warnings while it runs ``skills`` one after the other (ids in ``{n}``)."""
    caplog.set_level(logging.WARNING, "a2a_trio.runtime")
    runtime = TaskRuntime(agent, MemoryTaskStore(), config)
    ids = []
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await trio.sleep(THRESHOLD)  # the watcher sleeps by now
        for skill in skills:
            task = await runtime.send(ANONYMOUS, request(skill))
            assert isinstance(task, m.Task) and task.status.state is m.TaskState.COMPLETED
            ids.append(task.id)
            await trio.sleep(THRESHOLD)  # the watcher wakes up, late or not
        nursery.cancel_scope.cancel()
    said = [r.getMessage() for r in caplog.records if r.name == "a2a_trio.runtime"]
    for n, task_id in enumerate(ids):
        said = [line.replace(task_id, f"{{{n}}}") for line in said]
    return said


async def test_a_blocking_skill_is_warned_of_then_named_with_its_task(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The first stall is seen by the watcher, waking late: it cannot tell who held the loop,
    so it says what happened; the steps are timed from then on, and the next stall is named
    by its skill and task (and said once).  Before, nothing was logged: streams went quiet."""
    said = await warnings_after(caplog, RuntimeConfig(stall_warning=THRESHOLD), *["blocking"] * 2)
    assert len(said) == 2, said
    late = re.match(r"the event loop was held for (\d\.\d) s ", said[0])
    assert late is not None and float(late[1]) >= BLOCKED - THRESHOLD, said[0]
    assert said[0].endswith(
        " s (a timer ran that late): a call that blocks, or more work at once than the process"
        f" gets through; {ADVICE}. A step holding it that long is named for the next minute"
    )
    named = re.fullmatch(
        r"skill 'blocking' on task \{1\} held the event loop for (\d\.\d) s in one step, so no"
        r" other task, stream or keepalive ran meanwhile: (.*)",
        said[1],
    )
    assert named is not None, said[1]
    assert (float(named[1]) >= BLOCKED, named[2]) == (True, ADVICE)


async def test_a_skill_that_awaits_is_not_warned_of(caplog: pytest.LogCaptureFixture) -> None:
    said = await warnings_after(caplog, RuntimeConfig(stall_warning=THRESHOLD), "polite", "polite")
    assert said == []


async def test_nothing_is_watched_when_asked_not_to(caplog: pytest.LogCaptureFixture) -> None:
    assert await warnings_after(caplog, RuntimeConfig(stall_warning=None), "blocking") == []


async def test_nothing_is_watched_on_a_mock_clock(
    mock_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    """Time is not real there: a test jumping the clock stalls nothing."""
    mock_clock.autojump_threshold = 0
    assert await warnings_after(caplog, RuntimeConfig(stall_warning=THRESHOLD), "blocking") == []


@pytest.mark.parametrize("value", [0, -1.0, float("inf"), float("nan")])
def test_the_threshold_is_a_positive_number_of_seconds(value: float) -> None:
    with pytest.raises(ValueError, match="stall_warning must be a positive number of seconds"):
        RuntimeConfig(stall_warning=value)
