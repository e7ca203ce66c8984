"""A part whose media type the skill does not accept is refused (A2A v1.0 §3.1.1)."""

from __future__ import annotations

import pytest
import trio

from a2a_trio import Agent, TaskContext
from a2a_trio import model as m
from a2a_trio.errors import ContentTypeNotSupportedError
from a2a_trio.runtime import RuntimeConfig, TaskRuntime
from a2a_trio.runtime._agent import accepts_media_type
from a2a_trio.store import ANONYMOUS, MemoryTaskStore

agent = Agent("modes", "checks input modes")  # defaults: text/plain, application/json


@agent.skill(default=True)
async def plain(ctx: TaskContext) -> str:
    return "ok"


@agent.skill(input_modes=["image/*", "text/plain"])
async def images(ctx: TaskContext) -> str:
    reply = await ctx.ask("another?")
    return f"got {len(reply.parts)}"


def message(*parts: m.Part, skill: str | None = None, task_id: str = "") -> m.SendMessageRequest:
    metadata: m.JsonObject | None = {"skillId": skill} if skill else None
    return m.SendMessageRequest(
        m.Message(m.new_id(), m.Role.USER, parts, metadata=metadata, task_id=task_id)
    )


PNG = m.RawPart(b"\x89PNG", media_type="image/png")


@pytest.mark.parametrize(
    ("modes", "media_type", "accepted"),
    [
        (["text/plain"], "text/plain", True),
        (["text/plain"], "Text/Plain; charset=utf-8", True),
        (["image/*"], "image/png", True),
        (["*/*"], "application/pdf", True),
        (["image/*"], "text/plain", False),
        (["text/plain", "application/json"], "image/png", False),
        (["application/json"], "application/jsonx", False),
    ],
)
def test_matching(modes: list[str], media_type: str, accepted: bool) -> None:
    assert accepts_media_type(modes, media_type) is accepted


async def test_a_skill_refuses_parts_outside_its_input_modes() -> None:
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(agent, MemoryTaskStore(), RuntimeConfig())
        await nursery.start(runtime.run)
        with pytest.raises(ContentTypeNotSupportedError, match=r"parts\[1\].*'image/png'.*plain"):
            await runtime.send(ANONYMOUS, message(m.TextPart("hi"), PNG))
        listed = await runtime.list(ANONYMOUS, m.ListTasksRequest())
        assert listed.tasks == ()  # nothing was stored
        # Parts naming no media type are not checked; the defaults accept these:
        ok = m.DataPart({"a": 1}, media_type="application/json")
        done = await runtime.send(ANONYMOUS, message(m.TextPart("hi"), m.RawPart(b"x"), ok))
        assert isinstance(done, m.Task) and done.status.state is m.TaskState.COMPLETED
        # A skill's own modes replace the defaults, for follow-ups too:
        asked = await runtime.send(ANONYMOUS, message(PNG, skill="images"))
        assert isinstance(asked, m.Task) and asked.status.state is m.TaskState.INPUT_REQUIRED
        pdf = m.UrlPart("https://example.com/a.pdf", media_type="application/pdf")
        with pytest.raises(ContentTypeNotSupportedError, match="images"):
            await runtime.send(ANONYMOUS, message(pdf, task_id=asked.id))
        finished = await runtime.send(ANONYMOUS, message(PNG, PNG, task_id=asked.id))
        assert isinstance(finished, m.Task)
        assert finished.artifacts[0].parts == (m.TextPart("got 2"),)
        nursery.cancel_scope.cancel()
