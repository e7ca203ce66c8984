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
from a2a_trio.errors import AgentMisuseError, InternalError
from a2a_trio.runtime import INTERNAL_FAILURE, RuntimeConfig, TaskRuntime
from a2a_trio.runtime._content import check_update
from a2a_trio.store import ANONYMOUS, ArtifactWrite, TaskUpdate, open_store
from runtime.streams import read_all

nan = float("nan")
MAX_JSON_DEPTH = m.MAX_JSON_DEPTH


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


def _artifact(part: m.Part, **fields: Any) -> m.Artifact:
    return m.Artifact(artifact_id="a1", parts=(m.TextPart("ok"), part), **fields)


NAMED_PROBLEMS: list[tuple[TaskUpdate, str]] = [
    (TaskUpdate(metadata={"n": 2**80}), "the update's metadata: integer"),
    (
        TaskUpdate(messages=(m.text_message("ok", metadata={1: "a"}),)),  # type: ignore[dict-item]
        "a message's metadata: object keys",
    ),
    (
        TaskUpdate(messages=(m.text_message("ok"), m.text_message("lone \ud800"))),
        "a message parts[0].text: a string holds a lone surrogate",
    ),
    (
        TaskUpdate(
            state=m.TaskState.COMPLETED,
            status_message=m.Message("s", m.Role.AGENT, (m.DataPart([b"x"]),)),
        ),
        "a message parts[0].data: not a JSON value: bytes",
    ),
    (
        TaskUpdate(artifacts=[ArtifactWrite(_artifact(m.TextPart("ok"), metadata={"x": [nan]}))]),
        "artifact 'a1' metadata: nan is not a JSON number",
    ),
    (
        TaskUpdate(artifacts=[ArtifactWrite(_artifact(m.TextPart("ok"), name="\udfff"))]),
        "artifact 'a1' name and description: a string holds a lone surrogate",
    ),
    (
        TaskUpdate(
            artifacts=[ArtifactWrite(_artifact(m.TextPart("ok", metadata={"d": nested(65)})))]
        ),
        "artifact 'a1' parts[1].metadata: JSON nested deeper than 64 levels",
    ),
    (
        TaskUpdate(artifacts=[ArtifactWrite(_artifact(m.DataPart({"k": object()})))]),
        "artifact 'a1' parts[1].data: not a JSON value: object",
    ),
    # JSON, but no A2A client reads a number where a string belongs
    (
        TaskUpdate(artifacts=[ArtifactWrite(_artifact(m.TextPart("ok"), name=7))]),  # type: ignore[arg-type]
        "artifact 'a1' name and description: must be a str, not int",
    ),
    (
        TaskUpdate(messages=(m.Message("s", m.Role.AGENT, (m.TextPart(3.5),)),)),  # type: ignore[arg-type]
        "a message parts[0].text: must be a str, not float",
    ),
    (
        TaskUpdate(artifacts=[ArtifactWrite(_artifact(m.UrlPart(None)))]),  # type: ignore[arg-type]
        "artifact 'a1' parts[1].url: must be a str, not NoneType",
    ),
    (
        TaskUpdate(artifacts=[ArtifactWrite(_artifact(m.RawPart("text, not bytes")))]),  # type: ignore[arg-type]
        "artifact 'a1' parts[1].raw: must be bytes, not str",
    ),
    (
        TaskUpdate(artifacts=[ArtifactWrite(_artifact(m.TextPart("ok", media_type=1)))]),  # type: ignore[arg-type]
        "artifact 'a1' parts[1].media_type and filename: must be a str, not int",
    ),
]


@pytest.mark.parametrize(("update", "named"), NAMED_PROBLEMS)
def test_a_content_check_names_the_first_bad_value(update: TaskUpdate, named: str) -> None:
    """Content is walked in one go first (docs/benchmarks.md, finding 7); a problem found
    there is named by where it is, wherever in an update it sits."""
    with pytest.raises(AgentMisuseError) as refused:
        check_update(update)
    assert str(refused.value).startswith(named)


def test_content_nested_to_the_limit_passes_the_check() -> None:
    """The first walk sees the values one level deeper than they are: content nested exactly
    as deep as the codecs read passes, one level more does not."""
    deepest, too_deep = nested(MAX_JSON_DEPTH), nested(MAX_JSON_DEPTH + 1)
    deepest_object, too_deep_object = {"d": nested(MAX_JSON_DEPTH - 1)}, {"d": deepest}
    assert m.json_problem(deepest) is None and m.json_problem(deepest_object) is None
    artifact = _artifact(m.DataPart(deepest), metadata=deepest_object)
    check_update(TaskUpdate(metadata=deepest_object, artifacts=[ArtifactWrite(artifact)]))
    with pytest.raises(AgentMisuseError, match="the update's metadata: JSON nested deeper"):
        check_update(TaskUpdate(metadata=too_deep_object))
    too_deep_artifact = _artifact(m.DataPart(too_deep))
    with pytest.raises(AgentMisuseError, match=r"'a1' parts\[1\]\.data: JSON nested deeper"):
        check_update(TaskUpdate(artifacts=[ArtifactWrite(too_deep_artifact)]))
