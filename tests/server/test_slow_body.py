"""A request body that does not arrive in time is answered 408 on every binding.

hypercorn's read timeout is off (event streams are long-lived), and nothing else bounded the
time a body may take: a client sending all but the last bytes pinned its connection forever.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import orjson
import pytest
import trio

from a2a_trio import Agent, ServerConfig, TaskContext, serve
from a2a_trio.server._body import BodyTooSlowError, body_deadline

agent = Agent("slow bodies", "echo")


@agent.skill(default=True)
async def echo(ctx: TaskContext) -> str:
    return ctx.text


@pytest.mark.parametrize(
    ("path", "a2a_version"),
    [("/", "1.0"), ("/message:send", "1.0"), ("/v1/message:send", "0.3"), ("/echo", "")],
    ids=["jsonrpc", "rest", "rest-v0.3", "legacy"],
)
async def test_an_incomplete_body_is_answered_408_in_time(path: str, a2a_version: str) -> None:
    config = ServerConfig(body_timeout=0.5, legacy_mount_all=True)
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve, agent, port=0, config=config))
        port = int(url.rsplit(":", 1)[1])
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        version = f"A2A-Version: {a2a_version}\r\n" if a2a_version else ""
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"{version}Content-Length: 100\r\n\r\n"
        )
        start = trio.current_time()
        await stream.send_all(head.encode() + b'{"jsonrpc": "2.0"')  # and nothing more
        answer = b""
        with trio.fail_after(5):
            while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
                chunk = await stream.receive_some(65536)
                if not chunk:
                    break
                answer += chunk
        elapsed = trio.current_time() - start
        await stream.aclose()
        nursery.cancel_scope.cancel()
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"did not arrive within 0.5 seconds" in answer
    assert 0.4 < elapsed < 3


async def late_body_answer(path: str, a2a_version: str) -> tuple[bytes, Any]:
    """The status line and JSON body a server with a 0.5 s ``body_timeout`` answers a body
    that stops short."""
    config = ServerConfig(body_timeout=0.5, legacy_mount_all=True)
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve, agent, port=0, config=config))
        stream = await trio.open_tcp_stream("127.0.0.1", int(url.rsplit(":", 1)[1]))
        version = f"A2A-Version: {a2a_version}\r\n" if a2a_version else ""
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"{version}Content-Length: 100\r\n\r\n"
        )
        await stream.send_all(head.encode() + b'{"jsonrpc": "2.0"')
        answer = b""
        with trio.fail_after(5):
            while chunk := await stream.receive_some(65536):
                answer += chunk
                if b"\r\n\r\n" in answer and answer.rstrip().endswith(b"}"):
                    break
        await stream.aclose()
        nursery.cancel_scope.cancel()
    status, _, rest = answer.partition(b"\r\n")
    return status, orjson.loads(rest.partition(b"\r\n\r\n")[2])


LATE = "The request body did not arrive within 0.5 seconds"
RPC_LATE = {"code": -32600, "message": LATE}
INFO = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "domain": "a2a-protocol.org"}
REST_LATE = {
    "code": 408,
    "status": "DEADLINE_EXCEEDED",
    "message": LATE,
    "details": [{**INFO, "reason": "INVALID_REQUEST"}],
}


@pytest.mark.parametrize(
    ("path", "a2a_version", "body"),
    [
        (
            "/",
            "1.0",
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {**RPC_LATE, "data": [REST_LATE["details"][0]]},
            },
        ),
        ("/", "0.3", {"jsonrpc": "2.0", "id": None, "error": RPC_LATE}),
        ("/message:send", "1.0", {"error": REST_LATE}),
        (
            "/v1/message:send",
            "0.3",
            {"error": REST_LATE, "type": "InvalidRequestError", "message": LATE},
        ),
        ("/echo", "", {"jsonrpc": "2.0", "id": None, "error": RPC_LATE}),
    ],
    ids=["jsonrpc", "jsonrpc-v0.3", "rest", "rest-v0.3", "legacy"],
)
async def test_a_late_body_is_answered_in_each_bindings_error_shape(
    path: str, a2a_version: str, body: Any
) -> None:
    assert await late_body_answer(path, a2a_version) == (b"HTTP/1.1 408 ", body)


async def test_body_deadline_is_where_a_late_body_becomes_a_408(autojump_clock: Any) -> None:
    with body_deadline(1):
        await trio.sleep(0.9)  # in time: nothing happens
    with pytest.raises(BodyTooSlowError) as late, body_deadline(2.5):
        await trio.sleep(3)
    assert (late.value.code, late.value.http_status) == (-32600, 408)
    assert late.value.message == "The request body did not arrive within 2.5 seconds"
