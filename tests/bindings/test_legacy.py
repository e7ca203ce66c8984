"""The legacy producer dialect's §9 checklist, item by item, against a real server."""

from __future__ import annotations

import json
import re
import uuid
from base64 import b64encode
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import httpx
import orjson
import pytest
import trio

from a2a_trio import Agent, ServerConfig, TaskContext, serve
from a2a_trio import model as m
from a2a_trio.runtime import RuntimeConfig

from .agents import agent, gates

CONFIG = ServerConfig(
    keepalive=0.05,
    legacy_prefixes={"echo": "/agents/echo", "gated": "/agents/gated/", "refuse": "/refuse"},
    legacy_mount_all=True,
    legacy_bearer=True,
    legacy_eviction=0.0,  # forgotten as soon as a terminal state is seen (§9: grace window)
    runtime=RuntimeConfig(poll_interval=0.01),
)
AUTH = {"Authorization": "Bearer any-token"}
Z_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


@pytest.fixture
async def legacy(nursery: trio.Nursery) -> AsyncIterator[httpx.AsyncClient]:
    url = await nursery.start(partial(serve, agent, port=0, config=CONFIG))
    async with httpx.AsyncClient(base_url=url, headers=AUTH, timeout=10) as client:
        yield client


def rpc(method: str, params: object, rid: object = 1) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def text(value: str) -> dict[str, object]:
    return {"role": "user", "parts": [{"type": "text", "text": value}]}


async def call(client: httpx.AsyncClient, path: str, method: str, params: object) -> Any:
    response = await client.post(path, json=rpc(method, params))
    assert response.status_code == 200
    return response.json()


@pytest.mark.parametrize(
    "path",
    [
        "/agents/echo/.well-known/agent.json",
        "/agents/echo/.well-known/agent.json/",
        "/agents/gated/.well-known/agent.json",
        "/data/.well-known/agent.json",
    ],
)
async def test_card_is_public_and_in_the_dialect_shape(
    legacy: httpx.AsyncClient, path: str
) -> None:
    response = await legacy.get(path, headers={"Authorization": ""})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    card = response.json()
    assert card["capabilities"] == {
        "streaming": True,
        "pushNotifications": False,
        "stateTransitionHistory": False,
    }
    assert card["authentication"] == {"schemes": ["bearer"]}
    (skill,) = card["skills"]
    assert set(skill) == {"id", "name", "description", "tags", "inputModes", "outputModes"}
    prefix = path.removesuffix("/").removesuffix("/.well-known/agent.json")
    assert card["url"] == str(legacy.base_url).rstrip("/") + prefix
    assert skill["id"] == {"/agents/echo": "echo", "/agents/gated": "gated"}.get(prefix, "data")
    for key in ("name", "description", "version", "defaultInputModes", "defaultOutputModes"):
        assert card[key]
    assert "provider" not in card and "documentationUrl" not in card


@pytest.mark.parametrize(
    ("authorization", "message"),
    [
        (None, "missing Authorization"),
        ("Basic dXNlcg==", "missing Authorization"),
        ("Bearer", "empty bearer token"),  # trailing blanks: h11 strips them (see sans-IO test)
    ],
)
async def test_bearer_gate(
    legacy: httpx.AsyncClient, authorization: str | None, message: str
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    async with httpx.AsyncClient(base_url=legacy.base_url, headers=headers) as bare:
        response = await bare.post("/agents/echo", json=rpc("tasks/send", {"message": {}}, 5))
    assert response.status_code == 401
    body = response.json()
    assert body["id"] is None and body["error"]["code"] == -32001
    assert message in body["error"]["message"]


async def test_send_defaults_echoes_and_spellings(legacy: httpx.AsyncClient) -> None:
    body = await call(legacy, "/agents/echo", "tasks/send", {"message": text("coffee")})
    result = body["result"]
    uuid.UUID(result["id"])  # a fresh UUID4 when the client gave none
    assert result["sessionId"] == result["id"]
    assert result["status"]["state"] == "completed"
    assert Z_TIMESTAMP.match(result["status"]["timestamp"])
    assert result["artifacts"] == [
        {"name": "result", "parts": [{"type": "text", "text": "coffee"}], "index": 0}
    ]
    assert result["history"] == [text("coffee")]
    chosen = await call(
        legacy,
        "/agents/echo/",
        "tasks/send",
        {"id": "c-1", "sessionId": "s-9", "message": text("tea")},
    )
    assert (chosen["result"]["id"], chosen["result"]["sessionId"]) == ("c-1", "s-9")


async def test_non_string_results_are_json_text(legacy: httpx.AsyncClient) -> None:
    body = await call(legacy, "/data", "tasks/send", {"message": text("abc")})
    assert orjson.loads(body["result"]["artifacts"][0]["parts"][0]["text"]) == {"length": 3}


files = Agent("files", "answers with files")
PNG = b"\x89PNG\r\n\x1a\n"


@files.skill(default=True)
async def file(ctx: TaskContext) -> m.Part | bytes:
    if ctx.text == "png":
        return m.RawPart(PNG, media_type="image/png; charset=binary", filename="logo.png")
    if ctx.text == "url":
        return m.UrlPart("https://example.com/report.pdf", media_type="application/pdf")
    return b"\x00\xff"


@pytest.mark.parametrize(
    ("ask", "answer"),
    [
        ("png", "data:image/png;charset=binary;base64," + b64encode(PNG).decode()),
        ("url", "https://example.com/report.pdf"),
        ("bytes", "data:application/octet-stream;base64,AP8="),
    ],
)
async def test_file_results_are_urls_in_the_result_text(
    nursery: trio.Nursery, ask: str, answer: str
) -> None:
    """The dialect's result is one text part: a file is its URL, bytes a ``data:`` URL
    (RFC 2397), in ``tasks/send``'s answer and ``tasks/sendSubscribe``'s artifact event alike.
    Before, bytes became their file name, or nothing: lost to the consumer."""
    config = ServerConfig(legacy_mount_all=True, legacy_bearer=True)
    url = await nursery.start(partial(serve, files, port=0, config=config))
    async with httpx.AsyncClient(base_url=url, headers=AUTH, timeout=10) as client:
        sent = await call(client, "/file", "tasks/send", {"message": text(ask)})
        envelope = rpc("tasks/sendSubscribe", {"message": text(ask)})
        async with client.stream("POST", "/file", json=envelope) as response:
            lines = await lines_of(response)
    assert sent["result"]["artifacts"][0]["parts"] == [{"type": "text", "text": answer}]
    frames = [orjson.loads(line.removeprefix("data: ")) for line in lines if line[:6] == "data: "]
    artifacts = [frame["result"]["artifact"] for frame in frames if "artifact" in frame["result"]]
    assert [artifact["parts"] for artifact in artifacts] == [[{"type": "text", "text": answer}]]


async def test_failure_is_a_failed_task_with_its_message(legacy: httpx.AsyncClient) -> None:
    result = (await call(legacy, "/refuse", "tasks/send", {"message": text("x")}))["result"]
    assert result["status"]["state"] == "failed"
    assert result["status"]["message"]["parts"][0]["text"] == "cannot do that"
    assert result["artifacts"] == []


async def test_parked_job_answers_working_then_completes(legacy: httpx.AsyncClient) -> None:
    params = {"id": "job-1", "message": text("abc")}
    result = (await call(legacy, "/parked", "tasks/send", params))["result"]
    assert (result["status"]["state"], result["artifacts"]) == ("working", [])
    assert isinstance(result["metadata"]["progress"], float)
    with trio.fail_after(5):
        while result["status"]["state"] == "working":  # the dialect polls tasks/get
            await trio.sleep(0.01)
            result = (await call(legacy, "/parked", "tasks/get", {"id": "job-1"}))["result"]
    assert result["artifacts"][0]["parts"][0]["text"] == "cba"


async def test_an_id_whose_task_ended_unseen_is_evicted(legacy: httpx.AsyncClient) -> None:
    """A parked task its client never asked about again: its id was held for good (only a
    sighting of the terminal state started the grace window); now the surface notices the
    ended job by itself, and the id is free once the window (here none) is over."""
    params = {"id": "unseen-1", "message": text("abc")}
    result = (await call(legacy, "/parked", "tasks/send", params))["result"]
    assert result["status"]["state"] == "working"
    with trio.fail_after(5):
        while "error" in (body := await call(legacy, "/parked", "tasks/send", params)):
            assert "already in use" in body["error"]["message"], body
            await trio.sleep(0.05)
    assert body["result"]["status"]["state"] == "working"  # a new task under the same id


async def test_duplicate_in_flight_id_and_eviction(legacy: httpx.AsyncClient) -> None:
    gate = str(uuid.uuid4())
    params = {"id": "dup-1", "message": text(gate)}
    async with trio.open_nursery() as nursery:
        nursery.start_soon(call, legacy, "/agents/gated", "tasks/send", params)
        with trio.fail_after(5):
            while True:  # the first send holds the id once its task runs
                body = await call(legacy, "/agents/gated", "tasks/get", {"id": "dup-1"})
                if "result" in body:
                    break
                await trio.sleep(0.01)
        again = await call(legacy, "/agents/gated", "tasks/send", params)
        assert again["error"]["code"] == -32602 and "in use" in again["error"]["message"]
        canceled = await call(legacy, "/agents/gated", "tasks/cancel", {"id": "dup-1"})
        assert canceled["result"]["status"]["state"] == "canceled"
    # Seen terminal with a zero grace window: the id is forgotten and may be used again.
    gone = await call(legacy, "/agents/gated", "tasks/get", {"id": "dup-1"})
    assert gone["error"]["code"] == -32602 and "Unknown task id" in gone["error"]["message"]
    gates.setdefault(gate, trio.Event()).set()
    reused = await call(legacy, "/agents/gated", "tasks/send", params)
    assert reused["result"]["status"]["state"] == "completed"


async def lines_of(response: httpx.Response) -> list[str]:
    return [line async for line in response.aiter_lines()]


ODD_IDS = [
    {"k": 1},
    True,
    False,
    [1, "two"],
    [],
    {},
    None,
    0,
    -1.5,
    "",
    "r",
    2**70 + 1,
    [-(2**64) - 1],
]


@pytest.mark.parametrize("rid", ODD_IDS)
async def test_any_json_id_is_echoed(legacy: httpx.AsyncClient, rid: object) -> None:
    """§4.1: ``id`` MAY be any JSON value; it is echoed in success and error responses."""
    params = {"id": f"odd-{uuid.uuid4()}", "message": text("x")}
    sent = await legacy.post("/agents/echo", json=rpc("tasks/send", params, rid))
    assert sent.status_code == 200
    assert (sent.json()["id"], sent.json()["result"]["status"]["state"]) == (rid, "completed")
    errors = [
        rpc("tasks/get", {"id": "nope"}, rid),  # unknown id: -32602
        rpc("tasks/frobnicate", {}, rid),  # unknown method: -32601
        {"jsonrpc": "1.0", "id": rid, "method": "tasks/get"},  # bad envelope: -32600
        rpc("tasks/get", [], rid),  # params not an object: -32602
    ]
    for document, code in zip(errors, (-32602, -32601, -32600, -32602), strict=True):
        refused = await legacy.post("/agents/echo", json=document)
        assert refused.status_code == 200
        assert (refused.json()["id"], refused.json()["error"]["code"]) == (rid, code)


@pytest.mark.parametrize("rid", [{"k": [1, {"n": None}]}, True, [1, "two"], {"n": 10**30 + 1}])
async def test_any_json_id_is_echoed_in_every_stream_frame(
    legacy: httpx.AsyncClient, rid: object
) -> None:
    def frames(lines: list[str]) -> list[Any]:  # the stdlib's json: integers stay exact
        return [json.loads(x.removeprefix("data: ")) for x in lines if x.startswith("data: ")]

    envelope = rpc("tasks/sendSubscribe", {"id": f"odd-{uuid.uuid4()}", "message": text("ab")}, rid)
    async with legacy.stream("POST", "/parked", json=envelope) as response:
        sent = frames(await lines_of(response))
    assert len(sent) >= 3 and sent[-1]["result"]["final"] is True
    assert all(frame["id"] == rid for frame in sent)

    gate, task_id = str(uuid.uuid4()), f"odd-{uuid.uuid4()}"
    envelope = rpc("tasks/sendSubscribe", {"id": task_id, "message": text(gate)}, rid)
    async with legacy.stream("POST", "/agents/gated", json=envelope) as response:
        first = json.loads((await anext(response.aiter_lines())).removeprefix("data: "))
    assert first["id"] == rid
    envelope = rpc("tasks/resubscribe", {"id": task_id}, rid)
    async with legacy.stream("POST", "/agents/gated", json=envelope) as response:
        lines = response.aiter_lines()
        resubscribed = [json.loads((await anext(lines)).removeprefix("data: "))]
        gates.setdefault(gate, trio.Event()).set()
        resubscribed += frames([line async for line in lines])
    assert resubscribed[-1]["result"]["final"] is True
    assert all(frame["id"] == rid for frame in resubscribed)


async def test_send_subscribe_stream_shape(legacy: httpx.AsyncClient) -> None:
    envelope = rpc("tasks/sendSubscribe", {"id": "s-1", "message": text("abc")}, rid="x")
    async with legacy.stream("POST", "/parked", json=envelope) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["cache-control"] == "no-cache"
        assert response.headers["x-accel-buffering"] == "no"
        assert response.headers["connection"] == "keep-alive"
        lines = await lines_of(response)
    data = [
        orjson.loads(line.removeprefix("data: ")) for line in lines if line.startswith("data: ")
    ]
    assert all(line == "" or line.startswith(("data: ", ": keepalive")) for line in lines)
    assert all(frame["jsonrpc"] == "2.0" and frame["id"] == "x" for frame in data)
    results = [frame["result"] for frame in data]
    assert [r["status"]["state"] for r in results if "status" in r] == [
        "working",
        "working",
        "completed",
    ]
    assert [r["metadata"]["progress"] for r in results[:2]] == [0.25, 0.75]  # no repeat
    assert [r["final"] for r in results if "status" in r] == [False, False, True]
    assert results[-2] == {
        "id": "s-1",
        "artifact": {"name": "result", "parts": [{"type": "text", "text": "cba"}], "index": 0},
    }


async def test_keepalives_disconnect_and_resubscribe(legacy: httpx.AsyncClient) -> None:
    gate = str(uuid.uuid4())
    envelope = rpc("tasks/sendSubscribe", {"id": "k-1", "message": text(gate)})
    async with legacy.stream("POST", "/agents/gated", json=envelope) as response:
        seen: list[str] = []
        async for line in response.aiter_lines():
            seen.append(line)
            if seen.count(": keepalive") >= 2:
                break  # the client goes away: that is not a cancel (§7.3)
    first = orjson.loads(seen[0].removeprefix("data: "))["result"]
    assert (first["status"]["state"], first["final"]) == ("working", False)
    envelope = rpc("tasks/resubscribe", {"id": "k-1"}, rid=2)
    async with legacy.stream("POST", "/agents/gated", json=envelope) as response:
        lines = response.aiter_lines()
        announce = orjson.loads((await anext(lines)).removeprefix("data: "))["result"]
        assert (announce["status"]["state"], announce["final"]) == ("working", False)
        gates.setdefault(gate, trio.Event()).set()
        rest = [orjson.loads(x.removeprefix("data: ")) async for x in lines if x.startswith("data")]
    assert rest[-1]["result"]["status"]["state"] == "completed"
    assert rest[-1]["result"]["final"] is True
    assert rest[-2]["result"]["artifact"]["parts"][0]["text"] == "opened"


async def test_resubscribe_to_unknown_task_is_a_json_error(legacy: httpx.AsyncClient) -> None:
    response = await legacy.post("/agents/echo", json=rpc("tasks/resubscribe", {"id": "nope"}))
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == -32602


async def test_message_only_skill_is_shown_as_a_completed_task(legacy: httpx.AsyncClient) -> None:
    params = {"id": "q-1", "message": text("hi")}
    result = (await call(legacy, "/quick", "tasks/send", params))["result"]
    assert (result["id"], result["status"]["state"]) == ("q-1", "completed")
    assert result["artifacts"][0]["parts"][0]["text"] == "quick hi"
    envelope = rpc("tasks/sendSubscribe", params)  # no task was kept: the id is free again
    async with legacy.stream("POST", "/quick", json=envelope) as response:
        lines = await lines_of(response)
    frames = [
        orjson.loads(x.removeprefix("data: "))["result"] for x in lines if x.startswith("data")
    ]
    assert frames[0]["artifact"]["parts"][0]["text"] == "quick hi"
    assert (frames[1]["status"]["state"], frames[1]["final"]) == ("completed", True)


@pytest.mark.parametrize("method", ["tasks/send", "tasks/sendSubscribe"])
@pytest.mark.parametrize(
    ("message", "where"),
    [
        ({"parts": [{"type": "data", "data": "DEEP"}]}, "parts[0].data"),
        (text("x") | {"metadata": {"a": "DEEP"}}, "metadata"),
    ],
    ids=["data", "metadata"],
)
async def test_content_nested_past_the_bound_is_refused_before_the_id_is_claimed(
    legacy: httpx.AsyncClient, method: str, message: dict[str, Any], where: str
) -> None:
    """JSON content is bounded to 64 levels here as on the A2A bindings.  Before: the dialect
    took any depth, and a task holding 300 levels was stored and every answer naming it
    (tasks/send, tasks/get) was an internal error, as the JSON encoder gave up on it."""
    deep = "[" * 300 + "1" + "]" * 300
    params = orjson.dumps({"id": "deep-1", "message": message}).replace(b'"DEEP"', deep.encode())
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "%s", "params": %s}' % (method.encode(), params)
    refused = await legacy.post("/agents/echo", content=body)
    assert refused.headers["content-type"] == "application/json"
    assert refused.json()["error"] == {
        "code": -32602,
        "message": f"$.params.message.{where}: JSON nested deeper than 64 levels",
        "data": {
            "path": f"$.params.message.{where}",
            "reason": "JSON nested deeper than 64 levels",
        },
    }
    unknown = await call(legacy, "/agents/echo", "tasks/get", {"id": "deep-1"})
    assert unknown["error"]["message"] == "Unknown task id: deep-1"
    sent = await call(legacy, "/agents/echo", "tasks/send", {"id": "deep-1", "message": text("x")})
    assert sent["result"]["status"]["state"] == "completed"
