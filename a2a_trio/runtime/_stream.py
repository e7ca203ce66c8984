"""A client's stream of task events: a head (snapshot or message), then the events of a source:
the task's live log here (a :class:`Subscription`) or its stored log (a ``StoreFollower``)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Protocol

import trio

from .. import model as m
from ._eventlog import LogEntry


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
    """

    def __init__(
        self,
        head: Iterable[LogEntry],
        subscription: EventSource | None,
        *,
        stop_on_interrupt: bool,
    ) -> None:
        self._head = deque(head)
        self._subscription = subscription
        self._stop_on_interrupt = stop_on_interrupt
        self._ended = False

    async def receive(self) -> LogEntry:
        """The next event; cancellation-safe (an interrupted wait loses nothing)."""
        if self._ended:
            raise trio.EndOfChannel
        if self._head:
            await trio.lowlevel.checkpoint()
            entry = self._head.popleft()
        elif self._subscription is not None:
            entry = await self._subscription.receive()
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
            entry = self._subscription.receive_nowait()
        else:
            raise trio.EndOfChannel
        return None if entry is None else self._deliver(entry)

    def _deliver(self, entry: LogEntry) -> LogEntry:
        if ends_stream(entry.event, stop_on_interrupt=self._stop_on_interrupt):
            self.close()
        return entry

    def close(self) -> None:
        """Detach from the task; synchronous so generator cleanup can call it."""
        self._ended = True
        if self._subscription is not None:
            self._subscription.close()
