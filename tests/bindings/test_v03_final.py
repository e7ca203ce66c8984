"""v0.3's ``final`` flag says the stream ends here: message/stream ends at an interrupted state,
tasks/resubscribe (like v1.0's SubscribeToTask) only at a terminal one.  Before, a resubscribe
stream flagged input-required ``final`` and went on, so a client honouring the flag stopped
there and missed the rest."""

from __future__ import annotations

import orjson
import pytest

from a2a_trio import model as m
from a2a_trio.server._rest_v03 import V03_REST_METHODS
from a2a_trio.server._rpc_methods import StreamingMethod
from a2a_trio.server._rpc_v03 import V03_METHODS


def status(state: m.TaskState) -> m.TaskStatusUpdateEvent:
    return m.TaskStatusUpdateEvent(task_id="t", context_id="c", status=m.TaskStatus(state))


def final_flag(method: object, state: m.TaskState) -> bool:
    assert isinstance(method, StreamingMethod)
    encoded = orjson.loads(method.encode_event_bytes(status(state)))
    body = encoded.get("statusUpdate", encoded)  # the REST form wraps it in its oneof arm
    flag = body["final"]
    assert isinstance(flag, bool)
    return flag


@pytest.mark.parametrize("table", [V03_METHODS, V03_REST_METHODS], ids=["jsonrpc", "rest"])
def test_final_marks_where_each_stream_ends(table: dict[str, object]) -> None:
    stream, resubscribe = table["message/stream"], table["tasks/resubscribe"]
    for state in (m.TaskState.INPUT_REQUIRED, m.TaskState.AUTH_REQUIRED):
        assert final_flag(stream, state) is True
        assert final_flag(resubscribe, state) is False
    for state in (m.TaskState.COMPLETED, m.TaskState.CANCELED, m.TaskState.FAILED):
        assert final_flag(stream, state) is True
        assert final_flag(resubscribe, state) is True
    assert final_flag(resubscribe, m.TaskState.WORKING) is False
