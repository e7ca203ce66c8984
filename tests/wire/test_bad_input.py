"""Bad input gets one error type, ``InvalidParamsError``, with a JSON path and a reason, for both
wire forms; never a raw cattrs/KeyError traceback, never unbounded recursion or time."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cards import v03_card
from google.protobuf.timestamp_pb2 import Timestamp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import V03_STRATEGIES, V1_STRATEGIES, Strategies, json_values

from a2a_trio import model as m
from a2a_trio.errors import InvalidParamsError, ParseError
from a2a_trio.wire import MAX_JSON_DEPTH, V03, V03_PROTO, V1, loads

V1_MSG = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
V03_MSG = {
    "kind": "message",
    "messageId": "m",
    "role": "user",
    "parts": [{"kind": "text", "text": "hi"}],
}


def _with(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**base, **changes}


V1_CASES = [
    # wrong types
    (
        {"message": _with(V1_MSG, messageId=5)},
        "$.message.messageId",
        "expected a string, got number",
    ),
    ({"message": _with(V1_MSG, parts={"text": "x"})}, "$.message.parts", "expected an array"),
    (
        {"message": V1_MSG, "configuration": {"historyLength": "ten"}},
        "$.configuration.historyLength",
        "expected an integer",
    ),
    (
        {"message": V1_MSG, "configuration": {"historyLength": 2**40}},
        "$.configuration.historyLength",
        "integer out of the 32-bit range",
    ),
    (
        {"message": V1_MSG, "configuration": {"returnImmediately": "yes"}},
        "$.configuration.returnImmediately",
        "expected a boolean",
    ),
    ({"message": V1_MSG, "metadata": [1]}, "$.metadata", "expected an object, got array"),
    ([V1_MSG], "$", "expected an object, got array"),
    # missing required fields
    ({}, "$.message", "required field missing"),
    (
        {"message": {"role": "ROLE_USER", "parts": []}},
        "$.message.messageId",
        "required field missing",
    ),
    # two (or zero) members of a oneof
    (
        {"message": _with(V1_MSG, parts=[{"text": "a", "url": "http://x"}])},
        "$.message.parts[0]",
        "exactly one of text, raw, url, data must be set",
    ),
    (
        {"message": _with(V1_MSG, parts=[{"mediaType": "text/plain"}])},
        "$.message.parts[0]",
        "exactly one of text, raw, url, data must be set",
    ),
    # unknown enum names and bad scalars
    ({"message": _with(V1_MSG, role="ROLE_BOT")}, "$.message.role", "unknown role 'ROLE_BOT'"),
    ({"message": _with(V1_MSG, role="user")}, "$.message.role", "unknown role 'user'"),
    (
        {"message": _with(V1_MSG, parts=[{"raw": "not base64!"}])},
        "$.message.parts[0].raw",
        "not valid base64",
    ),
]

V03_CASES = [
    (
        {"message": _with(V03_MSG, messageId=5)},
        "$.message.messageId",
        "expected a string, got number",
    ),
    (
        {"message": V03_MSG, "configuration": {"blocking": "yes"}},
        "$.configuration.blocking",
        "expected a boolean",
    ),
    (
        {
            "message": V03_MSG,
            "configuration": {"pushNotificationConfig": {"url": "u", "authentication": {}}},
        },
        "$.configuration.pushNotificationConfig.authentication.schemes",
        "required field missing",
    ),
    ({}, "$.message", "required field missing"),
    ({"message": _with(V03_MSG, kind="task")}, "$.message", "kind must be 'message', got 'task'"),
    (
        {"message": _with(V03_MSG, parts=[{"kind": "image", "text": "x"}])},
        "$.message.parts[0]",
        "unknown part kind 'image'",
    ),
    (
        {"message": _with(V03_MSG, parts=[{"text": "x", "data": {}}])},
        "$.message.parts[0]",
        "exactly one of text, file, data must be set",
    ),
    (
        {
            "message": _with(
                V03_MSG, parts=[{"kind": "file", "file": {"bytes": "eA==", "uri": "http://x"}}]
            )
        },
        "$.message.parts[0]",
        "file: exactly one of bytes, uri must be set",
    ),
    (
        {"message": _with(V03_MSG, parts=[{"kind": "data", "data": [1, 2]}])},
        "$.message.parts[0].data",
        "expected an object, got array",
    ),
    (
        {"message": _with(V03_MSG, role="ROLE_USER")},
        "$.message.role",
        "unknown role 'ROLE_USER' (one of user, agent)",
    ),
]


@pytest.mark.parametrize(("data", "path", "reason"), V1_CASES)
def test_v1_bad_send_params(data: Any, path: str, reason: str) -> None:
    with pytest.raises(InvalidParamsError) as caught:
        V1.decode(data, m.SendMessageRequest)
    assert caught.value.path == path
    assert caught.value.reason.startswith(reason), caught.value.reason


@pytest.mark.parametrize(("sent", "read"), [("10", 10), ("1e1", 10), ("-0", 0), ("2.0", 2)])
def test_an_int32_may_be_a_json_number_in_quotes(sent: str, read: int) -> None:
    """ProtoJSON reads an integer written as a string, exponent notation included."""
    request = V1.decode(
        {"message": V1_MSG, "configuration": {"historyLength": sent}}, m.SendMessageRequest
    )
    assert request.configuration is not None
    assert request.configuration.history_length == read


@pytest.mark.parametrize("sent", [" 1", "1_0", "+5", "\u0663", "01", "0x10", "", "2.5"])
def test_an_int32_string_must_be_a_json_number(sent: str) -> None:
    """Only what is a JSON number in quotes, not what Python's ``int`` also takes."""
    with pytest.raises(InvalidParamsError) as caught:
        V1.decode(
            {"message": V1_MSG, "configuration": {"historyLength": sent}}, m.SendMessageRequest
        )
    assert caught.value.path == "$.configuration.historyLength"
    assert caught.value.reason.startswith("expected an integer")


@pytest.mark.parametrize(("data", "path", "reason"), V03_CASES)
def test_v03_bad_send_params(data: Any, path: str, reason: str) -> None:
    with pytest.raises(InvalidParamsError) as caught:
        V03.decode(data, m.SendMessageRequest)
    assert caught.value.path == path
    assert caught.value.reason.startswith(reason), caught.value.reason


def test_error_is_rooted_where_the_caller_says() -> None:
    bad = {"message": _with(V1_MSG, parts=[{"text": "a", "data": {}}])}
    with pytest.raises(InvalidParamsError) as caught:
        V1.decode(bad, m.SendMessageRequest, path="params")
    assert (
        str(caught.value)
        == "params.message.parts[0]: exactly one of text, raw, url, data must be set"
    )
    assert caught.value.data == {
        "path": "params.message.parts[0]",
        "reason": "exactly one of text, raw, url, data must be set",
    }
    assert caught.value.code == -32602


TIMESTAMPS_READ = [
    ("2024-01-01T00:00:00Z", datetime(2024, 1, 1, tzinfo=UTC)),
    ("2024-01-01T00:00:00.123456789Z", datetime(2024, 1, 1, 0, 0, 0, 123456, tzinfo=UTC)),
    ("2024-01-01T01:00:00+01:00", datetime(2024, 1, 1, tzinfo=UTC)),
    ("2023-12-31T23:30:00.5-00:30", datetime(2024, 1, 1, 0, 0, 0, 500000, tzinfo=UTC)),
]
TIMESTAMPS_REFUSED = [
    "2024-01-01 00:00:00Z",  # a space for the T (datetime.fromisoformat reads it)
    "2024-01-01T00:00:00.1234567891Z",  # 10 fraction digits (fromisoformat cuts them)
    "2024-01-01t00:00:00Z",
    "2024-01-01T00:00Z",  # no seconds
    "20240101T000000Z",  # ISO 8601's basic format
    "2024-01-01T00:00:00,5Z",
    "2024-01-01T00:00:00+01",
    "2024-13-01T00:00:00Z",
    "2024-01-01T24:00:00Z",
    "2024-01-01T00:00:00",  # no offset
    "\u0662024-01-01T00:00:00Z",  # another script's digit
    "",
]


def _protojson_reads(text: str) -> datetime | None:
    """What protobuf's own ProtoJSON reader makes of a timestamp (None: it refuses it)."""
    try:
        stamp = Timestamp()
        stamp.FromJsonString(text)
    except ValueError:
        return None
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(
        seconds=stamp.seconds, microseconds=stamp.nanos // 1000
    )


def _tasks_stamped(text: str) -> Iterator[tuple[Any, dict[str, Any]]]:
    """A task whose status has this timestamp, in each wire form."""
    for codec, state in (
        (V1, "TASK_STATE_WORKING"),
        (V03, "working"),
        (V03_PROTO, "TASK_STATE_WORKING"),
    ):
        yield codec, {"id": "t", "contextId": "c", "status": {"state": state, "timestamp": text}}


@pytest.mark.parametrize(("text", "instant"), TIMESTAMPS_READ)
def test_timestamps_protojson_reads_are_read(text: str, instant: datetime) -> None:
    assert _protojson_reads(text) == instant
    request = V1.decode({"statusTimestampAfter": text}, m.ListTasksRequest)
    assert request.status_timestamp_after == instant
    for codec, task in _tasks_stamped(text):
        assert codec.decode(task, m.Task).status.timestamp == instant


@pytest.mark.parametrize("text", TIMESTAMPS_REFUSED)
def test_timestamps_protojson_refuses_are_refused_naming_the_field(text: str) -> None:
    """ProtoJSON's Timestamp is RFC 3339 with a T, 0-9 fraction digits and Z or an offset;
    before, anything ``datetime.fromisoformat`` reads was taken (a space, 10 digits, no
    seconds). v0.3 JSON alone reads a timestamp without an offset, as UTC."""
    if not text.startswith("\u0662"):  # protobuf's reader takes other digits; RFC 3339 does not
        assert _protojson_reads(text) is None
    with pytest.raises(InvalidParamsError) as caught:
        V1.decode({"statusTimestampAfter": text}, m.ListTasksRequest)
    assert caught.value.path == "$.statusTimestampAfter"
    assert caught.value.reason.startswith("not an RFC 3339 timestamp (YYYY-MM-DDThh:mm:ss, up")
    for codec, task in _tasks_stamped(text):
        if codec is V03 and text == "2024-01-01T00:00:00":
            assert codec.decode(task, m.Task).status.timestamp == datetime(2024, 1, 1, tzinfo=UTC)
            continue
        with pytest.raises(InvalidParamsError) as caught:
            codec.decode(task, m.Task)
        assert caught.value.path == "$.status.timestamp"


@pytest.mark.parametrize(
    ("data", "path", "reason"),
    [
        ({"status": "TASK_STATE_WORKING"}, "$.status", "unknown task state 'TASK_STATE_WORKING'"),
        (
            {"lastUpdatedAfter": "yesterday"},
            "$.lastUpdatedAfter",
            "expected Unix time in milliseconds",
        ),
        ({"lastUpdatedAfter": 10**20}, "$.lastUpdatedAfter", "out of range"),
        ({"pageSize": 1.5}, "$.pageSize", "expected an integer"),
    ],
)
def test_v03_bad_list_params(data: Any, path: str, reason: str) -> None:
    with pytest.raises(InvalidParamsError) as caught:
        V03.decode(data, m.ListTasksRequest, path="$")
    assert (caught.value.path, caught.value.reason.startswith(reason)) == (path, True)


def test_v03_bad_stream_events() -> None:
    with pytest.raises(InvalidParamsError, match=r"^\$: kind must be one of task, message"):
        V03.decode_stream_event({"kind": "progress"})
    with pytest.raises(InvalidParamsError, match=r"^\$\.final: expected a boolean"):
        V03.decode_stream_event(
            {
                "kind": "status-update",
                "taskId": "t",
                "contextId": "c",
                "status": {"state": "working"},
                "final": "yes",
            }
        )
    with pytest.raises(InvalidParamsError, match=r"^\$: expected an object, got string"):
        V03.decode_stream_event("task")
    event = {
        "kind": "artifact-update",
        "taskId": "t",
        "contextId": "c",
        "artifact": {"artifactId": "a", "parts": []},
    }
    with pytest.raises(InvalidParamsError, match=r"^\$: kind must be one of task, message$"):
        V03.decode_send_result(event)


def test_v1_bad_stream_responses() -> None:
    with pytest.raises(
        InvalidParamsError, match="exactly one of task, message, statusUpdate, artifactUpdate"
    ):
        V1.decode_stream_response({"task": {}, "message": {}})
    with pytest.raises(InvalidParamsError, match=r"^params.task.status: required field missing"):
        V1.decode_stream_response({"task": {"id": "t"}}, path="params")


def test_bad_security_schemes_both_forms() -> None:
    two = {"apiKeySecurityScheme": {"location": "header", "name": "k"}, "mtlsSecurityScheme": {}}
    card = {
        "name": "n",
        "description": "d",
        "version": "1",
        "capabilities": {},
        "securitySchemes": {"k": two},
    }
    with pytest.raises(
        InvalidParamsError, match=r"securitySchemes\['k'\]: exactly one of apiKeySecurityScheme"
    ):
        V1.decode(card, m.AgentCard)
    card03 = v03_card(securitySchemes={"k": {"type": "kerberos"}})
    with pytest.raises(InvalidParamsError, match=r"unknown security scheme type 'kerberos'"):
        V03.decode(card03, m.AgentCard)


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 10_000, 200_000])
def test_deep_data_is_refused_without_recursion(depth: int) -> None:
    deep = _nested(depth)
    with pytest.raises(InvalidParamsError, match=f"nested deeper than {MAX_JSON_DEPTH}"):
        V1.decode({"message": _with(V1_MSG, metadata={"x": deep})}, m.SendMessageRequest)
    with pytest.raises(InvalidParamsError, match=f"nested deeper than {MAX_JSON_DEPTH}"):
        V03.decode(
            {"message": _with(V03_MSG, parts=[{"kind": "data", "data": {"x": deep}}])},
            m.SendMessageRequest,
        )


def test_data_at_the_depth_limit_is_accepted() -> None:
    ok = _nested(MAX_JSON_DEPTH - 1)
    request = V1.decode({"message": _with(V1_MSG, parts=[{"data": ok}])}, m.SendMessageRequest)
    assert request.message.parts == (m.DataPart(ok),)


def test_one_byte_order_mark_before_a_document_is_passed_over() -> None:
    assert loads(b"\xef\xbb\xbf{}") == loads("\ufeff{}") == {}
    with pytest.raises(ParseError, match="byte order mark"):
        loads(b"\xef\xbb\xbf\xef\xbb\xbf{}")
    with pytest.raises(ParseError, match="byte 0xe9 at offset 4"):  # offsets count the mark
        loads(b'\xef\xbb\xbf"\xe9"')


def test_deep_json_document_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        loads(b"[" * 100_000 + b"]" * 100_000)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'{"id": "caf\xe9"}', "not UTF-8 text: byte 0xe9 at offset 11"),
        (b'{"id": "\xed\xa0\x80"}', "not UTF-8 text: byte 0xed at offset 8"),
        (b'"\\ud800"', "no low surrogate in string"),
    ],
    ids=["latin-1", "encoded-surrogate", "escaped-lone-surrogate"],
)
def test_a_body_that_is_not_utf8_names_its_first_bad_byte(body: bytes, reason: str) -> None:
    with pytest.raises(ParseError) as refused:
        loads(body)
    assert refused.value.message == f"Parse error: the request body is not valid JSON ({reason})"


@pytest.mark.parametrize("codec", [V1, V03], ids=["v1", "v03"])
def test_huge_text_is_fast(codec: Any) -> None:
    text = "x" * 5_000_000
    message = m.Message(
        message_id="m", role=m.Role.USER, parts=[m.TextPart(text), m.RawPart(text.encode())]
    )
    started = time.perf_counter()
    wire = codec.encode(message)
    assert codec.decode(wire, m.Message) == message
    assert time.perf_counter() - started < 2.0


def _mutations(strategies: Strategies, cls: type, codec: Any) -> st.SearchStrategy[Any]:
    """A valid wire value with one node anywhere in it replaced by arbitrary JSON."""

    def paths(node: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        found = [here]
        if isinstance(node, dict):
            for key, child in node.items():
                found += paths(child, (*here, key))
        elif isinstance(node, list):
            for i, child in enumerate(node):
                found += paths(child, (*here, i))
        return found

    def replace(node: Any, path: tuple[Any, ...], new: Any) -> Any:
        if not path:
            return new
        head, *rest = path
        copy = dict(node) if isinstance(node, dict) else list(node)
        copy[head] = replace(node[head], tuple(rest), new)
        return copy

    @st.composite
    def mutated(draw: st.DrawFn) -> Any:
        wire = codec.encode(draw(strategies.of(cls)))
        path = draw(st.sampled_from(paths(wire)))
        return replace(wire, path, draw(json_values))

    return mutated()


FUZZ = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize(
    "cls",
    [m.SendMessageRequest, m.Task, m.AgentCard, m.ListTasksRequest, m.TaskPushNotificationConfig],
    ids=lambda c: c.__name__,
)
@pytest.mark.parametrize(
    ("codec", "strategies"), [(V1, V1_STRATEGIES), (V03, V03_STRATEGIES)], ids=["v1", "v03"]
)
def test_any_corruption_gives_invalid_params_or_a_value(
    codec: Any, strategies: Strategies, cls: type
) -> None:
    @FUZZ
    @given(_mutations(strategies, cls, codec))
    def check(wire: Any) -> None:
        try:
            decoded = codec.decode(wire, cls)
        except InvalidParamsError as exc:
            assert exc.path.startswith("$") and exc.reason
        else:
            assert isinstance(decoded, cls)

    check()
