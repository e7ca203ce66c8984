"""A live stream of task events that resumes by itself after a dropped connection.

The stream owns at most one open HTTP response at a time.  When the connection drops (or the
server ends the stream before the task reached a terminal or interrupted state) it
resubscribes to the task with ``Last-Event-ID`` set to the last SSE id it saw, so a server that
numbers its events replays exactly what was missed.  Attempts are bounded and spaced by
backoff; the count restarts after progress (an update, a changed state or a new event id, not
the snapshot a resubscribe starts with).  If the task ended while the stream was away
(resubscribing is refused for finished tasks, with an error answer or, in v0.3, an error as
the stream's first event), the stream ends with the task as fetched.

Events come out in the order the agent sent them; an error event is raised after every event
before it and ends the stream.  The stream also ends as soon as the task's last event is in
(a terminal state or a message; an interrupted state for ``stream()``), even if the server
keeps the connection open.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, Self

import httpx
import trio

from .. import model as m
from ..errors import A2AError, UnsupportedOperationError
from ..wire import SSEDecoder, SSEError
from ._bindings import Op
from ._errors import ClientError, InvalidResponseError, TransportError
from ._options import Reconnect
from ._transport import Transport, close_response, http_errors


def _state(event: m.StreamEvent) -> m.TaskState | None:
    match event:
        case m.Task(status=status) | m.TaskStatusUpdateEvent(status=status):
            return status.state
    return None


def _task_id(event: m.StreamEvent) -> str:
    match event:
        case m.Task(id=task_id):
            return task_id
        case m.TaskStatusUpdateEvent(task_id=task_id) | m.TaskArtifactUpdateEvent(task_id=task_id):
            return task_id
        case m.Message(task_id=task_id):
            return task_id
    return ""


class EventStream:
    """Typed events of one streaming call: ``async with ... as events: async for e in events``.

    Iterating blocks until the next event arrives.  Cancelling that wait (a timeout, say) drops
    the connection, or stops a resume under way; the next iteration resumes the stream from the
    last event id.  Leaving the
    ``async with`` block closes the connection.  Raises the typed A2A error an agent sends
    (after every event sent before it), :class:`InvalidResponseError` for a malformed event and
    :class:`TransportError` once reconnection has failed ``reconnect.attempts`` times; after
    raising, the iteration ends.
    """

    def __init__(
        self,
        transport: Transport,
        op: Op,
        request: Any,
        *,
        reconnect: Reconnect,
        last_event_id: str = "",
    ) -> None:
        self._transport = transport
        self._op = op
        self._request = request
        self._reconnect = reconnect
        self._response: httpx.Response | None = None
        self._chunks: AsyncIterator[bytes] | None = None
        self._decoder = self._new_decoder()
        self._decoder.last_event_id = last_event_id
        self._pending: deque[tuple[m.StreamEvent, str] | Exception] = deque()
        """Events received and not yet handed out, each with its SSE id; an error last."""
        self._handed_id = last_event_id  # the SSE id of the last event handed out
        self._entered = False
        self._finished = False
        self._final_seen = False  # terminal or interrupted: a break is not resumed
        self._done = False  # the stream's last event is in: stop reading
        self._failures = 0  # resubscribes in a row without progress
        self._state: m.TaskState | None = None  # the task's last known state
        self._event_id = ""  # the SSE id of the last event
        self._resumed_blank = False  # resubscribed, and nothing read on it yet
        self.task_id = request.id if op is Op.SUBSCRIBE else ""
        """The task this stream follows, once known."""
        self.reconnects = 0
        """How many times the stream was resumed after a drop."""

    def _new_decoder(self) -> SSEDecoder:
        return SSEDecoder(max_event_bytes=self._transport.limits.max_body_bytes)

    @property
    def last_event_id(self) -> str:
        """The SSE id of the last event this stream handed out (the ``last_event_id`` it was
        opened with before the first): subscribing with it later misses nothing the caller did
        not see, though more events may have been received with the same network read."""
        return self._handed_id

    async def __aenter__(self) -> Self:
        self._entered = True
        await self._open(self._op, self._request)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection; iteration then ends."""
        self._finished = True
        await self._close_response()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> m.StreamEvent:
        while not self._pending:
            if self._finished:
                raise StopAsyncIteration
            if self._done:  # the task's last event is in: do not wait for the server to close
                await self.aclose()
                continue
            try:
                chunk = await self._next_chunk()
            except TransportError as exc:
                chunk, cause = None, exc
            else:
                cause = TransportError("the stream ended before the task did")
            if chunk is None:
                if self._final_seen:  # the last event is in: how the stream ended is moot
                    await self.aclose()
                else:
                    await self._resume(cause)
                continue
            await self._feed(chunk)
        item = self._pending.popleft()
        if isinstance(item, Exception):
            raise item
        event, self._handed_id = item
        return event

    async def _feed(self, chunk: bytes) -> None:
        """Queue the events ``chunk`` completes, in order; an error is queued as the last item.

        Everything the agent sent before an error is delivered before the error is raised
        (events are never dropped or reordered); the error ends the stream.
        """
        broken: InvalidResponseError | None = None
        try:
            sse_events = self._decoder.feed(chunk)
        except SSEError as exc:
            sse_events = exc.events
            broken = InvalidResponseError(f"bad event stream from the agent: {exc}")
        for sse in sse_events:
            try:
                event = self._transport.binding.event(sse.data)
            except (A2AError, ClientError) as exc:
                if self._resumed_blank and isinstance(exc, UnsupportedOperationError):
                    # A v0.3 server refuses resubscribing to a finished task inside the stream.
                    await self._end_with_snapshot()
                else:
                    await self._fail(exc)
                return
            self._accept(event, sse.id)
        if broken is not None:
            await self._fail(broken)

    async def _fail(self, error: Exception) -> None:
        self._pending.append(error)
        await self.aclose()

    def _accept(self, event: m.StreamEvent, event_id: str) -> None:
        state = _state(event)
        if self._progress(event, state, event_id):
            self._failures = 0
        self._resumed_blank = False
        self._state = state or self._state
        self._event_id = event_id
        self.task_id = self.task_id or _task_id(event)
        interrupted = state is not None and m.is_interrupted(state)
        if isinstance(event, m.Message) or (state is not None and m.is_terminal(state)):
            self._final_seen = self._done = True
        elif interrupted:
            # A stream() ends when the task needs input (the caller answers with a message); a
            # subscribe() may follow the task past it for as long as the server keeps it open.
            self._final_seen = True
            self._done = self._done or self._op is Op.STREAM
        self._pending.append((event, event_id))

    def _progress(self, event: m.StreamEvent, state: m.TaskState | None, event_id: str) -> bool:
        """Whether ``event`` is news, which restores the reconnection budget.

        A resumed stream starts with the task's snapshot; an agent that sends only that and
        then ends again has shown nothing new, so it must not reset the count (that would
        resubscribe forever).  An update, a changed state or a new event id is progress.
        """
        return (
            not isinstance(event, m.Task)
            or state != self._state
            or (event_id != "" and event_id != self._event_id)
        )

    async def _next_chunk(self) -> bytes | None:
        """The connection's next bytes; ``None`` at its end, or when no connection is open (a
        resume was cancelled or failed before it connected: the caller resumes again)."""
        if not self._entered:
            raise RuntimeError("enter an EventStream with 'async with' before iterating it")
        if self._chunks is None:
            return None
        with http_errors("reading the event stream"):
            try:
                return await anext(self._chunks)
            except StopAsyncIteration:
                return None

    async def _open(self, op: Op, request: Any) -> None:
        response = await self._transport.open_stream(
            op, request, last_event_id=self._decoder.last_event_id
        )
        self._response = response
        self._chunks = response.aiter_bytes()

    async def _close_response(self) -> None:
        response, chunks = self._response, self._chunks
        self._response = self._chunks = None
        if response is not None:
            self._transport.open_streams -= 1
            await close_response(response, chunks)

    async def _resume(self, cause: TransportError) -> None:
        """Resubscribe after a drop, or re-raise ``cause`` when that is not possible."""
        await self._close_response()
        while True:
            if not self.task_id or self._failures >= self._reconnect.attempts:
                self._finished = True
                raise cause
            self._failures += 1
            await trio.sleep(self._reconnect.delay(self._failures, self._decoder.retry))
            carried = self._decoder
            self._decoder = self._new_decoder()
            self._decoder.last_event_id, self._decoder.retry = carried.last_event_id, carried.retry
            try:
                await self._open(Op.SUBSCRIBE, m.SubscribeToTaskRequest(id=self.task_id))
            except TransportError as exc:
                cause = exc
                continue
            except UnsupportedOperationError:
                await self._end_with_snapshot()
                return
            self._resumed_blank = True
            self.reconnects += 1
            self._transport.reconnects += 1
            return

    async def _end_with_snapshot(self) -> None:
        """Resubscribing was refused (the task finished while we were away): end the stream
        with the task as it is now."""
        await self._close_response()
        task = await self._transport.unary(Op.GET, m.GetTaskRequest(id=self.task_id))
        self._pending.append((task, self._decoder.last_event_id))
        self._finished = True
