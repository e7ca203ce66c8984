"""One a2a_trio server per test, with every binding mounted (legacy surfaces for all skills)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial

import httpx
import pytest
import trio

from a2a_trio import ServerConfig, serve
from a2a_trio.runtime import RuntimeConfig

from .agents import agent

CONFIG = ServerConfig(
    keepalive=0.2,
    legacy_mount_all=True,
    runtime=RuntimeConfig(poll_interval=0.01),
)


@pytest.fixture
async def base_url(nursery: trio.Nursery) -> AsyncIterator[str]:
    url: str = await nursery.start(partial(serve, agent, port=0, config=CONFIG))
    yield url


@pytest.fixture
async def http(base_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=base_url, timeout=10) as client:
        yield client
