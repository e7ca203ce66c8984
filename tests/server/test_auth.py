"""Authentication: every task belongs to its authenticated owner and to nobody else."""

from __future__ import annotations

import logging
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


V03_MESSAGE = {"kind": "message", "messageId": "m", "role": "user", "parts": [{"text": "hi"}]}
EVERY_BINDING = [  # (path, headers, body): a send on each binding, and a v1.0 REST read
    ("/", {"A2A-Version": "1.0"}, rpc("SendMessage", {"message": user_message("hi")})),
    ("/", {}, rpc("message/send", {"message": V03_MESSAGE})),
    ("/message:send", {"A2A-Version": "1.0"}, {"message": user_message("hi")}),
    ("/tasks", {"A2A-Version": "1.0"}, None),
    ("/v1/message:send", {}, {"message": V03_MESSAGE}),
    ("/echo", {}, rpc("tasks/send", {"id": "t", "message": {"parts": [{"text": "hi"}]}})),
]


async def nul_owner(_headers: Mapping[str, str]) -> str:
    return "al\x00ice"  # the operator's bug: no store can hold it


async def no_owner(_headers: Mapping[str, str]) -> str:
    return None  # type: ignore[return-value]  # the operator's bug, past their type checker


async def broken(_headers: Mapping[str, str]) -> str:
    raise KeyError("/etc/a2a/tokens.json")


@pytest.mark.parametrize("hook", [nul_owner, no_owner, broken])
async def test_a_broken_authenticate_hook_is_a_server_error_on_every_binding(
    nursery: trio.Nursery, caplog: pytest.LogCaptureFixture, hook: object
) -> None:
    """The owner comes from the operator's hook, not from the client: an owner no store can
    hold is not the client's invalid params (before: -32602 at ``$.owner`` on a send), and a
    hook that raises is not an empty 500; each is -32603 / HTTP 500 in the binding's shape,
    and the operator is told once per request what to fix."""
    config = ServerConfig(authenticate=hook, legacy_mount_all=True)  # type: ignore[arg-type]
    url = await nursery.start(partial(serve, agent, port=0, config=config))
    caplog.set_level(logging.INFO, logger="a2a_trio")
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        for path, headers, body in EVERY_BINDING:
            caplog.clear()
            verb = "GET" if body is None else "POST"
            response = await http.request(verb, path, json=body, headers=headers)
            assert response.status_code == 500, path
            assert response.headers["content-type"] == "application/json"
            error = response.json()["error"]
            if "jsonrpc" in response.json():  # JSON-RPC (v1.0, v0.3, legacy): the body unread
                assert (response.json()["id"], error["code"]) == (None, -32603)
            else:  # HTTP+JSON, both versions
                assert error["status"] == "INTERNAL"
                assert error["details"][0]["reason"] == "INTERNAL_ERROR"
            assert error["message"] == "The server could not authenticate this request"
            for leak in ("owner", "NUL", "\\u0000", "Traceback", "tokens.json"):
                assert leak not in response.text, (path, leak)
            logged = [r for r in caplog.records if r.levelno >= logging.WARNING]
            assert len(logged) == 1, (path, [r.getMessage() for r in logged])
            assert logged[0].name == "a2a_trio.server"
            assert "ServerConfig.authenticate" in logged[0].getMessage()
