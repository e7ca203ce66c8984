"""The agent every binding test talks to: one of each task behaviour, no per-binding logic."""

from __future__ import annotations

import trio

from a2a_trio import Agent, JobStatus, TaskContext, TaskFailed
from a2a_trio import model as m

agent = Agent("bindings agent", "One agent behind every binding", version="0.0.1")
gates: dict[str, trio.Event] = {}
"""Per-text events the ``gated`` skill waits on, so a test decides when a task may finish."""


@agent.skill(default=True)
async def echo(ctx: TaskContext) -> str:
    """Complete with the received text."""
    return ctx.text


@agent.skill()
async def data(ctx: TaskContext) -> dict[str, int]:
    """Complete with JSON data (the legacy dialect shows it as JSON text)."""
    return {"length": len(ctx.text)}


@agent.skill()
async def gated(ctx: TaskContext) -> str:
    """Report progress, then wait until the test opens the gate named by the text."""
    await ctx.update("waiting", progress=0.5)
    await gates.setdefault(ctx.text, trio.Event()).wait()
    return "opened"


@agent.skill()
async def ask(ctx: TaskContext) -> str:
    """Ask for a name (INPUT_REQUIRED), then greet it."""
    reply = await ctx.ask("What is your name?")
    return "hello " + " ".join(p.text for p in reply.parts if isinstance(p, m.TextPart))


@agent.skill()
async def refuse(ctx: TaskContext) -> str:
    """Fail with a public message."""
    raise TaskFailed("cannot do that")


class SteppingJob:
    """Parked work: progress 0.25, 0.25 (a repeat), 0.75, then done with the text reversed."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.polls = 0

    async def status(self) -> JobStatus:
        self.polls += 1
        steps = {1: 0.25, 2: 0.25, 3: 0.75}
        if self.polls in steps:
            return JobStatus(progress=steps[self.polls], message="step")
        return JobStatus(state="completed")

    async def cancel(self) -> None:
        self.polls = -1000

    async def result(self) -> str:
        return self.text[::-1]


@agent.skill()
async def parked(ctx: TaskContext) -> SteppingJob:
    """Hand back long-running work for the runtime to poll."""
    return SteppingJob(ctx.text)


@agent.skill(message_only=True)
async def quick(ctx: TaskContext) -> str:
    """Answer with a message, creating no task."""
    return "quick " + ctx.text
