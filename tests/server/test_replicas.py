"""Two servers (replicas) on one store: a stream at the one that does not run the task, and
legacy ids, which stay with the replica that took the send."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from functools import partial
from pathlib import Path

import httpx
import orjson
import pytest
import trio
from store.conftest import make_backend

from a2a_trio import ServerConfig, serve
from a2a_trio import model as m
from a2a_trio.runtime import RuntimeConfig
from a2a_trio.wire import SSEDecoder

from . import agents
from .conftest import V1_HEADERS, kind, rpc, user_message

CONFIG = ServerConfig(
    keepalive=0.05,
    legacy_mount_all=True,  # every skill's legacy surface too, at /{skill id}
    runtime=RuntimeConfig(poll_interval=0.01, follow_interval=0.05, recovery_lease=3600.0),
)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def replicas(
    request: pytest.FixtureRequest, tmp_path: Path, nursery: trio.Nursery
) -> AsyncIterator[tuple[str, str]]:
    """The base URLs of two servers sharing one database."""
    async with make_backend(request.param, tmp_path) as backend:
        serving = partial(serve, agents.agent, port=0, store=backend.url, config=CONFIG)
        first: str = await nursery.start(serving)
        second: str = await nursery.start(serving)
        yield first, second


async def events_and_keepalives(
    response: httpx.Response, idle: trio.Event, *, rpc_result: bool
) -> list[tuple[str, dict[str, object]]]:
    """An event stream's (id, StreamResponse) pairs to its end; ``idle`` is set once it has
    sent three keepalive comments."""
    decoder = SSEDecoder()
    events: list[tuple[str, dict[str, object]]] = []
    async with aclosing(response.aiter_bytes()) as chunks:
        async for chunk in chunks:
            for event in decoder.feed(chunk):
                data = orjson.loads(event.data)
                events.append((event.id, data["result"] if rpc_result else data))
            if decoder.comments >= 3:
                idle.set()
    return events


async def test_a_stream_at_the_other_replica_keeps_alive_and_delivers_to_the_end(
    replicas: tuple[str, str],
) -> None:
    """SubscribeToTask over JSON-RPC and REST at the replica that does not run the task: both
    send keepalives while the task waits, then its events under the running replica's ids,
    to COMPLETED.  Before, both ended after the snapshot."""
    running_at, other_at = replicas
    gate = f"elsewhere {m.new_id()}"  # the gates outlive a test
    agents.gates[gate] = trio.Event()
    send = rpc("SendStreamingMessage", {"message": user_message(gate, skill="gated")})
    subscribe = rpc("SubscribeToTask", {"id": ""})
    at_runner: list[tuple[str, dict[str, object]]] = []
    followed: dict[str, list[tuple[str, dict[str, object]]]] = {}
    idle = {"rpc": trio.Event(), "rest": trio.Event()}
    async with (
        httpx.AsyncClient(base_url=running_at, headers=V1_HEADERS, timeout=10) as runner,
        httpx.AsyncClient(base_url=other_at, headers=V1_HEADERS, timeout=10) as other,
    ):

        async def run() -> None:
            async with runner.stream("POST", "/", json=send) as response:
                at_runner.extend(
                    await events_and_keepalives(response, trio.Event(), rpc_result=True)
                )

        async def follow(binding: str, task_id: str) -> None:
            if binding == "rpc":
                body = {**subscribe, "params": {"id": task_id}}
                stream = other.stream("POST", "/", json=body)
            else:
                stream = other.stream("POST", f"/tasks/{task_id}:subscribe")
            async with stream as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                followed[binding] = await events_and_keepalives(
                    response, idle[binding], rpc_result=binding == "rpc"
                )

        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(run)
                while True:  # until the task is stored and WORKING
                    listed = await other.post("/", json=rpc("ListTasks", {}))
                    tasks = listed.json()["result"]["tasks"]
                    if tasks and tasks[0]["status"]["state"] == "TASK_STATE_WORKING":
                        break
                    await trio.sleep(0.01)
                for binding in idle:
                    nursery.start_soon(follow, binding, tasks[0]["id"])
                for event in idle.values():
                    await event.wait()
                agents.gates[gate].set()
    ids = {event_id: result for event_id, result in at_runner}
    for binding, events in followed.items():
        snapshot_id, snapshot = events[0]
        assert kind(snapshot) == "task", binding
        assert events[1:] == [(i, r) for i, r in at_runner if int(i) > int(snapshot_id)], binding
        assert ids[snapshot_id]["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING"  # type: ignore[index]
        final = events[-1][1]["statusUpdate"]
        assert final["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]


async def test_a_legacy_task_id_is_known_only_at_the_replica_that_took_the_send(
    replicas: tuple[str, str],
) -> None:
    """The legacy dialect's ids live in the process that took ``tasks/send`` (docs/bindings.md:
    route a legacy client to one replica); the task itself is in the shared store, where a
    v1.0 client finds it at either replica by its runtime id."""
    took_it, other = replicas
    send = {
        "id": "legacy-1",
        "message": {"role": "user", "parts": [{"type": "text", "text": "hi"}]},
    }
    async with httpx.AsyncClient(timeout=10) as http:
        sent = (await http.post(f"{took_it}/echo", json=rpc("tasks/send", send))).json()
        assert sent["result"]["status"]["state"] == "completed"
        got = {}
        for base in (took_it, other):
            answer = await http.post(f"{base}/echo", json=rpc("tasks/get", {"id": "legacy-1"}))
            got[base] = answer.json()
        listed = await http.post(f"{other}/", json=rpc("ListTasks", {}), headers=V1_HEADERS)
    assert got[took_it]["result"]["id"] == "legacy-1"
    assert got[other]["error"] == {"code": -32602, "message": "Unknown task id: legacy-1"}
    tasks = listed.json()["result"]["tasks"]
    assert [t["history"][0]["parts"] for t in tasks] == [[{"text": "hi"}]]
