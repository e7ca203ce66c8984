"""JSON-RPC request bodies (A2A v1.0 wire shapes) and the few reads the scenarios need.

The load generator treats responses as bytes where it can: it looks for state names and
markers instead of decoding every frame, so its own cost stays small.
"""

from __future__ import annotations

import itertools
from typing import Any

import orjson

_ids = itertools.count(1)

COMPLETED = b"TASK_STATE_COMPLETED"
TERMINAL = (COMPLETED, b"TASK_STATE_FAILED", b"TASK_STATE_CANCELED", b"TASK_STATE_REJECTED")
EMIT_MARK = b"emit@"


def _rpc(method: str, params: dict[str, Any]) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params})


def _message(text: str, metadata: dict[str, Any] | None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "messageId": f"m{next(_ids)}",
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if metadata:
        message["metadata"] = metadata
    return message


def send_message(
    text: str = "hi", *, metadata: dict[str, Any] | None = None, return_immediately: bool = False
) -> bytes:
    """A ``SendMessage`` body (blocking unless ``return_immediately``)."""
    params: dict[str, Any] = {"message": _message(text, metadata)}
    if return_immediately:
        params["configuration"] = {"returnImmediately": True}
    return _rpc("SendMessage", params)


def send_streaming_message(text: str = "hi", *, metadata: dict[str, Any] | None = None) -> bytes:
    """A ``SendStreamingMessage`` body."""
    return _rpc("SendStreamingMessage", {"message": _message(text, metadata)})


def subscribe(task_id: str) -> bytes:
    """A ``SubscribeToTask`` body."""
    return _rpc("SubscribeToTask", {"id": task_id})


def get_task(task_id: str) -> bytes:
    """A ``GetTask`` body."""
    return _rpc("GetTask", {"id": task_id, "historyLength": 0})


def task_of(body: bytes) -> dict[str, Any]:
    """The ``result.task`` of a ``SendMessage`` or ``GetTask`` response; raise on an error."""
    reply = orjson.loads(body)
    if "error" in reply:
        raise RuntimeError(f"JSON-RPC error: {reply['error']}")
    result: dict[str, Any] = reply["result"]
    task: dict[str, Any] = result.get("task", result)
    return task


def state_of(task: dict[str, Any]) -> str:
    """The state name of a decoded task."""
    return str(task.get("status", {}).get("state", ""))


def is_terminal(frame: bytes) -> bool:
    """Whether an SSE data frame carries a terminal task state."""
    return any(state in frame for state in TERMINAL)


def emit_time(frame: bytes) -> float | None:
    """The emission time a fan-out event carries, if this frame is one."""
    start = frame.find(EMIT_MARK)
    if start < 0:
        return None
    start += len(EMIT_MARK)
    end = frame.find(b'"', start)
    return float(frame[start:end])
