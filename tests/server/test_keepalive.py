"""The keep-alive timer of the served connections (``_keepalive``), on real sockets through
hypercorn's protocols: idle connections close after the timeout and at shutdown, busy ones are
never cut, and a client that leaves costs nothing afterwards."""

from __future__ import annotations

import os
import socket
import struct
from typing import Any

import trio
import trio.testing
from hypercorn.trio.worker_context import WorkerContext

from a2a_trio.server._keepalive import KeepAlive

from .served_asgi import connect, lifespan, served

TIMEOUT = 0.5
"""The keep-alive timeout of the tests that wait for it (seconds)."""


class App:
    """``/fast`` answers at once; ``/slow`` once :attr:`release` is set, unless its client
    left; ``/deaf`` once :attr:`release` is set, whether its client is there or not; all say
    ``ok``."""

    def __init__(self) -> None:
        self.release = trio.Event()
        self.slow_started = trio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        if scope["path"] == "/slow":
            self.slow_started.set()
            if not await self._released(receive):
                return  # its client is gone
        elif scope["path"] == "/deaf":
            self.slow_started.set()
            await self.release.wait()
        headers = [(b"content-length", b"2")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"ok"})

    async def _released(self, receive: Any) -> bool:
        """Waits for :attr:`release`; False if the client disconnects first."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._wait_release, nursery.cancel_scope)
            await receive()  # the request's (empty) body
            while (await receive())["type"] != "http.disconnect":
                pass
            nursery.cancel_scope.cancel()
            return False
        return True

    async def _wait_release(self, scope: trio.CancelScope) -> None:
        await self.release.wait()
        scope.cancel()


async def ask(stream: trio.SocketStream, path: str) -> bytes:
    """One GET on ``stream``: the response's body (empty when the server closed instead)."""
    await stream.send_all(f"GET {path} HTTP/1.1\r\nHost: test\r\n\r\n".encode())
    received = b""
    while b"\r\n\r\n" not in received:
        data = await stream.receive_some()
        if not data:
            return b""
        received += data
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += await stream.receive_some()
    return body


async def closed_by_server(stream: trio.SocketStream) -> bool:
    """Whether the server closed ``stream`` (reads until the end, sending nothing)."""
    return await stream.receive_some() == b""


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


async def test_an_idle_connection_closes_after_the_timeout_not_before() -> None:
    async with served(App(), keep_alive=TIMEOUT) as (port, nursery):
        stream = await connect(port, nursery)
        assert await ask(stream, "/fast") == b"ok"
        idle_since = trio.current_time()
        with trio.fail_after(TIMEOUT + 5):
            assert await closed_by_server(stream)
        assert trio.current_time() - idle_since >= TIMEOUT * 0.9


async def test_requests_inside_the_timeout_keep_one_connection_open() -> None:
    async with served(App(), keep_alive=TIMEOUT) as (port, nursery):
        stream = await connect(port, nursery)
        for _ in range(6):  # three timeouts long, on the same connection
            assert await ask(stream, "/fast") == b"ok"
            await trio.sleep(TIMEOUT / 2)
        assert await ask(stream, "/fast") == b"ok"


async def test_a_request_longer_than_the_timeout_is_answered_then_timed_again() -> None:
    app = App()
    async with served(app, keep_alive=TIMEOUT) as (port, nursery):
        stream = await connect(port, nursery)

        async def release_later() -> None:
            await app.slow_started.wait()
            await trio.sleep(TIMEOUT * 3)
            app.release.set()

        nursery.start_soon(release_later)
        assert await ask(stream, "/slow") == b"ok"
        assert await ask(stream, "/fast") == b"ok"  # still open after its long request
        with trio.fail_after(TIMEOUT + 5):
            assert await closed_by_server(stream)  # and idle again, timed again


async def test_shutdown_closes_idle_connections_at_once_and_lets_busy_ones_finish() -> None:
    app = App()
    shutdown = trio.Event()
    async with served(app, keep_alive=60, shutdown=shutdown) as (port, nursery):
        idle = await connect(port, nursery)
        assert await ask(idle, "/fast") == b"ok"
        busy = await connect(port, nursery)
        answered = trio.Event()
        seen: list[object] = []

        async def slow() -> None:
            seen.append(await ask(busy, "/slow"))
            answered.set()
            seen.append(await closed_by_server(busy))

        nursery.start_soon(slow)
        await app.slow_started.wait()
        shutdown.set()
        with trio.fail_after(5):  # not the 60 s keep-alive timeout
            assert await closed_by_server(idle)
        assert seen == []
        app.release.set()
        with trio.fail_after(5):
            await answered.wait()
            while len(seen) < 2:  # noqa: ASYNC110 (its reader, polled)
                await trio.sleep(0.01)
        assert seen == [b"ok", True]  # answered, then closed


async def test_a_client_that_leaves_is_released_at_once_idle_or_busy() -> None:
    """hypercorn's own idle timer held a connection whose client left while it was idle until
    its keep-alive timeout ran out; one whose client left mid-request is released as soon as
    its app has seen the disconnect, not at the timeout or the server's shutdown."""
    app = App()
    async with served(app, keep_alive=60) as (port, nursery):
        before = open_descriptors()
        idle = await connect(port, nursery)
        assert await ask(idle, "/fast") == b"ok"
        busy = await connect(port, nursery)
        await busy.send_all(b"GET /slow HTTP/1.1\r\nHost: test\r\n\r\n")
        await app.slow_started.wait()
        await idle.aclose()
        await busy.aclose()
        with trio.fail_after(5):  # not the 60 s keep-alive timeout, not the shutdown
            while open_descriptors() > before:  # noqa: ASYNC110 (the kernel's table, polled)
                await trio.sleep(0.01)


async def test_an_answer_finished_after_its_client_reset_the_connection_is_not_timed() -> None:
    """The client resets its connection mid-request; the app answers all the same, and
    hypercorn's protocol, which never saw the end of the stream, reports the connection idle
    after its reader is gone.  It is not timed then: neither the timeout nor the shutdown
    may try to close it (its tasks are gone by then)."""
    app = App()
    shutdown = trio.Event()
    async with served(app, keep_alive=0.3, shutdown=shutdown) as (port, nursery):
        client = await connect(port, nursery)
        await client.send_all(b"GET /deaf HTTP/1.1\r\nHost: test\r\n\r\n")
        await app.slow_started.wait()
        client.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.socket.close()  # a reset, not an end of stream
        await trio.sleep(0.1)
        app.release.set()
        await trio.sleep(0.6)  # past the keep-alive timeout
        shutdown.set()
        await trio.sleep(0.2)  # a close tried on it would have failed the server by now


class Connection:
    """A connection as :class:`KeepAlive` sees it: it only gets closed (at these times)."""

    def __init__(self) -> None:
        self.closed_at: list[float] = []

    def close_soon(self) -> None:
        self.closed_at.append(trio.current_time())


async def test_the_sweeper_closes_what_stayed_idle_and_nothing_that_got_busy(
    autojump_clock: trio.testing.MockClock,
) -> None:
    context = WorkerContext(None)
    keepalive = KeepAlive(30, context.terminated)
    a, b, c, d, late = (Connection() for _ in range(5))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(keepalive.run)
        keepalive.idle(a)
        keepalive.idle(b)
        await trio.sleep(10)
        keepalive.busy(b)  # a request came
        keepalive.idle(c)
        await trio.sleep(5)
        keepalive.busy(c)  # and c's spell ends, a new one starts:
        keepalive.idle(c)  # its deadline moves from 40 to 45
        await trio.sleep(60)
        assert (a.closed_at, b.closed_at, c.closed_at) == ([30], [], [45])
        keepalive.idle(d)
        await trio.sleep(1)
        await context.terminated.set()  # the server shuts down: d goes at once
    assert d.closed_at == [76]  # and the sweeper returned
    keepalive.idle(late)  # a connection accepted as it stopped
    assert late.closed_at == [76]


async def test_a_busy_connection_is_left_to_finish_at_shutdown(
    autojump_clock: trio.testing.MockClock,
) -> None:
    context = WorkerContext(None)
    keepalive = KeepAlive(30, context.terminated)
    busy = Connection()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(keepalive.run)
        keepalive.idle(busy)
        keepalive.busy(busy)
        await trio.sleep(1)
        await context.terminated.set()
    assert busy.closed_at == []  # hypercorn closes it once its request is answered
