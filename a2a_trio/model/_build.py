"""Convenience constructors for the values agent authors and clients build most often."""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import UTC, datetime

from ._core import (
    Artifact,
    DataPart,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from ._json import JsonObject, JsonValue


def new_id() -> str:
    """A fresh random identifier (UUID4 text) for a task, context, message or artifact.

    The same 122 random bits from ``os.urandom`` as ``uuid.uuid4()``, formatted directly: three
    times faster, and every request makes several (task, context, artifact).
    """
    h = os.urandom(16).hex()
    variant = "89ab"[int(h[16], 16) & 3]
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{variant}{h[17:20]}-{h[20:]}"


def utcnow() -> datetime:
    """The current instant, timezone-aware, truncated to milliseconds like the wire form."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def text_message(
    text: str,
    *,
    role: Role = Role.USER,
    context_id: str = "",
    task_id: str = "",
    metadata: JsonObject | None = None,
) -> Message:
    """A one-part text message with a fresh id (from the user unless ``role`` says otherwise)."""
    return Message(
        message_id=new_id(),
        role=role,
        parts=(TextPart(text),),
        context_id=context_id,
        task_id=task_id,
        metadata=metadata,
    )


def data_part(data: JsonValue, *, media_type: str = "application/json") -> DataPart:
    """A part holding structured JSON data."""
    return DataPart(data, media_type=media_type)


def new_artifact(parts: Iterable[Part], *, name: str = "", description: str = "") -> Artifact:
    """An artifact with a fresh id."""
    return Artifact(artifact_id=new_id(), parts=tuple(parts), name=name, description=description)


def new_task(message: Message, *, task_id: str = "", context_id: str = "") -> Task:
    """A SUBMITTED task for ``message``, with the message as its first history entry."""
    task_id = task_id or message.task_id or new_id()
    context_id = context_id or message.context_id or new_id()
    first = Message(
        message_id=message.message_id,
        role=message.role,
        parts=message.parts,
        context_id=context_id,
        task_id=task_id,
        metadata=message.metadata,
        extensions=message.extensions,
        reference_task_ids=message.reference_task_ids,
    )
    return Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(TaskState.SUBMITTED, timestamp=utcnow()),
        history=(first,),
    )
