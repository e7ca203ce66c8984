"""A handler's dicts are its own: changing them changes neither the stored task nor its streams.

Before, ``ctx.message`` was the very message the runtime had published in the task's first event
(and the memory store kept), and an artifact's value or an update's metadata was kept as the
handler passed it: a handler changing them afterwards rewrote the task in the memory store, and
what a stream resuming from the in-memory log replayed, with no write.
"""

from __future__ import annotations

import attrs
import trio

from a2a_trio import Agent, TaskContext
from a2a_trio import model as m
from a2a_trio.runtime import RuntimeConfig, TaskRuntime
from a2a_trio.store import ANONYMOUS, open_store
from runtime.streams import read_all

agent = Agent("scribbler", "changes every dict it is given or gave")


@agent.skill(default=True)
async def scribble(ctx: TaskContext) -> str:
    ctx.metadata["note"] = "changed"
    assert isinstance(ctx.data, dict)
    ctx.data["rows"] = ["changed"]
    assert ctx.task.history[0].metadata is not None and ctx.history[0].metadata is not None
    ctx.task.history[0].metadata["task"] = "changed"
    ctx.history[0].metadata["history"] = "changed"
    progress: m.JsonObject = {"steps": [1]}
    await ctx.update("working", metadata=progress)
    result: m.JsonObject = {"rows": [1]}
    await ctx.emit_artifact(result, artifact_id="out", metadata=progress)
    progress["steps"] = ["changed"]
    result["rows"] = ["changed"]
    return "done"


def sent() -> m.Message:
    parts = [m.TextPart("go"), m.DataPart({"rows": []})]
    return m.Message(m.new_id(), m.Role.USER, parts, metadata={"note": "sent"})


async def test_a_handler_changing_its_dicts_changes_no_task_and_no_stream(store_url: str) -> None:
    async with open_store(store_url) as store, trio.open_nursery() as nursery:
        runtime = TaskRuntime(agent, store, RuntimeConfig())
        await nursery.start(runtime.run)
        message = sent()
        with trio.fail_after(5):
            done = await runtime.send(ANONYMOUS, m.SendMessageRequest(message))
            assert isinstance(done, m.Task)
            resumed = await runtime.subscribe(ANONYMOUS, done.id, last_event_id=0)
            replayed = [entry.event for entry in await read_all(resumed)]
        stored = await runtime.get(ANONYMOUS, done.id, None)
        logged = [event for _seq, event in await store.load_events(ANONYMOUS, done.id)]

        for task in (done, stored):
            assert task.status.state is m.TaskState.COMPLETED
            first = task.history[0]
            assert (first.metadata, first.parts) == (message.metadata, message.parts)
            assert task.artifacts[0].parts[0] == m.DataPart({"rows": [1]}, "application/json")
            assert task.artifacts[0].metadata == {"steps": [1]}
        assert replayed == logged  # the in-memory log replays what the store logged
        first_event = replayed[0]
        assert isinstance(first_event, m.Task) and first_event.history[0] == stored.history[0]
        progress = [
            event.status.message.metadata
            for event in replayed
            if isinstance(event, m.TaskStatusUpdateEvent) and event.status.message
        ]
        assert {"steps": [1]} in progress
        artifacts = [e.artifact for e in replayed if isinstance(e, m.TaskArtifactUpdateEvent)]
        assert artifacts[0] == stored.artifacts[0]
        assert "changed" not in repr([done, stored, replayed])
        nursery.cancel_scope.cancel()


async def test_changing_a_task_the_runtime_returned_changes_nothing_stored() -> None:
    """Through ``TaskRuntime`` on the memory store: a caller's change to a task it got back
    reaches neither the store nor the next read."""
    async with open_store("memory") as store, trio.open_nursery() as nursery:
        runtime = TaskRuntime(agent, store, RuntimeConfig())
        await nursery.start(runtime.run)
        message = sent()
        done = await runtime.send(ANONYMOUS, m.SendMessageRequest(message))
        assert isinstance(done, m.Task)
        got = await runtime.get(ANONYMOUS, done.id, None)
        for task in (done, got):
            assert task.history[0].metadata is not None
            task.history[0].metadata["note"] = "changed"
        again = await runtime.get(ANONYMOUS, done.id, None)
        assert again.history[0].metadata == {"note": "sent"}
        bound = attrs.evolve(message, task_id=done.id, context_id=done.context_id)
        assert again.history[0] == bound
        nursery.cancel_scope.cancel()
