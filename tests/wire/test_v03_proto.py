"""The v0.3 ProtoJSON codec (the v0.3 HTTP+JSON binding), checked against the v0.3 proto itself.

The SDK ships the compiled v0.3 proto (``a2a.compat.v0_3.a2a_v0_3_pb2``): everything ``V03_PROTO``
writes must parse into it strictly (no unknown keys, no unknown enum names), and what protobuf
writes back, with json names or with proto field names (as the SDK's client sends), must read
back as the same value.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2 as pb
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import V03_STRATEGIES

from a2a_trio import model as m
from a2a_trio.errors import InvalidParamsError
from a2a_trio.wire import V03, V03_PROTO, dumps, loads

CHECK = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EVENTS = (m.Task, m.Message, m.TaskStatusUpdateEvent, m.TaskArtifactUpdateEvent)


def proto_normal(value: Any) -> Any:
    """What the v0.3 proto cannot carry: a message's ``referenceTaskIds``."""
    if isinstance(value, tuple):
        return tuple(proto_normal(v) for v in value)
    if not attrs.has(type(value)):
        return value
    changes = {f.name: proto_normal(getattr(value, f.name)) for f in attrs.fields(type(value))}
    if isinstance(value, m.Message):
        changes["reference_task_ids"] = ()
    return attrs.evolve(value, **changes)


@CHECK
@given(st.one_of(*(V03_STRATEGIES.of(cls) for cls in EVENTS)))
def test_stream_responses_parse_strictly_as_the_v03_proto(event: m.StreamEvent) -> None:
    wire = loads(dumps(V03_PROTO.encode_stream_response(event)))
    parsed = json_format.ParseDict(wire, pb.StreamResponse())  # strict: unknown keys raise
    for names in (False, True):
        back = json_format.MessageToDict(parsed, preserving_proto_field_name=names)
        decoded, _final = V03_PROTO.decode_stream_response(back)
        assert decoded == proto_normal(event)


@CHECK
@given(V03_STRATEGIES.of(m.SendMessageRequest))
def test_send_requests_parse_strictly_as_the_v03_proto(request: m.SendMessageRequest) -> None:
    wire = loads(dumps(V03_PROTO.encode(request)))
    parsed = json_format.ParseDict(wire, pb.SendMessageRequest())
    sdk_body = json_format.MessageToDict(parsed, preserving_proto_field_name=True)
    assert "request" in sdk_body  # the proto field name the SDK's client writes
    expected = proto_normal(request)
    if request.configuration is not None and request.configuration.return_immediately:
        # proto3 drops ``blocking: false``; what is left must still read as non-blocking.
        assert V03_PROTO.decode(sdk_body, m.SendMessageRequest).configuration == attrs.evolve(
            expected.configuration, history_length=expected.configuration.history_length or None
        )
    else:
        assert V03_PROTO.decode(wire, m.SendMessageRequest) == expected


def test_enum_names_are_the_protos() -> None:
    names = {v.name for v in pb.TaskState.DESCRIPTOR.values}
    for state in m.TaskState:
        status = V03_PROTO.encode(m.TaskStatus(state))
        assert status["state"] in names
        assert V03_PROTO.decode(status, m.TaskStatus).state is state
    assert V03_PROTO.encode(m.TaskStatus(m.TaskState.CANCELED)) == {"state": "TASK_STATE_CANCELLED"}
    assert V03_PROTO.encode(m.Message("m", m.Role.AGENT, ())) == {
        "messageId": "m",
        "role": "ROLE_AGENT",
        "content": [],
    }


def test_parts_in_proto_shape() -> None:
    parts = (
        m.TextPart("t"),
        m.RawPart(b"\x00\xff", media_type="a/b", filename="f.bin"),
        m.UrlPart("https://x/y", media_type="c/d"),
        m.DataPart({"k": 1}),
    )
    wire = V03_PROTO.encode(m.Artifact("a", parts))["parts"]
    assert wire == [
        {"text": "t"},
        {"file": {"fileWithBytes": "AP8=", "mimeType": "a/b", "name": "f.bin"}},
        {"file": {"fileWithUri": "https://x/y", "mimeType": "c/d"}},
        {"data": {"data": {"k": 1}}},
    ]
    snake = [{"file": {"file_with_uri": "https://x/y", "mime_type": "c/d"}}]
    assert V03_PROTO.decode({"artifact_id": "a", "parts": snake}, m.Artifact).parts == parts[2:3]


def test_a_message_in_the_v03_json_shape_is_read_too() -> None:
    message = m.Message("m", m.Role.USER, (m.TextPart("x"),), metadata={"skillId": "s"})
    request = V03_PROTO.decode({"message": V03.encode(message)}, m.SendMessageRequest)
    assert request.message == message


def test_blocking_follows_proto3_when_a_configuration_is_given() -> None:
    message = {"messageId": "m", "role": "ROLE_USER", "content": []}

    def immediately(extra: dict[str, Any]) -> bool | None:
        config = V03_PROTO.decode({"message": message, **extra}, m.SendMessageRequest)
        return None if config.configuration is None else config.configuration.return_immediately

    assert immediately({}) is None  # no configuration: blocking, as v0.3 JSON-RPC
    assert immediately({"configuration": {}}) is True  # proto3 left ``blocking: false`` out
    assert immediately({"configuration": {"blocking": True}}) is False


def test_push_configs_by_resource_name() -> None:
    config = m.TaskPushNotificationConfig(url="https://h/hook", id="c1", task_id="t1", token="tok")
    wire = V03_PROTO.encode(config)
    assert wire["name"] == "tasks/t1/pushNotificationConfigs/c1"
    parsed = json_format.ParseDict(wire, pb.TaskPushNotificationConfig())
    assert (
        V03_PROTO.decode(json_format.MessageToDict(parsed), m.TaskPushNotificationConfig) == config
    )
    request = {
        "id": "t1",
        "config_id": "c1",
        "config": {"push_notification_config": {"url": "https://h/hook", "token": "tok"}},
    }
    assert V03_PROTO.decode(request, m.TaskPushNotificationConfig) == config
    listed = V03_PROTO.encode(m.ListTaskPushNotificationConfigsResponse(configs=(config,)))
    json_format.ParseDict(listed, pb.ListTaskPushNotificationConfigResponse())


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"task": {"id": "t"}, "message": {}}, "$"),
        (
            {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "done"}}},
            "$.statusUpdate.status.state",
        ),
        ([], "$"),
    ],
)
def test_bad_stream_responses_name_the_spot(data: Any, path: str) -> None:
    with pytest.raises(InvalidParamsError) as raised:
        V03_PROTO.decode_stream_response(data)
    assert raised.value.path == path


SDK_MESSAGE = {"message_id": "m", "role": "ROLE_USER", "content": [{"text": "x"}]}
JSON_MESSAGE = {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "x"}]}


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"request": {**SDK_MESSAGE, "content": [{"text": 5}]}}, "$.request.content[0].text"),
        ({"message": {**JSON_MESSAGE, "content": [{"text": 5}]}}, "$.message.content[0].text"),
        ({"message": {**JSON_MESSAGE, "content": {}}}, "$.message.content"),
        ({"request": {**SDK_MESSAGE, "message_id": 5}}, "$.request.message_id"),
        ({"request": {**SDK_MESSAGE, "content": [{}]}}, "$.request.content[0]"),
        (
            {"request": {**SDK_MESSAGE, "content": [{"file": {"file_with_bytes": 5}}]}},
            "$.request.content[0].file.file_with_bytes",
        ),
        (
            {"request": SDK_MESSAGE, "configuration": {"push_notification": {"url": 5}}},
            "$.configuration.push_notification.url",
        ),
        (
            {"message": JSON_MESSAGE, "configuration": {"pushNotificationConfig": {"url": 5}}},
            "$.configuration.pushNotificationConfig.url",
        ),
        # the v0.3 JSON-RPC shape keeps its own names
        (
            {"message": {"kind": "message", "messageId": "m", "role": "user", "parts": [{}]}},
            "$.message.parts[0]",
        ),
        ({}, "$.message"),
    ],
)
def test_bad_requests_name_the_keys_sent(data: Any, path: str) -> None:
    with pytest.raises(InvalidParamsError) as caught:
        V03_PROTO.decode(data, m.SendMessageRequest)
    assert caught.value.path == path


@pytest.mark.parametrize(
    ("path", "data", "sent"),
    [
        ("$.message.parts", {"request": {"message_id": "m"}}, "$.request.content"),
        ("$.message.parts", {"message": {"parts": []}}, "$.message.parts"),
        ("$.message.parts", {"message": {"kind": "message"}}, "$.message.parts"),
        ("$.message.contextId", {"request": {"context_id": "c"}}, "$.request.context_id"),
        ("$.message.metadata.skillId", {"request": {"metadata": {"skillId": 5}}},
         "$.request.metadata.skillId"),
        ("$.configuration.historyLength", {"configuration": {"history_length": -1}},
         "$.configuration.history_length"),
        ("$.message.metadata['a b']", {"message": {"metadata": {}}}, "$.message.metadata['a b']"),
        ("$.message.parts[3].text", {"message": {"content": []}}, "$.message.content[3].text"),
        ("$.message", [], "$.message"),
    ],
)  # fmt: skip
def test_sent_path_spells_a_model_path_as_the_document_did(path: str, data: Any, sent: str) -> None:
    assert V03_PROTO.sent_path(path, data) == sent
