"""A request body that does not arrive in time is answered 408 on every binding.

hypercorn's read timeout is off (event streams are long-lived), and nothing else bounded the
time a body may take: a client sending all but the last bytes pinned its connection forever.
"""

from __future__ import annotations

from functools import partial

import pytest
import trio

from a2a_trio import Agent, ServerConfig, TaskContext, serve

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
