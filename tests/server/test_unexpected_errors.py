"""A failure nobody planned for (a bug in a custom store, or in a2a_trio) reaches the client as
the internal error of the binding it spoke, with the request's id, and its traceback reaches
only the log (before: JSON-RPC got an empty 500 from hypercorn, REST a JSON-RPC body)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, NoReturn

import httpx
import pytest
import trio

from a2a_trio import Agent, ServerConfig, TaskContext, serve
from a2a_trio.server._handler import UNEXPECTED_FAILURE
from a2a_trio.store import MemoryTaskStore, TaskStore

SECRET = "/srv/secret/path"

agent = Agent("Echo", "Echoes", version="1.0.0")


@agent.skill(default=True)
async def echo(ctx: TaskContext) -> str:
    return ctx.text


class BuggyStore(MemoryTaskStore):
    """A custom store with a bug in its reads and creates."""

    async def create_task(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise RuntimeError(f"bug in the custom store at {SECRET}")

    async def load_task(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise RuntimeError(f"bug in the custom store at {SECRET}")


@asynccontextmanager
async def buggy_store() -> AsyncIterator[TaskStore]:
    yield BuggyStore()


def message(v03: bool = False) -> dict[str, Any]:
    if v03:
        return {"messageId": "m", "role": "user", "kind": "message", "parts": [{"text": "hi"}]}
    return {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}


def rpc(method: str, params: dict[str, Any], rid: Any = 7) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


V1 = {"A2A-Version": "1.0"}
JSONRPC_CALLS = [  # (path, headers, body, id echoed)
    ("/", V1, rpc("SendMessage", {"message": message()}), 7),
    ("/", V1, rpc("GetTask", {"id": "t1"}, rid="abc"), "abc"),
    ("/", {}, rpc("message/send", {"message": message(v03=True)}), 7),
    ("/", {}, rpc("tasks/get", {"id": "t1"}), 7),
    ("/echo", {}, rpc("tasks/send", {"id": "l1", "message": message(v03=True)}), 7),
]
REST_CALLS = [  # (verb, path, headers, body, v0.3)
    ("POST", "/message:send", V1, {"message": message()}, False),
    ("GET", "/tasks/t1", V1, None, False),
    ("POST", "/v1/message:send", {}, {"message": message(v03=True)}, True),
    ("GET", "/v1/tasks/t1", {}, None, True),
]


@pytest.fixture
async def base_url(nursery: trio.Nursery) -> str:
    config = ServerConfig(legacy_mount_all=True)
    url: str = await nursery.start(partial(serve, agent, port=0, store=buggy_store, config=config))
    return url


async def test_jsonrpc_calls_get_an_internal_error_with_their_id(
    base_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with httpx.AsyncClient(base_url=base_url) as http:
        for path, headers, body, rid in JSONRPC_CALLS:
            caplog.clear()
            response = await http.post(path, json=body, headers=headers)
            assert response.headers["content-type"] == "application/json", body
            reply = response.json()
            assert reply["id"] == rid, body
            assert reply["error"]["code"] == -32603
            assert reply["error"]["message"] == UNEXPECTED_FAILURE
            assert SECRET not in response.text
            errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
            assert len(errors) == 1, body
            assert errors[0].exc_info is not None  # the operator gets the traceback
            assert SECRET in str(errors[0].exc_info[1])


async def test_a_notification_that_fails_unexpectedly_gets_no_reply(base_url: str) -> None:
    notification = rpc("GetTask", {"id": "t1"})
    del notification["id"]
    async with httpx.AsyncClient(base_url=base_url) as http:
        response = await http.post("/", json=notification, headers=V1)
    assert (response.status_code, response.content) == (204, b"")


async def test_rest_calls_get_the_rest_internal_error(base_url: str) -> None:
    async with httpx.AsyncClient(base_url=base_url) as http:
        for verb, path, headers, body, v03 in REST_CALLS:
            response = await http.request(verb, path, json=body, headers=headers)
            assert response.status_code == 500, path
            assert SECRET not in response.text
            error = response.json()["error"]
            assert (error["code"], error["status"]) == (500, "INTERNAL"), path
            assert error["message"] == UNEXPECTED_FAILURE
            assert "jsonrpc" not in response.json()
            if v03:  # v0.3 HTTP+JSON also names the error type (docs/bindings.md)
                assert response.json()["type"] == "InternalError"
