"""The floor: a raw ASGI app under hypercorn's trio worker, doing no A2A work at all.

``POST /`` answers a fixed JSON-RPC result. A body naming ``SendStreamingMessage`` or
``SubscribeToTask`` gets an SSE stream instead: one event, keepalive comments, and a final
COMPLETED event once ``--release-file`` exists. It shows what the HTTP server alone costs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import trio
from behaviour import HOLD_MAX, HOLD_POLL, raise_fd_limit, released, server_args
from hypercorn_run import serve_and_publish

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

RESULT = (
    b'{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"floor","contextId":"floor",'
    b'"status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a1",'
    b'"parts":[{"text":"hi"}]}]}}}'
)
FIRST = (
    b'data: {"jsonrpc":"2.0","id":1,"result":{"task":{"id":"floor",'
    b'"status":{"state":"TASK_STATE_WORKING"}}}}\n\n'
)
LAST = (
    b'data: {"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"taskId":"floor",'
    b'"status":{"state":"TASK_STATE_COMPLETED"}}}}\n\n'
)


class FloorApp:
    """The raw ASGI app; ``release`` is set by a watcher started in the lifespan."""

    def __init__(self, keepalive: float, release_file: str) -> None:
        self.keepalive = keepalive
        self.release_file = release_file
        self.release = trio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._watch)
            await receive()
            await send({"type": "lifespan.startup.complete"})
            await receive()
            nursery.cancel_scope.cancel()
        await send({"type": "lifespan.shutdown.complete"})

    async def _watch(self) -> None:
        for _poll in range(int(HOLD_MAX / HOLD_POLL)):
            if released(self.release_file):
                self.release.set()
                return
            await trio.sleep(HOLD_POLL)

    async def _http(self, receive: Receive, send: Send) -> None:
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if b"SendStreamingMessage" in body or b"SubscribeToTask" in body:
            await self._stream(receive, send)
            return
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": RESULT})

    async def _stream(self, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-store")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": FIRST, "more_body": True})
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._cancel_on_disconnect, receive, nursery.cancel_scope)
            while not self.release.is_set():
                with trio.move_on_after(self.keepalive):
                    await self.release.wait()
                if not self.release.is_set():
                    await send(
                        {"type": "http.response.body", "body": b": ka\n\n", "more_body": True}
                    )
            await send({"type": "http.response.body", "body": LAST})
            nursery.cancel_scope.cancel()

    @staticmethod
    async def _cancel_on_disconnect(receive: Receive, scope: trio.CancelScope) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        scope.cancel()


def main() -> None:
    args = server_args(__doc__ or "")
    raise_fd_limit()
    trio.run(serve_and_publish, FloorApp(args.keepalive, args.release_file), args.port_file)


if __name__ == "__main__":
    main()
