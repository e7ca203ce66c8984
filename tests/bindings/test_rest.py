"""HTTP+JSON specifics: subscribe on both verbs, resumable SSE ids, tenants on streams."""

from __future__ import annotations

import uuid
from contextlib import aclosing

import httpx
import orjson
import pytest
import trio

from a2a_trio.wire import SSEDecoder

from .agents import gates
from .drivers import V1_HEADERS


def send(text: str, skill: str, *, immediately: bool = False) -> dict[str, object]:
    message = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        "metadata": {"skillId": skill},
    }
    return {"message": message, "configuration": {"returnImmediately": immediately}}


async def events(response: httpx.Response) -> list[tuple[str, dict[str, object]]]:
    decoder = SSEDecoder()
    found = []
    async with aclosing(response.aiter_bytes()) as chunks:
        async for chunk in chunks:
            found += [(event.id, orjson.loads(event.data)) for event in decoder.feed(chunk)]
    return found


async def test_stream_events_carry_ids_and_resume(http: httpx.AsyncClient) -> None:
    async with http.stream(
        "POST", "/message:stream", json=send("abc", "parked"), headers=V1_HEADERS
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        seen = await events(response)
    ids = [int(event_id) for event_id, _ in seen]
    assert ids == sorted(ids) and len(ids) == len(set(ids))
    assert list(seen[0][1]) == ["task"] and list(seen[-1][1]) == ["statusUpdate"]
    task_id = seen[0][1]["task"]["id"]  # type: ignore[index]
    headers = {**V1_HEADERS, "Last-Event-ID": str(ids[1])}
    async with http.stream("GET", f"/tasks/{task_id}:subscribe", headers=headers) as response:
        replayed = await events(response)
    assert replayed == seen[2:]  # the finished task's kept log, after the given id


@pytest.mark.parametrize("verb", ["GET", "POST"])
async def test_subscribe_on_both_verbs_under_a_tenant(http: httpx.AsyncClient, verb: str) -> None:
    gate = str(uuid.uuid4())
    started = await http.post(
        "/acme/message:send", json=send(gate, "gated", immediately=True), headers=V1_HEADERS
    )
    task_id = started.json()["task"]["id"]
    wrong = await http.request(verb, f"/other/tasks/{task_id}:subscribe", headers=V1_HEADERS)
    assert wrong.status_code == 404
    async with http.stream(verb, f"/acme/tasks/{task_id}:subscribe", headers=V1_HEADERS) as resp:
        decoder = SSEDecoder()
        found: list[dict[str, object]] = []
        with trio.fail_after(5):
            async for chunk in resp.aiter_bytes():
                found += [orjson.loads(event.data) for event in decoder.feed(chunk)]
                if len(found) == 1:
                    gates.setdefault(gate, trio.Event()).set()
    assert list(found[0]) == ["task"]
    assert found[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]
