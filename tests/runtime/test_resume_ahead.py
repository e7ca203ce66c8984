"""A resume at the replica running the task, from an event its live log has not published yet.

Two runtimes (replicas) on one SQLite file or PostgreSQL schema: the task runs at ``a``, whose
store holds the job's write after it is stored, before it returns to the job.  Meanwhile ``b``,
following the store, sends that event, and the client resumes at ``a`` from its id.  Before,
``a`` refused it ("Last-Event-ID N was never sent"): its live log ended one event earlier.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from a2a_trio.errors import InvalidParamsError
from a2a_trio.runtime import TaskStream
from a2a_trio.store import ANONYMOUS, CallerScope, StoredTask
from runtime.streams import read_all

from .test_follow import FOLLOW, pairs, started, step, stepper
from .test_replicas import Held, replica, two_stores


class HeldWrite(Held):
    """Once ``armed``, holds the next ``update_task`` after it is stored, until ``release``."""

    async def update_task(self, *args: Any, **kwargs: Any) -> StoredTask:
        return await self.held(self.store.update_task(*args, **kwargs))


class HeldSeq(Held):
    """Once ``armed``, holds the next ``last_event_seq`` after it read, until ``release``."""

    async def last_event_seq(self, scope: CallerScope, task_id: str) -> int:
        return await self.held(self.store.last_event_seq(scope, task_id))


async def test_a_resume_from_an_event_stored_but_not_yet_published_here_goes_on_after_it(
    shared_url: str,
) -> None:
    """The resumed stream goes on with the events after it, each once, to the end; an id
    past the stored log too is still refused, with the same message."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        held = HeldWrite(store_a)
        a = await replica(nursery, held, FOLLOW, agent=stepper)  # type: ignore[arg-type]
        b = await replica(nursery, store_b, FOLLOW, agent=stepper)
        task, steps = await started(a)
        at_b = await b.subscribe(ANONYMOUS, task.id)
        with trio.fail_after(5):
            await at_b.receive()
            held.armed = True
            await steps.send("update one")
            await held.holding.wait()  # stored, not yet published at ``a``
            sent = await at_b.receive()  # ``b`` sends it, from the store
            resumed = await a.subscribe(ANONYMOUS, task.id, last_event_id=sent.seq)
            unsent = sent.seq + 1
            with pytest.raises(InvalidParamsError, match=f"Last-Event-ID {unsent} was never sent"):
                await a.subscribe(ANONYMOUS, task.id, last_event_id=unsent)
            held.release.set()
            await steps.send("chunk two")
            await steps.send("done")
            rest, followed = await read_all(resumed), await read_all(at_b)
        logged = await store_b.load_events(ANONYMOUS, task.id, after_seq=sent.seq)
        assert pairs(rest) == pairs(followed) == list(logged)
        assert len(rest) == 3  # the chunk, the result's artifact, COMPLETED


async def test_a_resume_ahead_gets_the_events_published_while_it_read_the_store(
    shared_url: str,
) -> None:
    """The job publishes the event resumed from, and the next, while the resume checks the
    store for it: the stream starts with that next event, not after it."""
    async with two_stores(shared_url) as (store_a, store_b, nursery):
        held_write = HeldWrite(store_a)
        held_seq = HeldSeq(held_write)
        a = await replica(nursery, held_seq, FOLLOW, agent=stepper)  # type: ignore[arg-type]
        task, steps = await started(a)
        at_a = await a.subscribe(ANONYMOUS, task.id)
        resumed: list[TaskStream] = []

        async def resume(after: int) -> None:
            resumed.append(await a.subscribe(ANONYMOUS, task.id, last_event_id=after))

        with trio.fail_after(5):
            await at_a.receive()
            held_write.armed = True
            await steps.send("update one")
            await held_write.holding.wait()
            [(sent, _event)] = await store_b.load_events(ANONYMOUS, task.id, after_seq=1)
            async with trio.open_nursery() as resuming:
                held_seq.armed = True
                resuming.start_soon(resume, sent)
                await held_seq.holding.wait()  # the resume has read the store's last number
                held_write.release.set()
                published = [await at_a.receive(), await step(steps, at_a, "chunk two")]
                held_seq.release.set()
            await steps.send("done")
            rest = await read_all(resumed[0])
        assert published[0].seq == sent
        logged = await store_b.load_events(ANONYMOUS, task.id, after_seq=sent)
        assert pairs(rest) == pairs(published[1:] + await read_all(at_a)) == list(logged)
