"""Detached copies: nothing mutable shared with the original, and no copy when none is needed."""

from __future__ import annotations

import sys

import attrs
from store.test_isolation import scribble

from a2a_trio import model as m
from a2a_trio.model._json import copy_json


def test_a_json_copy_shares_no_container_at_any_depth() -> None:
    deep: m.JsonValue = "bottom"
    for _ in range(sys.getrecursionlimit() + 10):  # no recursion: hostile depth is fine
        deep = [deep]
    value: m.JsonValue = {"a": [1, {"b": {"c": [2.5, None, True]}}], "deep": deep}
    copy = copy_json(value)
    assert copy == value
    originals, copies = [value], [copy]
    while originals:  # every container is a new one; the scalars are the same objects
        original, copied = originals.pop(), copies.pop()
        if isinstance(original, dict | list):
            assert copied is not original
            assert isinstance(copied, dict | list)
            items = original.values() if isinstance(original, dict) else original
            twins = copied.values() if isinstance(copied, dict) else copied
            originals.extend(items)
            copies.extend(twins)
        else:
            assert copied is original


def test_a_plain_task_and_its_events_are_not_copied() -> None:
    task = m.new_task(m.text_message("hi"))
    done = attrs.evolve(task, artifacts=[m.Artifact("out", [m.TextPart("out")])])
    status = m.TaskStatusUpdateEvent(task.id, task.context_id, task.status)
    artifact = m.TaskArtifactUpdateEvent(task.id, task.context_id, done.artifacts[0])
    assert m.detached_task(done) is done
    for event in (task, task.history[0], status, artifact):
        assert m.detached_event(event) is event


def test_every_event_kind_is_copied_apart_from_its_dicts() -> None:
    said = m.text_message("hi", metadata={"k": [1]})
    data = m.Artifact("a", [m.DataPart([{"x": 1}])])
    status = m.TaskStatus(m.TaskState.WORKING, said)
    events: list[m.StreamEvent] = [
        m.Task("t", status, artifacts=[data], history=[said]),
        said,
        m.TaskStatusUpdateEvent("t", "c", status),
        m.TaskArtifactUpdateEvent("t", "c", data, metadata={"n": 1}),
    ]
    before = repr(events)
    for event in events:
        copy = m.detached_event(event)
        assert copy == event and copy is not event
        scribble(copy)
    assert repr(events) == before
