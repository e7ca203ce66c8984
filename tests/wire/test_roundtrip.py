"""Property tests: model -> JSON bytes -> model is exact for every message type, both forms."""

from __future__ import annotations

import inspect
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import V03_STRATEGIES, V1_STRATEGIES, Strategies

from a2a_trio import model as m
from a2a_trio.wire import V03, V1, dumps, format_timestamp, loads

ROUND_TRIP = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Every attrs class of the model is a message some wire form carries, except these: oneof arms
# travel inside their parent (parts, schemes, flows), checked through the parents' strategies.
INSIDE_PARENTS = {
    m.TextPart,
    m.RawPart,
    m.UrlPart,
    m.DataPart,
    m.APIKeySecurityScheme,
    m.HTTPAuthSecurityScheme,
    m.OAuth2SecurityScheme,
    m.OpenIdConnectSecurityScheme,
    m.MutualTlsSecurityScheme,
    m.AuthorizationCodeOAuthFlow,
    m.ClientCredentialsOAuthFlow,
    m.ImplicitOAuthFlow,
    m.PasswordOAuthFlow,
    m.DeviceCodeOAuthFlow,
}
MODEL_CLASSES = [cls for _, cls in inspect.getmembers(m, inspect.isclass) if attrs.has(cls)]


def test_every_model_class_has_a_strategy() -> None:
    covered = set(V1_STRATEGIES.classes) | INSIDE_PARENTS
    assert {cls.__name__ for cls in MODEL_CLASSES} - {c.__name__ for c in covered} == set()


def _round_trip(codec: Any, strategies: Strategies, cls: type) -> Any:
    @ROUND_TRIP
    @given(strategies.of(cls))
    def check(value: Any) -> None:
        wire = loads(dumps(codec.encode(value)))
        assert codec.decode(wire, cls) == value
        # Encoding is a function of the value: a second trip writes the same JSON.
        assert codec.encode(codec.decode(wire, cls)) == wire

    return check


@pytest.mark.parametrize("cls", V1_STRATEGIES.classes, ids=lambda c: c.__name__)
def test_v1_round_trip(cls: type) -> None:
    _round_trip(V1, V1_STRATEGIES, cls)()


@pytest.mark.parametrize("cls", V03_STRATEGIES.classes, ids=lambda c: c.__name__)
def test_v03_round_trip(cls: type) -> None:
    _round_trip(V03, V03_STRATEGIES, cls)()


@ROUND_TRIP
@given(
    st.one_of(
        *(
            V1_STRATEGIES.of(c)
            for c in (m.Task, m.Message, m.TaskStatusUpdateEvent, m.TaskArtifactUpdateEvent)
        )
    )
)
def test_v1_stream_response_round_trip(event: m.StreamEvent) -> None:
    wire = loads(dumps(V1.encode_stream_response(event)))
    assert V1.decode_stream_response(wire) == event


@ROUND_TRIP
@given(
    st.one_of(
        *(
            V03_STRATEGIES.of(c)
            for c in (m.Task, m.Message, m.TaskStatusUpdateEvent, m.TaskArtifactUpdateEvent)
        )
    ),
    st.none() | st.booleans(),
)
def test_v03_stream_event_round_trip(event: m.StreamEvent, final: bool | None) -> None:
    wire = loads(dumps(V03.encode_stream_event(event, final=final)))
    decoded, decoded_final = V03.decode_stream_event(wire)
    assert decoded == event
    if isinstance(event, m.TaskStatusUpdateEvent):
        state = event.status.state
        ends = m.is_terminal(state) or m.is_interrupted(state)
        assert decoded_final is (ends if final is None else final)
    else:
        assert decoded_final is False
        assert "final" not in wire


@ROUND_TRIP
@given(st.one_of(V03_STRATEGIES.of(m.Task), V03_STRATEGIES.of(m.Message)))
def test_v03_send_result_round_trip(result: m.SendMessageResult) -> None:
    wire = loads(dumps(V03.encode_send_result(result)))
    assert wire["kind"] == ("task" if isinstance(result, m.Task) else "message")
    assert V03.decode_send_result(wire) == result


@ROUND_TRIP
@given(st.one_of(V1_STRATEGIES.of(m.Task), V1_STRATEGIES.of(m.Message)))
def test_v1_send_result_round_trip(result: m.SendMessageResult) -> None:
    wire = loads(dumps(V1.encode_send_result(result)))
    assert V1.decode_send_result(wire) == result


@pytest.mark.parametrize(
    "stamp",
    [
        datetime(2026, 1, 2, 3, 4, 5, 678_901, tzinfo=UTC),
        datetime(2026, 1, 2, 5, 4, 5, 678_901, tzinfo=timezone(timedelta(hours=2))),
        datetime(2026, 1, 1, 22, 34, 5, 678_901, tzinfo=timezone(timedelta(hours=-4, minutes=-30))),
        datetime(2026, 1, 2, 3, 4, 5, 678_901, tzinfo=timezone(timedelta(0), "GMT")),
    ],
)
def test_a_timestamp_is_written_in_utc_whatever_its_offset(stamp: datetime) -> None:
    """A UTC time is written as it is (no conversion); any other offset is converted."""
    assert format_timestamp(stamp) == "2026-01-02T03:04:05.678Z"
    assert format_timestamp(datetime(5, 1, 1, tzinfo=UTC)) == "0005-01-01T00:00:00.000Z"


def test_arrays_are_written_in_order_with_each_item_encoded() -> None:
    """Repeated fields (``tuple[X, ...]``) come out as JSON arrays in their order, each item
    through its own type's hook (a message, a part's oneof arm, a string), in both forms."""
    parts = (m.TextPart("one"), m.DataPart({"k": [1, 2]}), m.TextPart("three"))
    first = m.Message("m1", m.Role.USER, parts, reference_task_ids=("t1", "t2"))
    history = (first, m.text_message("two", role=m.Role.AGENT), m.text_message("three"))
    task = m.Task(
        "t",
        m.TaskStatus(m.TaskState.WORKING),
        "c",
        history=history,
        artifacts=(m.new_artifact(parts),),
    )
    v1 = loads(dumps(V1.encode(task)))
    assert [message["messageId"] for message in v1["history"]] == [h.message_id for h in history]
    assert v1["history"][0]["parts"] == [
        {"text": "one"},
        {"data": {"k": [1, 2]}},
        {"text": "three"},
    ]
    assert v1["history"][0]["referenceTaskIds"] == ["t1", "t2"]
    assert v1["artifacts"][0]["parts"] == v1["history"][0]["parts"]
    v03 = loads(dumps(V03.encode(task)))
    assert [part["kind"] for part in v03["history"][0]["parts"]] == ["text", "data", "text"]
    assert v03["history"][0]["referenceTaskIds"] == ["t1", "t2"]
    for codec in (V1, V03):
        assert codec.decode(loads(dumps(codec.encode(task))), m.Task) == task
