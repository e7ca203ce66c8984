"""Declaring skills: ``@agent.skill`` with or without parentheses, and handlers the runtime
could not run refused where they are declared rather than failing every task later."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import trio

from a2a_trio import Agent, TaskContext
from a2a_trio import model as m
from a2a_trio.errors import AgentMisuseError
from a2a_trio.runtime import RuntimeConfig, TaskRuntime
from a2a_trio.store import ANONYMOUS, MemoryTaskStore


async def test_a_skill_declared_without_parentheses_answers(nursery: trio.Nursery) -> None:
    agent = Agent("Greeter")

    @agent.skill
    async def greet(ctx: TaskContext) -> str:
        """Say hello."""
        return f"Hello, {ctx.text}!"

    assert [(s.id, s.description) for s in agent.skills] == [("greet", "Say hello.")]
    runtime = TaskRuntime(agent, MemoryTaskStore(), RuntimeConfig(poll_interval=0.01))
    await nursery.start(runtime.run)
    task = await runtime.send(ANONYMOUS, m.SendMessageRequest(m.text_message("Ada")))
    assert isinstance(task, m.Task)
    assert task.artifacts[0].parts == (m.TextPart("Hello, Ada!"),)


def sync_greet(ctx: TaskContext) -> str:
    return "hi"


async def no_context() -> str:
    return "hi"


async def two_arguments(ctx: TaskContext, text: str) -> str:
    return text


async def chunks(ctx: TaskContext) -> AsyncIterator[str]:
    yield "a"


@pytest.mark.parametrize(
    ("handler", "says"),
    [
        (
            sync_greet,
            "skill 'sync_greet' is a plain function:"
            " declare it as `async def sync_greet(ctx: TaskContext)`",
        ),
        (
            no_context,
            "skill 'no_context' cannot take the task's context as its one argument"
            " (it takes ()): declare it as `async def no_context(ctx: TaskContext)`",
        ),
        (
            two_arguments,
            "skill 'two_arguments' cannot take the task's context as its one argument"
            " (it takes (ctx, text)): declare it as `async def two_arguments(ctx: TaskContext)`",
        ),
        (
            chunks,
            "skill 'chunks' yields: a skill returns its answer; to stream it in pieces,"
            " `await ctx.emit_artifact(chunk, ...)` each one instead of yielding it",
        ),
    ],
)
def test_a_handler_the_runtime_cannot_run_is_refused_where_declared(
    handler: Callable[..., object], says: str
) -> None:
    agent = Agent("Greeter")
    with pytest.raises(AgentMisuseError) as refused:
        agent.skill()(handler)  # type: ignore[arg-type]
    assert str(refused.value).startswith(says)
    assert agent.skills == ()


def test_the_declaration_to_write_names_the_function_not_the_skill_id() -> None:
    with pytest.raises(AgentMisuseError, match=r"declare it as `async def sync_greet\(ctx"):
        Agent("Greeter").skill("greet")(sync_greet)  # type: ignore[arg-type]


def test_handlers_that_await_to_an_answer_are_accepted() -> None:
    """A sync wrapper of an ``async def`` (``functools.wraps``), a partial and an object with
    an async ``__call__`` all give something to await."""

    async def reply(ctx: TaskContext, greeting: str = "hi") -> str:
        return greeting

    @functools.wraps(reply)
    def logged(ctx: TaskContext) -> Awaitable[str]:
        return reply(ctx)

    class Replier:
        async def __call__(self, ctx: TaskContext) -> str:
            return "hi"

    agent = Agent("Greeter")
    agent.skill("wrapped")(logged)
    agent.skill("partial")(functools.partial(reply, greeting="hello"))
    agent.skill("object")(Replier())
    assert [s.id for s in agent.skills] == ["wrapped", "partial", "object"]
