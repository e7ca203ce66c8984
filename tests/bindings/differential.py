"""Send one request to two A2A servers and reduce each answer to what the wire contract fixes.

An :class:`Outcome` keeps the HTTP status, the media type and the answer's class: the JSON-RPC
result's keys or error code (with the id echoed), the HTTP+JSON body's keys or its AIP-193
``status`` and ``ErrorInfo`` reason, or the first and last frame of an event stream.  Message
texts, ids and the agents' own content are left out, so two conforming servers give equal
outcomes for the same request even though their agents differ.
"""

from __future__ import annotations

import json
import re
from typing import Any

import attrs
import httpx

V1_HEADERS = {"A2A-Version": "1.0"}
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")


@attrs.frozen
class Call:
    """One request: where it goes (``rpc`` is the JSON-RPC URL, ``rest`` a REST path), how and
    with what.  ``{done}`` in the path or body stands for a finished task of the server asked."""

    binding: str
    verb: str
    path: str
    body: Any = None
    headers: dict[str, str] = attrs.field(factory=dict)

    def url(self, rpc_url: str, rest_url: str, done: str) -> str:
        base = rpc_url if self.binding == "rpc" else rest_url
        return base + self.path.replace("{done}", done)

    def content(self, done: str) -> bytes | None:
        if self.body is None or isinstance(self.body, bytes):
            return self.body
        text = json.dumps(self.body, ensure_ascii=False)  # integers beyond 64 bits too
        return text.replace("{done}", done).encode()


@attrs.frozen
class Outcome:
    """The answer's class: HTTP status, media type, and a short description of the body."""

    status: int
    media_type: str
    answer: str


def rpc(method: str, params: Any, rid: Any = 1, **envelope: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params, **envelope}


def _json_answer(body: Any) -> str:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        if "status" in error:  # AIP-193
            reasons = [d.get("reason") for d in error.get("details", []) if "reason" in d]
            return f"problem {error['status']} {' '.join(reasons)}".strip()
        return f"error {error.get('code')} id={body.get('id', 'absent')!r}"
    if isinstance(body, dict) and "result" in body:
        result = body["result"]
        keys = ",".join(sorted(result)) if isinstance(result, dict) else type(result).__name__
        return f"result {keys} id={body.get('id')!r}"
    if isinstance(body, dict):
        return "object " + ",".join(sorted(body))
    return type(body).__name__


def _frames(text: str) -> list[dict[str, str]]:
    """SSE events as field -> value (the last ``data`` line wins: every server here sends one)."""
    frames = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = {}
        for line in block.split("\n"):
            if line and not line.startswith(":"):
                name, _, value = line.partition(":")
                fields[name] = value.removeprefix(" ")
        if fields:
            frames.append(fields)
    return frames


def _stream_answer(text: str) -> str:
    frames = _frames(text)
    if not frames:
        return "events none"
    answers = [_json_answer(json.loads(frame["data"])) for frame in frames]
    return f"events {answers[0]} .. {answers[-1]}"


def outcome_of(response: httpx.Response) -> Outcome:
    media_type = response.headers.get("content-type", "").partition(";")[0].strip()
    if media_type == "text/event-stream":
        answer = _stream_answer(response.text)
    elif not response.content:
        answer = "empty"
    elif media_type.endswith("json"):
        answer = _json_answer(response.json())
    else:
        answer = "text"
    return Outcome(response.status_code, media_type, answer)


def shape(value: Any, key: str = "") -> Any:
    """The JSON value with strings, numbers and booleans reduced to their kind; enum-like values
    (``state``, ``role``) kept, timestamps reduced to their form; lists to their distinct shapes."""
    if isinstance(value, dict):
        return {k: shape(v, k) for k, v in sorted(value.items())}
    if isinstance(value, list):
        distinct: list[Any] = []
        for item in (shape(v, key) for v in value):
            if item not in distinct:
                distinct.append(item)
        return distinct
    if isinstance(value, str):
        if key in ("state", "role"):
            return value
        found = TIMESTAMP.fullmatch(value)
        if found:
            fraction = (found.group(1) or ".")[1:]
            return f"timestamp, {len(fraction)} fraction digits, {found.group(2)}"
        return "string"
    return type(value).__name__
