"""Tenants scope tasks on every binding; with an allow-list, unknown tenants are refused."""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import httpx
import pytest
import trio

from a2a_trio import ServerConfig, serve

from .agents import agent
from .drivers import V1_HEADERS

SEND = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}}


@pytest.fixture(params=[None, frozenset({"acme", "globex"})], ids=["any", "listed"])
def config(request: pytest.FixtureRequest) -> ServerConfig:
    return ServerConfig(tenants=request.param)


@pytest.fixture
async def client(config: ServerConfig, nursery: trio.Nursery) -> AsyncIterator[httpx.AsyncClient]:
    url = await nursery.start(partial(serve, agent, port=0, config=config))
    async with httpx.AsyncClient(base_url=url, headers=V1_HEADERS) as http:
        yield http


async def rpc(http: httpx.AsyncClient, method: str, params: dict[str, Any]) -> Any:
    envelope = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return (await http.post("/", json=envelope)).json()


async def test_a_task_is_visible_only_under_its_tenant(client: httpx.AsyncClient) -> None:
    task_id = (await client.post("/acme/message:send", json=SEND)).json()["task"]["id"]
    assert (await client.get(f"/acme/tasks/{task_id}")).status_code == 200
    for elsewhere in (f"/globex/tasks/{task_id}", f"/tasks/{task_id}"):
        response = await client.get(elsewhere)
        assert response.status_code == 404
        assert response.json()["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"
    listed = (await client.get("/acme/tasks")).json()["tasks"]
    assert [task["id"] for task in listed] == [task_id]
    assert (await client.get("/globex/tasks")).json()["tasks"] == []
    # JSON-RPC names the tenant in params: the same scoping.
    found = await rpc(client, "GetTask", {"id": task_id, "tenant": "acme"})
    assert found["result"]["id"] == task_id
    other = await rpc(client, "GetTask", {"id": task_id, "tenant": "globex"})
    assert other["error"]["code"] == -32001
    # JSON-RPC and REST create into the same tenant space.
    made = await rpc(client, "SendMessage", {**SEND, "tenant": "globex"})
    made_id = made["result"]["task"]["id"]
    assert (await client.get(f"/globex/tasks/{made_id}")).status_code == 200


async def test_unknown_tenants(client: httpx.AsyncClient, config: ServerConfig) -> None:
    rest = await client.post("/initech/message:send", json=SEND)
    jsonrpc = await rpc(client, "SendMessage", {**SEND, "tenant": "initech"})
    if (
        config.tenants is not None
    ):  # an allow-list is configured: refused as not found, on both bindings
        assert rest.status_code == 404
        assert rest.json()["error"]["message"] == "Unknown tenant 'initech'"
        assert jsonrpc["error"]["code"] == -32001
    else:  # any tenant is accepted
        assert rest.status_code == 200
        assert jsonrpc["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    default = await client.post("/message:send", json=SEND)
    assert default.status_code == 200  # the default (empty) tenant is always served
