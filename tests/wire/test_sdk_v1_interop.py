"""Cross-check the v1.0 codec with the official SDK's protobuf types (a2a-sdk, ``a2a.types``).

For every v1.0 message type: JSON a2a_trio writes parses strictly (unknown keys are errors) with
the SDK's ``json_format.ParseDict`` and prints back the same content; JSON the SDK writes
(``MessageToDict``) reads back with a2a_trio to the same model value.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import a2a.types as sdk
import attrs
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message as ProtoMessage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import V1_STRATEGIES

from a2a_trio import model as m
from a2a_trio.errors import InvalidParamsError
from a2a_trio.wire import V1

CHECK = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EMPTY: tuple[Any, ...] = ("", 0, 0.0, False, [], {})


def _sdk_class(cls: type) -> type[ProtoMessage]:
    found: type[ProtoMessage] = getattr(sdk, cls.__name__)
    return found


def same_content(ours: Any, theirs: Any, where: str = "$") -> None:
    """Equal JSON content, allowing what ProtoJSON allows to differ.

    The SDK may print fields at their zero value that a2a_trio leaves out, timestamps with another
    number of fraction digits, and integral floats as floats.
    """
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for key in ours.keys() | theirs.keys():
            if key not in ours:
                assert theirs[key] in EMPTY or str(theirs[key]).endswith("_UNSPECIFIED"), (
                    f"{where}.{key}: SDK has {theirs[key]!r}, a2a_trio nothing"
                )
            elif key not in theirs:
                raise AssertionError(f"{where}.{key}: a2a_trio has {ours[key]!r}, SDK nothing")
            else:
                same_content(ours[key], theirs[key], f"{where}.{key}")
    elif isinstance(ours, list) and isinstance(theirs, list):
        assert len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            same_content(a, b, f"{where}[{i}]")
    elif isinstance(ours, str) and isinstance(theirs, str) and ours.endswith("Z"):
        try:
            assert datetime.fromisoformat(ours) == datetime.fromisoformat(theirs), where
        except ValueError:
            assert ours == theirs, where
    else:
        assert ours == theirs, f"{where}: {ours!r} != {theirs!r}"


def _sdk_parse(wire: dict[str, Any], cls: type[ProtoMessage]) -> ProtoMessage:
    return json_format.ParseDict(wire, cls(), ignore_unknown_fields=False)


def _check(value: Any, cls: type) -> None:
    ours = V1.encode(value)
    parsed = _sdk_parse(ours, _sdk_class(cls))
    full = json_format.MessageToDict(parsed, always_print_fields_with_no_presence=True)
    same_content(ours, full)
    # SDK -> a2a_trio: with zero values printed, the value comes back exactly.
    assert V1.decode(full, cls) == value
    # The SDK's default printing leaves out zero values even of REQUIRED fields; a2a_trio reads
    # that back exactly, or refuses it as a missing REQUIRED field (never anything else).
    sparse = json_format.MessageToDict(parsed)
    try:
        assert V1.decode(sparse, cls) == value
    except InvalidParamsError as exc:
        assert exc.reason == "required field missing", exc


@pytest.mark.parametrize("cls", V1_STRATEGIES.classes, ids=lambda c: c.__name__)
def test_sdk_agrees_on_every_message_type(cls: type) -> None:
    @CHECK
    @given(V1_STRATEGIES.of(cls))
    def check(value: Any) -> None:
        _check(value, cls)

    check()


STREAM_EVENTS = st.one_of(
    *(
        V1_STRATEGIES.of(c)
        for c in (m.Task, m.Message, m.TaskStatusUpdateEvent, m.TaskArtifactUpdateEvent)
    )
)


@CHECK
@given(STREAM_EVENTS)
def test_sdk_agrees_on_stream_responses(event: m.StreamEvent) -> None:
    ours = V1.encode_stream_response(event)
    parsed = _sdk_parse(ours, sdk.StreamResponse)
    full = json_format.MessageToDict(parsed, always_print_fields_with_no_presence=True)
    same_content(ours, full)
    assert V1.decode_stream_response(full) == event


def test_sdk_built_task_reads_back_exactly() -> None:
    """A task built with the SDK's own constructors, printed the way its server prints it."""
    task = sdk.Task(
        id="t-1",
        context_id="c-1",
        status=sdk.TaskStatus(state=sdk.TaskState.TASK_STATE_WORKING),
        history=[
            sdk.Message(
                message_id="m-1",
                role=sdk.Role.ROLE_USER,
                parts=[sdk.Part(text="hi"), sdk.Part(raw=b"\x00\xff", media_type="a/b")],
            )
        ],
    )
    task.status.timestamp.FromJsonString("2025-01-02T03:04:05.678Z")
    task.artifacts.add(artifact_id="a-1").parts.add().data.struct_value.update({"k": [1, "x"]})
    ours = V1.decode(json_format.MessageToDict(task), m.Task)
    assert ours.status.timestamp == datetime.fromisoformat("2025-01-02T03:04:05.678Z")
    assert ours.history[0].parts == (m.TextPart("hi"), m.RawPart(b"\x00\xff", media_type="a/b"))
    assert ours.artifacts[0].parts == (m.DataPart({"k": [1, "x"]}),)
    assert _sdk_parse(V1.encode(ours), sdk.Task) == task


def test_model_covers_every_proto_message_and_field() -> None:
    """The model against the SDK's compiled descriptor of ``a2a.proto``: nothing missing."""
    as_unions = {  # proto messages the model writes as unions or folds into their parent
        "Part": {"text", "raw", "url", "data", "metadata", "filename", "media_type"},
        "SecurityScheme": None,
        "OAuthFlows": None,
        "StringList": None,
        "SendMessageResponse": None,
        "StreamResponse": None,
    }
    for name, descriptor in sdk.a2a_pb2.DESCRIPTOR.message_types_by_name.items():
        proto_fields = {f.name for f in descriptor.fields}
        if name in as_unions:
            expected = as_unions[name]
            if expected is not None:
                covered = set().union(*({f.name for f in attrs.fields(c)} for c in m.PART_TYPES))
                assert covered == expected == proto_fields
            continue
        cls = getattr(m, name)
        assert {f.name for f in attrs.fields(cls)} == proto_fields, name
    for enum_name, ours in (("TaskState", m.TaskState), ("Role", m.Role)):
        values = sdk.a2a_pb2.DESCRIPTOR.enum_types_by_name[enum_name].values
        prefix = "TASK_STATE_" if ours is m.TaskState else "ROLE_"
        assert {(v.name, v.number) for v in values} == {
            (prefix + member.name, member.value) for member in ours
        }
