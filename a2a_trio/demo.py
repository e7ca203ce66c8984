"""The built-in demo agent: echo, a streaming countdown, and a multi-turn question.

Served by ``a2a_trio.app:app`` when no agent is configured; also a compact example of the agent
API (see docs/agents.md).
"""

from __future__ import annotations

import re

import trio

from . import model as m
from .runtime import Agent, TaskContext

MAX_COUNTDOWN = 60

agent = Agent(
    "a2a_trio demo",
    "Echoes text, counts down with live progress, and asks a follow-up question.",
    version="1.0.0",
    provider=m.AgentProvider(url="https://github.com/a2a-trio/a2a-trio", organization="a2a_trio"),
)


@agent.skill(tags=["demo", "echo"], examples=["hello"], default=True)
async def echo(ctx: TaskContext) -> str:
    """Reply with the text it received, as an artifact."""
    return ctx.text


@agent.skill(tags=["demo", "streaming"], examples=["5"])
async def countdown(ctx: TaskContext) -> str:
    """Count down from N seconds (default 5, at most 60), streaming progress and chunks."""
    found = re.search(r"\d+", ctx.text)
    seconds = min(int(found[0]) if found else 5, MAX_COUNTDOWN)
    artifact_id = m.new_id()
    for left in range(seconds, 0, -1):
        await ctx.update(f"{left}...", progress=round((seconds - left) / seconds, 3))
        await ctx.emit_artifact(
            f"{left}\n",
            artifact_id=artifact_id,
            name="countdown",
            append=left != seconds,
            last_chunk=False,
        )
        await trio.sleep(1)
    await ctx.emit_artifact("liftoff\n", artifact_id=artifact_id, append=True, last_chunk=True)
    return "done"


@agent.skill(tags=["demo", "multi-turn"], examples=["greet me"])
async def ask(ctx: TaskContext) -> str:
    """Ask for your name (INPUT_REQUIRED), then greet you."""
    reply = await ctx.ask("What is your name?")
    name = " ".join(p.text for p in reply.parts if isinstance(p, m.TextPart)).strip()
    return f"Nice to meet you, {name or 'stranger'}!"
