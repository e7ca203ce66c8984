"""Copies of model objects that share no dict or list with the original.

The model classes are frozen, but ``metadata`` and ``DataPart.data`` hold plain, mutable JSON
dicts and lists.  Whoever keeps an object that another party holds too (the memory store, a
task's event log, a handler's context) keeps such a copy, so that changing a dict on one side
does not change the other's.  An object holding no dict or list comes back as it is: a task of
text parts without metadata, the usual one, costs one flat loop over its parts (:func:`plain`)
and no copy.  A blocking send on the memory store makes six such checks (docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from ._core import (
    Artifact,
    DataPart,
    Message,
    Part,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from ._json import JsonObject, copy_json, copy_json_object

_CONTAINERS = (dict, list)


def plain(contents: Iterable[Message | Artifact]) -> bool:
    """Whether these messages or artifacts hold no dict or list (they need no copy)."""
    for content in contents:
        if content.metadata is not None:
            return False
        for part in content.parts:
            if part.metadata is not None:
                return False
            if isinstance(part, DataPart) and isinstance(part.data, _CONTAINERS):
                return False
    return True


def detached_content[C: (Message, Artifact)](content: C) -> C:
    """A message or an artifact: its parts and its metadata."""
    if plain((content,)):
        return content
    parts = tuple(map(_detached_part, content.parts))
    return attrs.evolve(content, parts=parts, metadata=_copy(content.metadata))


def plain_task(task: Task) -> bool:
    """Whether the task holds no dict or list (it needs no copy)."""
    message = task.status.message
    said = task.history if message is None else (*task.history, message)
    return task.metadata is None and plain((*said, *task.artifacts))


def detached_task(task: Task) -> Task:
    if plain_task(task):
        return task
    return attrs.evolve(
        task,
        status=_detached_status(task.status),
        artifacts=tuple(map(detached_content, task.artifacts)),
        history=tuple(map(detached_content, task.history)),
        metadata=_copy(task.metadata),
    )


def detached_event(event: StreamEvent) -> StreamEvent:
    return _EVENT_COPIES[type(event)](event)


def _detached_status_event(event: TaskStatusUpdateEvent) -> TaskStatusUpdateEvent:
    message = event.status.message
    if event.metadata is None and (message is None or plain((message,))):
        return event
    return attrs.evolve(
        event, status=_detached_status(event.status), metadata=_copy(event.metadata)
    )


def _detached_artifact_event(event: TaskArtifactUpdateEvent) -> TaskArtifactUpdateEvent:
    artifact = detached_content(event.artifact)
    if artifact is event.artifact and event.metadata is None:
        return event
    return attrs.evolve(event, artifact=artifact, metadata=_copy(event.metadata))


def _detached_status(status: TaskStatus) -> TaskStatus:
    if status.message is None:
        return status
    message = detached_content(status.message)
    return status if message is status.message else attrs.evolve(status, message=message)


def _detached_part(part: Part) -> Part:
    if isinstance(part, DataPart):
        return attrs.evolve(part, data=copy_json(part.data), metadata=_copy(part.metadata))
    return attrs.evolve(part, metadata=_copy(part.metadata))


_EVENT_COPIES: dict[type, Callable[[Any], StreamEvent]] = {
    Task: detached_task,
    Message: detached_content,
    TaskStatusUpdateEvent: _detached_status_event,
    TaskArtifactUpdateEvent: _detached_artifact_event,
}
"""By the event's class (one lookup, where a chain of ``isinstance`` checks costs more)."""


def _copy(metadata: JsonObject | None) -> JsonObject | None:
    return None if metadata is None else copy_json_object(metadata)
