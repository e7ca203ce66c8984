"""The served connection's own send (``_connection``): straight to the socket when it is free,
hypercorn's way for what does not fit, on real sockets.  Bytes arrive whole and in order
whatever the reader's pace, a cancelled send writes nothing, and a client that resets its
connection, even before it was accepted, costs the server nothing but that connection."""

from __future__ import annotations

import socket
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
from hypercorn.config import Config
from hypercorn.events import RawData
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState

from a2a_trio.server._connection import Connection
from a2a_trio.server._keepalive import KeepAlive

from .served_asgi import connect, lifespan, served

BIG = 16 * 2**20
"""More than a loopback socket's buffers hold (a few MB here), so a write of it is partial."""


def pattern(size: int, seed: int = 0) -> bytes:
    """``size`` bytes in which any misplaced or lost stretch shows."""
    block = bytes((seed + i) % 251 for i in range(251 * 16))
    return (block * (size // len(block) + 1))[:size]


class App:
    """``/big`` answers :data:`BIG` bytes in one body message; ``/chunks`` 64 numbered
    chunks of 256 KB; ``/drip`` a chunk every 10 ms until its client leaves; ``/`` ``ok``."""

    def __init__(self) -> None:
        self.drip_ended = trio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        if scope["path"] == "/big":
            await send({"type": "http.response.body", "body": pattern(BIG)})
        elif scope["path"] == "/chunks":
            for n in range(64):
                chunk = pattern(2**18, seed=n)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        elif scope["path"] == "/drip":
            await self._drip(receive, send)
        else:
            await send({"type": "http.response.body", "body": b"ok"})

    async def _drip(self, receive: Any, send: Any) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._until_disconnect, receive, nursery.cancel_scope)
            while True:
                await send({"type": "http.response.body", "body": b"drop\n", "more_body": True})
                await trio.sleep(0.01)
        self.drip_ended.set()

    async def _until_disconnect(self, receive: Any, scope: trio.CancelScope) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        scope.cancel()


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, App, int, trio.Nursery]]:
    app = App()
    async with served(app) as (port, nursery):
        yield f"http://127.0.0.1:{port}", app, port, nursery


async def test_a_body_larger_than_the_socket_buffers_reaches_a_slow_reader_whole(
    server: tuple[str, App, int, trio.Nursery],
) -> None:
    url, _, _, _ = server
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        async with http.stream("GET", "/big") as response:
            await trio.sleep(0.3)  # the server's write fills the buffers and waits
            body = await response.aread()
        assert body == pattern(BIG)
        assert (await http.get("/")).content == b"ok"  # the same connection, free again


async def test_chunks_stay_in_order_when_each_fills_the_socket(
    server: tuple[str, App, int, trio.Nursery],
) -> None:
    url, _, _, _ = server
    received = b""
    async with (
        httpx.AsyncClient(base_url=url, timeout=30) as http,
        http.stream("GET", "/chunks") as response,
    ):
        async for data in response.aiter_raw():
            received += data
            await trio.sleep(0.001)  # a reader slower than the writer
    assert received == b"".join(pattern(2**18, seed=n) for n in range(64))


async def test_h2c_streams_on_one_connection_both_arrive_whole(
    server: tuple[str, App, int, trio.Nursery],
) -> None:
    url, _, _, _ = server
    async with httpx.AsyncClient(base_url=url, http1=False, http2=True, timeout=30) as http:
        bodies: list[bytes] = []

        async def fetch(path: str) -> None:
            response = await http.get(path)
            assert response.http_version == "HTTP/2"
            bodies.append(response.content)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(fetch, "/big")
            nursery.start_soon(fetch, "/chunks")
    assert sorted(map(len, bodies)) == [64 * 2**18, BIG]
    assert pattern(BIG) in bodies


async def test_a_client_reset_mid_stream_ends_the_app_and_nothing_else(
    server: tuple[str, App, int, trio.Nursery],
) -> None:
    url, app, port, nursery = server
    client = await connect(port, nursery)
    await client.send_all(b"GET /drip HTTP/1.1\r\nHost: test\r\n\r\n")
    received = b""
    while b"drop" not in received:  # the head may come in a write of its own
        received += await client.receive_some()
    client.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    client.socket.close()  # a reset: the next write to it fails
    with trio.fail_after(5):
        await app.drip_ended.wait()
    async with httpx.AsyncClient(base_url=url) as http:
        assert (await http.get("/")).content == b"ok"


async def test_a_connection_reset_before_it_was_accepted_costs_the_server_nothing(
    server: tuple[str, App, int, trio.Nursery],
) -> None:
    """The client connects and resets before the server accepts (no checkpoint in between,
    so the server cannot run meanwhile); its address is gone by the time the server asks,
    and the connection ends there, without touching the protocol it never got."""
    url, _, port, _ = server
    with socket.create_connection(("127.0.0.1", port)) as gone:
        gone.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    await trio.sleep(0.2)  # the server accepts it and gives up on it
    async with httpx.AsyncClient(base_url=url) as http:
        assert (await http.get("/")).content == b"ok"


@asynccontextmanager
async def connected() -> AsyncIterator[tuple[Connection, trio.SocketStream]]:
    """A served connection's server side, not yet running, and its client."""
    listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0]
    async with listener:
        port = listener.socket.getsockname()[1]
        client = await trio.open_tcp_stream("127.0.0.1", port)
        accepted = await listener.accept()
        assert isinstance(accepted, trio.SocketStream)
        context = WorkerContext(None)
        keepalive = KeepAlive(30, context.terminated)
        state = ConnectionState({})
        async with client, accepted:
            yield Connection(keepalive, App(), Config(), context, state, accepted), client


async def receive_exactly(stream: trio.SocketStream, size: int) -> bytes:
    received = b""
    while len(received) < size:
        received += await stream.receive_some()
    return received


async def test_a_send_behind_one_waiting_for_room_goes_after_it() -> None:
    async with connected() as (connection, client):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(connection.protocol_send, RawData(pattern(BIG)))
            await trio.testing.wait_all_tasks_blocked()
            assert connection.send_lock.locked()  # the rest of it waits for room
            nursery.start_soon(connection.protocol_send, RawData(b"after"))
            assert await receive_exactly(client, BIG + 5) == pattern(BIG) + b"after"
        assert not connection.send_lock.locked()


async def test_a_cancelled_send_writes_nothing() -> None:
    async with connected() as (connection, client):
        with trio.CancelScope() as scope:
            scope.cancel()
            await connection.protocol_send(RawData(b"never"))
        assert scope.cancelled_caught
        await connection.protocol_send(RawData(b"sent"))
        assert await receive_exactly(client, 4) == b"sent"


async def test_a_send_is_a_checkpoint_as_hypercorns_is() -> None:
    async with connected() as (connection, client):
        with trio.testing.assert_checkpoints():
            await connection.protocol_send(RawData(b"x"))
        assert await receive_exactly(client, 1) == b"x"
