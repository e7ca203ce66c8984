"""Agents the server tests run: each skill exercises one part of the runtime."""

from __future__ import annotations

import trio

from a2a_trio import Agent, JobStatus, TaskContext, TaskFailed
from a2a_trio import model as m

agent = Agent("test agent", "Skills for the server tests", version="0.0.1")
cleanups: list[str] = []
"""Task ids whose handler's ``finally`` ran (cancellation reaches the handler)."""
gates: dict[str, trio.Event] = {}
"""Per-text events the ``gated`` skill waits on, so tests decide when a task finishes."""


def open_gate(gate: str) -> None:
    """Let the ``gated`` tasks waiting on ``gate`` (now or later) go on."""
    gates.setdefault(gate, trio.Event()).set()


@agent.skill(default=True, tags=["test"])
async def echo(ctx: TaskContext) -> str:
    """Complete with the received text."""
    return ctx.text


@agent.skill()
async def gated(ctx: TaskContext) -> str:
    """Report progress, then wait until the test opens the gate named by the text."""
    gate = gates.setdefault(ctx.text, trio.Event())
    try:
        await ctx.update("waiting", progress=0.5)
        await gate.wait()
        await ctx.emit_artifact("opened")
    finally:
        cleanups.append(ctx.task_id)
    return "done"


@agent.skill()
async def ask(ctx: TaskContext) -> str:
    """Ask a question, then complete with the answer."""
    reply = await ctx.ask("What is your name?")
    return "hello " + " ".join(p.text for p in reply.parts if isinstance(p, m.TextPart))


@agent.skill()
async def chunks(ctx: TaskContext) -> None:
    """Stream an artifact in three chunks."""
    artifact_id = "a1"
    await ctx.emit_artifact("one ", artifact_id=artifact_id, last_chunk=False)
    await ctx.emit_artifact("two ", artifact_id=artifact_id, append=True, last_chunk=False)
    await ctx.emit_artifact("three", artifact_id=artifact_id, append=True, last_chunk=True)


@agent.skill()
async def many(ctx: TaskContext) -> None:
    """Stream an artifact in as many chunks as the text says."""
    count = int(ctx.text)
    for index in range(count):
        last = index == count - 1
        await ctx.emit_artifact(f"{index} ", artifact_id="a1", append=index > 0, last_chunk=last)


@agent.skill()
async def boom(ctx: TaskContext) -> str:
    """Fail with an internal error whose text must never reach the client."""
    raise RuntimeError("secret internal detail /etc/passwd")


@agent.skill()
async def refuse(ctx: TaskContext) -> str:
    """Fail with a public message, or reject when asked to."""
    if ctx.text == "reject":
        ctx.reject("not my job")
    raise TaskFailed("cannot do that")


@agent.skill(message_only=True)
async def quick(ctx: TaskContext) -> str:
    """Answer with a message, creating no task."""
    return "quick " + ctx.text


class CountingJob:
    """A parked job handle: progress 0, 0, 0.5, 0.5, done (repeats must not be re-sent)."""

    def __init__(self) -> None:
        self.polls = 0
        self.canceled = False

    async def status(self) -> JobStatus:
        self.polls += 1
        progress = [0.0, 0.0, 0.5, 0.5][min(self.polls - 1, 3)]
        if self.polls > 4:
            return JobStatus("completed", 1.0)
        return JobStatus("running", progress, "crunching")

    async def cancel(self) -> None:
        self.canceled = True

    async def result(self) -> object:
        return {"answer": 42}


@agent.skill()
async def parked(ctx: TaskContext) -> CountingJob:
    """Hand back a long-running job for the runtime to poll."""
    return CountingJob()


@agent.skill(resumable=True)
async def redo(ctx: TaskContext) -> str:
    """A resumable skill: after a crash it is simply run again."""
    return "redone " + ctx.text


agent.skill("gated_redo", description="The gated skill, resumable.", resumable=True)(gated)
