"""The floor: a raw ASGI app under hypercorn's trio worker, doing no A2A work at all.

``POST /`` answers a fixed JSON-RPC result. A body naming ``SendStreamingMessage`` or
``SubscribeToTask`` gets an SSE stream instead: one event, keepalive comments, and a final
COMPLETED event once ``--release-file`` exists (at once, with no watcher task, if it already
existed when the stream began). It shows what the HTTP server alone costs.

A ``SendMessage`` whose metadata says ``"bench":"fanout"`` (see ``behaviour.py``) arms the
least a fan-out can be: it answers a fixed WORKING task with a fresh id, and a broadcaster in
the lifespan's nursery waits for the trigger file, then appends one shared artifact-update
frame carrying ``emit@<time>`` every ``interval`` s, then a COMPLETED frame. A
``SubscribeToTask`` naming that id joins it: a first event, then every frame not yet sent
(whatever is available goes out as one body chunk), parking in between; the response ends
with the terminal frame, or when the client disconnects. No request id is echoed, no event
id is written and there are no keepalives while subscribed: the load generator needs none.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import trio
from behaviour import (
    HOLD_MAX,
    HOLD_POLL,
    Behaviour,
    behaviour_of,
    emit_text,
    raise_fd_limit,
    released,
    server_args,
)
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
FANOUT_MARK = b'"bench":"fanout"'
FANOUT_TASK = (
    '{{"jsonrpc":"2.0","id":1,"result":{{"task":{{"id":"{task}","contextId":"floor",'
    '"status":{{"state":"TASK_STATE_WORKING"}}}}}}}}'
)
FANOUT_FIRST = (
    'data: {{"jsonrpc":"2.0","id":1,"result":{{"task":{{"id":"{task}","contextId":"floor",'
    '"status":{{"state":"TASK_STATE_WORKING"}}}}}}}}\n\n'
)
FANOUT_EVENT = (
    'data: {{"jsonrpc":"2.0","id":1,"result":{{"artifactUpdate":{{"taskId":"{task}",'
    '"contextId":"floor","artifact":{{"artifactId":"a1","parts":[{{"text":"{text}"}}]}}}}}}}}\n\n'
)
FANOUT_LAST = (
    'data: {{"jsonrpc":"2.0","id":1,"result":{{"statusUpdate":{{"taskId":"{task}",'
    '"contextId":"floor","status":{{"state":"TASK_STATE_COMPLETED"}}}}}}}}\n\n'
)
JSON_HEADERS = [(b"content-type", b"application/json")]
STREAM_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-store")]


class FanOut:
    """One armed fan-out: the frames emitted so far, shared by every subscriber.

    ``done`` is set with the terminal frame; ``lot`` wakes the parked subscribers after
    every frame.
    """

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        self.key = f'"{task_id}"'.encode()
        self.first = FANOUT_FIRST.format(task=task_id).encode()
        self.frames: list[bytes] = []
        self.done = False
        self.lot = trio.lowlevel.ParkingLot()

    def publish(self, frame: bytes, *, last: bool = False) -> None:
        """Append one frame and wake every parked subscriber."""
        self.frames.append(frame)
        self.done = last
        self.lot.unpark_all()


class FloorApp:
    """The raw ASGI app; ``release`` is set by a watcher started in the lifespan, which also
    owns the fan-out broadcasters."""

    def __init__(self, keepalive: float, release_file: str) -> None:
        self.keepalive = keepalive
        self.release_file = release_file
        self.release = trio.Event()
        self.fanout: FanOut | None = None
        self._fanout_ids = itertools.count(1)
        self._nursery: trio.Nursery | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
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
        fanout = self.fanout
        if b"SubscribeToTask" in body and fanout is not None and fanout.key in body:
            await self._join(fanout, receive, send)
            return
        if b"SendStreamingMessage" in body or b"SubscribeToTask" in body:
            await self._stream(receive, send)
            return
        reply = self._arm(body) if FANOUT_MARK in body else RESULT
        await send({"type": "http.response.start", "status": 200, "headers": JSON_HEADERS})
        await send({"type": "http.response.body", "body": reply})

    async def _stream(self, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": STREAM_HEADERS})
        await send({"type": "http.response.body", "body": FIRST, "more_body": True})
        if self.release.is_set():
            await send({"type": "http.response.body", "body": LAST})
            return
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

    def _arm(self, body: bytes) -> bytes:
        """Start a fan-out in the lifespan's nursery; return the task answer."""
        assert self._nursery is not None, "requests are served only after the lifespan started"
        todo = behaviour_of(json.loads(body)["params"]["message"].get("metadata"))
        fanout = FanOut(f"fanout-{next(self._fanout_ids)}")
        self.fanout = fanout
        self._nursery.start_soon(self._broadcast, fanout, todo)
        return FANOUT_TASK.format(task=fanout.task_id).encode()

    @staticmethod
    async def _broadcast(fanout: FanOut, todo: Behaviour) -> None:
        """Wait for the trigger file, then publish the events and the terminal frame (paced
        like the agents in ``behaviour.py``: emit, then sleep ``interval``)."""
        for _poll in range(todo.max_polls):
            if released(todo.file):
                break
            await trio.sleep(todo.poll)
        for _ in range(todo.events):
            fanout.publish(FANOUT_EVENT.format(task=fanout.task_id, text=emit_text()).encode())
            await trio.sleep(todo.interval)
        fanout.publish(FANOUT_LAST.format(task=fanout.task_id).encode(), last=True)

    async def _join(self, fanout: FanOut, receive: Receive, send: Send) -> None:
        """One fan-out subscriber: every frame from the first, as few sends as the pace allows;
        ends after the terminal frame or when the client disconnects."""
        await send({"type": "http.response.start", "status": 200, "headers": STREAM_HEADERS})
        await send({"type": "http.response.body", "body": fanout.first, "more_body": True})
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._cancel_on_disconnect, receive, nursery.cancel_scope)
            sent = 0
            while True:
                if sent == len(fanout.frames):
                    await fanout.lot.park()
                    continue
                chunk = b"".join(fanout.frames[sent:])
                sent = len(fanout.frames)
                last = fanout.done
                await send({"type": "http.response.body", "body": chunk, "more_body": not last})
                if last:
                    break
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
