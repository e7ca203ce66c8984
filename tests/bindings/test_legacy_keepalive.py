"""A legacy stream keeps its connection alive while events arrive that it sends nothing for.

The dialect holds artifact chunks until the task completes, so a job streaming chunks sends no
frame for them.  The keepalive timer used to restart on every event received, not every frame
sent: a job emitting a chunk more often than the keepalive period sent nothing at all until it
finished, and an idle-timeout proxy would drop the connection.
"""

from __future__ import annotations

from functools import partial

import httpx
import trio

from a2a_trio import Agent, ServerConfig, TaskContext, serve

KEEPALIVE = 0.2
agent = Agent("chunky", "streams chunks more often than the keepalive period")


@agent.skill(default=True)
async def chunks(ctx: TaskContext) -> None:
    artifact = "a1"
    for index in range(8):
        await trio.sleep(KEEPALIVE * 0.6)
        await ctx.emit_artifact(f"{index};", artifact_id=artifact, append=index > 0)


async def test_keepalives_go_out_while_held_chunks_arrive() -> None:
    config = ServerConfig(keepalive=KEEPALIVE, legacy_mount_all=True)
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve, agent, port=0, config=config))
        envelope = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tasks/sendSubscribe",
            "params": {"id": "k1", "message": {"role": "user", "parts": [{"text": "go"}]}},
        }
        async with (
            httpx.AsyncClient(base_url=url, timeout=10) as http,
            http.stream("POST", "/chunks", json=envelope) as response,
        ):
            lines = [line async for line in response.aiter_lines() if line]
        nursery.cancel_scope.cancel()
    keepalives = [line for line in lines if line.startswith(":")]
    frames = [line for line in lines if line.startswith("data:")]
    # 8 chunks 0.12 s apart: about 1 s of held events, so 3 or more keepalives at 0.2 s.
    assert len(keepalives) >= 3, lines
    assert '"final":true' in frames[-1].replace(" ", "")
