"""What a handler's return value or exception means for its task (pure, no I/O).

- a value completes the task: ``str`` -> text part, ``bytes`` -> raw part, other JSON values ->
  data part, a ``Part``/list of parts/``Artifact`` as given, ``None`` -> no artifact;
- a ``Message`` completes the task with that message as its status message;
- ``TaskFailed``/``TaskRejected`` end it FAILED/REJECTED with the author's public message;
- any other exception fails it with a generic message: internals never reach the client.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any, Final

from .. import model as m
from ..errors import AgentMisuseError

INTERNAL_FAILURE = "The agent failed while processing this task."
CONTENT_TYPES: Final = (
    "str, bytes, JSON data (dict, list, int, float, bool), a Part or a list of parts"
)
"""What ``value_to_parts`` takes (a handler's result, ``ctx.emit_artifact``'s content)."""


class TaskFailed(Exception):
    """Raise from a handler to fail its task with ``message`` shown to the client.

    Raises:
        TypeError: ``message`` is not a ``str`` (e.g. the exception being handled: its text
            may hold internals, so the client gets only what you pass as text).
    """

    def __init__(self, message: str) -> None:
        super().__init__(_client_text("TaskFailed", message))
        self.message = message


class TaskRejected(Exception):
    """Raise from a handler (or call ``ctx.reject``) to decline the task with ``reason``.

    Raises:
        TypeError: ``reason`` is not a ``str``.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(_client_text("TaskRejected", reason))
        self.reason = reason


def _client_text(error: str, text: object) -> str:
    if not isinstance(text, str):
        raise TypeError(
            f"{error}() takes the text its client sees, a str, not {type(text).__name__}: pass"
            f" the words you mean the client to read (str(error) only if the client may see"
            f" all it says)"
        )
    return text


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
    raise AgentMisuseError(f"{_described(value)} is no content: give {CONTENT_TYPES}")


def _described(value: Any) -> str:
    if value is None:
        return "None"
    awaited = " (an awaitable: await it)" if inspect.isawaitable(value) else ""
    return type(value).__name__ + awaited


def unusable_result(value: Any, *, message_only: bool = False) -> str:
    """Why a handler's return value can complete no task (or, ``message_only``, make no
    reply): what its log line and its client are told, the values a skill may return.  A
    coroutine it returned un-awaited is closed (nothing will await it)."""
    if inspect.iscoroutine(value):
        value.close()
    last = "or a Message" if message_only else "an Artifact, a Message or None"
    return f"the skill returned {_described(value)}; a skill returns {CONTENT_TYPES}, {last}"


def nothing_to_await(value: Any) -> str:
    """Why a handler that gave nothing to await (a plain function returning a value) ran no
    skill: what its log line and its client are told."""
    return (
        f"the skill is a plain function that returned {_described(value)};"
        " declare it `async def` or return an awaitable"
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
