"""Declaring skills: ``@agent.skill`` with or without parentheses, and handlers the runtime
could not run refused where they are declared rather than failing every task later."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial

import pytest
import trio

from a2a_trio import Agent, TaskContext, serve
from a2a_trio import model as m
from a2a_trio.client import open_client
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


async def reply(ctx: TaskContext, greeting: str = "hi") -> str:
    """Greet."""
    return f"{greeting}, {ctx.text}"


def traced(fn: Callable[..., Awaitable[str]]) -> Callable[..., Awaitable[str]]:
    """A sync decorator (retry, tracing) keeping the name: it returns the coroutine."""

    @functools.wraps(fn)
    def wrapper(*args: object, **kwargs: object) -> Awaitable[str]:
        return fn(*args, **kwargs)

    return wrapper


def counted(fn: Callable[[TaskContext], Awaitable[str]]) -> Callable[[TaskContext], Awaitable[str]]:
    """The same without ``functools.wraps``."""

    def counting(ctx: TaskContext) -> Awaitable[str]:
        return fn(ctx)

    return counting


def kept(ctx: TaskContext) -> Awaitable[str]:
    """Keep the coroutine in a name before returning it."""
    pending = reply(ctx, "kept")
    return pending


def either(ctx: TaskContext) -> Awaitable[str] | str:
    return reply(ctx, "either") if ctx.text else "nobody to greet"


class Replier:
    """Greet from an object."""

    async def __call__(self, ctx: TaskContext) -> str:
        return f"object, {ctx.text}"


class Service:
    def __init__(self, greeting: str) -> None:
        self.greeting = greeting

    async def greet(self, ctx: TaskContext) -> str:
        return f"{self.greeting}, {ctx.text}"

    def plain(self, ctx: TaskContext) -> str:
        return "hi"


class SyncReplier:
    def __call__(self, ctx: TaskContext) -> str:
        return "hi"


SERVICE = Service("handed on")


def hands_on(ctx: TaskContext) -> Awaitable[str]:
    """Hand on a method's coroutine."""
    return SERVICE.greet(ctx)


def hands_on_plain(ctx: TaskContext) -> str:
    return SERVICE.plain(ctx)


async def test_every_handler_that_gives_something_to_await_is_served(
    nursery: trio.Nursery,
) -> None:
    """A sync decorator around an ``async def`` (with ``functools.wraps`` or without), a
    partial, an object with an async ``__call__``, a bound method, a lambda, a plain ``def``
    returning a coroutine however it got it: each works when called, so each is accepted and
    served (before: the ones without ``__name__`` failed to declare with ``AttributeError``, a
    partial's description was the ``partial`` class's docstring, a decorator without
    ``functools.wraps`` was refused, and so was a ``def`` handing on a method's coroutine)."""
    agent = Agent("Greeter")
    agent.skill("wrapped")(traced(reply))
    agent.skill("unwrapped")(counted(reply))
    agent.skill(functools.partial(reply, greeting="hello"))
    agent.skill(Replier())
    agent.skill(Service("method").greet)
    agent.skill("lambda")(lambda ctx: reply(ctx, "lambda"))
    agent.skill("partial of wrapped")(functools.partial(traced(reply), greeting="both"))
    agent.skill(kept)
    agent.skill(either)  # type: ignore[arg-type]
    agent.skill(hands_on)
    assert [(s.id, s.description) for s in agent.skills] == [
        ("wrapped", "Greet."),
        ("unwrapped", "unwrapped"),
        ("reply", "Greet."),
        ("Replier", "Greet from an object."),
        ("greet", "greet"),
        ("lambda", "lambda"),
        ("partial of wrapped", "Greet."),
        ("kept", "Keep the coroutine in a name before returning it."),
        ("either", "either"),
        ("hands_on", "Hand on a method's coroutine."),
    ]
    url = await nursery.start(partial(serve, agent, port=0))
    async with open_client(url) as client:
        answers = {}
        for skill in agent.skills:
            task = await client.send(m.text_message("Ada", metadata={"skillId": skill.id}))
            assert isinstance(task, m.Task)
            assert task.status.state is m.TaskState.COMPLETED, (skill.id, task.status)
            answers[skill.id] = task.artifacts[0].parts
    assert answers == {
        "wrapped": (m.TextPart("hi, Ada"),),
        "unwrapped": (m.TextPart("hi, Ada"),),
        "reply": (m.TextPart("hello, Ada"),),
        "Replier": (m.TextPart("object, Ada"),),
        "greet": (m.TextPart("method, Ada"),),
        "lambda": (m.TextPart("lambda, Ada"),),
        "partial of wrapped": (m.TextPart("both, Ada"),),
        "kept": (m.TextPart("kept, Ada"),),
        "either": (m.TextPart("either, Ada"),),
        "hands_on": (m.TextPart("handed on, Ada"),),
    }


async def _numbers(ctx: TaskContext) -> AsyncIterator[str]:
    yield "1"


@pytest.mark.parametrize(
    ("handler", "says"),
    [
        (SyncReplier(), "skill 'SyncReplier' is an object whose __call__ is a plain function:"),
        (Service("x").plain, "skill 'plain' is a plain function: declare it as `async def plain("),
        (functools.partial(sync_greet), "skill 'sync_greet' is a plain function:"),
        (lambda ctx: "hi", "skill '<lambda>' is a plain function:"),
        (hands_on_plain, "skill 'hands_on_plain' is a plain function:"),
        (traced(_numbers), "skill '_numbers' yields:"),  # type: ignore[arg-type]
        (
            functools.partial(reply, "Ada", "hello"),
            "skill 'reply' cannot take the task's context as its one argument (it takes ()):",
        ),
        (
            Service.greet,  # the class's function: it wants ``self`` too
            "skill 'greet' cannot take the task's context as its one argument (it takes",
        ),
    ],
)
def test_callables_that_give_nothing_to_await_are_refused_in_any_form(
    handler: Callable[..., object], says: str
) -> None:
    """The mistakes refused in a plain ``def`` are refused behind a method, an object, a
    partial, a lambda or a wrapper (before: a sync method was accepted and every task failed,
    an object or a partial failed to declare with ``AttributeError``, and a wrapped async
    generator was called a plain function)."""
    agent = Agent("Greeter")
    with pytest.raises(AgentMisuseError) as refused:
        agent.skill(handler)  # type: ignore[arg-type]
    assert str(refused.value).startswith(says)
    assert agent.skills == ()


def forgets_await(ctx: TaskContext) -> str:
    reply(ctx)  # type: ignore[unused-coroutine]
    return "done"


def formats(ctx: TaskContext) -> str:
    found = reply(ctx)
    return f"found {found}"


def builds(ctx: TaskContext) -> dict[str, object]:
    return {"found": reply(ctx), "for": ctx.text}


def falls_through(ctx: TaskContext) -> None:
    reply(ctx)  # type: ignore[unused-coroutine]


class ForgetsAwait:
    def __call__(self, ctx: TaskContext) -> list[object]:
        return [reply(ctx)]


@pytest.mark.parametrize(
    ("handler", "says"),
    [
        (forgets_await, "skill 'forgets_await' is a plain function:"),
        (formats, "skill 'formats' is a plain function:"),
        (builds, "skill 'builds' is a plain function:"),
        (falls_through, "skill 'falls_through' is a plain function:"),
        (functools.partial(formats), "skill 'formats' is a plain function:"),
        (
            ForgetsAwait(),
            "skill 'ForgetsAwait' is an object whose __call__ is a plain function:",
        ),
    ],
)
def test_a_plain_def_naming_an_async_def_but_returning_only_plain_values_is_refused(
    handler: Callable[..., object], says: str
) -> None:
    """A plain ``def`` that names an ``async def`` was accepted (it might return that one's
    coroutine) even where every ``return`` gives a value made right there, a constant, a
    formatted string, a dict or list display, or ``None`` at its end: no awaitable, so every
    task of the skill failed.  It is refused as any other plain function; one that returns
    a name or a call's result is accepted (see above), and the runtime tells if it returned
    no awaitable after all."""
    agent = Agent("Greeter")
    with pytest.raises(AgentMisuseError) as refused:
        agent.skill(handler)  # type: ignore[arg-type]
    assert str(refused.value).startswith(says)
    assert agent.skills == ()
