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
    each event, with a keepalive comment after ``keepalive`` idle seconds."""
    opening = list(first)

    async def frames() -> AsyncIterator[bytes]:
        try:
            for frame in opening:
                yield frame
            while True:
                entry = None
                with trio.move_on_after(keepalive):
                    entry = await stream.receive()
                if entry is None:
                    yield KEEPALIVE
                    continue
                for frame in render(entry):
                    yield frame
        except (trio.EndOfChannel, SubscriberOverflow):
            return
        finally:
            stream.close()

    response = Response(frames(), headers=STREAM_HEADERS)
    response.timeout = None
    return response
