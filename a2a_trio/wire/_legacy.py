"""The legacy producer dialect's wire shapes (spec/legacy-producer-dialect.txt §3-§5).

That dialect predates v0.3: parts are ``{"type": "text", "text": ...}``, a task carries
``sessionId``, only four states exist (``working``, ``completed``, ``failed``, ``canceled``),
a result is one artifact named ``result`` whose single text part holds the value (JSON text for
non-strings), progress is a number in ``metadata.progress``, and timestamps end in ``Z``.  This
module maps the v1.0 model to and from those shapes; it keeps no state.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from .. import model as m
from ..errors import FIELD, InvalidParamsError, Phrase, Value
from ._common import (
    MISSING,
    check_json_value,
    dumps,
    encode_bytes,
    expect_list,
    expect_object,
    expect_str,
    format_timestamp,
)

STATES: Final[Mapping[m.TaskState, str]] = {
    m.TaskState.COMPLETED: "completed",
    m.TaskState.FAILED: "failed",
    m.TaskState.REJECTED: "failed",
    m.TaskState.CANCELED: "canceled",
}
"""Terminal states; every other state is ``working`` in this dialect (it has no other)."""

ROLES: Final[Mapping[str, m.Role]] = {"user": m.Role.USER, "agent": m.Role.AGENT}
"""A message's ``role`` as sent; a message without one is the user's."""

RESULT_NAME: Final = "result"

_TOKEN: Final = r"[A-Za-z0-9!#$%&'*+.^_`|~-]+"
_DATA_URL_MEDIA_TYPE: Final = re.compile(rf"{_TOKEN}/{_TOKEN}(?:;{_TOKEN}={_TOKEN})*")
"""A media type (RFC 9110 tokens, unquoted parameters) that a ``data:`` URL carries as is."""


def state_name(state: m.TaskState) -> str:
    return STATES.get(state, "working")


def spell(value: Value) -> str:
    """A state or role as this dialect writes it (``working``, ``user``), for error messages."""
    if isinstance(value, m.TaskState):
        return state_name(value)
    return "agent" if value is m.Role.AGENT else "user"


def part_text(part: m.Part) -> str:
    """A part as the dialect's text: text as is, data as JSON text, a file by its URL, bytes
    as a ``data:`` URL (RFC 2397), so the dialect's one text part loses none of them."""
    if isinstance(part, m.TextPart):
        return part.text
    if isinstance(part, m.DataPart):
        return dumps(part.data).decode()
    if isinstance(part, m.UrlPart):
        return part.url
    return _data_url(part)


def _data_url(part: m.RawPart) -> str:
    """``part``'s bytes as a ``data:`` URL of its media type (when it is one such a URL can
    carry: ``type/subtype`` and unquoted parameters; the spaces around a ``;`` dropped)."""
    media_type = re.sub(r"\s*;\s*", ";", part.media_type.strip())
    if not _DATA_URL_MEDIA_TYPE.fullmatch(media_type):
        media_type = ""
    return f"data:{media_type or 'application/octet-stream'};base64,{encode_bytes(part.raw)}"


def parts_text(parts: Iterable[m.Part]) -> str:
    return "".join(part_text(part) for part in parts)


def progress_of(message: m.Message | None) -> float | None:
    """``metadata.progress`` of a status message, when it is a number."""
    value = (message.metadata or {}).get("progress") if message is not None else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _text_parts(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def encode_message(message: m.Message) -> dict[str, Any]:
    return {"role": spell(message.role), "parts": [_encode_part(part) for part in message.parts]}


def _encode_part(part: m.Part) -> dict[str, Any]:
    if isinstance(part, m.DataPart):
        return {"type": "data", "data": part.data}
    return {"type": "text", "text": part_text(part)}


def encode_status(status: m.TaskStatus) -> dict[str, Any]:
    out: dict[str, Any] = {"state": state_name(status.state)}
    out["timestamp"] = format_timestamp(status.timestamp or m.utcnow())
    text = parts_text(status.message.parts) if status.message is not None else ""
    if text:
        out["message"] = {"role": "agent", "parts": _text_parts(text)}
    return out


def encode_artifact(text: str) -> dict[str, Any]:
    return {"name": RESULT_NAME, "parts": _text_parts(text), "index": 0}


def encode_task(task_id: str, session_id: str, task: m.Task, result: str | None) -> dict[str, Any]:
    """A task envelope (tasks/send, tasks/get, tasks/cancel); ``result`` is the artifact text."""
    out: dict[str, Any] = {
        "id": task_id,
        "sessionId": session_id,
        "status": encode_status(task.status),
        "artifacts": [] if result is None else [encode_artifact(result)],
        "history": [encode_message(task.history[0])] if task.history else [],
    }
    progress = progress_of(task.status.message)
    if progress is not None:
        out["metadata"] = {"progress": progress}
    return out


def encode_status_event(task_id: str, status: m.TaskStatus, *, final: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"id": task_id, "status": encode_status(status), "final": final}
    progress = progress_of(status.message)
    if progress is not None:
        out["metadata"] = {"progress": progress}
    return out


def encode_artifact_event(task_id: str, text: str) -> dict[str, Any]:
    return {"id": task_id, "artifact": encode_artifact(text)}


def _decode_part(data: Any, path: str) -> m.Part:
    """A part, refused in the words the other wire forms use (``_common``)."""
    part = expect_object(data, path=path)
    if part.get("type", "text") == "data" or ("data" in part and "text" not in part):
        return m.DataPart(check_json_value(part.get("data"), path=path + ".data"))
    if part.get("text") is None:
        raise InvalidParamsError(MISSING, path=path + ".text")
    return m.TextPart(expect_str(part["text"], path=path + ".text"))


def _decode_role(data: Any, path: str) -> m.Role:
    if data is None:
        return m.Role.USER
    role = ROLES.get(data) if isinstance(data, str) else None
    if role is None:
        raise InvalidParamsError(
            f"unknown role {str(data)[:40]!r} (one of {', '.join(ROLES)})", path=path
        )
    return role


def decode_message(
    data: Any, *, session_id: str, skill_id: str, path: str = "$.params.message"
) -> m.Message:
    """The dialect's message (a non-object counts as ``{}``) as a message for ``skill_id``.

    A message without parts becomes one empty data part: the dialect lets clients call a skill
    with no input, and v1.0 needs at least one part.  A message without a role is the user's;
    its role is otherwise decoded as sent, so the runtime refuses an agent's as on every binding.
    Data and metadata are held to the depth every binding bounds JSON content to: a deeper
    value stored would make every answer naming its task fail to encode.
    """
    obj = data if isinstance(data, dict) else {}
    raw = expect_list(obj.get("parts", []), path=path + ".parts")
    parts = tuple(_decode_part(p, f"{path}.parts[{i}]") for i, p in enumerate(raw))
    metadata = obj.get("metadata")
    if isinstance(metadata, dict):
        check_json_value(metadata, path=path + ".metadata")
    return m.Message(
        message_id=m.new_id(),
        role=_decode_role(obj.get("role"), path + ".role"),
        parts=parts or (m.DataPart({}),),
        context_id=session_id,
        metadata={**(metadata if isinstance(metadata, dict) else {}), "skillId": skill_id},
    )


def optional_string(params: Mapping[str, Any], key: str) -> str | None:
    """``params[key]`` when it is a non-empty string, ``None`` when absent or null; another
    value is refused in the words the other bindings refuse a task id with."""
    value = params.get(key)
    if value is None:
        return None
    text = expect_str(value, path=f"$.params.{key}")
    if not text:
        raise InvalidParamsError(Phrase.of(FIELD, " must not be empty"), path=f"$.params.{key}")
    return text


def encode_card(
    agent_name: str,
    description: str,
    version: str,
    skill: m.AgentSkill,
    *,
    url: str,
    default_modes: tuple[tuple[str, ...], tuple[str, ...]],
    bearer: bool,
) -> dict[str, Any]:
    """The dialect's per-skill card (§3.2): exactly one skill, no fabricated fields."""
    inputs = list(skill.input_modes or default_modes[0])
    outputs = list(skill.output_modes or default_modes[1])
    card: dict[str, Any] = {
        "name": agent_name,
        "description": description or agent_name,
        "version": version,
        "capabilities": {
            "streaming": True,
            "pushNotifications": False,
            "stateTransitionHistory": False,
        },
        "defaultInputModes": inputs,
        "defaultOutputModes": outputs,
        "skills": [
            {
                "id": skill.id,
                "name": skill.name or skill.id,
                "description": skill.description or skill.name or skill.id,
                "tags": list(skill.tags),
                "inputModes": inputs,
                "outputModes": outputs,
            }
        ],
        "authentication": {"schemes": ["bearer"] if bearer else []},
    }
    if url:
        card["url"] = url
    return card
