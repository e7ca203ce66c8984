"""``Timeouts.read`` and ``Timeouts.card`` bound a whole call, not each read of it.

The peer here is a slowloris: a real socket on 127.0.0.1 that sends a valid answer one byte
every 50 ms, so no single read waits long and httpx's per-read timeout never fires.  A call
must still end at its bound, with the error a silent peer gives; an answer that is slow but
whole within the bound must still be read.  Each ``trio.fail_after`` is a guard against a
hang, far above the bound: before the deadlines, these calls ran until the last byte came
(tens of seconds) and the guard fired instead.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
import trio

from a2a_trio import model as m
from a2a_trio.client import (
    Client,
    Reconnect,
    Timeouts,
    TransportError,
    fetch_card,
    open_client,
)
from a2a_trio.wire import V1, dumps

from .stub_agent import Reply, Request, card_for, http_answer, open_stub_agent, rpc_result

BYTE_GAP = 0.05  # one byte every 50 ms: hundreds of bytes take tens of seconds
BOUND = 0.5
GUARD = 8  # a hang guard, not a timing check
FAST = Reconnect(attempts=2, initial_delay=0.01, max_delay=0.05)

TASK = m.Task("t1", m.TaskStatus(m.TaskState.COMPLETED), context_id="c1")
PAGE = m.ListTasksResponse(tasks=(TASK,), page_size=1, total_size=1)

# The unary calls, each with the result a slowloris dribbles back to it.
CALLS: dict[str, tuple[Callable[[Client], Awaitable[Any]], Any]] = {
    "SendMessage": (lambda c: c.send("hi"), V1.encode_send_result(TASK)),
    "GetTask": (lambda c: c.get_task("t1"), V1.encode(TASK)),
    "ListTasks": (lambda c: c.list_tasks(), V1.encode(PAGE)),
    "CancelTask": (lambda c: c.cancel_task("t1"), V1.encode(TASK)),
}


def dribbling(result: Any, *, gap: float = BYTE_GAP, piece: int = 1) -> Any:
    """A handler answering every call with the JSON-RPC ``result``, ``piece`` bytes a time."""

    async def handler(request: Request, reply: Reply) -> None:
        answer = http_answer(200, reply.json_body(rpc_result(result)))
        await reply.dribble(answer, gap=gap, piece=piece)

    return handler


@pytest.mark.parametrize("name", CALLS)
async def test_a_unary_answer_dribbled_a_byte_at_a_time_ends_at_timeouts_read(name: str) -> None:
    call, result = CALLS[name]
    async with (
        open_stub_agent(dribbling(result)) as agent,
        open_client(agent.url, timeouts=Timeouts(read=BOUND)) as client,
    ):
        with trio.fail_after(GUARD), pytest.raises(TransportError) as caught:
            await call(client)
    assert str(caught.value) == f"{name} to {agent.url}/rpc: timed out waiting for the answer"
    assert isinstance(caught.value.__cause__, httpx.ReadTimeout)  # the CLI's --timeout hint
    assert "(Timeouts.read)" in str(caught.value.__cause__)


async def test_a_card_dribbled_a_byte_at_a_time_ends_at_timeouts_card() -> None:
    async def handler(request: Request, reply: Reply) -> None:
        card = http_answer(200, dumps(card_for("http://127.0.0.1:1")))
        await reply.dribble(card, gap=BYTE_GAP)

    async with open_stub_agent(handler, serves_card=False) as server, httpx.AsyncClient() as http:
        with trio.fail_after(GUARD), pytest.raises(TransportError) as caught:
            await fetch_card(http, server.url, timeouts=Timeouts(read=None, card=BOUND))
    assert str(caught.value) == (
        f"fetching the agent card at {server.url}/.well-known/agent-card.json: "
        "timed out waiting for the answer"
    )
    assert "(Timeouts.card)" in str(caught.value.__cause__)


def slow_card_requests(answer: Any) -> Callable[[Request, Reply], Awaitable[None]]:
    """A handler answering every GET with ``answer(request)`` (a whole HTTP answer, or
    ``None``: no answer ever) in six pieces 50 ms apart, about 0.3 s for each request."""

    async def handler(request: Request, reply: Reply) -> None:
        data = answer(request)
        if data is None:
            await trio.sleep_forever()
        await reply.dribble(data, gap=BYTE_GAP, piece=len(data) // 6 + 1)

    return handler


async def fetch_the_card(url: str, timeouts: Timeouts) -> None:
    async with httpx.AsyncClient() as http:
        await fetch_card(http, url, timeouts=timeouts)


async def open_a_client(url: str, timeouts: Timeouts) -> None:
    async with open_client(url, timeouts=timeouts):
        pass


@pytest.mark.parametrize("discover", [fetch_the_card, open_a_client])
async def test_a_discovery_of_slow_answers_ends_at_timeouts_card_as_a_whole(
    discover: Callable[[str, Timeouts], Awaitable[None]],
) -> None:
    """Every card request of a URL with a path too many is answered 404 in about 0.3 s,
    within a 0.5 s ``card`` each: the bound was each request's, so the discovery made all
    four (two well-known paths, then the same at the origin, to say "give that URL") and
    took four times as long.  The bound is the discovery's: it ends at 0.5 s, in its second
    request, with the timeout a single slow request gets, and the origin is never asked."""
    not_found = http_answer(404, b'{"error": "not found"}')
    async with open_stub_agent(slow_card_requests(lambda r: not_found), serves_card=False) as agent:
        with trio.fail_after(GUARD), pytest.raises(TransportError) as caught:
            await discover(agent.url + "/v1", Timeouts(read=None, card=BOUND))
    message = str(caught.value)
    assert message.startswith(f"fetching the agent card at {agent.url}/v1/.well-known/agent")
    assert message.endswith(": timed out waiting for the answer")
    assert "(Timeouts.card)" in str(caught.value.__cause__)  # the CLI's --timeout hint
    assert 1 <= len(agent.requests) <= 2
    assert all(request.path.startswith("/v1/") for request in agent.requests)


async def test_a_discovery_of_several_quick_answers_within_the_bound_succeeds() -> None:
    """Three requests (a 404 at the v1.0 path, a redirect on the origin at the v0.3 path, the
    card), each about 0.3 s: within the discovery's bound together, the card is read."""

    def answer(request: Request) -> bytes:
        if request.path == "/.well-known/agent.json":
            return b"HTTP/1.1 302 X\r\nlocation: /cards/agent.json\r\ncontent-length: 0\r\n\r\n"
        if request.path == "/cards/agent.json":
            return http_answer(200, dumps(card_for(f"http://{request.headers['host']}")))
        return http_answer(404, b"{}")

    async with open_stub_agent(slow_card_requests(answer), serves_card=False) as agent:
        with trio.fail_after(60):
            async with open_client(agent.url, timeouts=Timeouts(card=30)) as client:
                assert client.card.name == "stub"
    assert [request.path for request in agent.requests] == [
        "/.well-known/agent-card.json",
        "/.well-known/agent.json",
        "/cards/agent.json",
    ]


async def test_the_look_at_the_origin_gets_what_is_left_of_the_bound() -> None:
    """No card under the path (404s in about 0.3 s each); the origin has one, which takes
    0.6 s to come.  That look had a whole ``card`` per request of its own, so the discovery
    said "give that URL" after 1.2 s of a 1 s bound; it now gets what is left of the bound and
    is cut with it.  The answer is a timeout, as for any other request of the discovery (it
    said "no agent card found", which more time would have turned into "give that URL")."""

    async def handler(request: Request, reply: Reply) -> None:
        if request.path.startswith("/v1/"):
            await slow_card_requests(lambda r: http_answer(404, b"{}"))(request, reply)
            return
        card = http_answer(200, dumps(card_for(f"http://{request.headers['host']}")))
        await reply.dribble(card, gap=BYTE_GAP, piece=len(card) // 12 + 1)

    async with (
        open_stub_agent(handler, serves_card=False) as agent,
        httpx.AsyncClient() as http,
    ):
        with trio.fail_after(GUARD), pytest.raises(TransportError) as caught:
            await fetch_card(http, agent.url + "/v1", timeouts=Timeouts(read=None, card=1))
    tried = f"{agent.url}/v1/.well-known/agent-card.json, {agent.url}/v1/.well-known/agent.json"
    assert str(caught.value) == (
        f"fetching the agent card at {agent.url}/.well-known/agent-card.json (the origin's, as"
        f" there is none at {tried}): timed out waiting for the answer"
    )
    assert "(Timeouts.card)" in str(caught.value.__cause__)  # the CLI's --timeout hint
    assert [request.path for request in agent.requests] == [
        "/v1/.well-known/agent-card.json",
        "/v1/.well-known/agent.json",
        "/.well-known/agent-card.json",
    ]


async def test_a_stream_whose_answer_starts_a_byte_at_a_time_ends_at_timeouts_read() -> None:
    """The stream's headers are what ``read`` bounds; its events are bounded by nothing."""

    async def handler(request: Request, reply: Reply) -> None:
        head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n" + b"x-pad: a\r\n" * 40
        await reply.dribble(head + b"\r\n", gap=BYTE_GAP)

    async with (
        open_stub_agent(handler) as agent,
        open_client(agent.url, timeouts=Timeouts(read=BOUND), reconnect=FAST) as client,
    ):
        with trio.fail_after(GUARD), pytest.raises(TransportError, match="timed out waiting"):
            async with client.stream("go"):
                pass


async def test_answers_slow_but_whole_within_the_bound_are_read() -> None:
    """A card, a unary answer and a stream each come in pieces with pauses between: within
    the bound, the call goes on as before; an open stream has no bound but ``stream_read``."""
    started = m.Task("t1", m.TaskStatus(m.TaskState.WORKING), context_id="c1")
    done = m.TaskStatusUpdateEvent("t1", "c1", m.TaskStatus(m.TaskState.COMPLETED))

    async def handler(request: Request, reply: Reply) -> None:
        if request.method == "GET":
            card = dumps(card_for(f"http://{request.headers['host']}"))
            await reply.dribble(http_answer(200, card), gap=0.05, piece=100)
        elif request.json()["method"] == "SendStreamingMessage":
            await reply.start_sse()
            for event in (started, done):
                frame = f"data: {dumps(rpc_result(V1.encode_stream_response(event))).decode()}\n\n"
                chunk = b"%x\r\n%s\r\n" % (len(frame), frame.encode())
                await reply.dribble(chunk, gap=0.01, piece=10)
            await reply.end_sse()
        else:
            await dribbling(V1.encode(TASK), gap=0.05, piece=40)(request, reply)

    timeouts = Timeouts(read=30, card=30)
    async with open_stub_agent(handler, serves_card=False) as agent:
        with trio.fail_after(60):
            async with open_client(agent.url, timeouts=timeouts) as client:
                assert await client.get_task("t1") == TASK
                async with client.stream("go") as events:
                    assert [event async for event in events] == [started, done]


async def test_a_resume_whose_answer_is_slow_but_within_the_bound_goes_on() -> None:
    """The dropped stream's resubscribe is answered in pieces: the resume waits for it (its
    start is bounded by ``read``, not cut by it) and the stream ends with the task."""
    calls = 0

    async def handler(request: Request, reply: Reply) -> None:
        nonlocal calls
        calls += 1
        started = m.Task("t1", m.TaskStatus(m.TaskState.WORKING), context_id="c1")
        await reply.stream.send_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\nconnection: close\r\n"
        )
        if calls == 1:
            await reply.stream.send_all(b"\r\n")
            await reply.event(rpc_result(V1.encode_stream_response(started)), event_id="1")
            return  # dropped: the client resubscribes after event 1
        await reply.dribble(b"x-slow: yes\r\n\r\n", gap=0.02)
        assert request.headers["last-event-id"] == "1"
        await reply.event(rpc_result(V1.encode_stream_response(TASK)), event_id="2")
        await reply.end_sse()

    async with (
        open_stub_agent(handler) as agent,
        open_client(agent.url, timeouts=Timeouts(read=30), reconnect=FAST) as client,
    ):
        with trio.fail_after(60):
            async with client.stream("go") as events:
                seen = [event async for event in events]
    assert seen[-1] == TASK
    assert calls == 2
