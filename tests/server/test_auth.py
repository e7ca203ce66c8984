"""Authentication: every task belongs to its authenticated owner and to nobody else."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from functools import partial

import httpx
import pytest
import trio

from a2a_trio import ServerConfig, model, serve
from a2a_trio.errors import AuthenticationRequiredError

from .agents import agent
from .conftest import rpc, user_message

TOKENS = {"Bearer alice-token": "alice", "Bearer bob-token": "bob"}


async def by_token(headers: Mapping[str, str]) -> str:
    owner = TOKENS.get(headers.get("authorization", ""))
    if owner is None:
        raise AuthenticationRequiredError("Send 'Authorization: Bearer <token>'")
    return owner


@pytest.fixture
async def secured(nursery: trio.Nursery) -> AsyncIterator[str]:
    config = ServerConfig(
        authenticate=by_token,
        security_schemes={"bearer": model.HTTPAuthSecurityScheme(scheme="Bearer")},
        security_requirements=(model.SecurityRequirement({"bearer": ()}),),
    )
    yield await nursery.start(partial(serve, agent, port=0, config=config))


def client(url: str, token: str | None) -> httpx.AsyncClient:
    headers = {"A2A-Version": "1.0"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.AsyncClient(base_url=url, headers=headers, timeout=10)


async def test_owners_never_see_each_others_tasks(secured: str) -> None:
    async with client(secured, "alice-token") as alice, client(secured, "bob-token") as bob:
        sent = await alice.post("/", json=rpc("SendMessage", {"message": user_message("mine")}))
        task_id = sent.json()["result"]["task"]["id"]
        own = await alice.post("/", json=rpc("GetTask", {"id": task_id}))
        assert own.json()["result"]["id"] == task_id
        other = await bob.post("/", json=rpc("GetTask", {"id": task_id}))
        assert other.json()["error"]["code"] == -32001
        cancel = await bob.post("/", json=rpc("CancelTask", {"id": task_id}))
        assert cancel.json()["error"]["code"] == -32001
        listed = await bob.post("/", json=rpc("ListTasks", {}))
        assert listed.json()["result"]["tasks"] == []
        rest = await bob.get(f"/tasks/{task_id}")
        assert rest.status_code == 404


async def test_missing_or_wrong_credentials_get_401_with_a_challenge(secured: str) -> None:
    for token in (None, "nope"):
        async with client(secured, token) as anonymous:
            refused = await anonymous.post("/", json=rpc("ListTasks", {}))
            assert refused.status_code == 401
            assert refused.headers["www-authenticate"] == "Bearer"
            error = refused.json()["error"]
            assert "Authorization: Bearer" in error["message"]
            assert error["data"][0]["reason"] == "AUTHENTICATION_REQUIRED"  # not TaskNotFound
            rest = await anonymous.get("/tasks")
            assert rest.status_code == 401
            card = await anonymous.get("/.well-known/agent-card.json")  # the card stays public
            assert card.json()["securitySchemes"] == {
                "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}
            }
