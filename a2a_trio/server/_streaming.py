"""An event-stream response for any binding: task events rendered as SSE frames, keepalives.

The REST and legacy bindings frame events differently (bare StreamResponse objects; legacy
JSON-RPC envelopes with translated events) but stream the same way: the only wait is the
receive under a keepalive timeout, so a client disconnect cancels just this stream and the job
keeps running.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable

import trio
from quart import Response

from ..runtime import LogEntry, SubscriberOverflow, TaskStream
from ._sse import KEEPALIVE, STREAM_HEADERS

type Render = Callable[[LogEntry], Iterable[bytes]]


def event_stream_response(
    stream: TaskStream, render: Render, keepalive: float, *, first: Iterable[bytes] = ()
) -> Response:
    """A ``text/event-stream`` response: the ``first`` frames, then ``render(entry)`` frames for
    each event, with a keepalive comment once nothing was sent for ``keepalive`` seconds.

    The silence is counted from the last frame sent, not the last event received: a render may
    send nothing for an event (the legacy dialect holds artifact chunks until the end), and a
    stream of such events must still keep its connection alive.
    """
    opening = list(first)

    async def frames() -> AsyncIterator[bytes]:
        try:
            for frame in opening:
                yield frame
            quiet_until = trio.current_time() + keepalive
            while True:
                entry = None
                with trio.move_on_at(quiet_until):
                    entry = await stream.receive()
                if entry is None:
                    yield KEEPALIVE
                    quiet_until = trio.current_time() + keepalive
                    continue
                for frame in render(entry):
                    yield frame
                    quiet_until = trio.current_time() + keepalive
        except (trio.EndOfChannel, SubscriberOverflow):
            return
        finally:
            stream.close()

    response = Response(frames(), headers=STREAM_HEADERS)
    response.timeout = None
    return response
