"""The soak tests' agents: the in-process soaks' (with a parked skill for the legacy soak), and
the crash soak's served by ``a2a-trio serve`` in a subprocess
(``bindings.soak_agents:crash_agent``), which adds a resumable skill."""

from __future__ import annotations

import trio

from a2a_trio import Agent, JobStatus, TaskContext
from a2a_trio import model as m
from a2a_trio.wire._legacy import parts_text

from . import agents

HOLD_BOUND = 90.0
"""A holder completes by itself after this long, so a lost cancel fails the test, not hangs it."""


async def trickle(ctx: TaskContext) -> None:
    """Stream the text's words as chunks of one artifact, pausing between them."""
    words = ctx.text.split()
    for index, word in enumerate(words):
        await trio.sleep(0.01)
        last = index == len(words) - 1
        await ctx.emit_artifact(word + " ", artifact_id="words", append=index > 0, last_chunk=last)


async def ask(ctx: TaskContext) -> str:
    """Ask for a name (INPUT_REQUIRED), then greet it.  Run again on the stored history (the
    answer came after a restart: docs/agents.md), greet the answer without asking again."""
    asked = any(message.role is m.Role.AGENT for message in ctx.history)
    reply = ctx.message if asked else await ctx.ask("What is your name?")
    return "hello " + parts_text(reply.parts)


async def hold(ctx: TaskContext) -> str:
    """Work until cancelled (bounded by ``HOLD_BOUND``)."""
    await ctx.update("holding")
    await trio.sleep(HOLD_BOUND)
    return "held"


async def rerun(ctx: TaskContext) -> str:
    """Work a little, then complete with the text: a restart in between runs it again."""
    await ctx.update("working")
    await trio.sleep(0.5)
    return ctx.text


def soak_skills(agent: Agent) -> Agent:
    """Give ``agent`` the skills both soaks load: echo (the default), ask, trickle, hold."""
    agent.skill(default=True)(agents.echo)
    agent.skill()(ask)
    agent.skill()(trickle)
    agent.skill()(hold)
    return agent


class Steps:
    """Parked work: one step of progress a poll, one step a word of the text, then done with
    the text in capitals."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.steps = len(text.split())
        self.polls = 0

    async def status(self) -> JobStatus:
        self.polls += 1
        if self.polls > self.steps:
            return JobStatus(state="completed")
        return JobStatus(progress=self.polls / self.steps, message=f"step {self.polls}")

    async def cancel(self) -> None:
        """Nothing to stop: the work is its polls, which end with the task."""

    async def result(self) -> str:
        return self.text.upper()


async def steps(ctx: TaskContext) -> Steps:
    """Hand back parked work for the runtime to poll."""
    return Steps(ctx.text)


soak_agent = soak_skills(Agent("soak agent", "Echoes, streams slowly, asks, and holds"))
soak_agent.skill()(steps)
crash_agent = soak_skills(Agent("crash soak agent", "The soak agent, plus a resumable skill"))
crash_agent.skill(resumable=True)(rerun)
