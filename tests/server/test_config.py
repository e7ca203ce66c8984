"""ServerConfig refuses settings that cannot work, and a short keepalive paces its comments."""

from __future__ import annotations

import math
from contextlib import aclosing
from functools import partial

import httpx
import pytest
import trio

from a2a_trio import ServerConfig, serve

from . import agents
from .conftest import V1_HEADERS, rpc, user_message


@pytest.mark.parametrize("seconds", [0, 0.0, -1, -0.5, math.nan, math.inf, -math.inf])
def test_keepalive_must_be_positive_and_finite(seconds: float) -> None:
    with pytest.raises(ValueError, match="keepalive must be a positive number of seconds"):
        ServerConfig(keepalive=seconds)


@pytest.mark.parametrize("seconds", ["15", None, True])
def test_keepalive_must_be_a_number(seconds: object) -> None:
    with pytest.raises(TypeError, match="keepalive must be a number of seconds"):
        ServerConfig(keepalive=seconds)  # type: ignore[arg-type]


@pytest.mark.parametrize("seconds", [-1, -0.5, math.nan, math.inf, -math.inf])
def test_the_shutdown_grace_must_be_zero_or_positive_and_finite(seconds: float) -> None:
    with pytest.raises(ValueError, match="shutdown_grace must be zero or a positive number"):
        ServerConfig(shutdown_grace=seconds)


@pytest.mark.parametrize("seconds", ["10", None, True])
def test_the_shutdown_grace_must_be_a_number(seconds: object) -> None:
    with pytest.raises(TypeError, match="shutdown_grace must be a number of seconds"):
        ServerConfig(shutdown_grace=seconds)  # type: ignore[arg-type]


@pytest.mark.parametrize("seconds", [0, 0.5, 10.0])
def test_a_shutdown_grace_of_zero_or_more_is_kept(seconds: float) -> None:
    assert ServerConfig(shutdown_grace=seconds).shutdown_grace == seconds


@pytest.mark.parametrize("seconds", [0.001, 1, 15.0])
def test_positive_keepalives_are_kept(seconds: float) -> None:
    assert ServerConfig(keepalive=seconds).keepalive == seconds


@pytest.mark.parametrize(
    "url",
    [
        "example.com",
        "example.com/a2a",
        "/a2a",
        "//example.com",
        "ftp://example.com",
        "ws://example.com",
        "http://",
        "https://example.com:port",
        "https://example.com:99999",
        "http://[::1",
        "https://example.com/?tenant=a",
        "https://example.com/#card",
        "",
    ],
)
def test_public_url_must_be_an_absolute_http_url(url: str) -> None:
    with pytest.raises(ValueError, match="public_url must be an absolute http\\(s\\) URL") as e:
        ServerConfig(public_url=url)
    assert repr(url) in str(e.value)


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8000", "https://agents.example.com", "https://example.com/a2a/", None],
)
def test_usable_public_urls_are_kept(url: str | None) -> None:
    assert ServerConfig(public_url=url).public_url == url


async def count_keepalives(
    http: httpx.AsyncClient, path: str, body: dict[str, object], seconds: float
) -> int:
    """Keepalive comments on one stream of a task that stays idle for ``seconds``."""
    comments = 0
    async with http.stream("POST", path, json=body) as response:
        assert response.status_code == 200
        with trio.move_on_after(seconds):
            async with aclosing(response.aiter_bytes()) as chunks:
                async for chunk in chunks:
                    comments += chunk.count(b": keepalive")
    return comments


async def test_a_short_keepalive_sends_a_comment_per_idle_interval(
    nursery: trio.Nursery,
) -> None:
    """Both stream writers (JSON-RPC's and the Quart routes') pace comments by the keepalive."""
    config = ServerConfig(keepalive=0.05)
    url: str = await nursery.start(partial(serve, agents.agent, port=0, config=config))
    gate = agents.gates.setdefault("paced", trio.Event())
    message = user_message("paced", skill="gated")
    async with httpx.AsyncClient(base_url=url, headers=V1_HEADERS, timeout=10) as http:
        jsonrpc = await count_keepalives(
            http, "/", rpc("SendStreamingMessage", {"message": message}), 1.0
        )
        rest = await count_keepalives(
            http, "/message:stream", {"message": {**message, "messageId": "rest"}}, 1.0
        )
    gate.set()
    # 1 s idle at one comment per 0.05 s is 20; a busy loop sends thousands.
    assert 5 <= jsonrpc <= 25
    assert 5 <= rest <= 25
