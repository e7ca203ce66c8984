"""The client pointed at something that is not a working agent: each failure says which.

Real sockets on 127.0.0.1: nothing listening, a web server that is not an agent, a server
that never answers.
"""

from __future__ import annotations

import httpx
import pytest
import trio

from a2a_trio.client import AgentCardError, Timeouts, TransportError, fetch_card, open_client

from .stub_agent import Reply, Request, open_stub_agent

HTML_PAGE = b"<!doctype html><html><body><h1>Not Found</h1><p>nginx</p></body></html>"


async def test_nothing_listening_says_so(unused_port: int) -> None:
    with pytest.raises(TransportError) as caught:
        async with open_client(f"http://127.0.0.1:{unused_port}"):
            pass
    assert str(caught.value) == (
        f"fetching the agent card at http://127.0.0.1:{unused_port}/.well-known/agent-card.json:"
        " connection refused: nothing is listening there (is the agent running?)"
    )


async def test_a_host_name_that_does_not_resolve_says_so() -> None:
    with pytest.raises(TransportError, match=r"agent\.invalid/\.well-known") as caught:
        async with open_client("http://no-such-agent.invalid"):
            pass
    assert ": the host name does not resolve (" in str(caught.value)


async def test_an_html_error_page_is_named_not_quoted() -> None:
    """A web server's error page at the card's interface: the status and the URL, no markup."""

    async def handler(request: Request, reply: Reply) -> None:
        await reply.send(404, HTML_PAGE, "text/html")

    async with open_stub_agent(handler) as agent, open_client(agent.url) as client:
        with pytest.raises(TransportError) as caught:
            await client.get_task("t1")
    assert str(caught.value) == (
        f"HTTP 404 from the agent at {agent.url}/rpc: an HTML page, not an A2A answer"
    )
    assert caught.value.status_code == 404


async def html_404(request: Request, reply: Reply) -> None:
    await reply.send(404, HTML_PAGE, "text/html")


@pytest.mark.parametrize("path", ["/v1", "/a2a/", "/.well-known/agent-card"])
async def test_a_path_too_many_names_the_origin_that_has_the_card(path: str) -> None:
    """``/v1``, ``/a2a``: no card under the path, but the agent is at the origin: say so."""
    async with open_stub_agent(html_404) as agent, httpx.AsyncClient() as http:
        with pytest.raises(AgentCardError) as caught:
            await fetch_card(http, agent.url + path)
    base = agent.url + path.rstrip("/")
    assert str(caught.value) == (
        f"no agent card found (tried {base}/.well-known/agent-card.json,"
        f" {base}/.well-known/agent.json); {agent.url} has one: give that URL"
    )


async def test_no_card_under_a_path_nor_at_the_origin_is_the_plain_answer() -> None:
    async with (
        open_stub_agent(html_404, serves_card=False) as server,
        httpx.AsyncClient() as http,
    ):
        with pytest.raises(AgentCardError) as caught:
            await fetch_card(http, server.url + "/a2a")
    assert str(caught.value) == (
        f"no agent card found (tried {server.url}/a2a/.well-known/agent-card.json,"
        f" {server.url}/a2a/.well-known/agent.json)"
    )


async def test_a_card_refused_with_a_status_carries_it() -> None:
    async def forbidden(request: Request, reply: Reply) -> None:
        await reply.send(403, HTML_PAGE, "text/html")

    async with (
        open_stub_agent(forbidden, serves_card=False) as server,
        httpx.AsyncClient() as http,
    ):
        with pytest.raises(AgentCardError, match="HTTP 403 fetching the card") as caught:
            await fetch_card(http, server.url)
    assert caught.value.status_code == 403


async def test_an_agent_that_never_answers_times_out_saying_what_it_waited_for() -> None:
    async def silent(request: Request, reply: Reply) -> None:
        await trio.sleep_forever()

    async with (
        open_stub_agent(silent) as agent,
        open_client(agent.url, timeouts=Timeouts(read=0.2)) as client,
    ):
        with pytest.raises(TransportError) as caught:
            await client.get_task("t1")
    assert str(caught.value) == f"GetTask to {agent.url}/rpc: timed out waiting for the answer"


async def test_a_card_that_never_comes_times_out_on_its_own_limit() -> None:
    """The card has its own read limit (30 s by default): a server that accepts the connection
    but never sends the card fails on it, not after a blocking send's long ``read``."""

    async def silent(request: Request, reply: Reply) -> None:
        await trio.sleep_forever()

    async with open_stub_agent(silent, serves_card=False) as server, httpx.AsyncClient() as http:
        with pytest.raises(TransportError, match="timed out waiting for the answer"):
            await fetch_card(http, server.url, timeouts=Timeouts(read=None, card=0.2))
    assert Timeouts().card == 30.0
