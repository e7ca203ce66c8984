"""Handler content that no wire form or store can carry fails its task, never the runtime.

Before, a return value such as ``{"n": 2**80}`` made the SQLite store's encoder raise inside
the job's shielded final write, which took the whole runtime down with it.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from a2a_trio import Agent, TaskContext
from a2a_trio import model as m
from a2a_trio.errors import InternalError
from a2a_trio.runtime import INTERNAL_FAILURE, RuntimeConfig, TaskRuntime
from a2a_trio.store import ANONYMOUS, open_store
from runtime.streams import read_all


def nested(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels - 1):
        value = [value]
    return value


BAD_VALUES: list[Any] = [
    {"checksum": 2**80},
    [b"x"],
    {"b": b"\x00"},
    {1: "a"},
    {"a": object()},
    {"deep": nested(70)},
    "lone \ud800 surrogate",
    {"score": float("nan")},  # stored as null, and the read-back could not find its own write
    [float("-inf")],
    m.DataPart({"k": {2: 3}}),
    m.TextPart("ok", metadata={"when": object()}),  # type: ignore[dict-item]
]

agent = Agent("content", "returns what it is told to")
wanted: dict[str, Any] = {}


@agent.skill(default=True)
async def give(ctx: TaskContext) -> Any:
    return wanted[ctx.text]


@agent.skill()
async def emit(ctx: TaskContext) -> str:
    await ctx.emit_artifact(wanted[ctx.text])
    return "not reached"


@agent.skill(message_only=True)
async def reply(ctx: TaskContext) -> Any:
    return wanted[ctx.text]


releases: dict[str, trio.Event] = {}


@agent.skill()
async def slow(ctx: TaskContext) -> str:
    await releases[ctx.text].wait()
    return "slow done"


def send(text: str, skill: str | None = None, *, wait: bool = True) -> m.SendMessageRequest:
    metadata: m.JsonObject | None = {"skillId": skill} if skill else None
    config = m.SendMessageConfiguration(return_immediately=not wait)
    return m.SendMessageRequest(m.text_message(text, metadata=metadata), configuration=config)


async def test_unstorable_content_fails_only_its_task(store_url: str) -> None:
    wanted.update({f"bad{i}": value for i, value in enumerate(BAD_VALUES)})
    async with open_store(store_url) as store, trio.open_nursery() as nursery:
        runtime = TaskRuntime(agent, store, RuntimeConfig())
        await nursery.start(runtime.run)
        releases["s"] = trio.Event()
        slow = await runtime.send(ANONYMOUS, send("s", "slow", wait=False))
        for name in [f"bad{i}" for i in range(len(BAD_VALUES))]:
            for skill in (None, "emit"):
                with trio.fail_after(5):
                    task = await runtime.send(ANONYMOUS, send(name, skill))
                assert isinstance(task, m.Task)
                assert task.status.state is m.TaskState.FAILED, (name, skill)
                assert task.status.message is not None
                assert task.status.message.parts == (m.TextPart(INTERNAL_FAILURE),)
                stored = await runtime.get(ANONYMOUS, task.id, None)
                assert stored.status.state is m.TaskState.FAILED
                assert stored.artifacts == ()
            with pytest.raises(InternalError):
                await runtime.send(ANONYMOUS, send(name, "reply"))
        wanted["fine"] = {"n": 2**63 - 1, "list": [1.5, None, True, "ü"]}
        fine = await runtime.send(ANONYMOUS, send("fine"))
        assert isinstance(fine, m.Task) and fine.status.state is m.TaskState.COMPLETED
        assert fine.artifacts[0].parts == (
            m.DataPart(wanted["fine"], media_type="application/json"),
        )
        assert isinstance(slow, m.Task)  # the unrelated job ran on undisturbed
        stream = await runtime.subscribe(ANONYMOUS, slow.id)
        releases["s"].set()
        with trio.fail_after(5):
            events = [entry.event for entry in await read_all(stream)]
        assert isinstance(events[-1], m.TaskStatusUpdateEvent)
        assert events[-1].status.state is m.TaskState.COMPLETED
        nursery.cancel_scope.cancel()
