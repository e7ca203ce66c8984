"""Two runtimes (replicas) on one SQLite file or PostgreSQL schema, with a recovery lease.

The lease is real time (the store stamps its writes with the wall clock), so it is short; the
tests wait on events and streams, never for a fixed time.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio
import trio.testing
from server import agents

from a2a_trio import Agent, TaskContext
from a2a_trio import model as m
from a2a_trio.errors import StoreUnavailableError, UnsupportedOperationError
from a2a_trio.runtime import RuntimeConfig, TaskRuntime, TaskStream
from a2a_trio.store import (
    ANONYMOUS,
    CallerScope,
    MemoryTaskStore,
    SequencedEvent,
    StoredTask,
    TaskAtVersion,
    TaskStore,
    TaskUpdate,
    open_store,
)
from runtime.streams import read_all

from .test_runtime import FAST, drain, request

LEASED = attrs.evolve(FAST, recovery_lease=0.3, follow_interval=0.02)
LONG = attrs.evolve(FAST, recovery_lease=3600.0, follow_interval=0.02)
"""A lease no test sees a tick of: a job that stops, stops because of its own write."""

lost = Agent("lost jobs", "Handlers whose task moves on elsewhere while they run", version="0")


@attrs.define
class Run:
    """One run of the ``late`` skill: where it is, and what its late write met."""

    write: str
    """``update``, ``artifact``, or ``result`` (no write: it returns, its result is the write)."""
    at_gate: trio.Event = attrs.field(factory=trio.Event)
    gate: trio.Event = attrs.field(factory=trio.Event)
    ended: trio.Event = attrs.field(factory=trio.Event)
    task_id: str = ""
    met: BaseException | None = None


runs: dict[str, Run] = {}


@lost.skill(default=True)
async def late(ctx: TaskContext) -> str:
    """Report progress, wait at the gate, then write once more (or just return)."""
    run = runs[ctx.text]
    await ctx.update("working")
    run.task_id = ctx.task_id
    run.at_gate.set()
    await run.gate.wait()
    try:
        if run.write == "update":
            await ctx.update("late")
        elif run.write == "artifact":
            await ctx.emit_artifact("late")
    except BaseException as exc:
        run.met = exc
        raise
    finally:
        run.ended.set()
    return "done"


@attrs.define
class Quiet:
    """The runs of the ``quiet`` skill for one text (the first, then a re-run): when each
    handler started and when it ended."""

    started: tuple[trio.Event, ...] = attrs.field(factory=lambda: (trio.Event(), trio.Event()))
    ended: tuple[trio.Event, ...] = attrs.field(factory=lambda: (trio.Event(), trio.Event()))
    runs: int = 0


quiet_runs: dict[str, Quiet] = {}


@lost.skill(resumable=True)
async def quiet(ctx: TaskContext) -> str:
    """Resumable, and silent: waits (for good) without writing anything."""
    runs = quiet_runs[ctx.text]
    number, runs.runs = runs.runs, runs.runs + 1
    runs.started[number].set()
    try:
        await trio.sleep_forever()
    finally:
        runs.ended[number].set()
    return "never"


@attrs.define
class Chatty:
    """A ``chatty`` run: at its gate after a first update; once let through, it writes again
    (``wrote``), then waits for good."""

    at_gate: trio.Event = attrs.field(factory=trio.Event)
    gate: trio.Event = attrs.field(factory=trio.Event)
    wrote: trio.Event = attrs.field(factory=trio.Event)
    ended: trio.Event = attrs.field(factory=trio.Event)


chatty_runs: dict[str, Chatty] = {}


@lost.skill()
async def chatty(ctx: TaskContext) -> str:
    """Writes while another replica is cancelling its task (see ``Chatty``)."""
    run = chatty_runs[ctx.text]
    try:
        await ctx.update("working")
        run.at_gate.set()
        await run.gate.wait()
        await ctx.emit_artifact("a chunk")
        run.wrote.set()
        await trio.sleep_forever()
    finally:
        run.ended.set()
    return "never"


@attrs.define
class Streaming:
    """A ``streaming`` run: the test sends it one event per chunk to write, which it sets
    once that write is over (stored, or refused)."""

    steps: tuple[trio.MemorySendChannel[trio.Event], trio.MemoryReceiveChannel[trio.Event]] = (
        attrs.field(factory=lambda: trio.open_memory_channel[trio.Event](100))
    )
    at_gate: trio.Event = attrs.field(factory=trio.Event)
    ended: trio.Event = attrs.field(factory=trio.Event)
    chunks: int = 0

    async def write_one(self) -> None:
        """Have the handler write one chunk, and wait until it did (or it has ended)."""
        if self.ended.is_set():
            return
        done = trio.Event()
        await self.steps[0].send(done)
        async with trio.open_nursery() as waiting:
            for event in (done, self.ended):
                waiting.start_soon(_set_then_cancel, event, waiting.cancel_scope)


async def _set_then_cancel(event: trio.Event, scope: trio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


streaming_runs: dict[str, Streaming] = {}


@lost.skill()
async def streaming(ctx: TaskContext) -> str:
    """Streams a chunk of artifact ``out`` whenever its test says (see ``Streaming``)."""
    run = streaming_runs[ctx.text]
    try:
        await ctx.update("working")
        run.at_gate.set()
        async for done in run.steps[1]:
            try:
                await ctx.emit_artifact("chunk", artifact_id="out", append=run.chunks > 0)
                run.chunks += 1
            finally:
                done.set()
    finally:
        run.ended.set()
    return "never"


@asynccontextmanager
async def two_stores(url: str) -> AsyncIterator[tuple[TaskStore, TaskStore, trio.Nursery]]:
    """Two stores on one database (two replicas' own), and a nursery for their runtimes,
    cancelled at the end."""
    async with (
        open_store(url) as store_a,
        open_store(url) as store_b,
        trio.open_nursery() as nursery,
    ):
        yield store_a, store_b, nursery
        nursery.cancel_scope.cancel()


async def replica(
    nursery: trio.Nursery,
    store: TaskStore,
    config: RuntimeConfig = LEASED,
    *,
    agent: Agent = agents.agent,
) -> TaskRuntime:
    """A runtime (a replica) on ``store``, running in ``nursery``."""
    runtime = TaskRuntime(agent, store, config)
    await nursery.start(runtime.run)
    return runtime


class Proxy:
    """A real store, with the calls a test watches or holds overridden in subclasses."""

    def __init__(self, store: TaskStore) -> None:
        self.store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


class Touches(Proxy):
    """Tells when a lease refresh has been written: a touch (before: an empty update)."""

    def __init__(self, store: TaskStore) -> None:
        super().__init__(store)
        self.touched = trio.Event()

    async def touch_task(self, scope: CallerScope, task_id: str, *, expected_version: int) -> bool:
        touched = await self.store.touch_task(scope, task_id, expected_version=expected_version)
        self.touched.set()
        return touched

    async def touch_tasks(self, tasks: Collection[TaskAtVersion]) -> set[TaskAtVersion]:
        touched = await self.store.touch_tasks(tasks)
        if tasks:
            self.touched.set()
        return touched

    async def update_task(
        self, scope: CallerScope, task_id: str, update: TaskUpdate, **kwargs: Any
    ) -> StoredTask:
        stored = await self.store.update_task(scope, task_id, update, **kwargs)
        if update == TaskUpdate():
            self.touched.set()
        return stored


class Held(Proxy):
    """Once ``armed``, holds the next read a subclass passes to :meth:`held` after it read,
    until ``release``."""

    def __init__(self, store: TaskStore) -> None:
        super().__init__(store)
        self.armed = False
        self.holding = trio.Event()
        self.release = trio.Event()

    async def held[T](self, read: Awaitable[T]) -> T:
        result = await read
        if self.armed:
            self.armed = False
            self.holding.set()
            await self.release.wait()
        return result


class HeldLoad(Held):
    """Once ``armed``, holds the next ``load_task`` after it read, until ``release``."""

    async def load_task(self, *args: Any, **kwargs: Any) -> StoredTask | None:
        return await self.held(self.store.load_task(*args, **kwargs))


class CutOff(Proxy):
    """A replica whose lease refreshes cannot reach the database while ``cut``, until another
    replica has written its task (taken it over)."""

    cut = False

    async def touch_task(self, scope: CallerScope, task_id: str, *, expected_version: int) -> bool:
        await self._reachable([TaskAtVersion(scope, task_id, expected_version)])
        return await self.store.touch_task(scope, task_id, expected_version=expected_version)

    async def touch_tasks(self, tasks: Collection[TaskAtVersion]) -> set[TaskAtVersion]:
        await self._reachable(tasks)
        return await self.store.touch_tasks(tasks)

    async def _reachable(self, tasks: Collection[TaskAtVersion]) -> None:
        """Raise while ``cut``, unless no task is still as this replica last wrote it."""
        if self.cut:
            for task in tasks:
                if await self.store.task_version(task.scope, task.task_id) == task.version:
                    raise StoreUnavailableError("the database link hangs")


class WrittenBetween(Proxy):
    """Runs ``between`` (the replica running the task writes it) each time ``last_event_seq``
    has read, before it returns: a cancel here always reads the task before that write and
    writes after it."""

    between: Callable[[], Awaitable[None]] | None = None

    async def last_event_seq(self, scope: CallerScope, task_id: str) -> int:
        seq = await self.store.last_event_seq(scope, task_id)
        if self.between is not None:
            await self.between()
        return seq


class NoLogReads(Proxy):
    """Refuses to read a task's whole event log."""

    async def load_events(self, *args: Any, **kwargs: Any) -> tuple[SequencedEvent, ...]:
        raise AssertionError("the whole event log was read")


async def cancel_held_while(
    runtime: TaskRuntime, held: HeldLoad, task_id: str, between: Callable[[], Awaitable[None]]
) -> m.Task:
    """``runtime``'s CancelTask of ``task_id``, held just after it read the task while
    ``between`` runs (the replica running the task writes or touches it meanwhile)."""
    canceled: list[m.Task] = []

    async def cancel() -> None:
        canceled.append(await runtime.cancel(ANONYMOUS, task_id))

    held.armed = True
    async with trio.open_nursery() as cancelling:
        cancelling.start_soon(cancel)
        await held.holding.wait()
        await between()
        held.release.set()
    return canceled[0]


async def started(runtime: TaskRuntime, text: str, skill: str) -> m.Task:
    """A new task of ``skill``, as soon as it is stored."""
    task = await runtime.send(ANONYMOUS, request(text, skill, return_immediately=True))
    assert isinstance(task, m.Task)
    return task


async def at_gate(runtime: TaskRuntime, task_id: str) -> TaskStream:
    """A live stream of a ``gated`` task, once its handler waits at its gate."""
    live = await runtime.subscribe(ANONYMOUS, task_id)
    while not isinstance((await live.receive()).event, m.TaskStatusUpdateEvent):
        pass  # the handler is at its gate once its WORKING update is out (and stored)
    return live


async def test_a_lease_refresh_does_not_refuse_a_cancel_read_before_it(shared_url: str) -> None:
    """Before, each refresh raised the task's version: a CancelTask at another replica that
    read the task just before it was refused as "changed state meanwhile"."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        touches, held = Touches(store_a), HeldLoad(store_b)
        runner = await replica(nursery, touches)
        other = await replica(nursery, held)
        task = await started(runner, "refreshed", "gated")
        live = await at_gate(runner, task.id)

        async def refreshed() -> None:
            touches.touched = trio.Event()
            await touches.touched.wait()

        with trio.fail_after(5):
            canceled = await cancel_held_while(other, held, task.id, refreshed)
            events = await drain(live)
        assert canceled.status.state is m.TaskState.CANCELED
        assert isinstance(events[-1], m.TaskStatusUpdateEvent)
        assert events[-1].status == canceled.status


async def test_a_cancel_at_another_replica_stops_the_handler_here(shared_url: str) -> None:
    """Before, the handler ran on until its own next write failed, and its stream here never
    heard of the cancel."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        runner = await replica(nursery, store_a)
        other = await replica(nursery, store_b)
        task = await started(runner, "stopped", "gated")
        live = await at_gate(runner, task.id)
        canceled = await other.cancel(ANONYMOUS, task.id)
        with trio.fail_after(5):
            events = await drain(live)  # the runner's next tick ends it
        await trio.testing.wait_all_tasks_blocked()
        assert task.id in agents.cleanups  # the handler's finally ran, its gate still shut
        assert runner.statistics().running_jobs == 0
        assert isinstance(events[-1], m.TaskStatusUpdateEvent)
        assert events[-1].status == canceled.status
        # The runner wrote nothing after the cancel: the stored log ends with it, and the
        # stream here carried it under the number it has there.
        stored = await store_a.load_task(ANONYMOUS, task.id)
        assert stored is not None and stored.task == canceled
        logged = await store_a.load_events(ANONYMOUS, task.id)
        assert logged[-1][1] == events[-1]
        replayed = await read_all(await runner.subscribe(ANONYMOUS, task.id, last_event_id=0))
        assert [(entry.seq, entry.event) for entry in replayed] == list(logged)


@pytest.mark.parametrize("noticed_by", ["tick", "refused write"])
async def test_a_waiting_job_is_dropped_when_another_replica_resumes_its_task(
    shared_url: str, noticed_by: str
) -> None:
    """The job here stops at its next tick, or at once when a follow-up sent here is refused
    (no tick comes with a long lease), and its stream here follows the task through the store
    to its end there.  Before, a follow-up sent to another replica re-ran the skill there
    while the first handler kept waiting, in memory and for good, for a message that would
    never come, and its stream never ended."""
    config = LEASED if noticed_by == "tick" else LONG
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        first = await replica(nursery, store_a, config)
        second = await replica(nursery, store_b, config)
        asked = await first.send(ANONYMOUS, request("hi", "ask"))
        assert isinstance(asked, m.Task) and asked.status.state is m.TaskState.INPUT_REQUIRED
        live = await first.subscribe(ANONYMOUS, asked.id)
        follow_up = m.SendMessageRequest(m.text_message("Ada", task_id=asked.id))
        again = await second.send(ANONYMOUS, follow_up)  # re-runs the skill there: asks again
        assert isinstance(again, m.Task) and again.status.state is m.TaskState.INPUT_REQUIRED
        if noticed_by == "refused write":
            late = m.SendMessageRequest(m.text_message("Cy", task_id=asked.id))
            with pytest.raises(UnsupportedOperationError, match="changed while this message"):
                await first.send(ANONYMOUS, late)
        with trio.fail_after(5):
            head = (await live.receive()).event
            events = [(await live.receive()).event]
            while not isinstance(events[-1], m.TaskStatusUpdateEvent):
                events.append((await live.receive()).event)
        assert head == asked
        assert events[-1].status == again.status  # what the store logged meanwhile
        assert first.statistics().running_jobs == 0
        assert live.receive_nowait() is None  # open, following the task there
        answer = m.SendMessageRequest(m.text_message("Bo", task_id=asked.id))
        done = await second.send(ANONYMOUS, answer)  # the handler waiting there gets it
        assert isinstance(done, m.Task) and done.status.state is m.TaskState.COMPLETED
        assert done.artifacts[0].parts == (m.TextPart("hello Bo"),)
        with trio.fail_after(5):
            events += await drain(live)
        assert isinstance(events[-1], m.TaskStatusUpdateEvent) and events[-1].status == done.status
        logged = await store_a.load_events(ANONYMOUS, asked.id)
        assert events == [event for _seq, event in logged[-len(events) :]]  # each event once


async def test_a_replica_back_from_an_outage_stops_the_job_another_one_recovered(
    shared_url: str,
) -> None:
    """A replica cut off from the store past its lease: another recovers (re-runs) its task.
    Back, the first one stops its handler without writing, so one handler runs the task; its
    stream here follows the re-run through the store to its end."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        cut = CutOff(store_a)
        first = await replica(nursery, cut)
        agents.gates["outage"] = gate = trio.Event()
        task = await started(first, "outage", "gated_redo")
        live = await at_gate(first, task.id)
        cut.cut = True
        second = await replica(nursery, store_b)
        with trio.fail_after(5):
            events = [(await live.receive()).event]  # recovered there, then stopped here
            await trio.testing.wait_all_tasks_blocked()
        assert agents.cleanups.count(task.id) == 1  # this handler ended; the re-run waits
        assert first.statistics().running_jobs == 0
        rerun = events[0]
        assert isinstance(rerun, m.Task) and rerun.status.state is m.TaskState.WORKING
        gate.set()
        with trio.fail_after(5):
            finished = await drain(await second.subscribe(ANONYMOUS, task.id))
            events += await drain(live)  # the stream here went on from the store
        assert isinstance(finished[-1], m.TaskStatusUpdateEvent)
        assert finished[-1].status.state is m.TaskState.COMPLETED
        logged = [event for _seq, event in await store_b.load_events(ANONYMOUS, task.id)]
        assert events == logged[2:]
        assert [type(event) for event in logged] == [
            m.Task,  # created, first replica
            m.TaskStatusUpdateEvent,  # WORKING, first replica, then the outage
            m.Task,  # the re-run's snapshot, second replica
            m.TaskStatusUpdateEvent,  # WORKING
            m.TaskArtifactUpdateEvent,  # "opened"
            m.TaskArtifactUpdateEvent,  # "done"
            m.TaskStatusUpdateEvent,  # COMPLETED: nothing from the first replica after all
        ]


async def test_a_cancel_elsewhere_reaches_a_waiting_handler_without_reading_the_log(
    shared_url: str,
) -> None:
    """The replica that cancels numbers its final event after the stored log (as its snapshots)
    from the last number alone; before, it read and decoded every stored event."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        first = await replica(nursery, store_a)
        second = await replica(nursery, NoLogReads(store_b))
        asked = await first.send(ANONYMOUS, request("q", "ask"))
        assert isinstance(asked, m.Task)
        live = await first.subscribe(ANONYMOUS, asked.id)
        following = await second.subscribe(ANONYMOUS, asked.id)
        snapshot = [(await following.receive()).event]
        following.close()  # it would follow the task through the store: its log, read
        canceled = await second.cancel(ANONYMOUS, asked.id)
        with trio.fail_after(5):
            events = await drain(live)
        assert first.statistics().running_jobs == 0
        assert isinstance(events[-1], m.TaskStatusUpdateEvent)
        assert events[-1].status == canceled.status
        logged = await store_a.load_events(ANONYMOUS, asked.id)
        assert [seq for seq, _event in logged] == list(range(1, len(logged) + 1))
        assert logged[-1][1] == events[-1]
        assert snapshot == [asked]


async def test_a_blocking_send_here_returns_the_task_canceled_elsewhere() -> None:
    """Before, the sender waited until the handler's own next write failed."""
    store = MemoryTaskStore()
    async with trio.open_nursery() as nursery:
        runner = await replica(nursery, store)
        other = await replica(nursery, store)
        answers: list[m.Task | m.Message] = []

        async def send() -> None:
            answers.append(await runner.send(ANONYMOUS, request("blocked", "gated")))

        with trio.fail_after(5):
            async with trio.open_nursery() as sending:
                sending.start_soon(send)
                await trio.testing.wait_all_tasks_blocked()  # the handler waits at its gate
                (task,) = (await other.list(ANONYMOUS, m.ListTasksRequest())).tasks
                canceled = await other.cancel(ANONYMOUS, task.id)
        assert answers == [canceled]
        nursery.cancel_scope.cancel()


async def test_a_follow_up_to_a_task_running_on_another_replica_is_refused(
    shared_url: str,
) -> None:
    """As on the replica running it: the task is not waiting for input.  Before, the replica
    without the job ran the skill a second time on the stored history."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        runner = await replica(nursery, store_a)
        other = await replica(nursery, store_b)
        gate = f"running elsewhere {m.new_id()}"  # the gates outlive a test
        task = await started(runner, gate, "gated")
        live = await at_gate(runner, task.id)
        before = await store_b.load_task(ANONYMOUS, task.id)
        follow_up = attrs.evolve(
            request("more", "gated"), message=m.text_message("more", task_id=task.id)
        )
        for runtime in (other, runner):
            with pytest.raises(UnsupportedOperationError, match="WORKING, not waiting for input"):
                await runtime.send(ANONYMOUS, follow_up)
        assert other.statistics().running_jobs == 0
        assert await store_b.load_task(ANONYMOUS, task.id) == before
        agents.gates[gate].set()
        events = await drain(live)
        assert isinstance(events[-1], m.TaskStatusUpdateEvent)
        assert events[-1].status.state is m.TaskState.COMPLETED


@pytest.mark.parametrize("write", ["update", "artifact", "result"])
async def test_a_cancel_elsewhere_stops_the_job_here_at_its_next_write(
    shared_url: str, write: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The job learns of the cancel from its refused write, as it would at a tick (which never
    comes here): the handler sees Cancelled, the stream and the blocking send here end with the
    CANCELED task.  Before, the refused write was a skill failure ("final state not
    recorded"), the stream ended without the CANCELED event and the send returned WORKING."""
    caplog.set_level(logging.INFO, logger="a2a_trio")
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        runner = await replica(nursery, store_a, LONG, agent=lost)
        other = await replica(nursery, store_b, LONG, agent=lost)
        text = f"late {write} {m.new_id()}"
        runs[text] = run = Run(write)
        answers: list[m.Task | m.Message] = []

        async def send() -> None:
            answers.append(await runner.send(ANONYMOUS, request(text)))

        with trio.fail_after(5):
            async with trio.open_nursery() as sending:
                sending.start_soon(send)
                await run.at_gate.wait()
                live = await runner.subscribe(ANONYMOUS, run.task_id)
                canceled = await other.cancel(ANONYMOUS, run.task_id)
                run.gate.set()
                events = await drain(live)
            await run.ended.wait()
        assert answers == [canceled]
        assert isinstance(events[-1], m.TaskStatusUpdateEvent)
        assert events[-1].status == canceled.status
        if write != "result":
            assert isinstance(run.met, trio.Cancelled)
        assert runner.statistics().running_jobs == 0
        # Nothing written after the cancel; the stream here numbered the events as stored.
        logged = await store_a.load_events(ANONYMOUS, run.task_id)
        assert logged[-1][1] == events[-1]
        replayed = await read_all(await runner.subscribe(ANONYMOUS, run.task_id, last_event_id=0))
        assert [(entry.seq, entry.event) for entry in replayed] == list(logged)
        assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_a_recovery_elsewhere_reaches_a_silent_handler_here_at_its_next_tick(
    shared_url: str,
) -> None:
    """A recovery's re-run writes (an empty update) before its handler starts, so the task's
    version moves even when neither handler ever writes: the replica back from its outage
    stops its handler at its next tick.  Before, the re-run only appended its snapshot event,
    the version stayed, the touches here went on succeeding and two handlers ran the task."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        cut = CutOff(store_a)
        first = await replica(nursery, cut, agent=lost)
        text = f"quiet {m.new_id()}"
        quiet_runs[text] = runs = Quiet()
        task = await started(first, text, "quiet")
        await runs.started[0].wait()
        cut.cut = True  # its touches hang, so its task looks crashed past the lease
        second = await replica(nursery, store_b, agent=lost)
        with trio.fail_after(5):
            await runs.started[1].wait()  # recovered: re-run there
        cut.cut = False  # back
        with trio.fail_after(5):
            await runs.ended[0].wait()  # the handler here was stopped
        assert not runs.ended[1].is_set()  # the re-run runs on
        assert first.statistics().running_jobs == 0
        assert second.statistics().running_jobs == 1
        stored = await store_b.load_task(ANONYMOUS, task.id)
        assert stored is not None and not m.is_terminal(stored.task.status.state)


async def test_a_cancel_here_of_a_task_recovered_elsewhere_cancels_it_there(
    shared_url: str,
) -> None:
    """The cancel stops the stale handler here, whose final write finds the task re-run
    elsewhere; the cancel then goes to the store, and the re-run's replica stops its handler
    at its next tick.  Before, the client got TaskNotCancelable "ended WORKING first" for a
    task that was running on."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        stale = await replica(nursery, store_a, LONG, agent=lost)  # no tick here
        text = f"quiet {m.new_id()}"
        quiet_runs[text] = runs = Quiet()
        task = await started(stale, text, "quiet")
        await runs.started[0].wait()
        rerunning = await replica(nursery, store_b, agent=lost)  # recovers it past its lease
        with trio.fail_after(5):
            await runs.started[1].wait()
        canceled = await stale.cancel(ANONYMOUS, task.id)
        assert canceled.status.state is m.TaskState.CANCELED
        assert runs.ended[0].is_set()
        with trio.fail_after(5):
            await runs.ended[1].wait()  # the re-run there, at its next tick
        assert rerunning.statistics().running_jobs == 0
        stored = await store_b.load_task(ANONYMOUS, task.id)
        assert stored is not None and stored.task.status == canceled.status


async def test_a_cancel_elsewhere_is_not_refused_by_the_handlers_own_writes(
    shared_url: str,
) -> None:
    """A chunk the handler here writes between the other replica's read and its write makes
    that replica read the task again and cancel it.  Before, the client got TaskNotCancelable
    "changed state meanwhile" for a task still WORKING, whenever the task was streaming."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        held = HeldLoad(store_b)
        runner = await replica(nursery, store_a, agent=lost)
        other = await replica(nursery, held, agent=lost)
        text = f"chatty {m.new_id()}"
        chatty_runs[text] = run = Chatty()
        task = await started(runner, text, "chatty")
        await run.at_gate.wait()

        async def wrote() -> None:
            run.gate.set()
            await run.wrote.wait()

        with trio.fail_after(5):
            canceled = await cancel_held_while(other, held, task.id, wrote)
            await run.ended.wait()  # the handler here stops: its task was canceled
        assert canceled.status.state is m.TaskState.CANCELED
        stored = await store_a.load_task(ANONYMOUS, task.id)
        assert stored is not None and stored.task.status == canceled.status
        assert stored.task.artifacts[0].parts == (m.TextPart("a chunk"),)


async def test_a_cancel_elsewhere_stops_a_handler_that_writes_between_each_read_and_write(
    shared_url: str,
) -> None:
    """The handler here writes a chunk between each of the other replica's reads of the task
    and its conditional write (a streaming handler writes more often than a busy replica's
    read-write round trip takes).  After the first refusal the cancel moves the task's version
    on (an empty write), which stops the handler here at its next write, and then cancels the
    task.  Before, every attempt was refused and the client got TaskNotCancelable "changed 20
    times while it was being canceled", the task streaming on."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        between = WrittenBetween(store_b)
        runner = await replica(nursery, store_a, LONG, agent=lost)
        other = await replica(nursery, between, LONG, agent=lost)
        text = f"streaming {m.new_id()}"
        streaming_runs[text] = run = Streaming()
        task = await started(runner, text, "streaming")
        live = await runner.subscribe(ANONYMOUS, task.id)
        await run.at_gate.wait()
        between.between = run.write_one
        with trio.fail_after(5):
            canceled = await other.cancel(ANONYMOUS, task.id)
            await run.ended.wait()  # the handler here stopped
            events = await drain(live)
        assert canceled.status.state is m.TaskState.CANCELED
        assert run.chunks == 1  # the write between the first read and write; then none
        stored = await store_a.load_task(ANONYMOUS, task.id)
        assert stored is not None and stored.task.status == canceled.status
        assert stored.task.artifacts[0].parts == (m.TextPart("chunk"),)
        logged = await store_a.load_events(ANONYMOUS, task.id)
        assert [seq for seq, _event in logged] == list(range(1, len(logged) + 1))
        last = logged[-1][1]
        assert isinstance(last, m.TaskStatusUpdateEvent) and last.status == canceled.status
        assert events[-1] == last  # the stream here ended with it
        assert runner.statistics().running_jobs == other.statistics().running_jobs == 0


async def quiet_tasks(
    first: TaskRuntime, second: TaskRuntime
) -> tuple[tuple[m.Task, Quiet], tuple[m.Task, Quiet]]:
    """A silent, resumable task running at each replica, once both handlers have started."""
    started_tasks = []
    for runtime in (first, second):
        text = f"quiet {m.new_id()}"
        quiet_runs[text] = runs = Quiet()
        task = await started(runtime, text, "quiet")
        with trio.fail_after(5):
            await runs.started[0].wait()
        started_tasks.append((task, runs))
    return started_tasks[0], started_tasks[1]


async def test_a_replica_whose_touches_fail_recovers_nothing(shared_url: str) -> None:
    """The store stalls for both replicas (their touches fail) for longer than the lease: each
    one's tasks look left, but a replica that could not touch its own tasks takes that for what
    it is and recovers nothing; once the store is back both touch again and nothing was re-run.
    Before, each recovered (re-ran) the other's live task."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        cut_a, cut_b = CutOff(store_a), CutOff(store_b)
        first = await replica(nursery, cut_a, agent=lost)
        second = await replica(nursery, cut_b, agent=lost)
        (_task_a, runs_a), (_task_b, runs_b) = await quiet_tasks(first, second)
        cut_a.cut = cut_b.cut = True
        await trio.sleep(3 * LEASED.recovery_lease)
        cut_a.cut = cut_b.cut = False
        await trio.sleep(2 * LEASED.recovery_lease)
        assert not runs_a.started[1].is_set() and not runs_b.started[1].is_set()
        assert first.statistics().running_jobs == second.statistics().running_jobs == 1


async def test_a_replica_stalled_past_the_lease_recovers_nothing_at_once(shared_url: str) -> None:
    """The whole process stops for longer than the lease (``time.sleep`` holds trio's loop, as
    a pause or heavy swapping would): when it runs again, every peer's task looks left, so its
    first tick recovers nothing; the peers touch their tasks and nothing is re-run.  Before,
    whichever replica's tick came first re-ran the other's live task."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        first = await replica(nursery, store_a, agent=lost)
        second = await replica(nursery, store_b, agent=lost)
        (_task_a, runs_a), (_task_b, runs_b) = await quiet_tasks(first, second)
        time.sleep(2 * LEASED.recovery_lease)  # noqa: ASYNC251  (the stall itself)
        await trio.sleep(2 * LEASED.recovery_lease)
        assert not runs_a.started[1].is_set() and not runs_b.started[1].is_set()
        assert first.statistics().running_jobs == second.statistics().running_jobs == 1


async def test_a_replica_running_nothing_recovers_nothing_while_the_store_is_stalled(
    tmp_path: Path,
) -> None:
    """A third connection holds the SQLite file's write lock for longer than the lease (as a
    paused process would): the replica that runs nothing finds its tick's write held too, so
    it does not take the peer's task, which the peer could not touch either, for left.
    Before, it wrote nothing at its ticks, saw a clean store and re-ran the live task."""
    url = f"sqlite:///{tmp_path / 'tasks.db'}"
    async with two_stores(url) as (store_a, store_b, nursery):
        running = await replica(nursery, store_a, agent=lost)
        text = f"quiet {m.new_id()}"
        quiet_runs[text] = runs = Quiet()
        await started(running, text, "quiet")
        await runs.started[0].wait()
        idle = await replica(nursery, store_b, agent=lost)
        with closing(sqlite3.connect(tmp_path / "tasks.db", check_same_thread=False)) as third:
            await trio.to_thread.run_sync(third.execute, "BEGIN IMMEDIATE")
            await trio.sleep(3 * LEASED.recovery_lease)
            third.rollback()
        await trio.sleep(2 * LEASED.recovery_lease)
        assert not runs.started[1].is_set()
        assert running.statistics().running_jobs == 1
        assert idle.statistics().running_jobs == 0
