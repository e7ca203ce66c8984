"""The v0.3 HTTP+JSON binding under /v1/: shapes in and out, routing by version, bad input."""

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
from .test_bad_input import reason

# The v0.3 JSON-RPC error code of each reason the error tests meet (v0.3 §8).
V03_CODES = {
    "METHOD_NOT_FOUND": -32601,
    "INVALID_PARAMS": -32602,
    "TASK_NOT_FOUND": -32001,
    "UNSUPPORTED_OPERATION": -32004,
}
# What the official SDK's v0.3 REST client sends: proto field names, ``request``, ``content``.
SDK_SEND = {
    "request": {
        "message_id": "m1",
        "role": "ROLE_USER",
        "content": [{"text": "sdk"}],
        "metadata": {"skillId": "echo"},
    },
    "configuration": {"blocking": True},
}
# What the spec text's REST tab shows: the v0.3 JSON objects under ``message``.
SPEC_SEND = {
    "message": {
        "kind": "message",
        "messageId": "m2",
        "role": "user",
        "parts": [{"kind": "text", "text": "spec"}],
        "metadata": {"skillId": "echo"},
    }
}


@pytest.mark.parametrize(("body", "text"), [(SDK_SEND, "sdk"), (SPEC_SEND, "spec")])
async def test_send_reads_both_shapes_and_answers_protojson(
    http: httpx.AsyncClient, body: dict[str, object], text: str
) -> None:
    response = await http.post("/v1/message:send", json=body)
    assert response.status_code == 200
    task = response.json()["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": text}]
    assert [m["content"] for m in task["history"]] == [[{"text": text}]]
    assert task["history"][0]["role"] == "ROLE_USER"
    assert "kind" not in task
    got = await http.get(f"/v1/tasks/{task['id']}", params={"historyLength": "1"})
    assert got.json()["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(got.json()["history"]) == 1


async def test_stream_frames_are_stream_responses(http: httpx.AsyncClient) -> None:
    body = {**SDK_SEND, "request": {**SDK_SEND["request"], "metadata": {"skillId": "parked"}}}
    async with http.stream("POST", "/v1/message:stream", json=body) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        decoder = SSEDecoder()
        frames = []
        async with aclosing(response.aiter_bytes()) as chunks:
            async for chunk in chunks:
                frames += [(e.id, orjson.loads(e.data)) for e in decoder.feed(chunk)]
    assert [next(iter(frame)) for _id, frame in frames] == [
        "task",
        "statusUpdate",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert [event_id for event_id, _frame in frames] == ["1", "2", "3", "4", "5"]
    last = frames[-1][1]["statusUpdate"]
    assert (last["status"]["state"], last["final"]) == ("TASK_STATE_COMPLETED", True)
    task_id = last["taskId"]
    # Subscribe is served on GET too (the proto's verb); a finished task has nothing to follow.
    again = await http.get(f"/v1/tasks/{task_id}:subscribe")
    assert (again.status_code, reason(again)) == (400, "UNSUPPORTED_OPERATION")


async def test_subscribe_on_get_follows_a_running_task(http: httpx.AsyncClient) -> None:
    gate = str(uuid.uuid4())
    message = {"messageId": "m", "role": "ROLE_USER", "content": [{"text": gate}]}
    body = {"message": {**message, "metadata": {"skillId": "gated"}}, "configuration": {}}
    task_id = (await http.post("/v1/message:send", json=body)).json()["task"]["id"]
    frames = []
    with trio.fail_after(5):
        async with http.stream("GET", f"/v1/tasks/{task_id}:subscribe") as response:
            decoder = SSEDecoder()
            async with aclosing(response.aiter_bytes()) as chunks:
                async for chunk in chunks:
                    frames += [orjson.loads(e.data) for e in decoder.feed(chunk)]
                    gates.setdefault(gate, trio.Event()).set()
    assert frames[0]["task"]["status"]["state"] == "TASK_STATE_WORKING"
    assert frames[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert {"artifactUpdate"} <= {key for frame in frames for key in frame}


async def test_list_takes_v03_query_values(http: httpx.AsyncClient) -> None:
    task = (await http.post("/v1/message:send", json=SDK_SEND)).json()["task"]
    for status in ("completed", "TASK_STATE_COMPLETED"):
        listed = await http.get("/v1/tasks", params={"status": status, "pageSize": "5"})
        assert task["id"] in {t["id"] for t in listed.json()["tasks"]}
    none = await http.get("/v1/tasks", params={"status": "canceled", "lastUpdatedAfter": "0"})
    assert task["id"] not in {t["id"] for t in none.json()["tasks"]}


async def test_a_1_0_request_under_v1_is_the_tenant_v1(http: httpx.AsyncClient) -> None:
    """v0.3 owns /v1/ unless the request says 1.0: then ``v1`` is a v1.0 tenant."""
    v03 = (await http.post("/v1/message:send", json=SDK_SEND)).json()["task"]
    tenant = await http.get(f"/v1/tasks/{v03['id']}", headers=V1_HEADERS)
    assert (tenant.status_code, reason(tenant)) == (404, "TASK_NOT_FOUND")
    root = await http.get(f"/tasks/{v03['id']}", headers=V1_HEADERS)
    assert root.json()["status"]["state"] == "TASK_STATE_COMPLETED"  # one task space
    sdk = await http.get(f"/v1/tasks/{v03['id']}", headers={"A2A-Version": "0.3"})
    assert sdk.json()["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_push_config_routes(http: httpx.AsyncClient) -> None:
    create = {
        "parent": "tasks/t",
        "config_id": "c1",
        "config": {"push_notification_config": {"url": "https://example.com/hook"}},
    }
    calls = [
        ("POST", "/v1/tasks/t/pushNotificationConfigs", create),
        ("GET", "/v1/tasks/t/pushNotificationConfigs", None),
        ("GET", "/v1/tasks/t/pushNotificationConfigs/c1", None),
        ("DELETE", "/v1/tasks/t/pushNotificationConfigs/c1", None),
    ]
    for verb, path, body in calls:
        response = await http.request(verb, path, json=body)
        assert (response.status_code, reason(response)) == (400, "PUSH_NOTIFICATION_NOT_SUPPORTED")
        assert response.json()["type"] == "PushNotificationNotSupportedError"
    no_config = await http.post("/v1/tasks/t/pushNotificationConfigs", json={"config": {}})
    assert reason(no_config) == "INVALID_PARAMS"


@pytest.mark.parametrize(
    ("verb", "path", "status", "why"),
    [
        ("GET", "/v1/no/such/resource", 404, "METHOD_NOT_FOUND"),
        ("GET", "/v1/extendedAgentCard", 404, "METHOD_NOT_FOUND"),  # v1.0's name, not v0.3's
        ("GET", "/v1/tenant/tasks/t", 404, "METHOD_NOT_FOUND"),  # no tenants in v0.3
        ("GET", "/v1/tasks/missing", 404, "TASK_NOT_FOUND"),
        ("POST", "/v1/tasks/missing:cancel", 404, "TASK_NOT_FOUND"),
        ("GET", "/v1/tasks?pageSize=ten", 400, "INVALID_PARAMS"),
        ("GET", "/v1/tasks?pageSize=1_0", 400, "INVALID_PARAMS"),
        ("GET", "/v1/tasks?pageSize=%2B5", 400, "INVALID_PARAMS"),
        ("GET", "/v1/tasks?pageSize=%205", 400, "INVALID_PARAMS"),
        ("GET", "/v1/tasks?pageSize=%EF%BC%95", 400, "INVALID_PARAMS"),
        ("GET", "/v1/tasks?historyLength=1_0", 400, "INVALID_PARAMS"),
        ("GET", "/v1/tasks/missing?historyLength=%2B1", 400, "INVALID_PARAMS"),
        ("GET", "/v1/tasks?lastUpdatedAfter=1_000", 400, "INVALID_PARAMS"),
        ("GET", "/v1/tasks?pageSize=0", 400, "INVALID_PARAMS"),
        ("GET", "/v1/tasks?status=sleeping", 400, "INVALID_PARAMS"),
        ("GET", "/v1/tasks?lastUpdatedAfter=yesterday", 400, "INVALID_PARAMS"),
        ("GET", "/v1/tasks?includeArtifacts=maybe", 400, "INVALID_PARAMS"),
        ("GET", "/v1/tasks?statusTimestampAfter=2020-01-01T00:00:00Z", 400, "INVALID_PARAMS"),
        ("GET", "/v1/tasks/missing?historyLength=-1", 400, "INVALID_PARAMS"),
        ("GET", "/v1/tasks/missing?historyLength=1&historyLength=2", 400, "INVALID_PARAMS"),
        ("GET", "/v1/message:send", 405, "METHOD_NOT_FOUND"),
        ("PUT", "/v1/message:stream", 405, "METHOD_NOT_FOUND"),
        ("DELETE", "/v1/tasks/t", 405, "METHOD_NOT_FOUND"),
        ("GET", "/v1/tasks/t:cancel", 405, "METHOD_NOT_FOUND"),
        ("POST", "/v1/card", 405, "METHOD_NOT_FOUND"),
        ("GET", "/v1/card", 400, "UNSUPPORTED_OPERATION"),  # no supportsAuthenticatedExtendedCard
    ],
)
async def test_errors(http: httpx.AsyncClient, verb: str, path: str, status: int, why: str) -> None:
    response = await http.request(verb, path)
    assert response.status_code == status
    assert reason(response) == why
    body = response.json()
    assert body["type"].endswith("Error") and body["message"] == body["error"]["message"]
    assert body["code"] == V03_CODES[why]  # the v0.3 JSON-RPC code, as @a2a-js/sdk reads it
    if status == 405:
        assert response.headers["allow"]


@pytest.mark.parametrize(
    ("content", "content_type", "status", "why", "error_type"),
    [
        (b"{nope", "application/json", 400, "JSON_PARSE", "JSONParseError"),
        (b"[1]", "application/json", 400, "INVALID_PARAMS", "InvalidParamsError"),
        (b"{}", "application/json", 400, "INVALID_PARAMS", "InvalidParamsError"),
        (b"hello", "text/plain", 415, "CONTENT_TYPE_NOT_SUPPORTED", "ContentTypeNotSupportedError"),
        (
            orjson.dumps({"message": {"messageId": "m", "role": "ROLE_USER", "content": [{}]}}),
            "application/json",
            400,
            "INVALID_PARAMS",
            "InvalidParamsError",
        ),
        (
            orjson.dumps({"request": {"messageId": "m", "role": "user", "content": []}}),
            "application/json",
            400,
            "INVALID_PARAMS",
            "InvalidParamsError",
        ),
    ],
)
async def test_bad_bodies(
    http: httpx.AsyncClient,
    content: bytes,
    content_type: str,
    status: int,
    why: str,
    error_type: str,
) -> None:
    response = await http.post(
        "/v1/message:send", content=content, headers={"Content-Type": content_type}
    )
    assert (response.status_code, reason(response)) == (status, why)
    assert response.json()["type"] == error_type


async def test_bad_values_name_the_field(http: httpx.AsyncClient) -> None:
    body = {"message": {"messageId": "m", "role": "ROLE_BOSS", "content": [{"text": "x"}]}}
    response = await http.post("/v1/message:send", json=body)
    info = response.json()["error"]["details"][0]
    assert info["metadata"]["path"] == "$.message.role"
    assert "ROLE_USER" in info["metadata"]["reason"]


async def test_an_unknown_version_is_refused(http: httpx.AsyncClient) -> None:
    response = await http.post("/v1/message:send", json=SDK_SEND, headers={"A2A-Version": "2.0"})
    assert (response.status_code, reason(response)) == (400, "VERSION_NOT_SUPPORTED")


async def test_non_blocking_send_with_proto3_defaults(http: httpx.AsyncClient) -> None:
    """proto3 leaves ``blocking: false`` out: a configuration without it returns at once."""
    gate = str(uuid.uuid4())
    message = {"messageId": "m", "role": "ROLE_USER", "content": [{"text": gate}]}
    body = {"message": {**message, "metadata": {"skillId": "gated"}}, "configuration": {}}
    task = (await http.post("/v1/message:send", json=body)).json()["task"]
    assert task["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
    canceled = await http.post(f"/v1/tasks/{task['id']}:cancel", json={"name": "ignored"})
    assert canceled.json()["status"]["state"] == "TASK_STATE_CANCELLED"


SDK_MESSAGE = SDK_SEND["request"]
JSON_MESSAGE = {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "x"}]}


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"request": {**SDK_MESSAGE, "content": [{"text": 5}]}}, "$.request.content[0].text"),
        ({"request": {**SDK_MESSAGE, "content": []}}, "$.request.content"),
        ({"request": {"message_id": "m", "role": "ROLE_USER"}}, "$.request.content"),
        ({"message": {**JSON_MESSAGE, "content": []}}, "$.message.content"),
        ({"request": {**SDK_MESSAGE, "role": "ROLE_AGENT"}}, "$.request.role"),
        ({"request": {**SDK_MESSAGE, "context_id": "c\x00"}}, "$.request.context_id"),
        ({"message": {**JSON_MESSAGE, "contextId": "c\x00"}}, "$.message.contextId"),
        (
            {"request": SDK_MESSAGE, "configuration": {"history_length": -1}},
            "$.configuration.history_length",
        ),
        (
            {"request": {**SDK_MESSAGE, "metadata": {"skillId": "nosuch"}}},
            "$.request.metadata.skillId",
        ),
        ({"message": {**SPEC_SEND["message"], "parts": []}}, "$.message.parts"),
    ],
)
@pytest.mark.parametrize("verb", ["send", "stream"])
async def test_errors_name_the_fields_the_client_sent(
    http: httpx.AsyncClient, verb: str, body: dict[str, object], path: str
) -> None:
    """v0.3 ProtoJSON calls a message's parts ``content`` and takes proto field names: an
    error, from the decoder or from the runtime, names the key in the body as sent."""
    response = await http.post(f"/v1/message:{verb}", json=body)
    assert (response.status_code, reason(response)) == (400, "INVALID_PARAMS")
    assert response.json()["error"]["details"][0]["metadata"]["path"] == path
    assert response.json()["message"].startswith(path + ": ")


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("/v1/tasks?pageSize=1000", "$.query.pageSize"),
        ("/v1/tasks?historyLength=-1", "$.query.historyLength"),
        ("/v1/tasks?pageToken=zzz", "$.query.pageToken"),
        ("/v1/tasks/t?historyLength=-1", "$.query.historyLength"),
        ("/v1/tasks/t?historyLength=9999999999", "$.query.historyLength"),
    ],
)
async def test_query_errors_name_the_query_parameter(
    http: httpx.AsyncClient, query: str, path: str
) -> None:
    response = await http.get(query)
    assert (response.status_code, reason(response)) == (400, "INVALID_PARAMS")
    assert response.json()["error"]["details"][0]["metadata"]["path"] == path
