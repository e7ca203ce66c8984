"""A client's stream of task events: a head (snapshot or message), then the events of a source:
the task's live log here (a :class:`Subscription`) or its stored log (a ``StoreFollower``).
A live log that hands its task over to another replica (``HandedOver``) is followed by the
stored log from the last event it delivered."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Protocol

import trio

from .. import model as m
from ._eventlog import HandedOver, LogEntry


class EventSource(Protocol):
    """Where a stream's events after its head come from (see :class:`Subscription`)."""

    async def receive(self) -> LogEntry:
        """The next event; ``trio.EndOfChannel`` after the last; cancellation loses nothing."""
        ...

    def receive_nowait(self) -> LogEntry | None:
        """The next event if one is already there, else ``None`` (never waits)."""
        ...

    def close(self) -> None:
        """Stop receiving (synchronous)."""
        ...


def ends_stream(event: m.StreamEvent, *, stop_on_interrupt: bool) -> bool:
    """Whether ``event`` is the last one a stream carries (A2A v1.0 §3.1.2, §3.1.6)."""
    if isinstance(event, m.Message):
        return True
    state = None
    if isinstance(event, m.Task | m.TaskStatusUpdateEvent):
        state = event.status.state
    if state is None:
        return False
    return m.is_terminal(state) or (stop_on_interrupt and m.is_interrupted(state))


class TaskStream:
    """Events for one client stream; ``receive`` raises ``trio.EndOfChannel`` after the last.

    ``stop_on_interrupt``: a SendStreamingMessage stream ends when the task needs input (the
    client answers with a new message); a SubscribeToTask stream stays until a terminal state.

    ``follow``: where the events go on when the source ends with ``HandedOver`` (the job here
    was superseded: its task goes on at another replica) — a source of the events after the
    given number, the store's (``StoreFollower``); the stream switches to it within the same
    ``receive``, so the client sees one stream, each event once.  Without it the stream ends.
    """

    def __init__(
        self,
        head: Iterable[LogEntry],
        subscription: EventSource | None,
        *,
        stop_on_interrupt: bool,
        follow: Callable[[int], EventSource] | None = None,
    ) -> None:
        self._head = deque(head)
        self._subscription = subscription
        self._stop_on_interrupt = stop_on_interrupt
        self._follow = follow
        self._ended = False

    async def receive(self) -> LogEntry:
        """The next event; cancellation-safe (an interrupted wait loses nothing)."""
        if self._ended:
            raise trio.EndOfChannel
        if self._head:
            await trio.lowlevel.checkpoint()
            entry = self._head.popleft()
        elif self._subscription is not None:
            try:
                entry = await self._subscription.receive()
            except HandedOver as handover:
                entry = await self._hand_over(handover).receive()
        else:
            raise trio.EndOfChannel
        return self._deliver(entry)

    def receive_nowait(self) -> LogEntry | None:
        """The next event if one is already queued, else ``None`` (never waits).

        Lets a writer batch everything queued into one send; raises like :meth:`receive`.
        """
        if self._ended:
            raise trio.EndOfChannel
        if self._head:
            entry: LogEntry | None = self._head.popleft()
        elif self._subscription is not None:
            try:
                entry = self._subscription.receive_nowait()
            except HandedOver as handover:
                entry = self._hand_over(handover).receive_nowait()
        else:
            raise trio.EndOfChannel
        return None if entry is None else self._deliver(entry)

    def _hand_over(self, handover: HandedOver) -> EventSource:
        """The source after ``handover``: ``follow`` from the last event delivered (a
        cancelled receive from it loses nothing, the next one goes on with it)."""
        if self._follow is None:
            raise handover
        self._subscription = self._follow(handover.after)
        return self._subscription

    def _deliver(self, entry: LogEntry) -> LogEntry:
        if ends_stream(entry.event, stop_on_interrupt=self._stop_on_interrupt):
            self.close()
        return entry

    def close(self) -> None:
        """Detach from the task; synchronous so generator cleanup can call it."""
        self._ended = True
        if self._subscription is not None:
            self._subscription.close()
