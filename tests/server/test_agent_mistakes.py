"""Mistakes an agent author makes end their task FAILED at once, with the official a2a-sdk
client told only that the agent failed and the log naming the mistake and what to do; never a
stream no client can apply, a task left WORKING, or a request that hangs."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import aclosing
from functools import partial

import a2a.types as t
import httpx
import pytest
import trio
from a2a.client import Client, ClientConfig, create_client
from a2a.utils.errors import InternalError, InvalidParamsError

from a2a_trio import Agent, Artifact, TaskContext, TaskFailed, TextPart, serve
from a2a_trio.runtime import INTERNAL_FAILURE

agent = Agent("Mistakes", "Skills written wrongly, as authors do")


@agent.skill()
async def appends_without_its_id(ctx: TaskContext) -> None:
    """Stream two chunks, forgetting to pass the first one's id to the second."""
    await ctx.emit_artifact("Roses are red, ", last_chunk=False)
    await ctx.emit_artifact("violets are blue", append=True)


@agent.skill()
async def emits_an_artifact_without_an_id(ctx: TaskContext) -> None:
    await ctx.emit_artifact(Artifact(artifact_id="", parts=[TextPart("x")]))


@agent.skill()
async def returns_an_artifact_without_parts(ctx: TaskContext) -> Artifact:
    return Artifact(artifact_id="a1", parts=[])


@agent.skill()
async def asks_two_questions_at_once(ctx: TaskContext) -> str:
    answers: list[str] = []

    async def ask(question: str) -> None:
        answers.append((await ctx.ask(question)).parts[0].text)  # type: ignore[union-attr]

    async with trio.open_nursery() as nursery:
        nursery.start_soon(ask, "Which size?")
        nursery.start_soon(ask, "Which milk?")
    return " ".join(answers)


@agent.skill()
async def reports_a_number(ctx: TaskContext) -> str:
    await ctx.update(42)  # type: ignore[arg-type]
    return "unreached"


@agent.skill()
async def fails_with_the_exception(ctx: TaskContext) -> str:
    try:
        int("forty-two")
    except ValueError as exc:
        raise TaskFailed(exc) from exc  # type: ignore[arg-type]
    return "unreached"


@agent.skill()
async def fails_from_its_nursery(ctx: TaskContext) -> str:
    async def fetch(source: int) -> None:
        if source == 2:
            raise TaskFailed(f"source {source} is down")
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        for source in range(3):
            nursery.start_soon(fetch, source)
    return "unreached"


@agent.skill()
async def rejects_from_its_nursery(ctx: TaskContext) -> str:
    async def check_calendar() -> None:
        await trio.lowlevel.checkpoint()
        ctx.reject("not today")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(check_calendar)
    return "unreached"


@agent.skill(message_only=True)
async def quick_lookup(ctx: TaskContext) -> str:
    raise TaskFailed("no such city")


@pytest.fixture
async def url(nursery: trio.Nursery) -> str:
    served: str = await nursery.start(partial(serve, agent, port=0))
    return served


@pytest.fixture
async def client(url: str) -> AsyncIterator[Client]:
    async with httpx.AsyncClient(timeout=10) as http:
        yield await create_client(url, ClientConfig(httpx_client=http, streaming=True))


def message(skill: str) -> t.SendMessageRequest:
    msg = t.Message(message_id=str(uuid.uuid4()), role=t.Role.ROLE_USER, parts=[t.Part(text="go")])
    msg.metadata.update({"skillId": skill})
    return t.SendMessageRequest(message=msg)


async def stream(client: Client, skill: str) -> list[t.StreamResponse]:
    with trio.fail_after(5):
        async with aclosing(client.send_message(message(skill))) as events:  # type: ignore[type-var]
            return [event async for event in events]


def mistake_logged(caplog: pytest.LogCaptureFixture, skill: str) -> str:
    (record,) = [r for r in caplog.records if r.name == "a2a_trio.runtime"]
    logged = record.getMessage()
    assert logged.startswith(f"skill {skill!r} used a2a_trio wrongly on task "), logged
    return logged


@pytest.mark.parametrize(
    ("skill", "named"),
    [
        # Before, the chunk went out as `append: true` for an artifact no client had seen
        # (the SDK's own server refuses that as an invalid agent response) and was stored as
        # a second artifact.
        ("appends_without_its_id", "pass artifact_id=<the id that call returned>"),
        # Before, an artifact went out without the artifactId A2A requires.
        ("emits_an_artifact_without_an_id", "an artifact needs an artifact_id"),
    ],
)
async def test_an_artifact_no_client_can_apply_fails_the_task_and_the_log_says_why(
    client: Client, skill: str, named: str, caplog: pytest.LogCaptureFixture
) -> None:
    events = await stream(client, skill)
    artifacts = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert all(a.artifact.artifact_id and not a.append for a in artifacts)
    final = events[-1].status_update.status
    assert final.state == t.TaskState.TASK_STATE_FAILED
    assert [p.text for p in final.message.parts] == [INTERNAL_FAILURE]
    assert named in mistake_logged(caplog, skill)


async def test_a_returned_artifact_without_parts_fails_the_task(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    events = await stream(client, "returns_an_artifact_without_parts")
    assert not any(e.HasField("artifact_update") for e in events)
    assert events[-1].status_update.status.state == t.TaskState.TASK_STATE_FAILED
    (record,) = [r for r in caplog.records if r.name == "a2a_trio.runtime"]
    assert "artifact 'a1' has no parts" in record.getMessage()


async def test_two_questions_at_once_fail_the_task_instead_of_leaving_it_working(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, the one follow-up answered one question: the other ask waited forever, the task
    stayed WORKING, the answer's blocking send hung and a second answer was refused."""
    caplog.set_level(logging.ERROR)
    events = await stream(client, "asks_two_questions_at_once")
    task_id = events[0].task.id
    with trio.fail_after(5):
        while True:
            task = await client.get_task(t.GetTaskRequest(id=task_id))
            if task.status.state == t.TaskState.TASK_STATE_FAILED:
                break
            await trio.sleep(0.01)
    assert [p.text for p in task.status.message.parts] == [INTERNAL_FAILURE]
    logged = mistake_logged(caplog, "asks_two_questions_at_once")  # from inside its nursery
    assert "a task asks one question at a time" in logged


async def test_a_number_as_text_fails_the_task_instead_of_breaking_the_clients_stream(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, the status update went out as ``"text": 42`` and the SDK's client gave up on
    the whole stream with a ParseError; the task was stored so."""
    events = await stream(client, "reports_a_number")
    assert events[-1].status_update.status.state == t.TaskState.TASK_STATE_FAILED
    logged = mistake_logged(caplog, "reports_a_number")
    assert "a message parts[0].text: must be a str, not int (convert it with str())" in logged


async def test_task_failed_given_an_exception_says_it_wants_the_clients_text(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, the log blamed "content no store can hold" on a returned value; the exception's
    own text, which may hold internals, was about to be the client's message."""
    events = await stream(client, "fails_with_the_exception")
    final = events[-1].status_update.status
    assert final.state == t.TaskState.TASK_STATE_FAILED
    assert [p.text for p in final.message.parts] == [INTERNAL_FAILURE]
    (record,) = [r for r in caplog.records if r.name == "a2a_trio.runtime"]
    assert record.exc_info is not None
    assert str(record.exc_info[1]).startswith(
        "TaskFailed() takes the text its client sees, a str, not ValueError"
    )


@pytest.mark.parametrize(
    ("skill", "state", "text"),
    [
        ("fails_from_its_nursery", t.TaskState.TASK_STATE_FAILED, "source 2 is down"),
        ("rejects_from_its_nursery", t.TaskState.TASK_STATE_REJECTED, "not today"),
    ],
)
async def test_task_failed_and_rejected_from_a_handlers_nursery_end_the_task_as_raised(
    client: Client, skill: str, state: t.TaskState, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    """trio wraps what a nursery's task raises in an exception group: before, such a
    TaskFailed or reject ended the task with the generic failure, and the log told the author
    to raise TaskFailed, which they had done."""
    events = await stream(client, skill)
    final = events[-1].status_update.status
    assert final.state == state
    assert [p.text for p in final.message.parts] == [text]
    assert not [r for r in caplog.records if r.name == "a2a_trio.runtime"]


async def test_task_failed_from_a_message_only_skill_reaches_its_client(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """There is no task to fail: the internal error carries the skill's text.  Before, the
    client got the generic failure and the log a traceback, as for a bug."""
    async with httpx.AsyncClient(timeout=10) as http:
        client = await create_client(url, ClientConfig(httpx_client=http, streaming=False))
        with pytest.raises(InternalError, match=r"^no such city$"):
            await stream(client, "quick_lookup")
    assert not [r for r in caplog.records if r.name == "a2a_trio.runtime"]


async def test_an_agent_without_skills_is_served_with_a_warning_saying_what_to_add(
    nursery: trio.Nursery, caplog: pytest.LogCaptureFixture
) -> None:
    """A forgotten ``@agent.skill``: before, only ``a2a-trio serve`` and ``a2a_trio.app``
    (which load the agent by name) warned; an embedded ``serve`` started silently."""
    bare = Agent("Bare", "Its skill's decorator was forgotten")
    url = await nursery.start(partial(serve, bare, port=0))
    ours = [r for r in caplog.records if r.name.startswith("a2a_trio")]
    assert [(r.levelname, r.getMessage()) for r in ours] == [
        (
            "WARNING",
            "agent 'Bare' declares no skills, so every message to it is refused (declare one"
            " with @agent.skill, where agent is your Agent, on an async def taking the task's"
            " context)",
        )
    ]
    async with httpx.AsyncClient(timeout=10) as http:
        # Not streaming: the SDK's streaming client leaks an async generator on an error.
        client = await create_client(url, ClientConfig(httpx_client=http, streaming=False))
        hello = t.Message(message_id="m1", role=t.Role.ROLE_USER, parts=[t.Part(text="hi")])
        request = t.SendMessageRequest(message=hello)
        with pytest.raises(InvalidParamsError, match="this agent declares no skills"):
            async with aclosing(client.send_message(request)) as events:  # type: ignore[type-var]
                [event async for event in events]
