"""Legacy surfaces authenticate like every other binding, and their tasks belong to the caller."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from functools import partial
from typing import Any

import httpx
import orjson
import pytest
import trio

from a2a_trio import ServerConfig, serve
from a2a_trio.errors import AuthenticationRequiredError
from a2a_trio.runtime import RuntimeConfig

from .agents import agent, gates

TOKENS = {"Bearer alice-token": "alice", "Bearer bob-token": "bob"}
V1 = {"A2A-Version": "1.0"}
ALICE = {"Authorization": "Bearer alice-token"}
BOB = {"Authorization": "Bearer bob-token"}


async def by_token(headers: Mapping[str, str]) -> str:
    owner = TOKENS.get(headers.get("authorization", ""))
    if owner is None:
        raise AuthenticationRequiredError("Send 'Authorization: Bearer <token>'")
    return owner


def config(*, authenticate: bool, legacy_bearer: bool) -> ServerConfig:
    return ServerConfig(
        keepalive=0.05,
        legacy_mount_all=True,
        legacy_bearer=legacy_bearer,
        authenticate=by_token if authenticate else None,
        runtime=RuntimeConfig(poll_interval=0.01),
    )


async def start(nursery: trio.Nursery, server_config: ServerConfig) -> str:
    url: str = await nursery.start(partial(serve, agent, port=0, config=server_config))
    return url


@pytest.fixture(params=[True, False], ids=["gate", "no-gate"])
async def secured(request: pytest.FixtureRequest, nursery: trio.Nursery) -> AsyncIterator[str]:
    """``authenticate`` set, with and without the dialect's own bearer gate in front of it."""
    yield await start(nursery, config(authenticate=True, legacy_bearer=request.param))


@pytest.fixture
async def http(secured: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=secured, timeout=10) as client:
        yield client


def legacy(method: str, params: object, rid: object = 7) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def v1(method: str, params: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def text(value: str) -> dict[str, object]:
    return {"role": "user", "parts": [{"type": "text", "text": value}]}


USER = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "bob's"}]}


async def call(
    http: httpx.AsyncClient, auth: Mapping[str, str], path: str, method: str, params: object
) -> Any:
    response = await http.post(path, json=legacy(method, params), headers=dict(auth))
    assert response.status_code == 200
    return response.json()


def assert_refused(response: httpx.Response) -> None:
    """The dialect's refusal (§6.2): 401, -32001, a null id, nothing else in the error."""
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    assert set(body["error"]) == {"code", "message"} and body["error"]["code"] == -32001


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer anything", "Bearer alice-token-not", "Basic YWxpY2U6eA==", "Bearer"],
)
@pytest.mark.parametrize("method", ["tasks/send", "tasks/get", "tasks/sendSubscribe"])
async def test_a_bad_or_missing_token_is_refused_the_dialects_way(
    http: httpx.AsyncClient, authorization: str | None, method: str
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    params = {"id": f"x-{uuid.uuid4()}", "message": text("hi")}
    refused = await http.post("/echo", json=legacy(method, params), headers=headers)
    assert_refused(refused)
    # Nothing ran: the task was neither started nor is its id held.
    fresh = await call(http, ALICE, "/echo", "tasks/send", params)
    assert fresh["result"]["status"]["state"] == "completed"


async def test_the_card_stays_public(http: httpx.AsyncClient) -> None:
    assert (await http.get("/echo/.well-known/agent.json")).status_code == 200


async def test_alices_legacy_task_is_invisible_to_bob_on_every_binding(
    http: httpx.AsyncClient,
) -> None:
    gate = str(uuid.uuid4())
    envelope = legacy("tasks/sendSubscribe", {"id": "shared-id", "message": text(gate)})
    async with http.stream("POST", "/gated", json=envelope, headers=ALICE) as response:
        first = orjson.loads((await anext(response.aiter_lines())).removeprefix("data: "))
    assert first["result"]["status"]["state"] == "working"  # left running: a gated task

    # Bob, on the legacy surface: the id is unknown to him, whatever he does with it.
    for method in ("tasks/get", "tasks/cancel", "tasks/resubscribe"):
        other = await call(http, BOB, "/gated", method, {"id": "shared-id"})
        assert other["error"]["code"] == -32602
        assert other["error"]["message"] == "Unknown task id: shared-id"
    # ... and it is free for his own task, not "already in use" (no existence oracle).
    own = await call(http, BOB, "/echo", "tasks/send", {"id": "shared-id", "message": text("b")})
    assert own["result"]["status"]["state"] == "completed"

    # On JSON-RPC and REST, alice sees her legacy task under its runtime id; bob does not.
    listed = await http.post("/", json=v1("ListTasks", {}), headers=V1 | ALICE)
    running = [
        t
        for t in listed.json()["result"]["tasks"]
        if t["status"]["state"] != "TASK_STATE_COMPLETED"
    ]
    (task,) = running
    task_id = task["id"]
    assert (await http.get(f"/tasks/{task_id}", headers=ALICE)).status_code == 200
    for method in ("GetTask", "CancelTask"):
        other = await http.post("/", json=v1(method, {"id": task_id}), headers=V1 | BOB)
        assert other.json()["error"]["code"] == -32001
    bobs = await http.post("/", json=v1("ListTasks", {}), headers=V1 | BOB)
    assert task_id not in [t["id"] for t in bobs.json()["result"]["tasks"]]
    assert (await http.get(f"/tasks/{task_id}", headers=BOB)).status_code == 404
    assert (await http.post(f"/tasks/{task_id}:cancel", headers=BOB)).status_code == 404

    # Alice's task ran on untouched; she still reaches it, and it finishes for her.
    mine = await call(http, ALICE, "/gated", "tasks/get", {"id": "shared-id"})
    assert mine["result"]["status"]["state"] == "working"
    gates.setdefault(gate, trio.Event()).set()
    with trio.fail_after(5):
        while mine["result"]["status"]["state"] == "working":
            await trio.sleep(0.01)
            mine = await call(http, ALICE, "/gated", "tasks/get", {"id": "shared-id"})
    assert mine["result"]["artifacts"][0]["parts"][0]["text"] == "opened"


async def test_bobs_jsonrpc_task_is_invisible_to_alice_over_legacy(
    http: httpx.AsyncClient,
) -> None:
    sent = await http.post("/", json=v1("SendMessage", {"message": USER}), headers=V1 | BOB)
    task_id = sent.json()["result"]["task"]["id"]
    for method in ("tasks/get", "tasks/cancel", "tasks/resubscribe"):
        other = await call(http, ALICE, "/echo", method, {"id": task_id})
        assert other["error"]["code"] == -32602
    still = await http.post("/", json=v1("GetTask", {"id": task_id}), headers=V1 | BOB)
    assert still.json()["result"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize(
    "values",
    [
        ["Bearer alice-token", "Bearer bob-token"],
        ["Bearer anything", "Bearer alice-token"],
        ["Bearer alice-token", "Bearer anything"],
        ["Bearer alice-token", "Bearer alice-token"],
    ],
)
async def test_repeated_authorization_is_refused_on_every_binding(
    http: httpx.AsyncClient, values: list[str]
) -> None:
    """Ambiguous credentials count as none: the same answer whichever one a binding reads."""
    headers = [("A2A-Version", "1.0")] + [("Authorization", value) for value in values]
    jsonrpc = await http.post("/", json=v1("ListTasks", {}), headers=headers)
    assert jsonrpc.status_code == 401
    assert jsonrpc.json()["error"]["data"][0]["reason"] == "AUTHENTICATION_REQUIRED"
    assert (await http.get("/tasks", headers=headers)).status_code == 401
    assert (await http.get("/v1/tasks", headers=headers[1:])).status_code == 401
    params = {"message": text("hi")}
    assert_refused(await http.post("/echo", json=legacy("tasks/send", params), headers=headers))


async def test_both_the_gates_token_check_and_authenticate_must_pass(
    nursery: trio.Nursery,
) -> None:
    checked = ServerConfig(
        legacy_mount_all=True,
        legacy_bearer=True,
        legacy_token_check=lambda token: token == "alice-token",
        authenticate=by_token,
    )
    url = await start(nursery, checked)
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        params = {"message": text("hi")}
        bob = await http.post("/echo", json=legacy("tasks/send", params), headers=BOB)
        assert_refused(bob)  # authenticate knows bob, the gate's check does not
        assert "not accepted" in bob.json()["error"]["message"]
        # JSON-RPC does not run the legacy gate: bob is served there.
        listed = await http.post("/", json=v1("ListTasks", {}), headers=V1 | BOB)
        assert listed.status_code == 200
        alice = await call(http, ALICE, "/echo", "tasks/send", params)
        assert alice["result"]["status"]["state"] == "completed"


async def test_without_authenticate_legacy_tasks_are_the_anonymous_callers(
    nursery: trio.Nursery,
) -> None:
    """Unchanged: any token passes the bare gate, and every caller is the same anonymous one."""
    url = await start(nursery, config(authenticate=False, legacy_bearer=True))
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        params = {"id": "anon-1", "message": text("hi")}
        sent = await call(http, {"Authorization": "Bearer x"}, "/echo", "tasks/send", params)
        assert sent["result"]["status"]["state"] == "completed"
        got = await call(
            http, {"Authorization": "Bearer y"}, "/echo", "tasks/get", {"id": "anon-1"}
        )
        assert got["result"]["artifacts"][0]["parts"][0]["text"] == "hi"
        listed = await http.post("/", json=v1("ListTasks", {}), headers=V1)
        assert len(listed.json()["result"]["tasks"]) == 1
        # A repeated Authorization is no credential: the gate refuses it as missing ...
        twice = [("Authorization", "Bearer x"), ("Authorization", "Bearer y")]
        refused = await http.post("/echo", json=legacy("tasks/send", {}), headers=twice)
        assert_refused(refused)
        assert "missing Authorization" in refused.json()["error"]["message"]
        # ... while JSON-RPC and REST, which ask for no credentials, serve it as before.
        served = await http.post("/", json=v1("ListTasks", {}), headers=[*twice, *V1.items()])
        assert served.status_code == 200
        assert (await http.get("/tasks", headers=twice)).status_code == 200
