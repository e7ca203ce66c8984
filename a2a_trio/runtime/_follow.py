"""Following a task through the store: the events logged by a job on another replica.

Every event a job publishes is stored with the task write that produced it, numbered as its live
log numbers it.  A stream of a task that no job runs on this replica (it runs on another replica
sharing the store, or waits here for its recovery) follows the stored log instead: a
:class:`StoreFollower` polls it from the stream's own ``receive``, so it runs in the client's
stream task, under its cancel scope, and a client that goes away leaves nothing behind.  So
does a stream of a job here that another replica superseded, from the last event it had.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable

import trio

from ..errors import StoreUnavailableError, TaskNotFoundError
from ..store import CallerScope, TaskStore
from ._eventlog import LogEntry

logger = logging.getLogger("a2a_trio.runtime")


async def stored_snapshot(store: TaskStore, scope: CallerScope, task_id: str) -> LogEntry | None:
    """The stored task as one event numbered after its stored log (``None``: no such task).

    The number is read before and after the task, again until both agree: a task and its
    events are written in one transaction, so the task read between two equal numbers is
    exactly the task after that event, and a follower going on after it neither repeats an
    event the snapshot holds (an appended chunk twice) nor skips one it lacks.
    """
    try:
        seq = await store.last_event_seq(scope, task_id)
        while True:
            stored = await store.load_task(scope, task_id)
            if stored is None:
                return None
            last, seq = seq, await store.last_event_seq(scope, task_id)
            if seq == last:
                return LogEntry(seq, stored.task)
    except TaskNotFoundError:
        return None


class StoreFollower:
    """The events a task's stored log gets after ``after``, with their stored numbers.

    A :class:`~a2a_trio.runtime.Subscription`'s counterpart for a task no job runs here:
    :meth:`receive` checks ``last_event_seq`` every ``interval`` seconds and reads the events
    only when it moved.  Where the store no longer keeps every event after the last one
    delivered (its ``max_events_per_task`` trimmed them), a snapshot of the task, numbered
    after the stored log, comes instead and the events go on after it, so a client never gets
    an artifact chunk without its start.  The stream carrying it decides where it ends (a
    terminal state); a task deleted or purged meanwhile ends it.  While the store is
    unavailable it polls on (the outage is logged once), so the client's stream, kept open by
    its keepalives, resumes when the store is back.

    ``on_end`` is called with the follower once, when it closes or the task is gone (the
    runtime counts the open ones).
    """

    def __init__(
        self,
        store: TaskStore,
        scope: CallerScope,
        task_id: str,
        *,
        after: int,
        interval: float,
        on_end: Callable[[StoreFollower], object] | None = None,
    ) -> None:
        self._store = store
        self._scope = scope
        self._task_id = task_id
        self._after = after
        self._interval = interval
        self._pending: deque[LogEntry] = deque()
        self._next_poll = trio.current_time() + interval
        self._ended = False
        self._outage = False
        self._on_end = on_end

    async def receive(self) -> LogEntry:
        """The next stored event, waiting for it; ``trio.EndOfChannel`` once the task is gone
        or the follower closed.

        Cancellation is safe: events read from the store are kept until delivered, and an
        interrupted wait keeps its next poll time (a keepalive timeout polls no sooner).
        """
        while not self._pending:
            if self._ended:
                raise trio.EndOfChannel
            await trio.sleep_until(self._next_poll)
            await self._poll()
        await trio.lowlevel.checkpoint_if_cancelled()
        return self._pending.popleft()

    def receive_nowait(self) -> LogEntry | None:
        """The next event already read from the store, or ``None`` (never polls)."""
        if self._pending:
            return self._pending.popleft()
        if self._ended:
            raise trio.EndOfChannel
        return None

    def close(self) -> None:
        """Stop following; synchronous so it is safe in a generator's cleanup."""
        self._end()
        self._pending.clear()

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            if self._on_end is not None:
                self._on_end(self)

    async def _poll(self) -> None:
        """One look at the store; whatever it finds is queued in one step, after every await,
        so a cancelled poll changes nothing."""
        try:
            if await self._store.last_event_seq(self._scope, self._task_id) > self._after:
                await self._read()
        except TaskNotFoundError:  # deleted or purged: nothing more will come
            self._end()
        except StoreUnavailableError as exc:
            if not self._outage:
                logger.warning(
                    "following task %s: the task store is unavailable, polling on: %s",
                    self._task_id,
                    exc,
                )
            self._outage = True
        else:
            self._outage = False
        self._next_poll = trio.current_time() + self._interval

    async def _read(self) -> None:
        events = await self._store.load_events(self._scope, self._task_id, after_seq=self._after)
        if not events:
            return  # gone meanwhile: the next poll says so
        if events[0][0] == self._after + 1:
            self._pending.extend(LogEntry(seq, event) for seq, event in events)
            self._after = events[-1][0]
            return
        snapshot = await stored_snapshot(self._store, self._scope, self._task_id)
        if snapshot is None:
            self._end()
            return
        self._pending.append(snapshot)
        self._after = snapshot.seq
