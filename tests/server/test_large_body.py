"""A request body over ``ServerConfig.max_body_bytes`` is answered 413 on every binding, in
that binding's error shape, whether it declares its length or not."""

from __future__ import annotations

from functools import partial
from typing import Any

import orjson
import pytest
import trio

from a2a_trio import Agent, ServerConfig, TaskContext, serve

agent = Agent("large bodies", "echo")
LIMIT = 1000


@agent.skill(default=True)
async def echo(ctx: TaskContext) -> str:
    return ctx.text


async def large_body_answer(path: str, a2a_version: str, *, chunked: bool) -> tuple[bytes, Any]:
    """The status line and JSON body answered to a 2,000-byte body against a 1,000-byte limit."""
    config = ServerConfig(max_body_bytes=LIMIT, legacy_mount_all=True)
    body = b'{"jsonrpc": "2.0", "pad": "' + b"x" * 2000 + b'"}'
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {len(body)}"
    version = f"A2A-Version: {a2a_version}\r\n" if a2a_version else ""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"{version}{framing}\r\n\r\n"
    ).encode()
    payload = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n" if chunked else body
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve, agent, port=0, config=config))
        stream = await trio.open_tcp_stream("127.0.0.1", int(url.rsplit(":", 1)[1]))
        await stream.send_all(head + payload)
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


LARGE = f"Request body larger than {LIMIT} bytes"
RPC_LARGE = {"code": -32600, "message": LARGE}
INFO = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "domain": "a2a-protocol.org"}
REST_LARGE = {
    "code": 413,
    "status": "INVALID_ARGUMENT",
    "message": LARGE,
    "details": [{**INFO, "reason": "INVALID_REQUEST"}],
}


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize(
    ("path", "a2a_version", "body"),
    [
        (
            "/",
            "1.0",
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {**RPC_LARGE, "data": [REST_LARGE["details"][0]]},
            },
        ),
        ("/", "0.3", {"jsonrpc": "2.0", "id": None, "error": RPC_LARGE}),
        ("/message:send", "1.0", {"error": REST_LARGE}),
        (
            "/v1/message:send",
            "0.3",
            {"error": REST_LARGE, "type": "InvalidRequestError", "message": LARGE},
        ),
        ("/echo", "", {"jsonrpc": "2.0", "id": None, "error": RPC_LARGE}),
    ],
    ids=["jsonrpc", "jsonrpc-v0.3", "rest", "rest-v0.3", "legacy"],
)
async def test_a_large_body_is_answered_413_in_each_bindings_error_shape(
    path: str, a2a_version: str, body: Any, chunked: bool
) -> None:
    assert await large_body_answer(path, a2a_version, chunked=chunked) == (
        b"HTTP/1.1 413 ",
        body,
    )
