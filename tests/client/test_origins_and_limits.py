"""What the client sends where, and how much it reads: redirects and card interfaces stay on the
origins the caller chose, and cards, answers and events are read up to ``Limits``.

Two scripted agents on two loopback ports are two origins: ``home`` (the agent the caller
asked for) and ``other`` (somewhere a hostile card or redirect points to).
"""

from __future__ import annotations

import re
import tracemalloc
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager

import httpx
import pytest
import trio

from a2a_trio import model as m
from a2a_trio.client import (
    AgentCardError,
    ApiKeyAuth,
    BearerAuth,
    InvalidResponseError,
    Limits,
    TransportError,
    TrustedOrigins,
    fetch_card,
    open_client,
)
from a2a_trio.wire import V1

from .stub_agent import Reply, Request, StubAgent, open_stub_agent, rpc_result

ANSWER = rpc_result(V1.encode_send_result(m.text_message("ok", role=m.Role.AGENT)))
SECRET_HEADERS = ("authorization", "x-api-key", "x-secret")


def card(*urls: str) -> dict[str, object]:
    interfaces = tuple(m.AgentInterface(url, "JSONRPC", "1.0") for url in urls)
    return V1.encode(m.AgentCard("stub", "scripted", "1", supported_interfaces=interfaces))


@asynccontextmanager
async def open_other() -> AsyncIterator[StubAgent]:
    """The other origin: answers as an agent would, so only the assertions catch a leak."""

    async def answer_everything(request: Request, reply: Reply) -> None:
        if request.method == "GET":
            await reply.json(card(other.url + "/rpc"))
        else:
            await reply.json(ANSWER)

    async with open_stub_agent(answer_everything) as other:
        yield other


def secrets(agent: StubAgent) -> list[dict[str, str]]:
    return [{k: v for k, v in r.headers.items() if k in SECRET_HEADERS} for r in agent.requests]


# --- redirects -----------------------------------------------------------------------------


@pytest.mark.parametrize("caller_follows", [False, True])
@pytest.mark.parametrize("status", [301, 302, 307, 308])
async def test_card_redirect_to_another_origin_is_not_followed(
    status: int, caller_follows: bool
) -> None:
    async with open_other() as other:

        async def moved(request: Request, reply: Reply) -> None:
            await reply.redirect(status, other.url + "/.well-known/agent-card.json")

        async with (
            open_stub_agent(moved) as home,
            httpx.AsyncClient(follow_redirects=caller_follows) as http,
        ):
            with pytest.raises(AgentCardError, match="another origin: not followed") as caught:
                async with open_client(
                    home.url + "/a",
                    auth=ApiKeyAuth("API-KEY"),
                    headers={"X-Secret": "s3"},
                    http=http,
                ):
                    pass
    assert other.url + "/.well-known/agent-card.json" in str(caught.value)
    assert other.requests == []
    assert secrets(home) == [{"x-api-key": "API-KEY", "x-secret": "s3"}]


async def test_card_redirect_to_another_scheme_is_not_followed() -> None:
    async def moved(request: Request, reply: Reply) -> None:
        await reply.redirect(302, "file:///etc/passwd")

    async with open_stub_agent(moved) as home, httpx.AsyncClient(follow_redirects=True) as http:
        with pytest.raises(AgentCardError, match="another origin"):
            await fetch_card(http, home.url + "/a", auth=BearerAuth("T"))


@pytest.mark.parametrize("status", [307, 308])
async def test_call_redirected_to_another_origin_is_refused(status: int) -> None:
    async with open_other() as other:

        async def rpc_moved(request: Request, reply: Reply) -> None:
            await reply.redirect(status, other.url + "/rpc")

        async with (
            open_stub_agent(rpc_moved) as home,
            open_client(home.url, auth=BearerAuth("TOKEN"), headers={"X-Secret": "s3"}) as client,
        ):
            with pytest.raises(TransportError, match="another origin: not followed") as caught:
                await client.send("secret prompt")
            assert caught.value.status_code == status
            with pytest.raises(TransportError, match="another origin: not followed"):
                async with client.stream("secret prompt"):
                    pass
    assert other.requests == []
    assert len(home.requests) == 3  # card, send, stream: each answered with the redirect


async def test_same_origin_redirects_are_followed_with_credentials_and_body() -> None:
    async def handler(request: Request, reply: Reply) -> None:
        match request.path:
            case "/old/.well-known/agent-card.json":
                await reply.redirect(301, "/.well-known/agent-card.json")  # relative
            case "/rpc":
                await reply.redirect(307, home.url + "/rpc2")  # absolute, same origin
            case "/rpc2":
                await reply.json(ANSWER)

    async with (
        open_stub_agent(handler) as home,
        open_client(home.url + "/old", auth=ApiKeyAuth("K"), headers={"X-Secret": "s"}) as client,
    ):
        answer = await client.send("hi")
    assert isinstance(answer, m.Message)
    assert answer.parts == (m.TextPart("ok"),)
    assert [r.path for r in home.requests] == [
        "/old/.well-known/agent-card.json",
        "/.well-known/agent-card.json",
        "/rpc",
        "/rpc2",
    ]
    assert secrets(home) == [{"x-api-key": "K", "x-secret": "s"}] * 4
    first, again = home.requests[2:]
    assert again.method == "POST"
    assert again.json() == first.json()


async def test_redirect_loops_end() -> None:
    async def loop(request: Request, reply: Reply) -> None:
        await reply.redirect(302, request.path)

    async with open_stub_agent(loop) as home, httpx.AsyncClient(max_redirects=3) as http:
        with pytest.raises(TransportError, match="redirects"):
            await fetch_card(http, home.url + "/a")
    assert len(home.requests) == 4


async def test_redirect_to_a_trusted_origin_is_followed() -> None:
    async with open_other() as other:

        async def moved(request: Request, reply: Reply) -> None:
            await reply.redirect(302, other.url + "/.well-known/agent-card.json")

        async with (
            open_stub_agent(moved) as home,
            open_client(
                home.url + "/a", auth=BearerAuth("T"), trusted_origins=[other.url]
            ) as client,
        ):
            assert isinstance(await client.send("hi"), m.Message)
    assert secrets(other) == [{"authorization": "Bearer T"}] * 2


@pytest.mark.parametrize(
    "given",
    [lambda url: iter([url]), lambda url: TrustedOrigins.parse([url]), lambda url: url],
    ids=["a one-shot iterator", "parsed beforehand", "one URL as a string"],
)
async def test_trusted_origins_are_read_once(given: Callable[[str], Iterable[str]]) -> None:
    """Before: ``open_client`` read ``trusted_origins`` to check it, and the card's fetch read
    it again, so an iterator was empty by then and the redirect to its origin was refused."""
    async with open_other() as other:

        async def moved(request: Request, reply: Reply) -> None:
            await reply.redirect(302, other.url + "/.well-known/agent-card.json")

        async with open_stub_agent(moved) as home, httpx.AsyncClient() as http:
            async with open_client(home.url + "/a", trusted_origins=given(other.url)) as client:
                assert client.interface.url == other.url + "/rpc"
            card = await fetch_card(http, home.url + "/a", trusted_origins=given(other.url))
            assert card.supported_interfaces[0].url == other.url + "/rpc"


# --- where the card's interface is ---------------------------------------------------------


async def test_interface_on_another_origin_is_not_used() -> None:
    async with open_other() as other:

        async def elsewhere(request: Request, reply: Reply) -> None:
            await reply.json(card(other.url + "/rpc"))

        async with open_stub_agent(elsewhere) as home:
            with pytest.raises(AgentCardError, match="not on the card's origin") as caught:
                async with open_client(home.url + "/card.json", auth=BearerAuth("TOKEN")):
                    pass
    assert f"trusted_origins=[{other.url!r}]" in str(caught.value)
    assert caught.value.untrusted_origin == other.url  # for a caller to say it in its own words
    assert other.requests == []


async def test_interface_on_the_cards_origin_is_chosen_over_one_elsewhere() -> None:
    async with open_other() as other:

        async def handler(request: Request, reply: Reply) -> None:
            if request.path == "/card.json":
                await reply.json(card(other.url + "/rpc", home.url + "/rpc"))
            else:
                await reply.json(ANSWER)

        async with (
            open_stub_agent(handler) as home,
            open_client(home.url + "/card.json", auth=BearerAuth("T")) as client,
        ):
            assert client.interface.url == home.url + "/rpc"
            await client.send("hi")
    assert other.requests == []


async def test_interface_on_a_trusted_origin_gets_the_credentials() -> None:
    async with open_other() as other:

        async def elsewhere(request: Request, reply: Reply) -> None:
            await reply.json(card(other.url + "/rpc"))

        async with (
            open_stub_agent(elsewhere) as home,
            open_client(
                home.url + "/card.json",
                auth=BearerAuth("TOKEN"),
                trusted_origins=[other.url + "/any/path"],  # only its origin counts
            ) as client,
        ):
            await client.send("hi")
    assert [r.path for r in other.requests] == ["/rpc"]
    assert secrets(other) == [{"authorization": "Bearer TOKEN"}]


async def test_a_card_handed_over_is_trusted_as_it_is() -> None:
    async with open_other() as other:
        given = V1.decode(card(other.url + "/rpc"), m.AgentCard)
        async with open_client(given, auth=BearerAuth("TOKEN")) as client:
            await client.send("hi")
    assert secrets(other) == [{"authorization": "Bearer TOKEN"}]


@pytest.mark.parametrize("bad", ["api.example.com", "ftp://example.com", "https://"])
async def test_trusted_origins_must_be_http_origins(bad: str) -> None:
    says = f"{bad!r} is not an http:// or https:// origin"
    with pytest.raises(ValueError, match=re.escape(f"trusted_origins: {says}")):
        async with open_client("http://127.0.0.1:1", trusted_origins=[bad]):
            pass
    with pytest.raises(ValueError) as parsed:  # the caller names what it parsed (a CLI option)
        TrustedOrigins.parse(["https://fine.example.com", bad])
    assert str(parsed.value) == says


# --- how much is read ----------------------------------------------------------------------


async def endless(request: Request, reply: Reply) -> None:
    await reply.endless()


async def test_a_never_ending_card_is_cut_at_the_limit_in_bounded_memory() -> None:
    tracemalloc.start()
    try:
        async with open_stub_agent(endless) as home:
            with trio.fail_after(30), pytest.raises(AgentCardError, match="larger than 16777216"):
                async with open_client(home.url + "/huge"):
                    pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 48 * 1024 * 1024  # the 16 MiB kept, plus growing the buffer once


async def test_a_card_announced_too_large_is_not_read() -> None:
    async def announced(request: Request, reply: Reply) -> None:
        await reply.stream.send_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            b"content-length: 1000000000\r\n\r\n{"
        )
        await trio.sleep_forever()  # the client must not wait for the rest

    async with open_stub_agent(announced) as home:
        with trio.fail_after(5), pytest.raises(AgentCardError, match="larger than 1024 bytes"):
            async with open_client(home.url + "/card.json", limits=Limits(max_body_bytes=1024)):
                pass


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_a_never_ending_answer_is_cut_at_the_limit(binding: str) -> None:
    limits = Limits(max_body_bytes=256 * 1024)
    async with (
        open_stub_agent(endless, binding=binding) as agent,
        open_client(agent.url, limits=limits) as client,
    ):
        with trio.fail_after(30), pytest.raises(InvalidResponseError, match="larger than 262144"):
            await client.get_task("t1")
        with trio.fail_after(30), pytest.raises(InvalidResponseError, match="larger than 262144"):
            async with client.stream("hi"):  # an answer that is not a stream, read as an error
                pass


async def test_an_oversized_error_answer_is_cut_at_the_limit() -> None:
    async def huge_error(request: Request, reply: Reply) -> None:
        await reply.send(500, b"x" * 100_000)

    async with (
        open_stub_agent(huge_error) as agent,
        open_client(agent.url, limits=Limits(max_body_bytes=10_000)) as client,
    ):
        with pytest.raises(InvalidResponseError, match="larger than 10000 bytes"):
            await client.send("hi")


async def test_the_same_limit_bounds_a_stream_event() -> None:
    async def big_event(request: Request, reply: Reply) -> None:
        await reply.start_sse()
        await reply.chunk(b"data: " + b"a" * 20_000)
        await trio.sleep_forever()

    async with (
        open_stub_agent(big_event) as agent,
        open_client(agent.url, limits=Limits(max_body_bytes=10_000)) as client,
    ):
        with trio.fail_after(5), pytest.raises(InvalidResponseError, match="longer than 10000"):
            async with client.stream("hi") as events:
                await anext(events)


async def test_answers_within_the_limit_are_read_whole() -> None:
    text = "x" * 50_000

    async def big(request: Request, reply: Reply) -> None:
        message = m.text_message(text, role=m.Role.AGENT)
        await reply.json(rpc_result(V1.encode_send_result(message)))

    async with (
        open_stub_agent(big) as agent,
        open_client(agent.url, limits=Limits(max_body_bytes=60_000)) as client,
    ):
        answer = await client.send("hi")
    assert isinstance(answer, m.Message)
    assert answer.parts == (m.TextPart(text),)


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Limits(max_body_bytes=0)
