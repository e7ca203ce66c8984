"""A graceful shutdown lets running jobs finish while their clients still listen.

hypercorn closes connections ``graceful_timeout`` (3 s) after its shutdown trigger returns, and
only then runs the app's ``after_serving``.  Before, the drain ran there, so a job needing more
than 3 s completed in the store while its stream and its blocking sender had been cut.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import httpx
import trio
import trio.testing

from a2a_trio import Agent, ServerConfig, TaskContext, serve

from .conftest import V1_HEADERS, kind, read_events, rpc, user_message

agent = Agent("slow", "finishes when the test says")
gate: dict[str, trio.Event] = {}
running: list[str] = []


@agent.skill(default=True)
async def finish_later(ctx: TaskContext) -> str:
    running.append(ctx.text)
    if len(running) == 2:
        gate["both running"].set()
    await gate["open"].wait()
    return "finished"


async def test_jobs_finish_with_their_clients_connected_through_a_graceful_shutdown() -> None:
    gate["open"], gate["both running"] = trio.Event(), trio.Event()
    running.clear()
    stop = trio.Event()
    results: dict[str, Any] = {}
    config = ServerConfig(shutdown_grace=20)
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:  # serve returns by itself after the drain
            url = await nursery.start(
                partial(serve, agent, port=0, config=config, shutdown_trigger=stop.wait)
            )
            async with httpx.AsyncClient(base_url=url, headers=V1_HEADERS, timeout=30) as http:

                async def stream() -> None:
                    body = rpc("SendStreamingMessage", {"message": user_message("s")})
                    async with http.stream("POST", "/", json=body) as response:
                        results["stream"] = await read_events(response)

                async def blocking() -> None:
                    body = rpc("SendMessage", {"message": user_message("b")})
                    results["blocking"] = (await http.post("/", json=body)).json()

                async with trio.open_nursery() as clients:
                    clients.start_soon(stream)
                    clients.start_soon(blocking)
                    await gate["both running"].wait()
                    stop.set()
                    await trio.testing.wait_all_tasks_blocked()  # the trigger fired: draining
                    late = rpc("SendMessage", {"message": user_message("late")})
                    results["late"] = (await http.post("/", json=late)).json()
                    await trio.sleep(3.5)  # past hypercorn's own graceful timeout
                    gate["open"].set()
    refused = results["late"]["error"]
    assert refused["code"] == -32004 and "shutting down" in refused["message"]
    final = results["stream"][-1][1]
    assert kind(final) == "statusUpdate"
    assert final["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert results["blocking"]["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
