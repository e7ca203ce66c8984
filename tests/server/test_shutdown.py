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
SHUT_DOWN = "The server shut down before this task finished; please send it again."
gate: dict[str, trio.Event] = {}
running: list[str] = []


@agent.skill(default=True)
async def finish_later(ctx: TaskContext) -> str:
    running.append(ctx.text)
    if len(running) == 2:
        gate["both running"].set()
    await gate["open"].wait()
    return "finished"


async def drain_with_clients(grace: float, *, open_gate_after: float | None) -> dict[str, Any]:
    """Serve ``agent`` with a stream and a blocking send of ``finish_later`` running, then
    trigger the graceful shutdown, send a late task, and open the gate ``open_gate_after``
    seconds later (never with None); what each client got."""
    gate["open"], gate["both running"] = trio.Event(), trio.Event()
    running.clear()
    stop = trio.Event()
    results: dict[str, Any] = {}
    config = ServerConfig(shutdown_grace=grace)
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
                if open_gate_after is not None:
                    await trio.sleep(open_gate_after)
                    gate["open"].set()
    return results


async def test_jobs_finish_with_their_clients_connected_through_a_graceful_shutdown() -> None:
    with trio.fail_after(20):
        results = await drain_with_clients(20, open_gate_after=3.5)  # past hypercorn's 3 s
    refused = results["late"]["error"]
    assert refused["code"] == -32004 and "shutting down" in refused["message"]
    final = results["stream"][-1][1]
    assert kind(final) == "statusUpdate"
    assert final["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert results["blocking"]["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_jobs_past_the_grace_fail_with_their_clients_still_connected() -> None:
    """A job still running when the grace ends records FAILED ("the server shut down") while
    its stream and its blocking sender still listen, so both get that final state.  Before,
    it was cancelled only after hypercorn had closed their connections (3 s after the grace):
    the stream was cut without a final event and the blocking send got no answer."""
    with trio.fail_after(20):
        results = await drain_with_clients(0.5, open_gate_after=None)
    assert "shutting down" in results["late"]["error"]["message"]
    final = results["stream"][-1][1]
    assert kind(final) == "statusUpdate"
    for status in (
        final["statusUpdate"]["status"],
        results["blocking"]["result"]["task"]["status"],
    ):
        assert status["state"] == "TASK_STATE_FAILED"
        assert status["message"]["parts"] == [{"text": SHUT_DOWN}]
