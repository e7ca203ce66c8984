"""What a handler's return value or exception means for its task (pure, no I/O).

- a value completes the task: ``str`` -> text part, ``bytes`` -> raw part, other JSON values ->
  data part, a ``Part``/list of parts/``Artifact`` as given, ``None`` -> no artifact;
- a ``Message`` completes the task with that message as its status message;
- ``TaskFailed``/``TaskRejected`` end it FAILED/REJECTED with the author's public message;
- any other exception fails it with a generic message: internals never reach the client.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import model as m
from ..errors import AgentMisuseError

INTERNAL_FAILURE = "The agent failed while processing this task."


class TaskFailed(Exception):
    """Raise from a handler to fail its task with ``message`` shown to the client."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class TaskRejected(Exception):
    """Raise from a handler (or call ``ctx.reject``) to decline the task with ``reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def value_to_parts(value: Any) -> tuple[m.Part, ...]:
    """The parts that represent a handler's return value."""
    match value:
        case m.TextPart() | m.RawPart() | m.UrlPart() | m.DataPart():
            return (value,)
        case str():
            return (m.TextPart(value),)
        case bytes():
            return (m.RawPart(value, media_type="application/octet-stream"),)
        case Sequence() if value and all(isinstance(p, m.PART_TYPES) for p in value):
            return tuple(value)
        case dict() | list() | int() | float() | bool():
            return (m.DataPart(value, media_type="application/json"),)
    raise AgentMisuseError(
        f"a handler returned {type(value).__name__}; return str, bytes, JSON data, "
        "parts, an Artifact, a Message or None"
    )


def value_to_artifacts(value: Any) -> tuple[m.Artifact, ...]:
    """The artifacts a completing handler's return value adds to its task."""
    if value is None:
        return ()
    if isinstance(value, m.Artifact):
        return (value,)
    return (m.new_artifact(value_to_parts(value), name="result"),)


def agent_message(task: m.Task, text: str) -> m.Message:
    """A status message from the agent, bound to ``task``."""
    return m.text_message(text, role=m.Role.AGENT, task_id=task.id, context_id=task.context_id)
