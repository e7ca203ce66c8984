"""A store shares no mutable value with its callers, on every backend.

Model objects are frozen, but their ``metadata`` and ``DataPart.data`` are plain dicts and lists.
The SQL stores serialize, so changing such a dict after a write, or in a task read back, never
changes what they hold.  Before, the memory store kept and handed out the very objects: such a
change rewrote the stored task with no write (no new version, no event).
"""

from __future__ import annotations

import attrs
import pytest

from a2a_trio import model as m
from a2a_trio.store import ANONYMOUS, ArtifactWrite, TaskQuery, TaskStore, TaskUpdate


def nested() -> m.JsonObject:
    return {"tags": ["a", {"deep": [1]}], "n": 1}


def a_message(text: str, role: m.Role = m.Role.USER) -> m.Message:
    parts = [m.TextPart(text, metadata=nested()), m.DataPart([{"x": 1}], metadata=nested())]
    return m.Message(m.new_id(), role, parts, metadata=nested())


def an_update() -> TaskUpdate:
    reply = a_message("out", m.Role.AGENT)
    artifact = m.Artifact("a1", [m.DataPart(nested(), metadata=nested())], metadata=nested())
    return TaskUpdate(
        state=m.TaskState.WORKING,
        status_message=reply,
        artifacts=[ArtifactWrite(artifact)],
        messages=[reply],
        metadata=nested(),
    )


def scribble(value: object) -> None:
    """Change, in place, every dict and list reachable from ``value`` (model objects included)."""
    if isinstance(value, dict):
        for item in list(value.values()):
            scribble(item)
        value["scribbled"] = True
    elif isinstance(value, list):
        for item in list(value):
            scribble(item)
        value.append("scribbled")
    elif isinstance(value, tuple):
        for item in value:
            scribble(item)
    elif attrs.has(type(value)):
        for field in attrs.fields(type(value)):
            scribble(getattr(value, field.name))


async def snapshot(store: TaskStore, task_id: str) -> str:
    """What the store holds for the task and its log, as text that no later change can reach."""
    task = await store.load_task(ANONYMOUS, task_id)
    return repr((task, await store.load_events(ANONYMOUS, task_id)))


async def test_changing_what_was_written_changes_nothing_stored(store: TaskStore) -> None:
    task = attrs.evolve(m.new_task(a_message("in")), metadata=nested())
    await store.create_task(ANONYMOUS, task, events=[(1, task)])
    update = an_update()
    artifact = update.artifacts[0].artifact
    event = m.TaskArtifactUpdateEvent(task.id, task.context_id, artifact, metadata=nested())
    await store.update_task(ANONYMOUS, task.id, update, events=[(2, event)])
    await store.append_events(ANONYMOUS, task.id, [(3, update.status_message or task)])
    before = await snapshot(store, task.id)
    assert "scribbled" not in before

    scribble([task, update, event])

    assert await snapshot(store, task.id) == before


@pytest.mark.parametrize("created_plain", [False, True])
async def test_changing_what_was_read_changes_nothing_stored(
    store: TaskStore, created_plain: bool
) -> None:
    """Also for a task created holding no dict or list (which a store may share as it is)
    until an update brought some."""
    task = m.new_task(m.text_message("in"))
    if not created_plain:
        task = attrs.evolve(m.new_task(a_message("in")), metadata=nested())
    created = await store.create_task(ANONYMOUS, task, idempotency_key="k", events=[(1, task)])
    updated = await store.update_task(ANONYMOUS, task.id, an_update())
    before = await snapshot(store, task.id)

    scribble(created)
    scribble(updated)
    scribble(await store.create_task(ANONYMOUS, task, idempotency_key="k"))  # the same task
    scribble(await store.load_task(ANONYMOUS, task.id))
    scribble(await store.load_task(ANONYMOUS, task.id, history_length=1))
    scribble(await store.load_task_with_seq(ANONYMOUS, task.id))
    scribble(await store.load_events(ANONYMOUS, task.id))
    scribble(await store.list_tasks(ANONYMOUS, TaskQuery(include_artifacts=True)))
    scribble(await store.list_unfinished())

    assert await snapshot(store, task.id) == before


async def test_changing_what_was_written_or_read_changes_no_later_write(store: TaskStore) -> None:
    """The SQL stores remember the task they last wrote, to write its next change without
    reading it back: what they remember is theirs alone too, or a caller's change would be
    written with the next update."""
    task = attrs.evolve(m.new_task(a_message("in")), metadata=nested())
    scribble(await store.create_task(ANONYMOUS, task, events=[(1, task)]))
    scribble(task)
    update = an_update()
    scribble(await store.update_task(ANONYMOUS, task.id, update))
    scribble(update)
    later = TaskUpdate(messages=[m.text_message("later", role=m.Role.AGENT)])
    await store.update_task(ANONYMOUS, task.id, later)
    written = await store.update_task(ANONYMOUS, task.id, TaskUpdate(metadata={"last": 1}))
    assert "scribbled" not in repr(written)
    assert "scribbled" not in await snapshot(store, task.id)
