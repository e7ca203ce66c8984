"""Tasks, messages, parts, artifacts and the stream events (A2A v1.0 §4.1, §4.2)."""

from __future__ import annotations

import enum
from datetime import datetime

import attrs

from ._fields import REQUIRED, check_aware, to_tuple
from ._json import JsonObject, JsonValue


class TaskState(enum.IntEnum):
    """Lifecycle states of a task; numbers match the proto enum."""

    UNSPECIFIED = 0
    SUBMITTED = 1
    WORKING = 2
    COMPLETED = 3
    FAILED = 4
    CANCELED = 5
    INPUT_REQUIRED = 6
    REJECTED = 7
    AUTH_REQUIRED = 8


class Role(enum.IntEnum):
    """Who sent a message; numbers match the proto enum."""

    UNSPECIFIED = 0
    USER = 1
    AGENT = 2


def proto_name(value: TaskState | Role) -> str:
    """The proto enum name (``TASK_STATE_INPUT_REQUIRED``, ``ROLE_USER``): how A2A v1.0 writes
    the value on the wire, and so how messages name it unless a binding spells it otherwise."""
    prefix = "TASK_STATE_" if isinstance(value, TaskState) else "ROLE_"
    return prefix + value.name


@attrs.frozen
class TextPart:
    """A part holding text."""

    text: str
    media_type: str = ""
    filename: str = ""
    metadata: JsonObject | None = None


@attrs.frozen
class RawPart:
    """A part holding file bytes inline (base64 on the JSON wire)."""

    raw: bytes
    media_type: str = ""
    filename: str = ""
    metadata: JsonObject | None = None


@attrs.frozen
class UrlPart:
    """A part pointing at file content by URL."""

    url: str
    media_type: str = ""
    filename: str = ""
    metadata: JsonObject | None = None


@attrs.frozen
class DataPart:
    """A part holding any JSON value (object, array, string, number, boolean or null)."""

    data: JsonValue
    media_type: str = ""
    filename: str = ""
    metadata: JsonObject | None = None


# The proto's ``Part`` is a oneof; here each arm is its own class, so a part with zero or two
# contents cannot be built at all.
type Part = TextPart | RawPart | UrlPart | DataPart
PART_TYPES: tuple[type[Part], ...] = (TextPart, RawPart, UrlPart, DataPart)


@attrs.frozen
class Message:
    """One turn of communication between a client (``Role.USER``) and an agent."""

    message_id: str = attrs.field(metadata=REQUIRED)
    role: Role = attrs.field(metadata=REQUIRED)
    parts: tuple[Part, ...] = attrs.field(metadata=REQUIRED, converter=to_tuple)
    context_id: str = ""
    task_id: str = ""
    metadata: JsonObject | None = None
    extensions: tuple[str, ...] = attrs.field(default=(), converter=to_tuple)
    reference_task_ids: tuple[str, ...] = attrs.field(default=(), converter=to_tuple)


@attrs.frozen
class Artifact:
    """An output of a task, made of one or more parts."""

    artifact_id: str = attrs.field(metadata=REQUIRED)
    parts: tuple[Part, ...] = attrs.field(metadata=REQUIRED, converter=to_tuple)
    name: str = ""
    description: str = ""
    metadata: JsonObject | None = None
    extensions: tuple[str, ...] = attrs.field(default=(), converter=to_tuple)


@attrs.frozen
class TaskStatus:
    """The state of a task, an optional message about it, and when it was recorded."""

    state: TaskState = attrs.field(metadata=REQUIRED)
    message: Message | None = None
    timestamp: datetime | None = attrs.field(default=None, validator=check_aware)


@attrs.frozen
class Task:
    """The unit of work: a status, the artifacts produced so far and the message history."""

    id: str = attrs.field(metadata=REQUIRED)
    status: TaskStatus = attrs.field(metadata=REQUIRED)
    context_id: str = ""
    artifacts: tuple[Artifact, ...] = attrs.field(default=(), converter=to_tuple)
    history: tuple[Message, ...] = attrs.field(default=(), converter=to_tuple)
    metadata: JsonObject | None = None


@attrs.frozen
class TaskStatusUpdateEvent:
    """A change of a task's status, as streamed to subscribers."""

    task_id: str = attrs.field(metadata=REQUIRED)
    context_id: str = attrs.field(metadata=REQUIRED)
    status: TaskStatus = attrs.field(metadata=REQUIRED)
    metadata: JsonObject | None = None


@attrs.frozen
class TaskArtifactUpdateEvent:
    """A new artifact, or a chunk appended to one, as streamed to subscribers."""

    task_id: str = attrs.field(metadata=REQUIRED)
    context_id: str = attrs.field(metadata=REQUIRED)
    artifact: Artifact = attrs.field(metadata=REQUIRED)
    append: bool = False
    last_chunk: bool = False
    metadata: JsonObject | None = None


# ``StreamResponse`` and ``SendMessageResponse`` are oneofs too: a stream carries any of these.
type StreamEvent = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent
type SendMessageResult = Task | Message
