"""A stream at a replica that does not run the task follows it through the shared store.

Two runtimes (replicas) on one SQLite file or PostgreSQL schema: the task runs at ``a``, the
client's stream is at ``b``.  Before, ``b``'s stream was the stored snapshot (or the stored
events after the resume point) and then ended, the task still WORKING; with a current
``Last-Event-ID`` it ended at once, empty.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import attrs
import pytest
import trio
import trio.testing

from a2a_trio import Agent, TaskContext
from a2a_trio import model as m
from a2a_trio.errors import StoreUnavailableError
from a2a_trio.runtime import LogEntry, RuntimeConfig, TaskRuntime, TaskStream
from a2a_trio.store import (
    ANONYMOUS,
    CallerScope,
    Retention,
    StoredTask,
    TaskStore,
    open_store,
)
from runtime.streams import read_all

from .test_replicas import Held, Proxy, WrittenBetween, replica, two_stores
from .test_runtime import FAST, request

FOLLOW = attrs.evolve(FAST, follow_interval=0.02, recovery_lease=3600.0)
"""Quick store polls; a lease no test sees a tick of, so neither replica recovers the other's
running task."""

stepper = Agent("stepper", "A handler the test drives step by step", version="0")
scripts: dict[str, trio.MemoryReceiveChannel[str]] = {}


@stepper.skill(default=True)
async def stepped(ctx: TaskContext) -> str:
    """Each step the test sends is one write: ``update X``, ``chunk X`` (an appended chunk of
    artifact ``out``), ``ask`` (INPUT_REQUIRED until the follow-up); ``done`` completes."""
    chunks = 0
    async for step in scripts[ctx.text]:
        verb, _, text = step.partition(" ")
        if verb == "update":
            await ctx.update(text)
        elif verb == "chunk":
            append, chunks = chunks > 0, chunks + 1
            await ctx.emit_artifact(text, artifact_id="out", append=append, last_chunk=False)
        elif verb == "ask":
            await ctx.ask("more?")
        else:
            break
    return "done"


async def started(runtime: TaskRuntime) -> tuple[m.Task, trio.MemorySendChannel[str]]:
    """A new ``stepped`` task at ``runtime`` and the channel its steps go through."""
    text = f"script {m.new_id()}"
    steps, scripts[text] = trio.open_memory_channel[str](100)
    task = await runtime.send(ANONYMOUS, request(text, return_immediately=True))
    assert isinstance(task, m.Task)
    return task, steps


@asynccontextmanager
async def following_with[S](
    shared_url: str, wrap: Callable[[TaskStore], S]
) -> AsyncIterator[tuple[TaskRuntime, TaskRuntime, m.Task, trio.MemorySendChannel[str], S]]:
    """Replicas ``a`` and ``b`` on the shared store, ``b`` on ``wrap`` of its own store, a
    ``stepped`` task started at ``a``, the channel its steps go through and ``b``'s wrapper."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        wrapped = wrap(store_b)
        a = await replica(nursery, store_a, FOLLOW, agent=stepper)
        b = await replica(nursery, wrapped, FOLLOW, agent=stepper)
        task, steps = await started(a)
        yield a, b, task, steps, wrapped


@asynccontextmanager
async def following(
    shared_url: str,
) -> AsyncIterator[tuple[TaskRuntime, TaskRuntime, m.Task, trio.MemorySendChannel[str]]]:
    """Replicas ``a`` and ``b`` on the shared store, a ``stepped`` task started at ``a`` and
    the channel its steps go through."""
    async with following_with(shared_url, lambda store: store) as (a, b, task, steps, _store):
        yield a, b, task, steps


def pairs(entries: list[LogEntry]) -> list[tuple[int, m.StreamEvent]]:
    return [(entry.seq, entry.event) for entry in entries]


def state(entry: LogEntry) -> m.TaskState | None:
    event = entry.event
    return event.status.state if isinstance(event, m.Task | m.TaskStatusUpdateEvent) else None


async def step(steps: trio.MemorySendChannel[str], at_a: TaskStream, text: str) -> LogEntry:
    """Send ``text`` to the handler at ``a``; the event it wrote, from ``a``'s own stream."""
    await steps.send(text)
    return await at_a.receive()


async def test_a_subscription_at_another_replica_follows_the_task_to_its_end(
    shared_url: str,
) -> None:
    """Every event ``a`` emits reaches the subscriber at ``b`` while the task runs, in order,
    under ``a``'s numbers, to COMPLETED."""
    async with following(shared_url) as (a, b, task, steps):
        at_a = await a.subscribe(ANONYMOUS, task.id)
        at_b = await b.subscribe(ANONYMOUS, task.id)
        with trio.fail_after(5):
            head_a, head_b = await at_a.receive(), await at_b.receive()
            assert (head_b.seq, head_b.event) == (head_a.seq, task)
            for text in ("update one", "chunk two", "chunk three", "update four"):
                emitted = await step(steps, at_a, text)
                assert pairs([await at_b.receive()]) == pairs([emitted])
            await steps.send("done")
            rest_a, rest_b = await read_all(at_a), await read_all(at_b)
        assert pairs(rest_b) == pairs(rest_a)
        assert [type(entry.event) for entry in rest_b] == [
            m.TaskArtifactUpdateEvent,
            m.TaskStatusUpdateEvent,
        ]
        assert state(rest_b[-1]) is m.TaskState.COMPLETED
        logged = await a.store.load_events(ANONYMOUS, task.id)
        assert logged[-1] == pairs(rest_b)[-1]


class HeldSnapshot(Held):
    """Once ``armed``, holds the next ``load_task_with_seq`` after it read, until ``release``."""

    async def load_task_with_seq(
        self, scope: CallerScope, task_id: str
    ) -> tuple[StoredTask, int] | None:
        return await self.held(self.store.load_task_with_seq(scope, task_id))


async def test_the_snapshot_at_another_replica_holds_exactly_the_events_up_to_its_number(
    shared_url: str,
) -> None:
    """An event written while ``b``'s snapshot of the task is on its way: the snapshot holds
    exactly the events up to its number, and the stream goes on with that event after it.
    Before, the task read first was numbered with the newer event's number: that event was
    in neither."""
    async with following_with(shared_url, HeldSnapshot) as (a, b, task, steps, held):
        at_a = await a.subscribe(ANONYMOUS, task.id)
        streams: list[TaskStream] = []

        async def subscribe() -> None:
            streams.append(await b.subscribe(ANONYMOUS, task.id))

        with trio.fail_after(5):
            await at_a.receive()
            held.armed = True
            async with trio.open_nursery() as subscribing:
                subscribing.start_soon(subscribe)
                await held.holding.wait()  # b has read the task, not yet its number
                written = await step(steps, at_a, "chunk meanwhile")
                held.release.set()
            head = await streams[0].receive()
            await steps.send("done")
            rest_a, rest_b = await read_all(at_a), await read_all(streams[0])
        assert head.seq == written.seq - 1
        assert isinstance(head.event, m.Task)
        assert head.event.artifacts == ()  # the chunk is not in the snapshot: it comes next
        assert pairs(rest_b) == pairs([written, *rest_a])


async def test_a_subscription_at_another_replica_gets_its_head_while_the_task_writes_on(
    shared_url: str,
) -> None:
    """The replica running the task writes it after each of ``b``'s reads of the task's last
    event number (a streaming task written more often than a busy store's round trip):
    ``b``'s snapshot still comes, holding exactly the events up to its number, and the
    stream goes on after it.  Before, ``b`` read the number before and after the task until
    both agreed, which they never did: the subscription never got its head (under chaos:
    4 to 17 s, and the client's read timeout)."""
    async with following_with(shared_url, WrittenBetween) as (a, b, task, steps, between):
        at_a = await a.subscribe(ANONYMOUS, task.id)
        emitted: list[LogEntry] = []

        async def chunk() -> None:
            emitted.append(await step(steps, at_a, f"chunk {len(emitted)}"))

        with trio.fail_after(5):
            emitted.append(await at_a.receive())
            await chunk()
            between.between = chunk
            at_b = await b.subscribe(ANONYMOUS, task.id)
            head = await at_b.receive()
            between.between = None
            await steps.send("done")
            rest_a, rest_b = await read_all(at_a), await read_all(at_b)
        assert isinstance(head.event, m.Task)
        held = [entry.event for entry in emitted if 1 < entry.seq <= head.seq]
        assert [part.text for part in head.event.artifacts[0].parts] == [
            event.artifact.parts[0].text
            for event in held
            if isinstance(event, m.TaskArtifactUpdateEvent)
        ]
        assert pairs(rest_b) == pairs([e for e in [*emitted, *rest_a] if e.seq > head.seq])


async def test_a_resume_at_another_replica_with_the_current_id_waits_for_the_next_event(
    shared_url: str,
) -> None:
    async with following(shared_url) as (a, b, task, steps):
        at_a = await a.subscribe(ANONYMOUS, task.id)
        with trio.fail_after(5):
            await at_a.receive()  # the task: "seen" is the update, not this head
            seen = await step(steps, at_a, "update seen")
            resumed = await b.subscribe(ANONYMOUS, task.id, last_event_id=seen.seq)
            assert resumed.receive_nowait() is None  # open, nothing yet (before: ended)
            emitted = await step(steps, at_a, "update next")
            assert pairs([await resumed.receive()]) == pairs([emitted])
            await steps.send("done")
            assert pairs(await read_all(resumed)) == pairs(await read_all(at_a))


async def test_a_resume_at_another_replica_replays_then_follows(shared_url: str) -> None:
    async with following(shared_url) as (a, b, task, steps):
        at_a = await a.subscribe(ANONYMOUS, task.id, last_event_id=0)
        with trio.fail_after(5):
            first = await at_a.receive()  # the task, event 1
            missed = [await step(steps, at_a, text) for text in ("update 1", "chunk 2")]
            resumed = await b.subscribe(ANONYMOUS, task.id, last_event_id=first.seq)
            replayed = [await resumed.receive() for _ in missed]
            assert pairs(replayed) == pairs(missed)
            emitted = await step(steps, at_a, "chunk 3")
            assert pairs([await resumed.receive()]) == pairs([emitted])
            await steps.send("done")
            assert pairs(await read_all(resumed)) == pairs(await read_all(at_a))


async def test_events_the_store_trimmed_before_the_follower_read_them_come_as_a_snapshot(
    shared_url: str,
) -> None:
    """The store keeps the newest two events: the subscriber at ``b``, not reading while ``a``
    writes four, gets the task as stored (numbered after its log) and then the events after
    it, never the chunks without their start."""
    async with (
        open_store(shared_url, retention=Retention(max_events_per_task=2)) as store_a,
        open_store(shared_url, retention=Retention(max_events_per_task=2)) as store_b,
        trio.open_nursery() as nursery,
    ):
        a = await replica(nursery, store_a, FOLLOW, agent=stepper)
        b = await replica(nursery, store_b, FOLLOW, agent=stepper)
        task, steps = await started(a)
        at_a = await a.subscribe(ANONYMOUS, task.id)
        at_b = await b.subscribe(ANONYMOUS, task.id)
        with trio.fail_after(5):
            assert (await at_b.receive()).event == task
            await at_a.receive()
            written = [await step(steps, at_a, f"chunk {n}") for n in range(4)]
            snapshot = await at_b.receive()
            assert isinstance(snapshot.event, m.Task)
            assert snapshot.seq == written[-1].seq
            assert snapshot.event.artifacts[0].parts == tuple(m.TextPart(f"{n}") for n in range(4))
            emitted = await step(steps, at_a, "update after")
            assert pairs([await at_b.receive()]) == pairs([emitted])
            await steps.send("done")
            assert pairs(await read_all(at_b)) == pairs(await read_all(at_a))
        nursery.cancel_scope.cancel()


async def test_a_cancel_at_the_running_replica_ends_the_followers_stream(
    shared_url: str,
) -> None:
    async with following(shared_url) as (a, b, task, steps):
        at_a = await a.subscribe(ANONYMOUS, task.id)
        at_b = await b.subscribe(ANONYMOUS, task.id)
        with trio.fail_after(5):
            await at_a.receive()
            await step(steps, at_a, "update working")
            canceled = await a.cancel(ANONYMOUS, task.id)
            local, followed = await read_all(at_a), await read_all(at_b)
        assert pairs(followed)[-1] == pairs(local)[-1]
        last = followed[-1].event
        assert isinstance(last, m.TaskStatusUpdateEvent) and last.status == canceled.status
        assert b.statistics().running_jobs == 0


async def test_a_task_deleted_while_followed_ends_the_stream(shared_url: str) -> None:
    async with following(shared_url) as (a, b, task, steps):
        at_a = await a.subscribe(ANONYMOUS, task.id)
        at_b = await b.subscribe(ANONYMOUS, task.id)
        with trio.fail_after(5):
            assert (await at_b.receive()).event == task
            await at_a.receive()
            emitted = await step(steps, at_a, "update followed")
            assert pairs([await at_b.receive()]) == pairs([emitted])
            assert await a.store.delete_task(ANONYMOUS, task.id)  # what a purge does
            assert await read_all(at_b) == []  # it ends, without an error


async def test_a_follower_stays_through_input_required_as_the_running_replicas_stream(
    shared_url: str,
) -> None:
    """A SubscribeToTask stream ends at a terminal state only, on either replica; a follow-up
    sent to ``b`` re-runs the skill there, and the follower, reading the store, gets that
    job's events once each."""
    async with following(shared_url) as (a, b, task, steps):
        at_a = await a.subscribe(ANONYMOUS, task.id)
        at_b = await b.subscribe(ANONYMOUS, task.id)
        with trio.fail_after(5):
            head = await at_b.receive()
            await at_a.receive()
            asked = await step(steps, at_a, "ask")
            assert state(asked) is m.TaskState.INPUT_REQUIRED
            assert pairs([await at_b.receive()]) == pairs([asked])
            assert at_b.receive_nowait() is None  # still open
            # The follow-up at ``b`` re-runs the skill there (``a``'s job is superseded); the
            # re-run's text is the follow-up's, so it gets a script of its own: it completes.
            answer = f"answer {m.new_id()}"
            no_steps, scripts[answer] = trio.open_memory_channel[str](0)
            no_steps.close()
            follow_up = m.text_message(answer, task_id=task.id)
            done = await b.send(ANONYMOUS, m.SendMessageRequest(follow_up))
            assert isinstance(done, m.Task) and done.status.state is m.TaskState.COMPLETED
            followed = await read_all(at_b)
        logged = await a.store.load_events(ANONYMOUS, task.id, after_seq=asked.seq)
        assert pairs(followed) == list(logged)
        assert state(followed[-1]) is m.TaskState.COMPLETED
        assert head.seq < asked.seq


async def test_a_cancelled_receive_loses_no_event_and_leaves_nothing_running(
    shared_url: str,
) -> None:
    """The follower polls inside ``receive``: cancelling it at any point (as a keepalive
    timeout or a client gone does) loses nothing, and the subscriber's nursery closes with no
    task of the follower left behind."""
    async with following(shared_url) as (a, b, task, steps):
        at_a = await a.subscribe(ANONYMOUS, task.id)
        at_b = await b.subscribe(ANONYMOUS, task.id)
        await at_a.receive()
        await at_b.receive()
        received: list[LogEntry] = []
        all_in = trio.Event()
        with trio.fail_after(10):
            async with trio.open_nursery() as subscriber:

                async def impatient() -> None:  # gives up on most waits after a few ms
                    for n in itertools.count():
                        with trio.move_on_after((0.001, 0.004, 0.05)[n % 3]):
                            received.append(await at_b.receive())
                            if len(received) == 20:
                                all_in.set()

                subscriber.start_soon(impatient)
                emitted = [await step(steps, at_a, f"chunk {n}") for n in range(20)]
                await all_in.wait()
                subscriber.cancel_scope.cancel()
        assert pairs(received) == pairs(emitted)
        await steps.send("done")
        with trio.fail_after(5):
            assert state((await read_all(at_b))[-1]) is m.TaskState.COMPLETED


class Outage(Proxy):
    """Unavailable while ``down``; ``failed`` is set once a call was refused."""

    down = False

    def __init__(self, store: TaskStore) -> None:
        super().__init__(store)
        self.failed = trio.Event()

    async def last_event_seq(self, scope: CallerScope, task_id: str) -> int:
        if self.down:
            self.failed.set()
            raise StoreUnavailableError("the database is restarting")
        return await self.store.last_event_seq(scope, task_id)


async def test_a_store_outage_while_following_waits_for_the_store(
    shared_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The follower polls on through an outage (logged once) and delivers what was written
    meanwhile when the store is back; the stream neither fails nor ends."""
    async with following_with(shared_url, Outage) as (a, b, task, steps, outage):
        at_a = await a.subscribe(ANONYMOUS, task.id)
        at_b = await b.subscribe(ANONYMOUS, task.id)
        received: list[LogEntry] = []
        with trio.fail_after(5):
            await at_a.receive()
            await at_b.receive()
            async with trio.open_nursery() as reading:

                async def read() -> None:
                    received.extend(await read_all(at_b))

                reading.start_soon(read)
                outage.down = True
                for _ in range(3):  # three refused polls
                    outage.failed = trio.Event()
                    await outage.failed.wait()
                emitted = [await step(steps, at_a, "update meanwhile")]
                outage.down = False
                await steps.send("done")
                emitted += await read_all(at_a)
        assert pairs(received) == pairs(emitted)
        warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1 and "the task store is unavailable" in warnings[0]


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("inf"), float("nan")])
def test_the_follow_interval_must_be_positive_and_finite(seconds: float) -> None:
    with pytest.raises(ValueError, match="follow_interval must be a positive number"):
        RuntimeConfig(follow_interval=seconds)
