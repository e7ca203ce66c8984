"""A request body is bounded in time and size on every binding: a body that does not arrive
in time is answered 408, one over ``max_body_bytes`` 413, each in its binding's error shape.

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

agent = Agent("body limits", "echo")
LIMIT = 1000
BINDINGS = {
    "jsonrpc": ("/", "1.0"),
    "jsonrpc-v0.3": ("/", "0.3"),
    "rest": ("/message:send", "1.0"),
    "rest-v0.3": ("/v1/message:send", "0.3"),
    "legacy": ("/echo", ""),
}


@agent.skill(default=True)
async def echo(ctx: TaskContext) -> str:
    return ctx.text


async def answer_to(binding: str, framing: str, payload: bytes) -> tuple[bytes, Any, float]:
    """The status line, JSON body and seconds taken to answer ``payload`` sent to ``binding``
    with the ``framing`` header, by a server with a 0.5 s ``body_timeout`` and a 1,000-byte
    ``max_body_bytes``."""
    path, a2a_version = BINDINGS[binding]
    config = ServerConfig(body_timeout=0.5, max_body_bytes=LIMIT, legacy_mount_all=True)
    version = f"A2A-Version: {a2a_version}\r\n" if a2a_version else ""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"{version}{framing}\r\n\r\n"
    ).encode()
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve, agent, port=0, config=config))
        stream = await trio.open_tcp_stream("127.0.0.1", int(url.rsplit(":", 1)[1]))
        start = trio.current_time()
        await stream.send_all(head + payload)
        answer = b""
        with trio.fail_after(5):
            while chunk := await stream.receive_some(65536):
                answer += chunk
                if b"\r\n\r\n" in answer and answer.rstrip().endswith(b"}"):
                    break
        elapsed = trio.current_time() - start
        await stream.aclose()
        nursery.cancel_scope.cancel()
    status, _, rest = answer.partition(b"\r\n")
    return status, orjson.loads(rest.partition(b"\r\n\r\n")[2]), elapsed


def shape(binding: str, message: str, http_status: int, grpc_status: str) -> Any:
    """The body ``binding`` answers an invalid request (-32600) with: JSON-RPC v1.0 with its
    ErrorInfo, v0.3 and legacy plain, REST as AIP-193 (v0.3 REST with its own extra keys)."""
    info = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "domain": "a2a-protocol.org",
        "reason": "INVALID_REQUEST",
    }
    rpc = {"code": -32600, "message": message}
    rest = {"code": http_status, "status": grpc_status, "message": message, "details": [info]}
    return {
        "jsonrpc": {"jsonrpc": "2.0", "id": None, "error": {**rpc, "data": [info]}},
        "jsonrpc-v0.3": {"jsonrpc": "2.0", "id": None, "error": rpc},
        "rest": {"error": rest},
        "rest-v0.3": {"error": rest, "type": "InvalidRequestError", **rpc},
        "legacy": {"jsonrpc": "2.0", "id": None, "error": rpc},
    }[binding]


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_late_body_is_answered_408_in_time(binding: str) -> None:
    status, body, elapsed = await answer_to(
        binding,
        "Content-Length: 100",
        b'{"jsonrpc": "2.0"',  # and nothing more
    )
    late = "The request body did not arrive within 0.5 seconds"
    assert (status, body) == (b"HTTP/1.1 408 ", shape(binding, late, 408, "DEADLINE_EXCEEDED"))
    assert 0.4 < elapsed < 3


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_large_body_is_answered_413(binding: str, chunked: bool) -> None:
    large = b'{"jsonrpc": "2.0", "pad": "' + b"x" * 2000 + b'"}'
    if chunked:
        framing, payload = (
            "Transfer-Encoding: chunked",
            b"%x\r\n%s\r\n0\r\n\r\n"
            % (
                len(large),
                large,
            ),
        )
    else:
        framing, payload = f"Content-Length: {len(large)}", large
    status, body, _elapsed = await answer_to(binding, framing, payload)
    too_large = f"Request body larger than {LIMIT} bytes"
    assert (status, body) == (b"HTTP/1.1 413 ", shape(binding, too_large, 413, "INVALID_ARGUMENT"))


async def test_body_deadline_is_where_a_late_body_becomes_a_408(autojump_clock: Any) -> None:
    with body_deadline(1):
        await trio.sleep(0.9)  # in time: nothing happens
    with pytest.raises(BodyTooSlowError) as late, body_deadline(2.5):
        await trio.sleep(3)
    assert (late.value.code, late.value.http_status) == (-32600, 408)
    assert late.value.message == "The request body did not arrive within 2.5 seconds"
