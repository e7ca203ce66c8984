"""A job here superseded by another replica hands its streams over to the store.

Two runtimes (replicas) on one SQLite file or PostgreSQL schema: the task runs at ``a``, with
streams there, until ``b`` cancels it or recovers it.  The streams at ``a`` go on after the
last event ``a``'s log delivered with what the store logs, under ``b``'s numbers, to the end.
Before, they ended after what the job here republished from the store, often with the task
still running at ``b``: the client had to reconnect.
"""

from __future__ import annotations

import attrs
import pytest
import trio

from a2a_trio import Agent
from a2a_trio import model as m
from a2a_trio.runtime import LogEntry, RuntimeStatistics, TaskRuntime, TaskStream
from a2a_trio.store import ANONYMOUS, SequencedEvent, TaskQuery, TaskStore
from runtime.streams import read_all

from .test_follow import FOLLOW, pairs, scripts, state, stepped
from .test_replicas import CutOff, replica, two_stores
from .test_runtime import request

LEASED = attrs.evolve(FOLLOW, recovery_lease=0.3)
"""Quick store polls, and a lease short enough for a replica to recover a task a cut-off one
stops writing, and for a tick to notice a task written elsewhere."""

redone = Agent("redone", "The stepped handler, resumable", version="0")
redone.skill("stepped", default=True, resumable=True)(stepped)

IDLE = RuntimeStatistics(running_jobs=0, stream_subscribers=0, finished_logs=0, store_followers=0)


async def streamed(
    runtime: TaskRuntime,
) -> tuple[TaskStream, LogEntry, str, trio.MemorySendChannel[str]]:
    """A new ``stepped`` task at ``runtime`` by SendStreamingMessage: the stream, its first
    event (the task), the task's id and the channel the steps go through (the same for a
    re-run)."""
    text = f"script {m.new_id()}"
    steps, scripts[text] = trio.open_memory_channel[str](100)
    stream = await runtime.send_stream(ANONYMOUS, request(text))
    first = await stream.receive()
    assert isinstance(first.event, m.Task) and first.seq == 1
    return stream, first, first.event.id, steps


async def logged(store: TaskStore, task_id: str, after: int = 0) -> list[SequencedEvent]:
    """The task's stored log after event ``after``."""
    return list(await store.load_events(ANONYMOUS, task_id, after_seq=after))


async def until(stream: TaskStream, kind: type[m.StreamEvent]) -> list[LogEntry]:
    """The stream's events up to the first of ``kind``."""
    entries = [await stream.receive()]
    while not isinstance(entries[-1].event, kind):
        entries.append(await stream.receive())
    return entries


@pytest.mark.parametrize("noticed_by", ["tick", "refused write"])
async def test_a_stream_here_ends_with_the_cancel_at_another_replica(
    shared_url: str, noticed_by: str
) -> None:
    """A terminal event delivered: nothing follows, the stream ends as before, and no
    follower is left at ``a``."""
    config = LEASED if noticed_by == "tick" else FOLLOW
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        a = await replica(nursery, store_a, config, agent=redone)
        b = await replica(nursery, store_b, config, agent=redone)
        sent, _first, task_id, steps = await streamed(a)
        watched = await a.subscribe(ANONYMOUS, task_id)
        with trio.fail_after(5):
            await watched.receive()
            await steps.send("update one")
            assert pairs([await sent.receive()]) == pairs([await watched.receive()])
            canceled = await b.cancel(ANONYMOUS, task_id)
            if noticed_by == "refused write":
                await steps.send("update late")
            rest_sent, rest_watched = await read_all(sent), await read_all(watched)
        assert pairs(rest_sent) == pairs(rest_watched) == (await logged(store_a, task_id, 2))
        last = rest_watched[-1].event
        assert isinstance(last, m.TaskStatusUpdateEvent) and last.status == canceled.status
        assert a.statistics() == IDLE


async def test_a_stream_here_gets_the_cancel_at_the_replica_that_took_the_task_over(
    shared_url: str,
) -> None:
    """The task waits for input at ``a``; a follow-up sent to ``b`` re-runs it there and
    ``a``'s next tick supersedes its job.  The stream at ``a`` follows ``b``'s run and ends
    with the CANCELED ``b`` writes.  Before, it ended after ``b``'s first events, the task
    running on."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        a = await replica(nursery, store_a, LEASED, agent=redone)
        b = await replica(nursery, store_b, LEASED, agent=redone)
        _sent, first, task_id, steps = await streamed(a)
        watched = await a.subscribe(ANONYMOUS, task_id)
        with trio.fail_after(5):
            received = [await watched.receive()]
            await steps.send("ask")
            received.append(await watched.receive())
            assert state(received[-1]) is m.TaskState.INPUT_REQUIRED
            answer = f"answer {m.new_id()}"  # the re-run's text: its own script
            steps_at_b, scripts[answer] = trio.open_memory_channel[str](100)
            follow_up = m.SendMessageRequest(
                m.text_message(answer, task_id=task_id),
                configuration=m.SendMessageConfiguration(return_immediately=True),
            )
            await b.send(ANONYMOUS, follow_up)
            received += await until(watched, m.Task)  # b's re-run, as a's job republished it
            await steps_at_b.send("update by b")
            received.append(await watched.receive())  # from the store
            assert a.statistics() == attrs.evolve(IDLE, stream_subscribers=1, store_followers=1)
            canceled = await b.cancel(ANONYMOUS, task_id)
            received += await read_all(watched)
        assert received[0].event == first.event
        assert pairs(received[1:]) == await logged(store_a, task_id, after=1)
        last = received[-1].event
        assert isinstance(last, m.TaskStatusUpdateEvent) and last.status == canceled.status
        assert a.statistics() == IDLE


async def test_streams_here_follow_the_task_recovered_at_another_replica_to_its_end(
    shared_url: str,
) -> None:
    """``a`` is cut off from the store past its lease, ``b`` re-runs the task, ``a``'s next
    tick supersedes its job.  A SubscribeToTask stream and a resume at ``a`` get ``b``'s
    events under ``b``'s numbers, each once, to COMPLETED; the SendStreamingMessage stream
    keeps its rule: it ends when ``b``'s handler asks for input."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        cut = CutOff(store_a)
        a = await replica(nursery, cut, LEASED, agent=redone)
        sent, first, task_id, steps = await streamed(a)
        watched = await a.subscribe(ANONYMOUS, task_id)
        resumed = await a.subscribe(ANONYMOUS, task_id, last_event_id=0)
        streams = {"sent": sent, "watched": watched, "resumed": resumed}
        received = {"sent": [first], "watched": [], "resumed": []}
        with trio.fail_after(10):
            for name in ("watched", "resumed"):
                received[name].append(await streams[name].receive())
            for text in ("update one", "chunk two"):
                await steps.send(text)
                for name, stream in streams.items():
                    received[name].append(await stream.receive())
            cut.cut = True  # its touches fail: the task looks left by a crashed replica
            b = await replica(nursery, store_b, LEASED, agent=redone)
            for name, stream in streams.items():  # b's re-run, as a's job republished it
                received[name] += await until(stream, m.Task)
            for name in streams:  # a's job is gone; b's handler writes
                await steps.send(f"update by b for {name}")
                for other, each in streams.items():
                    received[other].append(await each.receive())
            assert a.statistics() == attrs.evolve(IDLE, stream_subscribers=3, store_followers=3)
            await steps.send("ask")
            received["sent"] += await read_all(sent)  # ends where the task needs input
            for name in ("watched", "resumed"):
                received[name].append(await streams[name].receive())
                assert streams[name].receive_nowait() is None  # stays open
            assert a.statistics().store_followers == 2
            follow_up = m.SendMessageRequest(
                m.text_message("go on", task_id=task_id),
                configuration=m.SendMessageConfiguration(return_immediately=True),
            )
            await b.send(ANONYMOUS, follow_up)
            await steps.send("chunk three")
            await steps.send("done")
            for name in ("watched", "resumed"):
                received[name] += await read_all(streams[name])
        stored = await logged(store_b, task_id)
        assert [seq for seq, _event in stored] == list(range(1, len(stored) + 1))
        assert pairs(received["sent"]) == stored[: len(received["sent"])]
        assert state(received["sent"][-1]) is m.TaskState.INPUT_REQUIRED
        assert pairs(received["resumed"]) == stored
        assert pairs(received["watched"][1:]) == stored[1:]  # after its head, the task
        assert state(received["watched"][-1]) is m.TaskState.COMPLETED
        rerun = [entry for entry in received["resumed"] if isinstance(entry.event, m.Task)]
        assert len(rerun) == 2 and state(rerun[1]) is m.TaskState.WORKING
        assert a.statistics() == IDLE
        assert b.statistics().running_jobs == 0


async def test_statistics_count_the_streams_following_the_store(shared_url: str) -> None:
    """``stream_subscribers`` counts every stream getting a task's events after its head,
    ``store_followers`` those of them reading the store; a follower leaves the count when
    its stream closes or its task is gone."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        a = await replica(nursery, store_a, FOLLOW, agent=redone)
        b = await replica(nursery, store_b, FOLLOW, agent=redone)
        sent, _first, task_id, steps = await streamed(a)
        at_b = await b.subscribe(ANONYMOUS, task_id)
        resumed_at_b = await b.subscribe(ANONYMOUS, task_id, last_event_id=1)
        assert a.statistics() == attrs.evolve(IDLE, running_jobs=1, stream_subscribers=1)
        assert b.statistics() == attrs.evolve(IDLE, stream_subscribers=2, store_followers=2)
        at_b.close()
        assert b.statistics() == attrs.evolve(IDLE, stream_subscribers=1, store_followers=1)
        with trio.fail_after(5):
            await steps.send("update one")
            assert pairs([await resumed_at_b.receive()]) == pairs([await sent.receive()])
            assert await store_a.delete_task(ANONYMOUS, task_id)
            assert await read_all(resumed_at_b) == []  # gone: the follower ended itself
        assert b.statistics() == IDLE
        sent.close()
        assert a.statistics() == attrs.evolve(IDLE, running_jobs=1)


async def test_a_blocking_send_here_returns_the_task_settled_at_another_replica(
    shared_url: str,
) -> None:
    """A blocking SendMessage waits at ``a`` when ``b`` recovers its task: it returns the
    task once ``b``'s run completes it, read from the store.  Before, it returned the task
    as stored when ``a``'s job was superseded, still WORKING."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        cut = CutOff(store_a)
        a = await replica(nursery, cut, LEASED, agent=redone)
        text = f"script {m.new_id()}"
        steps, scripts[text] = trio.open_memory_channel[str](100)
        returned: list[m.Task | m.Message] = []
        done = trio.Event()

        async def blocking_send() -> None:
            returned.append(await a.send(ANONYMOUS, request(text)))
            done.set()

        with trio.fail_after(10):
            nursery.start_soon(blocking_send)
            await steps.send("update one")
            # Another replica's doings show only in the store and the statistics: polled.
            listed = store_a.list_tasks
            while not (tasks := (await listed(ANONYMOUS, TaskQuery())).tasks):  # noqa: ASYNC110
                await trio.sleep(0.01)
            task_id = tasks[0].id
            cut.cut = True  # its touches fail: the task looks left by a crashed replica
            b = await replica(nursery, store_b, LEASED, agent=redone)
            # b re-runs the task, then a's tick supersedes its job
            while a.statistics().running_jobs:  # noqa: ASYNC110
                await trio.sleep(0.01)
            assert not returned  # the task runs on at b: the send still waits
            await steps.send("done")
            await done.wait()
        [task] = returned
        assert isinstance(task, m.Task) and task.status.state is m.TaskState.COMPLETED
        stored = await store_b.load_task(ANONYMOUS, task_id)
        assert stored is not None and task == stored.task
        assert b.statistics().running_jobs == 0
