"""What the cards leave out is refused on every binding, and a refusal stores nothing
(A2A v1.0 §3.3.4: a request using a capability the card does not declare MUST get an error)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from .drivers import V1_HEADERS

HOOK = {"url": "https://example.com/hook", "token": "t"}


def v1_message(text: str = "x", **fields: Any) -> dict[str, Any]:
    return {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        **fields,
    }


def v03_message(text: str = "x") -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": str(uuid.uuid4()),
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
    }


def v03_proto_message(text: str = "x") -> dict[str, Any]:
    return {"message_id": str(uuid.uuid4()), "role": "ROLE_USER", "content": [{"text": text}]}


def rpc(method: str, params: Any, rid: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


async def stored_tasks(http: httpx.AsyncClient, tenant: str = "") -> int:
    response = await http.get(f"{tenant}/tasks", headers=V1_HEADERS)
    assert response.status_code == 200
    total: int = response.json()["totalSize"]
    return total


def v1_send(method: str) -> dict[str, Any]:
    config = {"taskPushNotificationConfig": HOOK}
    return rpc(method, {"message": v1_message(), "configuration": config}, rid="push")


def v03_send(method: str) -> dict[str, Any]:
    config = {"pushNotificationConfig": HOOK, "blocking": True}
    return rpc(method, {"message": v03_message(), "configuration": config}, rid="push")


@pytest.mark.parametrize(
    ("document", "headers"),
    [
        (v1_send("SendMessage"), V1_HEADERS),
        (v1_send("SendStreamingMessage"), V1_HEADERS),
        (v03_send("message/send"), {}),
        (v03_send("message/stream"), {"A2A-Version": "0.3"}),
    ],
)
async def test_jsonrpc_send_with_a_push_config_is_refused(
    http: httpx.AsyncClient, document: dict[str, Any], headers: dict[str, str]
) -> None:
    response = await http.post("/", json=document, headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"  # an error, not a stream
    body = response.json()
    assert body["id"] == "push" and "result" not in body
    assert body["error"]["code"] == -32003
    assert "push notifications" in body["error"]["message"]
    if headers == V1_HEADERS:
        assert body["error"]["data"][0]["reason"] == "PUSH_NOTIFICATION_NOT_SUPPORTED"
    assert await stored_tasks(http) == 0


@pytest.mark.parametrize(
    ("path", "body", "tenant"),
    [
        ("/message:send", {"message": v1_message()}, ""),
        ("/message:stream", {"message": v1_message()}, ""),
        ("/acme/message:send", {"message": v1_message()}, "/acme"),
        ("/acme/message:stream", {"message": v1_message()}, "/acme"),
    ],
)
async def test_rest_send_with_a_push_config_is_refused(
    http: httpx.AsyncClient, path: str, body: dict[str, Any], tenant: str
) -> None:
    body = {**body, "configuration": {"taskPushNotificationConfig": HOOK}}
    response = await http.post(path, json=body, headers=V1_HEADERS)
    assert (response.status_code, response.headers["content-type"]) == (400, "application/json")
    error = response.json()["error"]
    assert (error["code"], error["status"]) == (400, "UNIMPLEMENTED")
    assert error["details"][0]["reason"] == "PUSH_NOTIFICATION_NOT_SUPPORTED"
    assert await stored_tasks(http, tenant) == 0


@pytest.mark.parametrize("path", ["/v1/message:send", "/v1/message:stream"])
@pytest.mark.parametrize("key", ["pushNotification", "push_notification", "pushNotificationConfig"])
async def test_v03_rest_send_with_a_push_config_is_refused(
    http: httpx.AsyncClient, path: str, key: str
) -> None:
    body = {"request": v03_proto_message(), "configuration": {"blocking": True, key: HOOK}}
    response = await http.post(path, json=body)
    assert (response.status_code, response.headers["content-type"]) == (400, "application/json")
    refused = response.json()
    assert refused["type"] == "PushNotificationNotSupportedError"
    assert refused["error"]["details"][0]["reason"] == "PUSH_NOTIFICATION_NOT_SUPPORTED"
    assert await stored_tasks(http) == 0


@pytest.mark.parametrize("method", ["tasks/send", "tasks/sendSubscribe"])
async def test_legacy_send_with_a_push_config_is_refused_and_claims_no_id(
    http: httpx.AsyncClient, method: str
) -> None:
    params = {
        "id": "pushed",
        "message": {"role": "user", "parts": [{"type": "text", "text": "x"}]},
        "pushNotification": HOOK,
    }
    response = await http.post("/echo", json=rpc(method, params, rid="L"))
    assert (response.status_code, response.headers["content-type"]) == (200, "application/json")
    body = response.json()
    assert (body["id"], body["error"]["code"]) == ("L", -32003)
    assert await stored_tasks(http) == 0
    unknown = await http.post("/echo", json=rpc("tasks/get", {"id": "pushed"}))
    assert unknown.json()["error"]["code"] == -32602  # the id was never claimed
    del params["pushNotification"]
    served = await http.post("/echo", json=rpc("tasks/send", params))
    assert served.json()["result"]["status"]["state"] == "completed"


async def test_a_follow_up_with_a_push_config_changes_nothing(http: httpx.AsyncClient) -> None:
    first = await http.post(
        "/message:send",
        json={"message": v1_message("hello", metadata={"skillId": "ask"})},
        headers=V1_HEADERS,
    )
    task = first.json()["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    follow_up = {
        "message": v1_message("answer", taskId=task["id"], contextId=task["contextId"]),
        "configuration": {"taskPushNotificationConfig": HOOK},
    }
    refused = await http.post("/message:send", json=follow_up, headers=V1_HEADERS)
    assert refused.status_code == 400
    after = await http.get(f"/tasks/{task['id']}", headers=V1_HEADERS)
    assert after.json()["status"] == task["status"]
    assert after.json()["history"] == task["history"]
