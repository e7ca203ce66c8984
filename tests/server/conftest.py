"""A real a2a_trio server on 127.0.0.1 for each test that asks for one."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import aclosing
from functools import partial

import httpx
import orjson
import pytest
import trio

from a2a_trio import ServerConfig, serve
from a2a_trio.runtime import RuntimeConfig
from a2a_trio.wire import SSEDecoder

from .agents import agent
from .webhook import Webhook, webhook_server

V1_HEADERS = {"A2A-Version": "1.0"}


@pytest.fixture
async def base_url(nursery: trio.Nursery) -> AsyncIterator[str]:
    """Base URL of the test agent served by hypercorn on a free port (short keepalive)."""
    config = ServerConfig(keepalive=0.2, runtime=RuntimeConfig(poll_interval=0.01))
    url: str = await nursery.start(partial(serve, agent, port=0, config=config))
    yield url


@pytest.fixture
async def hook() -> AsyncIterator[Webhook]:
    """A webhook receiver on a free port of 127.0.0.1 (push notifications)."""
    async with webhook_server() as receiver:
        yield receiver


@pytest.fixture
async def http(base_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=base_url, headers=V1_HEADERS, timeout=10) as client:
        yield client


def rpc(method: str, params: dict[str, object], rid: int | str = 1) -> dict[str, object]:
    """A JSON-RPC request document."""
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def user_message(text: str, *, skill: str | None = None, **fields: object) -> dict[str, object]:
    """A v1.0 wire message from the user, optionally addressed to a skill."""
    message: dict[str, object] = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        **fields,
    }
    if skill is not None:
        message["metadata"] = {"skillId": skill}
    return message


async def read_events(
    response: httpx.Response, *, limit: int | None = None
) -> list[tuple[str, dict[str, object]]]:
    """Parse an event-stream response into (id, JSON-RPC result) pairs, up to ``limit``."""
    decoder = SSEDecoder()
    events: list[tuple[str, dict[str, object]]] = []
    async with aclosing(response.aiter_bytes()) as chunks:
        async for chunk in chunks:
            for event in decoder.feed(chunk):
                events.append((event.id, orjson.loads(event.data)["result"]))
                if limit is not None and len(events) >= limit:
                    return events
    return events


def kind(result: dict[str, object]) -> str:
    """Which StreamResponse arm a result holds (task, statusUpdate, artifactUpdate, message)."""
    (key,) = result
    return key
