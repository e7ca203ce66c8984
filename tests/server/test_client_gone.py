"""A client that leaves before its answer is no failure: the server logs nothing and serves on.

Found by the soak (tests/bindings/test_soak.py): an HTTP+JSON or legacy client gone while its
body was still arriving made Quart log "Exception on request" and hypercorn "Error in ASGI
Framework", each with a traceback; so did one gone while its answer waited on a store call no
cancellation reaches (the SQL stores' calls run in threads).  The JSON-RPC endpoint never did.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import attrs
import httpx
import pytest
import trio
import trio.testing
from runtime.test_replicas import Proxy

from a2a_trio import ServerConfig, serve
from a2a_trio.store import StoredTask, TaskStore, open_store

from . import agents
from .conftest import V1_HEADERS, user_message


class HeldReads(Proxy):
    """The memory store, with ``load_task`` held, once armed, in a wait no cancellation reaches
    (as a SQL store's call in its thread), until the test releases it."""

    def __init__(self, store: TaskStore) -> None:
        super().__init__(store)
        self.armed = False
        self.entered = trio.Event()
        self.release = trio.Event()

    async def load_task(self, *args: Any, **kwargs: Any) -> StoredTask | None:
        if self.armed:
            self.entered.set()
            with trio.CancelScope(shield=True):
                await self.release.wait()
        stored: StoredTask | None = await self.store.load_task(*args, **kwargs)
        return stored


@attrs.frozen
class Served:
    url: str
    store: HeldReads


@pytest.fixture
async def served(nursery: trio.Nursery) -> AsyncIterator[Served]:
    """The test agent with its legacy surfaces, on a store whose reads the test can hold."""
    opened: list[HeldReads] = []

    @asynccontextmanager
    async def held_store() -> AsyncIterator[TaskStore]:
        async with open_store("memory") as store:
            opened.append(HeldReads(store))
            yield opened[-1]

    config = ServerConfig(legacy_mount_all=True)
    url = await nursery.start(partial(serve, agents.agent, port=0, store=held_store, config=config))
    yield Served(url, opened[0])


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the server logged as an error or with a traceback."""
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


async def connect(base_url: str) -> trio.SocketStream:
    address = urlsplit(base_url)
    assert address.hostname is not None and address.port is not None
    return await trio.open_tcp_stream(address.hostname, address.port)


def request_head(verb: str, path: str, length: int | None = None) -> bytes:
    lines = [f"{verb} {path} HTTP/1.1", "Host: test", "A2A-Version: 1.0"]
    if length is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {length}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def assert_serving(url: str) -> None:
    async with httpx.AsyncClient(base_url=url, headers=V1_HEADERS) as http:
        sent = await http.post("/message:send", json={"message": user_message("still here")})
    assert sent.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("path", ["/message:send", "/echo"], ids=["HTTP+JSON", "legacy"])
async def test_a_body_cut_off_by_its_client_logs_nothing(
    served: Served, path: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    client = await connect(served.url)
    await client.send_all(request_head("POST", path, length=1000) + b'{"message": ')
    await client.aclose()
    await trio.testing.wait_all_tasks_blocked(cushion=0.05)  # the server saw it go
    assert errors(caplog) == []
    await assert_serving(served.url)


async def test_an_answer_ready_after_its_client_left_logs_nothing(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with httpx.AsyncClient(base_url=served.url, headers=V1_HEADERS) as http:
        sent = await http.post("/message:send", json={"message": user_message("kept")})
    task_id = sent.json()["task"]["id"]
    served.store.armed = True
    client = await connect(served.url)
    await client.send_all(request_head("GET", f"/tasks/{task_id}"))
    await served.store.entered.wait()
    await client.aclose()
    await trio.testing.wait_all_tasks_blocked(cushion=0.05)  # the server saw it go
    served.store.armed = False
    served.store.release.set()
    await trio.testing.wait_all_tasks_blocked(cushion=0.05)  # and had its answer
    assert errors(caplog) == []
    await assert_serving(served.url)
