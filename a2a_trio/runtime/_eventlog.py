"""A task's event log: numbered events, fanned out to subscribers, kept (bounded) for replay.

Every event a task emits gets the next sequence number (1, 2, ...).  Subscribers attach with the
last sequence they saw and first receive what they missed from the replay buffer, then live events.
Attaching is synchronous, so no event can slip between the replay and the live part.

A subscriber never slows the job: ``publish`` only appends to each subscriber's buffer.  A buffer
that grows past its bound ends that subscription with ``SubscriberOverflow``; the client
resubscribes from its last event id.  After the log is closed (the task reached a terminal or
otherwise final event) every subscriber drains what is buffered and then ends; a log closed
because its task goes on elsewhere (another replica took it over) ends them with
``HandedOver``, which says after which event they go on.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Final

import attrs
import trio

from .. import model as m

DEFAULT_REPLAY: Final = 1024
DEFAULT_SUBSCRIBER_BUFFER: Final = 1024


class SubscriberOverflow(Exception):
    """This subscriber fell more than its buffer behind; it must resubscribe."""


class ReplayGap(Exception):
    """The events after the requested sequence are no longer in the replay buffer."""


class HandedOver(trio.EndOfChannel):
    """The log ended with its task going on elsewhere (another replica took it over), not at
    its end: the events after ``after``, the last one this subscriber had, are in the store.
    An ``EndOfChannel``, so a reader that does not go on ends as at any log's end."""

    def __init__(self, after: int) -> None:
        super().__init__(f"the task goes on elsewhere after event {after}")
        self.after = after


@attrs.define(eq=False)
class LogEntry:
    """One numbered event.  ``encoded`` keeps each wire form's bytes, so an event fanned out to
    a thousand subscribers is serialized once per wire form, not once per subscriber."""

    seq: int
    event: m.StreamEvent
    _encoded: dict[object, bytes] = attrs.field(factory=dict, init=False, repr=False)

    def encoded(self, encode: Callable[[m.StreamEvent], bytes]) -> bytes:
        """``encode(event)``, computed once per ``encode`` function."""
        found = self._encoded.get(encode)
        if found is None:
            found = self._encoded[encode] = encode(self.event)
        return found


@attrs.frozen
class EventLogLimits:
    """How many events a log keeps for replay and how far a subscriber may fall behind."""

    replay: int = DEFAULT_REPLAY
    subscriber_buffer: int = DEFAULT_SUBSCRIBER_BUFFER


class Subscription:
    """One subscriber's view of an event log; iterate it or call :meth:`receive`, from one
    task at a time (a second task receiving while one waits gets ``trio.BusyResourceError``).

    The waiting task is woken with ``trio.lowlevel.reschedule``, not through a ``ParkingLot``:
    a fan-out wakes every subscriber at every event, and a parking lot's park and wake-up cost
    six more Python calls, for a lot that would never hold more than one task.
    """

    def __init__(self, log: EventLog, backlog: list[LogEntry], limit: int, *, after: int) -> None:
        self._log = log
        self._pending: deque[LogEntry] = deque(backlog)
        self._limit = limit
        self._waiter: trio.lowlevel.Task | None = None
        self._overflowed = False
        self._ended = False
        self._handed_over = False
        self._skip_through = 0
        self._had = after
        """The last event number this subscriber has had (received, or skipped: the caller has
        it from elsewhere), or where it attached."""

    def skip_through(self, seq: int) -> None:
        """Drop the events numbered up to ``seq``, queued or yet to come (the caller has them
        from elsewhere: the store)."""
        self._skip_through = seq
        self._had = max(self._had, seq)
        while self._pending and self._pending[0].seq <= seq:
            self._pending.popleft()

    def _push(self, entry: LogEntry) -> None:
        if entry.seq <= self._skip_through:
            return
        if len(self._pending) >= self._limit:
            self._overflowed = True
            self._pending.clear()
            self._log._detach(self)
        else:
            self._pending.append(entry)
        self._wake()  # (a subscriber busy elsewhere is not waiting: most, in a fan-out)

    def _end(self, *, handed_over: bool = False) -> None:
        self._ended = True
        self._handed_over = handed_over
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None:
            trio.lowlevel.reschedule(self._waiter)
            self._waiter = None

    async def _wait(self) -> None:
        """Wait for :meth:`_wake`; a full checkpoint (cancellable, and a schedule point)."""
        if self._waiter is not None:
            raise trio.BusyResourceError("another task is already receiving from this subscription")
        self._waiter = trio.lowlevel.current_task()
        await trio.lowlevel.wait_task_rescheduled(self._abort_wait)

    def _abort_wait(self, _raise_cancel: trio.lowlevel.RaiseCancelT) -> trio.lowlevel.Abort:
        self._waiter = None
        return trio.lowlevel.Abort.SUCCEEDED

    def _ended_error(self) -> trio.EndOfChannel:
        return HandedOver(self._had) if self._handed_over else trio.EndOfChannel()

    def _take(self) -> LogEntry:
        entry = self._pending.popleft()
        self._had = entry.seq
        return entry

    async def receive(self) -> LogEntry:
        """The next event; raises ``trio.EndOfChannel`` after the last one (``HandedOver``
        when the task went on elsewhere).

        Raises ``SubscriberOverflow`` if this subscriber fell too far behind.  Cancellation is
        safe: no event is lost, the next call returns it.
        """
        if self._pending:
            await trio.lowlevel.checkpoint_if_cancelled()
        while not self._pending:  # (a wait is a checkpoint of its own)
            if self._overflowed:
                raise SubscriberOverflow("subscriber fell too far behind; resubscribe")
            if self._ended:
                raise self._ended_error()
            await self._wait()
        return self._take()

    def receive_nowait(self) -> LogEntry | None:
        """The next queued event, or ``None`` when none is queued yet (never waits).

        Raises like :meth:`receive` once the log has ended or this subscriber overflowed.
        """
        if self._pending:
            return self._take()
        if self._overflowed:
            raise SubscriberOverflow("subscriber fell too far behind; resubscribe")
        if self._ended:
            raise self._ended_error()
        return None

    def close(self) -> None:
        """Stop receiving; synchronous so it is safe in a generator's cleanup."""
        self._log._detach(self)
        self._end()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> LogEntry:
        try:
            return await self.receive()
        except trio.EndOfChannel:
            raise StopAsyncIteration from None


class EventLog:
    """The numbered, replayable event stream of one task while it is live."""

    def __init__(self, limits: EventLogLimits = EventLogLimits(), *, last_seq: int = 0) -> None:
        """``last_seq``: where numbering continues (a task resumed after a restart)."""
        self._limits = limits
        self._entries: deque[LogEntry] = deque(maxlen=limits.replay)
        self._subscribers: set[Subscription] = set()
        self._last_seq = last_seq
        self._closed = False
        self._handed_over = False

    @property
    def last_seq(self) -> int:
        return self._last_seq

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def subscriber_count(self) -> int:
        return len(self._subscribers)

    def publish(self, event: m.StreamEvent, *, seq: int | None = None) -> LogEntry:
        """Number ``event``, keep it for replay and hand it to every subscriber.

        ``seq``: the number the caller already gave it (and stored it under); it must be the
        next one, or the log and the store would disagree (``ValueError``).
        """
        if self._closed:
            raise RuntimeError("event log is closed")
        if seq is not None and seq != self._last_seq + 1:
            raise ValueError(f"event {seq} does not follow event {self._last_seq}")
        self._last_seq += 1
        entry = LogEntry(self._last_seq, event)
        self._entries.append(entry)
        for subscriber in list(self._subscribers):
            subscriber._push(entry)
        return entry

    def close(self, *, handed_over: bool = False) -> None:
        """No more events: subscribers end after draining what they have.

        ``handed_over``: the task goes on elsewhere (another replica took it over), so they
        end with ``HandedOver`` (the last event each had), as do subscribers attaching later.
        """
        self._closed = True
        self._handed_over = handed_over
        for subscriber in self._subscribers:
            subscriber._end(handed_over=handed_over)
        self._subscribers.clear()

    def subscribe(self, *, after: int = 0) -> Subscription:
        """Events with a sequence above ``after``, replayed then live.

        Raises ``ReplayGap`` when some of them have already left the replay buffer.
        """
        oldest = self._entries[0].seq if self._entries else self._last_seq + 1
        if after + 1 < oldest and after < self._last_seq:
            raise ReplayGap(f"events after {after} are no longer kept (oldest is {oldest})")
        backlog = [entry for entry in self._entries if entry.seq > after]
        limit = self._limits.subscriber_buffer + len(backlog)
        subscription = Subscription(self, backlog, limit, after=after)
        if self._closed:
            subscription._end(handed_over=self._handed_over)
        else:
            self._subscribers.add(subscription)
        return subscription

    def _detach(self, subscription: Subscription) -> None:
        self._subscribers.discard(subscription)
