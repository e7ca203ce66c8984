"""A scripted HTTP/1.1 agent on a real loopback socket, for answers no honest server gives.

Each connection carries one request; the test's handler writes the raw answer, so it can cut
a stream mid-way, send garbage or stall.  Requests are recorded for assertions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import attrs
import trio

from a2a_trio import model as m
from a2a_trio.wire import V1, dumps, loads


@attrs.frozen
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return loads(self.body)


type Handler = Callable[[Request, "Reply"], Awaitable[None]]


class Reply:
    """Writes an HTTP answer on the connection; JSON-RPC answers echo the request's id."""

    def __init__(self, stream: trio.SocketStream, request: Request | None = None) -> None:
        self.stream = stream
        self.request_id = None
        if request is not None and request.method == "POST" and request.body:
            body = request.json()
            self.request_id = body.get("id") if isinstance(body, dict) else None

    async def send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        await self.stream.send_all(http_answer(status, body, content_type))

    async def dribble(self, data: bytes, *, gap: float, piece: int = 1) -> None:
        """Send ``data`` (a whole answer, head included) ``piece`` bytes at a time, ``gap``
        seconds apart: a slowloris peer, never silent for long, never done."""
        for start in range(0, len(data), piece):
            await trio.sleep(gap)
            await self.stream.send_all(data[start : start + piece])

    async def redirect(self, status: int, location: str) -> None:
        await self.stream.send_all(
            f"HTTP/1.1 {status} X\r\nlocation: {location}\r\n"
            "content-length: 0\r\nconnection: close\r\n\r\n".encode()
        )

    async def endless(self, content_type: str = "application/json") -> None:
        """A chunked body that never ends: write until the peer hangs up."""
        await self.stream.send_all(
            f"HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\n"
            "transfer-encoding: chunked\r\nconnection: close\r\n\r\n".encode()
        )
        block = b"a" * 65536
        try:
            await self.chunk(b'{"name": "')
            while True:
                await self.chunk(block)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return

    def json_body(self, value: Any) -> bytes:
        """``value`` as JSON, a JSON-RPC answer carrying the request's id."""
        if isinstance(value, dict) and value.get("jsonrpc") == "2.0" and self.request_id:
            value = {**value, "id": self.request_id}
        return dumps(value)

    async def json(self, value: Any, status: int = 200) -> None:
        await self.send(status, self.json_body(value))

    async def start_sse(self) -> None:
        await self.stream.send_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
        )

    async def chunk(self, data: bytes) -> None:
        await self.stream.send_all(b"%x\r\n%s\r\n" % (len(data), data))

    async def event(self, payload: Any, *, event_id: str = "") -> None:
        frame = (f"id: {event_id}\n" if event_id else "") + f"data: {dumps(payload).decode()}\n\n"
        await self.chunk(frame.encode())

    async def end_sse(self) -> None:
        await self.stream.send_all(b"0\r\n\r\n")


def http_answer(status: int, body: bytes, content_type: str = "application/json") -> bytes:
    """A whole HTTP/1.1 answer carrying ``body``, the connection closed after it."""
    head = (
        f"HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


def rpc_result(result: Any, request_id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def rpc_error(code: int, message: str, request_id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def stream_result(event: m.StreamEvent) -> dict[str, Any]:
    return rpc_result(V1.encode_stream_response(event))


def card_for(base: str, binding: str = "JSONRPC", version: str = "1.0") -> dict[str, Any]:
    card = m.AgentCard(
        name="stub",
        description="scripted answers",
        version="1",
        supported_interfaces=(m.AgentInterface(base + "/rpc", binding, version),),
        capabilities=m.AgentCapabilities(streaming=True),
    )
    return V1.encode(card)


async def _read_request(stream: trio.SocketStream) -> Request:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = await stream.receive_some(65536)
        if not chunk:
            raise EOFError
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, path, _ = request_line.split(" ", 2)
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        body += await stream.receive_some(65536)
    return Request(method, path, headers, body)


class StubAgent:
    """The running stub: its base URL and the requests it received."""

    def __init__(self, handler: Handler, binding: str, *, serves_card: bool) -> None:
        self.handler = handler
        self.binding = binding
        self.serves_card = serves_card
        self.requests: list[Request] = []
        self.url = ""

    async def _connection(self, stream: trio.SocketStream) -> None:
        async with stream:
            try:
                request = await _read_request(stream)
            except (EOFError, trio.BrokenResourceError):
                return
            self.requests.append(request)
            if self.serves_card and request.path == "/.well-known/agent-card.json":
                await Reply(stream).json(card_for(self.url, self.binding))
                return
            try:
                await self.handler(request, Reply(stream, request))
            except trio.BrokenResourceError:
                return


@asynccontextmanager
async def open_stub_agent(
    handler: Handler, *, binding: str = "JSONRPC", serves_card: bool = True
) -> AsyncIterator[StubAgent]:
    """Serve ``handler`` on 127.0.0.1 (a free port), its card offering ``binding`` at /rpc.

    With ``serves_card=False`` the handler answers the card requests too (a server that is
    not an agent).
    """
    agent = StubAgent(handler, binding, serves_card=serves_card)
    async with serving(agent._connection) as agent.url:
        yield agent


@asynccontextmanager
async def serving(
    connection: Callable[[trio.SocketStream], Awaitable[None]],
) -> AsyncIterator[str]:
    """Serve ``connection`` (called once per accepted connection) on a free port of
    127.0.0.1; yield its ``http://`` URL, and stop listening on leaving."""
    async with trio.open_nursery() as nursery:
        serve = partial(trio.serve_tcp, connection, 0, host="127.0.0.1")
        listeners = await nursery.start(serve)
        yield f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}"
        nursery.cancel_scope.cancel()
