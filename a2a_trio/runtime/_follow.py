"""Following a task through the store: the events logged by a job on another replica.

Every event a job publishes is stored with the task write that produced it, numbered as its live
log numbers it.  A stream of a task that no job runs on this replica (it runs on another replica
sharing the store, or waits here for its recovery) follows the stored log instead: a
:class:`StoreFollower`.  So does a stream of a job here that another replica superseded, from
the last event it had, and a blocking send waiting for a task its job here lost to another
replica.  The followers of one task share its polls (:class:`FollowedTask`): one look at the
store per interval, one read per new batch of events, whatever their number.

There is no background task: the shared poll runs in whichever follower's ``receive`` gets
there first, in the client's stream task under its cancel scope, while the others wait for its
result; a client that goes away leaves nothing behind, and the last follower to leave frees
the shared state.
"""

from __future__ import annotations

import bisect
import logging
import math
from collections import deque
from collections.abc import Callable

import trio

from ..errors import StoreUnavailableError, TaskNotFoundError
from ..store import CallerScope, TaskStore
from ._eventlog import LogEntry

logger = logging.getLogger("a2a_trio.runtime")

SHARED_WINDOW = 1000
"""Entries a followed task keeps for its slowest followers, besides the newest read: a follower
further behind reads its own catch-up from the store, as one joining late does."""


async def stored_snapshot(store: TaskStore, scope: CallerScope, task_id: str) -> LogEntry | None:
    """The stored task as one event numbered after its stored log (``None``: no such task).

    The task and its number are read together (``load_task_with_seq``), so the snapshot holds
    exactly the events up to its number: a follower going on after it neither repeats an
    event the snapshot holds (an appended chunk twice) nor skips one it lacks.  Reading the
    number before and after the task until both agreed never got there while the replica
    running the task wrote between every two reads (a streaming task on a busy store).
    """
    found = await store.load_task_with_seq(scope, task_id)
    if found is None:
        return None
    stored, seq = found
    return LogEntry(seq, stored.task)


def _seq(entry: LogEntry) -> int:
    return entry.seq


class FollowedTask:
    """One task's stored log as this replica's followers of it read it, once for all of them.

    A *window* of entries covers everything the log holds after ``base``: for a follower at
    any number from ``base`` on, its entries past that number are what comes next (events, or
    a snapshot where the store trimmed them).  :meth:`wait_past` looks at the store at most
    once every ``interval`` seconds for all followers: the first follower there polls under a
    lock while the others wait on it, then take the result; one cancelled mid-poll releases
    the lock and the next one polls instead.  A poll's result is applied in one step after
    every await, so a cancelled poll changes nothing.  Each poll drops the entries every
    follower has taken, and all but :data:`SHARED_WINDOW` of the others before its own: a
    follower behind ``base`` (slow, joined late, or from an older number) reads its own
    catch-up (:meth:`catch_up`) and then takes from the window again.

    ``on_unfollowed`` is called when the last follower leaves (the runtime forgets it).
    """

    def __init__(
        self,
        store: TaskStore,
        scope: CallerScope,
        task_id: str,
        *,
        after: int,
        interval: float,
        on_unfollowed: Callable[[], object],
    ) -> None:
        self.interval = interval
        self.gone = False
        """The task was deleted or purged: nothing more will come."""
        self._store = store
        self._scope = scope
        self._task_id = task_id
        self._window: list[LogEntry] = []
        self._base = after
        self._read_through = after
        self._next_poll = trio.current_time() + interval
        self._polling = trio.Lock()
        self._outage = False
        self._followers: set[StoreFollower] = set()
        self._streams = 0
        self._on_unfollowed = on_unfollowed

    @property
    def follower_count(self) -> int:
        """The streams following the task here (the runtime's ``store_followers``), not
        counting the blocking sends that share their polls."""
        return self._streams

    def join(self, follower: StoreFollower) -> None:
        self._followers.add(follower)
        self._streams += follower.stream

    def leave(self, follower: StoreFollower) -> None:
        self._followers.discard(follower)
        self._streams -= follower.stream
        if not self._followers:
            self._on_unfollowed()

    def entries_after(self, seq: int) -> list[LogEntry] | None:
        """What the window holds after event ``seq``; ``None`` when it no longer holds all of
        it (the follower at ``seq`` is behind: :meth:`catch_up`)."""
        if seq < self._base:
            return None
        return self._window[bisect.bisect_right(self._window, seq, key=_seq) :]

    async def wait_past(self, seq: int) -> None:
        """Return once the window holds an entry after ``seq``, the task is gone, or after one
        poll; the poll waits for its time, shared by all followers.

        Cancellation is safe: an interrupted wait or poll changes nothing and keeps the next
        poll time (a keepalive timeout polls no sooner), and another follower polls instead.
        """
        async with self._polling:
            if self._read_through <= seq and not self.gone:
                await trio.sleep_until(self._next_poll)
                await self._poll()

    async def catch_up(self, after: int) -> list[LogEntry] | None:
        """What the store holds after ``after``, read for one follower behind the window
        (``[]`` while the store is unavailable; ``None``: the task is gone)."""
        try:
            return await self._read(after)
        except StoreUnavailableError as exc:
            self._unavailable(exc)
            return []

    async def _poll(self) -> None:
        """One look at the store for every follower."""
        try:
            found = await self._new_entries(self._read_through)
        except StoreUnavailableError as exc:
            self._unavailable(exc)
        else:
            self._outage = False
            if found is None:
                self.gone = True
            else:
                self._keep(found)
        self._next_poll = trio.current_time() + self.interval

    async def _new_entries(self, after: int) -> list[LogEntry] | None:
        """The entries after ``after`` (see :meth:`_read`), read only when the log's
        ``last_event_seq`` moved past it."""
        try:
            if await self._store.last_event_seq(self._scope, self._task_id) <= after:
                return []
        except TaskNotFoundError:
            return None
        return await self._read(after)

    async def _read(self, after: int) -> list[LogEntry] | None:
        """The entries after ``after``: the events, or where the store trimmed some of them a
        snapshot numbered after its log; ``None`` when the task is gone."""
        try:
            events = await self._store.load_events(self._scope, self._task_id, after_seq=after)
        except TaskNotFoundError:
            return None
        if events and events[0][0] == after + 1:
            return [LogEntry(seq, event) for seq, event in events]
        snapshot = await stored_snapshot(self._store, self._scope, self._task_id)
        if snapshot is None:
            return None
        return [snapshot] if snapshot.seq > after else []  # its log holds nothing after it

    def _keep(self, found: list[LogEntry]) -> None:
        """Add a poll's entries to the window, first dropping what every follower has taken
        and what is beyond the window's size."""
        taken = [f.after for f in self._followers if f.after >= self._base]
        drop = bisect.bisect_right(self._window, min(taken, default=math.inf), key=_seq)
        drop = max(drop, len(self._window) - SHARED_WINDOW)
        if drop:
            self._base = self._window[drop - 1].seq
            del self._window[:drop]
        if found:
            self._window.extend(found)
            self._read_through = found[-1].seq

    def _unavailable(self, exc: StoreUnavailableError) -> None:
        if not self._outage:
            logger.warning(
                "following task %s: the task store is unavailable, polling on: %s",
                self._task_id,
                exc,
            )
        self._outage = True


class StoreFollower:
    """The events a task's stored log gets after ``after``, with their stored numbers.

    A :class:`~a2a_trio.runtime.Subscription`'s counterpart for a task no job runs here.
    :meth:`receive` takes them from the task's shared :class:`FollowedTask`, which checks
    ``last_event_seq`` every ``interval`` seconds for all its followers and reads the events
    only when it moved.  Where the store no longer keeps every event after the last one
    delivered (its ``max_events_per_task`` trimmed them), a snapshot of the task, numbered
    after the stored log, comes instead and the events go on after it, so a client never gets
    an artifact chunk without its start.  The stream carrying it decides where it ends (a
    terminal state); a task deleted or purged meanwhile ends it.  While the store is
    unavailable it polls on (the outage is logged once per task), so the client's stream,
    kept open by its keepalives, resumes when the store is back.

    It counts among its task's followers from creation until it closes or the task is gone;
    ``stream``: it carries a client's stream (counted in ``follower_count``), not a blocking
    send waiting for the task to settle.
    """

    def __init__(self, task: FollowedTask, *, after: int, stream: bool = True) -> None:
        self.stream = stream
        self._task = task
        self._after = after
        self._pending: deque[LogEntry] = deque()
        self._next_catch_up = -math.inf
        self._ended = False
        task.join(self)

    @property
    def after(self) -> int:
        """The number of the last event taken (delivered, or queued to be)."""
        return self._after

    async def receive(self) -> LogEntry:
        """The next stored event, waiting for it; ``trio.EndOfChannel`` once the task is gone
        or the follower closed.

        Cancellation is safe: events taken are kept until delivered, and an interrupted wait
        keeps the task's next poll time (a keepalive timeout polls no sooner).
        """
        while not self._take():
            if self._task.entries_after(self._after) is None:
                await self._catch_up()
            else:
                await self._task.wait_past(self._after)
        await trio.lowlevel.checkpoint_if_cancelled()
        return self._pending.popleft()

    def receive_nowait(self) -> LogEntry | None:
        """The next event already read from the store, or ``None`` (never polls)."""
        return self._pending.popleft() if self._take() else None

    def close(self) -> None:
        """Stop following; synchronous so it is safe in a generator's cleanup."""
        self._end()
        self._pending.clear()

    def _take(self) -> bool:
        """Whether an event is queued, after queueing what the window holds past this
        follower; ``trio.EndOfChannel`` once none will come."""
        if not self._pending and not self._ended:
            taken = self._task.entries_after(self._after)
            if taken:
                self._pending.extend(taken)
                self._after = taken[-1].seq
            elif self._task.gone:
                self._end()
        if self._pending:
            return True
        if self._ended:
            raise trio.EndOfChannel
        return False

    async def _catch_up(self) -> None:
        """Read what follows from the store itself: the window no longer holds it.  At most
        once an interval, so a store that cannot bring it past the window is not hammered."""
        await trio.sleep_until(self._next_catch_up)
        found = await self._task.catch_up(self._after)
        self._next_catch_up = trio.current_time() + self._task.interval
        if found is None:
            self._end()
        elif found:
            self._pending.extend(found)
            self._after = found[-1].seq

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            self._task.leave(self)
