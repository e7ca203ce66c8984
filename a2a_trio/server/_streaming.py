"""An event-stream response for any binding: task events rendered as SSE frames, keepalives;
and the boundary every binding's stream has once its 200 is sent.

The REST and legacy bindings frame events differently (bare StreamResponse objects; legacy
JSON-RPC envelopes with translated events) but stream the same way: the only wait is the
receive under a keepalive timeout, so a client disconnect cancels just this stream and the job
keeps running.  The JSON-RPC endpoint streams on raw ASGI and shares only the boundary.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AbstractContextManager

import attrs
import trio
from quart import Response

from ..runtime import LogEntry, SubscriberOverflow, TaskStream
from ._sse import KEEPALIVE, STREAM_HEADERS

logger = logging.getLogger("a2a_trio.server")

type Render = Callable[[LogEntry], Iterable[bytes]]
type FailureEvent = Callable[[], bytes]
"""The binding's internal error as the last SSE event of a stream (see :func:`stream_boundary`)."""


@attrs.define
class StreamOutcome:
    """Whether an unexpected failure ended the stream (see :func:`stream_boundary`)."""

    failed: bool = False


def stream_boundary() -> AbstractContextManager[StreamOutcome]:
    """The boundary of an event stream whose 200 and first events are sent: a failure nobody
    planned for (a custom store's bug met by a ``StoreFollower``, a codec bug rendering an
    event) can no longer become an error response, so it ends the stream instead of cutting the
    connection.  Its traceback is logged once; the caller sees ``failed`` and sends the
    binding's internal error as the last event, then ends the body.  The exception's text never
    reaches the client.  The task's job is not the stream's and runs on; cancellation (a client
    gone, a shutdown) and ``KeyboardInterrupt`` are not failures and pass through.
    """
    return _StreamBoundary()


class _StreamBoundary:
    """:func:`stream_boundary` (a class, not a generator: every stream enters one)."""

    def __init__(self) -> None:
        self._outcome = StreamOutcome()

    def __enter__(self) -> StreamOutcome:
        return self._outcome

    def __exit__(self, _type: object, exc: BaseException | None, _traceback: object) -> bool:
        if not isinstance(exc, Exception):  # none, or cancellation: not a failure
            return False
        # the stream's boundary (docs/bindings.md): logged, never leaked
        logger.error("event stream ended early on an unexpected error", exc_info=exc)
        self._outcome.failed = True
        return True


def event_stream_response(
    stream: TaskStream,
    render: Render,
    keepalive: float,
    *,
    failure: FailureEvent,
    first: Iterable[bytes] = (),
) -> Response:
    """A ``text/event-stream`` response: the ``first`` frames, then ``render(entry)`` frames for
    each event, with a keepalive comment once nothing was sent for ``keepalive`` seconds; if an
    unexpected failure ends it early, ``failure()`` is its last event (:func:`stream_boundary`).

    The silence is counted from the last frame sent, not the last event received: a render may
    send nothing for an event (the legacy dialect holds artifact chunks until the end), and a
    stream of such events must still keep its connection alive.
    """
    opening = list(first)

    async def frames() -> AsyncIterator[bytes]:
        with stream_boundary() as outcome:
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
        if outcome.failed:
            yield failure()

    response = Response(frames(), headers=STREAM_HEADERS)
    response.timeout = None
    return response
