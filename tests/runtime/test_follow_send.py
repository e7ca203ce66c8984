"""A blocking send whose job another replica superseded follows the task with its streams.

Two replicas on one SQLite file or PostgreSQL schema.  A blocking follow-up waits at ``a`` when
``b``, starting, re-runs the task (as after a restart: ``b`` has no lease, so it takes every
unfinished task it finds); ``a``'s next lease tick supersedes its job, and the send then waits
for the task to settle at ``b``.  The clock stands still until a test moves it: to ``a``'s tick,
then one ``follow_interval`` per poll time.  Before, the send read the task from the store at
every poll time on its own, beside the task's streams' shared poll.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import attrs
import trio
import trio.testing

from a2a_trio import model as m
from a2a_trio.runtime import LogEntry, TaskRuntime, TaskStream
from a2a_trio.store import ANONYMOUS, CallerScope, StoredTask, TaskStore
from runtime.streams import read_all

from .test_follow import FOLLOW, pairs, scripts, started, state, step
from .test_follow_shared import INTERVAL, Counting, Readers, polled
from .test_handover import redone
from .test_replicas import Proxy, replica, two_stores

TICK = 3600.0 / 3
"""When ``a`` (``FOLLOW``: a lease of an hour) first checks its jobs' tasks."""
RESTARTED = attrs.evolve(FOLLOW, recovery_lease=None)
"""``b``: no lease, so at its start it re-runs every unfinished task of a resumable skill."""


@attrs.define
class TakenOver[P]:
    """Where each test starts: ``b`` re-ran the task; ``a``'s job, not yet superseded, has a
    blocking follow-up waiting."""

    a: TaskRuntime
    b: TaskRuntime
    task_id: str
    working: LogEntry
    """The follow-up's event at ``a``: the task WORKING again."""
    at_a: TaskStream
    """``a``'s SubscribeToTask stream, read up to ``working``."""
    at_b: TaskStream
    """``b``'s SubscribeToTask stream, its head read."""
    steps_at_b: trio.MemorySendChannel[str]
    store: P
    """``a``'s wrapped store."""
    returned: list[m.Task | m.Message]
    """What the blocking send returned, once it did (``sent``)."""
    sent: trio.Event


@asynccontextmanager
async def taken_over[P: Proxy](
    shared_url: str, wrap: Callable[[TaskStore], P]
) -> AsyncIterator[TakenOver[P]]:
    """``a``, on ``wrap`` of its store, runs a task that asks for input; a blocking follow-up
    there resumes it; then ``b`` starts and re-runs it (with a script of its own)."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        wrapped = wrap(store_a)
        a = await replica(nursery, wrapped, FOLLOW, agent=redone)  # type: ignore[arg-type]
        task, steps = await started(a)
        at_a = await a.subscribe(ANONYMOUS, task.id)
        await at_a.receive()
        await step(steps, at_a, "ask")
        answer = f"answer {m.new_id()}"  # the re-run's text
        steps_at_b, scripts[answer] = trio.open_memory_channel[str](100)
        returned: list[m.Task | m.Message] = []
        sent = trio.Event()

        async def blocking_send() -> None:
            follow_up = m.SendMessageRequest(m.text_message(answer, task_id=task.id))
            returned.append(await a.send(ANONYMOUS, follow_up))
            sent.set()

        nursery.start_soon(blocking_send)
        working = await at_a.receive()
        b = await replica(nursery, store_b, RESTARTED, agent=redone)
        at_b = await b.subscribe(ANONYMOUS, task.id)
        await at_b.receive()
        yield TakenOver(a, b, task.id, working, at_a, at_b, steps_at_b, wrapped, returned, sent)


async def test_a_blocking_send_whose_task_moved_shares_the_polls_of_its_streams(
    shared_url: str, mock_clock: trio.testing.MockClock
) -> None:
    """The send and ten streams at ``a`` follow ``b``'s run together: one
    ``last_event_seq`` read per poll time and one ``load_events`` per batch for all of them;
    the send reads the task only before it follows and once it settled (before: it read the
    task itself at every poll time)."""
    async with taken_over(shared_url, Counting) as setup:
        more = [await setup.a.subscribe(ANONYMOUS, setup.task_id) for _ in range(9)]
        for stream in more:
            assert (await stream.receive()).seq == setup.working.seq
        setup.store.reset()
        async with trio.open_nursery() as reading:
            readers = Readers(reading)
            readers.read([setup.at_a, *more])
            mock_clock.jump(TICK)  # ``a``'s job is superseded
            await readers.until_each_has(1)  # b's re-run, as a's job republished it
            for text in ("update one", "chunk two", "update three"):
                await step(setup.steps_at_b, setup.at_b, text)
                await polled(mock_clock, readers, len(readers.received[0]) + 1)
            await setup.steps_at_b.send("done")
            await read_all(setup.at_b)
            mock_clock.jump(INTERVAL)  # the streams end with the task, the send returns
            await setup.sent.wait()
        assert setup.store.calls == {
            "load_task": 1,  # the superseded job's look at the task
            "load_events": 1 + 4,  # the job's, then one per batch for all
            "last_event_seq": 4,  # one per poll time for all
            "load_task_with_seq": 2,  # the send's: before it follows, once settled
        }
        assert setup.a.statistics().store_followers == 0
        logged = await setup.store.load_events(
            ANONYMOUS, setup.task_id, after_seq=setup.working.seq
        )
        assert all(pairs(received) == list(logged) for received in readers.received)
        stored = await setup.store.load_task(ANONYMOUS, setup.task_id)
        assert stored is not None and setup.returned == [stored.task]
        assert stored.task.status.state is m.TaskState.COMPLETED


class HeldBeforeRead(Proxy):
    """Tells when a ``load_task_with_seq`` has read (``read``, which a test replaces); holds
    the second one before it reads, until ``release``."""

    def __init__(self, store: TaskStore) -> None:
        super().__init__(store)
        self.reads = 0
        self.read = trio.Event()
        self.holding = trio.Event()
        self.release = trio.Event()

    async def load_task_with_seq(
        self, scope: CallerScope, task_id: str
    ) -> tuple[StoredTask, int] | None:
        self.reads += 1
        if self.reads == 2:
            self.holding.set()
            await self.release.wait()
        found = await self.store.load_task_with_seq(scope, task_id)
        self.read.set()
        return found

    async def followed(self) -> None:
        """Once the send has read the task, when it follows the store (its next wait)."""
        await self.read.wait()
        self.read = trio.Event()
        await trio.testing.wait_all_tasks_blocked()


async def test_a_blocking_send_goes_on_when_the_task_moved_on_after_settling(
    shared_url: str, mock_clock: trio.testing.MockClock
) -> None:
    """The task asks for input at ``b``, and a follow-up there resumes it before the send
    reads it again: the send follows on and returns the task once it settles again."""
    async with taken_over(shared_url, HeldBeforeRead) as setup:
        held = setup.store
        mock_clock.jump(TICK)  # ``a``'s job is superseded
        await held.followed()
        assert setup.a.statistics().store_followers == 0  # the send follows: not a stream
        await step(setup.steps_at_b, setup.at_b, "ask")
        mock_clock.jump(INTERVAL)
        await held.holding.wait()  # the send saw it settle, and reads it again
        follow_up = m.SendMessageRequest(
            m.text_message("go on", task_id=setup.task_id),
            configuration=m.SendMessageConfiguration(return_immediately=True),
        )
        await setup.b.send(ANONYMOUS, follow_up)
        assert state(await setup.at_b.receive()) is m.TaskState.WORKING
        held.release.set()
        await held.followed()
        await setup.steps_at_b.send("done")
        await read_all(setup.at_b)
        mock_clock.jump(INTERVAL)
        await setup.sent.wait()
        assert held.reads == 3  # before it followed, at INPUT_REQUIRED, at the end
        stored = await held.load_task(ANONYMOUS, setup.task_id)
        assert stored is not None and setup.returned == [stored.task]
        assert stored.task.status.state is m.TaskState.COMPLETED
