"""The streams following one task through the store at a replica share its polls.

Two replicas on one SQLite file or PostgreSQL schema, the task running at ``a``, its followers
at ``b`` on a store that counts the reads.  The clock stands still until a test moves it one
``follow_interval`` on: each move is one poll time.  Before, each stream polled on its own: 50
streams were 50 ``last_event_seq`` reads per interval and 50 ``load_events`` per new event.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

import attrs
import pytest
import trio
import trio.testing

from a2a_trio import model as m
from a2a_trio.runtime import LogEntry, TaskRuntime, TaskStream, _follow
from a2a_trio.runtime._follow import FollowedTask, StoreFollower
from a2a_trio.store import (
    ANONYMOUS,
    DEFAULT_RETENTION,
    CallerScope,
    Retention,
    SequencedEvent,
    StoredTask,
    TaskStore,
    open_store,
)
from runtime.streams import read_all

from .test_follow import FOLLOW, Outage, pairs, started, step, stepper
from .test_replicas import Proxy, replica

FOLLOWERS = 50
INTERVAL = FOLLOW.follow_interval


class Counting(Proxy):
    """A real store counting the reads followers make (``load_events`` by ``after_seq``)."""

    def __init__(self, store: TaskStore) -> None:
        super().__init__(store)
        self.calls = Counter[str]()
        self.read_after: list[int] = []

    async def last_event_seq(self, scope: CallerScope, task_id: str) -> int:
        self.calls["last_event_seq"] += 1
        return await self.store.last_event_seq(scope, task_id)

    async def load_events(
        self, scope: CallerScope, task_id: str, *, after_seq: int = 0
    ) -> tuple[SequencedEvent, ...]:
        self.calls["load_events"] += 1
        self.read_after.append(after_seq)
        return await self.store.load_events(scope, task_id, after_seq=after_seq)

    async def load_task(self, *args: Any, **kwargs: Any) -> StoredTask | None:
        self.calls["load_task"] += 1
        return await self.store.load_task(*args, **kwargs)

    async def load_task_with_seq(
        self, scope: CallerScope, task_id: str
    ) -> tuple[StoredTask, int] | None:
        self.calls["load_task_with_seq"] += 1
        return await self.store.load_task_with_seq(scope, task_id)

    def reset(self) -> None:
        self.calls.clear()
        self.read_after.clear()


class HeldRead(Counting):
    """Once ``armed``, holds the next ``load_events`` after it read, in the task that called it
    (``holder``), until that task is cancelled."""

    armed = False

    def __init__(self, store: TaskStore) -> None:
        super().__init__(store)
        self.holding = trio.Event()
        self.holder: trio.lowlevel.Task | None = None

    async def load_events(
        self, scope: CallerScope, task_id: str, *, after_seq: int = 0
    ) -> tuple[SequencedEvent, ...]:
        events = await super().load_events(scope, task_id, after_seq=after_seq)
        if self.armed:
            self.armed = False
            self.holder = trio.lowlevel.current_task()
            self.holding.set()
            await trio.sleep_forever()
        return events


@attrs.define
class Readers:
    """Streams read in the background, each into its own list, each in its own cancel scope."""

    nursery: trio.Nursery
    received: list[list[LogEntry]] = attrs.field(factory=list)
    scopes: list[trio.CancelScope] = attrs.field(factory=list)
    tasks: list[trio.lowlevel.Task | None] = attrs.field(factory=list)
    moved: trio.Event = attrs.field(factory=trio.Event)

    def read(self, streams: Iterable[TaskStream]) -> None:
        for stream in streams:
            self.received.append([])
            self.scopes.append(trio.CancelScope())
            self.tasks.append(None)
            self.read_again(len(self.received) - 1, stream)

    def read_again(self, index: int, stream: TaskStream) -> None:
        """Go on reading stream ``index`` (its reader was cancelled) into the same list."""
        self.scopes[index] = trio.CancelScope()
        self.nursery.start_soon(self._read, index, stream)

    async def _read(self, index: int, stream: TaskStream) -> None:
        self.tasks[index] = trio.lowlevel.current_task()
        with self.scopes[index]:
            while True:
                try:
                    entry = await stream.receive()
                except trio.EndOfChannel:
                    return
                self.received[index].append(entry)
                self.moved.set()

    async def until_each_has(self, count: int, readers: Iterable[int] | None = None) -> None:
        """Wait until each stream (of ``readers``, by default all) has ``count`` entries."""
        lists = self.received if readers is None else [self.received[n] for n in readers]
        while min(len(entries) for entries in lists) < count:
            self.moved = trio.Event()
            await self.moved.wait()


@asynccontextmanager
async def followed[P: Proxy](
    shared_url: str, wrap: Callable[[TaskStore], P], retention: Retention = DEFAULT_RETENTION
) -> AsyncIterator[tuple[TaskRuntime, m.Task, trio.MemorySendChannel[str], TaskStream, P]]:
    """Replicas ``a`` and ``b`` on the shared store, ``b``'s wrapped in ``wrap``; yields
    ``b``, a ``stepped`` task started at ``a``, its steps' channel, ``a``'s own stream of it
    (its head read) and ``b``'s wrapped store."""
    async with (
        open_store(shared_url, retention=retention) as store_a,
        open_store(shared_url, retention=retention) as store_b,
        trio.open_nursery() as nursery,
    ):
        wrapped = wrap(store_b)
        b = await replica(nursery, wrapped, FOLLOW, agent=stepper)  # type: ignore[arg-type]
        a = await replica(nursery, store_a, FOLLOW, agent=stepper)
        task, steps = await started(a)
        at_a = await a.subscribe(ANONYMOUS, task.id)
        await at_a.receive()
        yield b, task, steps, at_a, wrapped
        nursery.cancel_scope.cancel()


async def subscribed(b: TaskRuntime, task: m.Task, count: int) -> list[TaskStream]:
    """``count`` SubscribeToTask streams at ``b``, their heads (the task) read."""
    streams = [await b.subscribe(ANONYMOUS, task.id) for _ in range(count)]
    for stream in streams:
        assert (await stream.receive()).event == task
    return streams


async def polled(clock: trio.testing.MockClock, readers: Readers, count: int) -> None:
    """Move the clock to the next poll time; wait until every stream has ``count`` entries."""
    clock.jump(INTERVAL)
    await readers.until_each_has(count)


async def test_the_followers_of_a_task_share_one_poll_and_one_read_per_batch(
    shared_url: str, mock_clock: trio.testing.MockClock
) -> None:
    """50 streams of one task at ``b`` get the same events, all of them, in order, while ``b``
    reads ``last_event_seq`` once per poll time and the events once per new batch."""
    async with followed(shared_url, Counting) as (b, task, steps, at_a, counting):
        streams = await subscribed(b, task, FOLLOWERS)
        assert b.statistics().store_followers == FOLLOWERS
        counting.reset()
        emitted: list[LogEntry] = []
        async with trio.open_nursery() as nursery:
            readers = Readers(nursery)
            readers.read(streams)
            for text in ("update one", "chunk two", "chunk three", "update four"):
                emitted.append(await step(steps, at_a, text))
                await polled(mock_clock, readers, len(emitted))
            await steps.send("done")
            emitted += await read_all(at_a)
            mock_clock.jump(INTERVAL)  # the readers end with the task
        assert b.statistics().store_followers == 0
    assert all(pairs(received) == pairs(emitted) for received in readers.received)
    assert counting.calls == {"last_event_seq": 5, "load_events": 5}  # before: 250 each


async def test_followers_joining_late_or_resuming_from_an_older_id_share_the_polls_after(
    shared_url: str, mock_clock: trio.testing.MockClock
) -> None:
    """A stream subscribed after events went by, and one resuming from an older id (its
    replay read on its own), join the others' polls; each gets every event once, in order."""
    async with followed(shared_url, Counting) as (b, task, steps, at_a, counting):
        early = await subscribed(b, task, 10)
        async with trio.open_nursery() as nursery:
            readers = Readers(nursery)
            readers.read(early)
            emitted = [await step(steps, at_a, f"chunk {n}") for n in range(3)]
            await polled(mock_clock, readers, 3)
            late = await b.subscribe(ANONYMOUS, task.id)
            resumed = await b.subscribe(ANONYMOUS, task.id, last_event_id=emitted[0].seq)
            head = await late.receive()
            assert head.seq == emitted[-1].seq
            readers.read([late, resumed])
            await readers.until_each_has(2, readers=[11])  # the replay
            counting.reset()
            emitted.append(await step(steps, at_a, "update after"))
            mock_clock.jump(INTERVAL)
            await readers.until_each_has(4, readers=range(10))
            await readers.until_each_has(1, readers=[10])
            await readers.until_each_has(3, readers=[11])
            assert counting.calls == {"last_event_seq": 1, "load_events": 1}  # before: 12
            await steps.send("done")
            emitted += await read_all(at_a)
            mock_clock.jump(INTERVAL)
    assert all(pairs(received) == pairs(emitted) for received in readers.received[:10])
    assert pairs(readers.received[10]) == pairs(emitted[3:])
    assert pairs(readers.received[11]) == pairs(emitted[1:])


async def test_a_follower_behind_the_window_reads_its_own_catch_up_then_shares(
    shared_url: str, mock_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window keeps only what some follower has yet to take (here at most two older
    entries): a follower from an older number, or one that stopped reading, is behind it and
    reads what it missed from the store itself, once, then takes from the window again."""
    monkeypatch.setattr(_follow, "SHARED_WINDOW", 2)
    async with followed(shared_url, Counting) as (_, task, steps, at_a, counting):
        unfollowed = trio.Event()
        shared = FollowedTask(
            counting,
            ANONYMOUS,
            task.id,
            after=1,
            interval=INTERVAL,
            on_unfollowed=unfollowed.set,
        )
        first, slow = StoreFollower(shared, after=1), StoreFollower(shared, after=1)
        emitted = [await step(steps, at_a, f"chunk {n}") for n in range(2)]
        mock_clock.jump(INTERVAL)
        assert pairs([await first.receive() for _ in emitted]) == pairs(emitted)
        for batch in range(3):
            emitted += [await step(steps, at_a, f"update {batch} {n}") for n in range(2)]
            mock_clock.jump(INTERVAL)
            assert pairs([await first.receive() for _ in range(2)]) == pairs(emitted[-2:])
        assert shared.entries_after(1) is None  # dropped, though ``slow`` has not read them
        joining = StoreFollower(shared, after=emitted[0].seq)  # an older number
        counting.reset()
        caught_up = [await slow.receive() for _ in emitted]
        joined = [await joining.receive() for _ in emitted[1:]]
        assert counting.read_after == [1, emitted[0].seq]  # each catch-up, nothing else
        emitted.append(await step(steps, at_a, "update shared"))
        mock_clock.jump(INTERVAL)
        for follower in (first, slow, joining):
            assert pairs([await follower.receive()]) == pairs(emitted[-1:])
        assert counting.read_after == [1, emitted[0].seq, emitted[-2].seq]
        for follower in (first, slow, joining):
            assert not unfollowed.is_set()
            follower.close()
        assert unfollowed.is_set()
    assert pairs(caught_up) == pairs(emitted[:-1])
    assert pairs(joined) == pairs(emitted[1:-1])


async def test_a_follower_cancelled_in_the_shared_poll_loses_nothing_for_anyone(
    shared_url: str, mock_clock: trio.testing.MockClock
) -> None:
    """The follower polling for the others is cancelled in the middle of its read: another
    one polls instead, the others get the event, and the cancelled one gets it when it
    receives again, once."""
    async with followed(shared_url, HeldRead) as (b, task, steps, at_a, held):
        streams = await subscribed(b, task, 10)
        async with trio.open_nursery() as nursery:
            readers = Readers(nursery)
            readers.read(streams)
            emitted = [await step(steps, at_a, "update held")]
            held.armed = True
            mock_clock.jump(INTERVAL)
            await held.holding.wait()
            cancelled = readers.tasks.index(held.holder)
            readers.scopes[cancelled].cancel()
            others = [n for n in range(10) if n != cancelled]
            await readers.until_each_has(1, readers=others)
            assert readers.received[cancelled] == []
            readers.read_again(cancelled, streams[cancelled])
            await readers.until_each_has(1)
            emitted.append(await step(steps, at_a, "update after"))
            await polled(mock_clock, readers, 2)
            await steps.send("done")
            emitted += await read_all(at_a)
            mock_clock.jump(INTERVAL)
    assert all(pairs(received) == pairs(emitted) for received in readers.received)


async def test_trimmed_events_come_to_every_follower_as_one_snapshot(
    shared_url: str, mock_clock: trio.testing.MockClock
) -> None:
    """The store keeps the newest two events; four written between two polls come to each
    follower as the same snapshot, read once, and the events go on after it."""
    retention = Retention(max_events_per_task=2)
    async with followed(shared_url, Counting, retention) as (b, task, steps, at_a, counting):
        streams = await subscribed(b, task, 10)
        async with trio.open_nursery() as nursery:
            readers = Readers(nursery)
            readers.read(streams)
            written = [await step(steps, at_a, f"chunk {n}") for n in range(4)]
            counting.reset()
            await polled(mock_clock, readers, 1)
            assert counting.calls["load_task_with_seq"] == 1  # before: one per follower
            emitted = [await step(steps, at_a, "update after")]
            await polled(mock_clock, readers, 2)
            await steps.send("done")
            emitted += await read_all(at_a)
            mock_clock.jump(INTERVAL)
    for received in readers.received:
        snapshot = received[0]
        assert isinstance(snapshot.event, m.Task)
        assert snapshot.seq == written[-1].seq
        assert snapshot.event.artifacts[0].parts == tuple(m.TextPart(f"{n}") for n in range(4))
        assert pairs(received[1:]) == pairs(emitted)


async def test_an_outage_is_logged_once_for_all_followers_of_the_task(
    shared_url: str, mock_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    """Ten streams through three refused polls: one warning (before: one per stream), and the
    event written meanwhile reaches each when the store is back."""
    async with followed(shared_url, Outage) as (b, task, steps, at_a, outage):
        streams = await subscribed(b, task, 10)
        async with trio.open_nursery() as nursery:
            readers = Readers(nursery)
            readers.read(streams)
            outage.down = True
            for _ in range(3):
                outage.failed = trio.Event()
                mock_clock.jump(INTERVAL)
                await outage.failed.wait()
            emitted = [await step(steps, at_a, "update meanwhile")]
            outage.down = False
            await polled(mock_clock, readers, 1)
            await steps.send("done")
            emitted += await read_all(at_a)
            mock_clock.jump(INTERVAL)
    assert all(pairs(received) == pairs(emitted) for received in readers.received)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "the task store is unavailable" in warnings[0]


async def test_a_task_deleted_while_shared_ends_every_followers_stream(
    shared_url: str, mock_clock: trio.testing.MockClock
) -> None:
    async with followed(shared_url, Counting) as (b, task, _steps, _at_a, counting):
        streams = await subscribed(b, task, 10)
        async with trio.open_nursery() as nursery:
            readers = Readers(nursery)
            readers.read(streams)
            assert await counting.store.delete_task(ANONYMOUS, task.id)
            mock_clock.jump(INTERVAL)  # each reader ends, without an error
        assert readers.received == [[] for _ in streams]
        assert b.statistics().store_followers == 0
