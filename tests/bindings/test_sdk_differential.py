"""Differential wire conformance: the same requests to a2a_trio and to the official a2a-sdk server.

Each case sends one request to both servers (v1.0 JSON-RPC, v1.0 HTTP+JSON and v0.3 JSON-RPC)
and compares the outcome class (``differential.Outcome``).  ``spec`` is what A2A v1.0 (v0.3 on
v0.3 calls) asks for and a2a_trio must answer; ``sdk`` pins what the SDK 1.3.0 answers where it
differs, with the reason in ``why`` (docs/bindings.md, "Differences from the official SDK's
server"), so a change on either side shows up here.  The SDK's echo agent is
``tests/client/sdk_echo_agent.py`` (JSON-RPC at ``/``, HTTP+JSON under ``/rest``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from functools import partial
from typing import Any

import attrs
import httpx
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sdk_peer import running_sdk_agent
from strategies import json_values

from a2a_trio import serve

from .agents import agent
from .conftest import CONFIG
from .differential import V1_HEADERS, Call, Outcome, outcome_of, rpc, shape

JSON = "application/json"
SSE = "text/event-stream"
JSON_HEADERS = {**V1_HEADERS, "Content-Type": JSON}


def result(keys: str) -> Outcome:
    return Outcome(200, JSON, f"result {keys} id=1")


def rpc_error(code: int, rid: Any = 1, status: int = 200) -> Outcome:
    return Outcome(status, JSON, f"error {code} id={rid!r}")


def problem(status: int, grpc: str, reason: str) -> Outcome:
    return Outcome(status, JSON, f"problem {grpc} {reason}")


def ok(keys: str, media_type: str = JSON) -> Outcome:
    return Outcome(200, media_type, "object " + keys)


def events(first: str, last: str) -> Outcome:
    return Outcome(200, SSE, f"events {first} .. {last}")


SDK_REST = "application/a2a+json"
PLAIN_404 = Outcome(404, "text/plain", "text")
TASK_V03 = "artifacts,contextId,history,id,kind,status"
LIST = "nextPageToken,pageSize,tasks,totalSize"


def msg(**changes: Any) -> dict[str, Any]:
    return {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "echo me"}], **changes}


def msg03(**changes: Any) -> dict[str, Any]:
    base = {"kind": "message", "messageId": "m-1", "role": "user"}
    return {**base, "parts": [{"kind": "text", "text": "echo me"}], **changes}


def send1(params: Any) -> Call:
    return Call("rpc", "POST", "", rpc("SendMessage", params), V1_HEADERS)


def call1(method: str, params: Any, **envelope: Any) -> Call:
    return Call("rpc", "POST", "", rpc(method, params, **envelope), V1_HEADERS)


def call03(method: str, params: Any) -> Call:
    return Call("rpc", "POST", "", rpc(method, params))


def raw(body: bytes, headers: dict[str, str] = JSON_HEADERS) -> Call:
    return Call("rpc", "POST", "", body, headers)


def rest(verb: str, path: str, body: Any = None, headers: dict[str, str] = V1_HEADERS) -> Call:
    return Call("rest", verb, path, body, headers)


@attrs.frozen
class Case:
    """A request, the spec's outcome (a2a_trio's), and the SDK's where it differs, and why."""

    call: Call
    spec: Outcome
    sdk: Outcome | None = None
    why: str = ""


def unimplemented(call: Call, reason: str) -> Case:
    """A2A v1.0 §5.4 maps UnsupportedOperation and VersionNotSupported to gRPC UNIMPLEMENTED
    (HTTP 400); the SDK writes FAILED_PRECONDITION."""
    sdk = problem(400, "FAILED_PRECONDITION", reason)
    return Case(call, problem(400, "UNIMPLEMENTED", reason), sdk, "A2A v1.0 §5.4")


def served_over_rest(call: Call, keys: str) -> Case:
    """A2A v1.0 §11.1 answers in application/json; the SDK answers application/a2a+json."""
    return Case(call, ok(keys), ok(keys, SDK_REST), "A2A v1.0 §11.1 (the SDK: §14.1's type)")


def refused_before_any_event(call: Call) -> Case:
    """A streaming call refused before any event (a finished task) is a JSON-RPC error response;
    the SDK's v0.3 adapter opens an event stream holding that error."""
    sdk = events("error -32004 id=1", "error -32004 id=1")
    return Case(call, rpc_error(-32004), sdk, "the SDK answers a refusal as a stream")


CASES: dict[str, Case] = {
    # --- v1.0 JSON-RPC: valid and odd-but-valid -------------------------------------------
    "send": Case(send1({"message": msg()}), result("task")),
    "send with unknown fields": Case(
        send1({"message": msg(zzz=1), "yyy": {"a": 1}}), result("task")
    ),
    "send nested data, unicode, metadata": Case(
        send1(
            {
                "message": msg(
                    parts=[{"text": "☃ 😀"}, {"data": {"a": [1, {"b": None}], "c": 1e300}}],
                    metadata={"k": "", "n": {"m": [2**70]}},
                ),
                "metadata": {"x": 1},
            }
        ),
        result("task"),
    ),
    "send data that is not an object": Case(
        send1({"message": msg(parts=[{"data": [1, "a"]}, {"data": 5}])}), result("task")
    ),
    "send with client contextId and referenceTaskIds": Case(
        send1({"message": msg(contextId="ctx-client", referenceTaskIds=["a", "b"])}),
        result("task"),
    ),
    "send with null fields (ProtoJSON: unset)": Case(
        send1({"message": msg(taskId=None, metadata=None), "configuration": None}), result("task")
    ),
    "send with historyLength 0": Case(
        send1({"message": msg(), "configuration": {"historyLength": 0}}), result("task")
    ),
    "send with an int32 as a string (ProtoJSON)": Case(
        send1({"message": msg(), "configuration": {"historyLength": "2"}}), result("task")
    ),
    "send with an int32 in exponent form, as a string (ProtoJSON)": Case(
        send1({"message": msg(), "configuration": {"historyLength": "1e1"}}), result("task")
    ),
    "send with an int32 string that is no JSON number": Case(
        send1({"message": msg(), "configuration": {"historyLength": " 1"}}), rpc_error(-32602)
    ),
    "send with role as an enum number": Case(send1({"message": msg(role=1)}), result("task")),
    "send with unpadded base64": Case(
        send1({"message": msg(parts=[{"raw": "aGVsbG8", "mediaType": "text/plain"}])}),
        result("task"),
    ),
    "send with returnImmediately": Case(
        send1({"message": msg(), "configuration": {"returnImmediately": True}}), result("task")
    ),
    "send accepting only output modes the agent declares nowhere (advice, not refused)": Case(
        send1({"message": msg(), "configuration": {"acceptedOutputModes": ["image/x-none"]}}),
        result("task"),
    ),
    "send accepting output modes that are no media types": Case(
        send1({"message": msg(), "configuration": {"acceptedOutputModes": ["", "text", "*"]}}),
        result("task"),
    ),
    # --- v1.0 JSON-RPC: invalid params -------------------------------------------------------
    "send without message": Case(send1({}), rpc_error(-32602)),
    "send with message a string": Case(send1({"message": "x"}), rpc_error(-32602)),
    "send without parts": Case(send1({"message": msg(parts=[])}), rpc_error(-32602)),
    "send without messageId": Case(
        send1({"message": {"role": "ROLE_USER", "parts": [{"text": "x"}]}}), rpc_error(-32602)
    ),
    "send with an empty messageId": Case(send1({"message": msg(messageId="")}), rpc_error(-32602)),
    "send with an unknown role": Case(send1({"message": msg(role="user")}), rpc_error(-32602)),
    "send from the agent": Case(
        send1({"message": msg(role="ROLE_AGENT")}),
        rpc_error(-32602),
        rpc_error(-32603),
        "the SDK's agent raises on a message from an agent: InternalError",
    ),
    "send with an empty part": Case(
        send1({"message": msg(parts=[{}])}),
        rpc_error(-32602),
        result("task"),
        "a Part needs one of text, raw, url, data; the SDK stores an empty part",
    ),
    "send with two kinds in one part": Case(
        send1({"message": msg(parts=[{"text": "a", "url": "b"}])}), rpc_error(-32602)
    ),
    "send with bytes that are not base64": Case(
        send1({"message": msg(parts=[{"raw": "!!!", "mediaType": "text/plain"}])}),
        rpc_error(-32602),
        result("task"),
        "ProtoJSON bytes are base64; the SDK's parser lets '!!!' through",
    ),
    "send with text a number": Case(
        send1({"message": msg(parts=[{"text": 5}])}), rpc_error(-32602)
    ),
    "send with metadata a list": Case(send1({"message": msg(metadata=[1])}), rpc_error(-32602)),
    "send with negative historyLength": Case(
        send1({"message": msg(), "configuration": {"historyLength": -1}}), rpc_error(-32602)
    ),
    "send with historyLength beyond int32": Case(
        send1({"message": msg(), "configuration": {"historyLength": 2**40}}), rpc_error(-32602)
    ),
    "send with a fractional historyLength": Case(
        send1({"message": msg(), "configuration": {"historyLength": 1.5}}), rpc_error(-32602)
    ),
    "send with an empty text": Case(
        send1({"message": msg(parts=[{"text": ""}])}),
        result("task"),
        rpc_error(-32603),
        "an empty text is a valid part; the SDK fails inside with InternalError",
    ),
    "send to an unknown task": Case(send1({"message": msg(taskId="no-such")}), rpc_error(-32001)),
    "get an unknown task": Case(call1("GetTask", {"id": "no-such"}), rpc_error(-32001)),
    "get without id": Case(call1("GetTask", {}), rpc_error(-32602)),
    "get with id a number": Case(call1("GetTask", {"id": 5}), rpc_error(-32602)),
    "get with an empty id": Case(call1("GetTask", {"id": ""}), rpc_error(-32602)),
    "cancel with an empty id": Case(call1("CancelTask", {"id": ""}), rpc_error(-32602)),
    "subscribe with an empty id": Case(call1("SubscribeToTask", {"id": ""}), rpc_error(-32602)),
    "cancel an unknown task": Case(call1("CancelTask", {"id": "no-such"}), rpc_error(-32001)),
    "subscribe to an unknown task": Case(
        call1("SubscribeToTask", {"id": "no-such"}), rpc_error(-32001)
    ),
    "list": Case(call1("ListTasks", {}), result(LIST)),
    "list pageSize 100": Case(call1("ListTasks", {"pageSize": 100}), result(LIST)),
    "list pageSize 0": Case(call1("ListTasks", {"pageSize": 0}), rpc_error(-32602)),
    "list pageSize 101": Case(call1("ListTasks", {"pageSize": 101}), rpc_error(-32602)),
    "list filtered": Case(
        call1(
            "ListTasks",
            {
                "status": "TASK_STATE_COMPLETED",
                "contextId": "no-such",
                "statusTimestampAfter": "2020-01-01T00:00:00Z",
                "historyLength": 0,
                "includeArtifacts": True,
            },
        ),
        result(LIST),
    ),
    "list with an unknown state": Case(
        call1("ListTasks", {"status": "completed"}),
        rpc_error(-32602),
        result(LIST),
        "ProtoJSON enums are their proto names; the SDK ignores a name it does not know",
    ),
    "list with a bad timestamp": Case(
        call1("ListTasks", {"statusTimestampAfter": "yesterday"}), rpc_error(-32602)
    ),
    "list with a space for the timestamp's T": Case(
        call1("ListTasks", {"statusTimestampAfter": "2020-01-01 00:00:00Z"}), rpc_error(-32602)
    ),
    "list with 10 fraction digits in a timestamp": Case(
        call1("ListTasks", {"statusTimestampAfter": "2020-01-01T00:00:00.1234567891Z"}),
        rpc_error(-32602),
    ),
    "list with a bad page token": Case(
        call1("ListTasks", {"pageToken": "junk"}), rpc_error(-32602)
    ),
    # --- v1.0 JSON-RPC: the envelope ----------------------------------------------------------
    "unknown method": Case(call1("NoSuchMethod", {}), rpc_error(-32601)),
    "v0.3 method with A2A-Version 1.0": Case(
        call1("message/send", {"message": msg03()}),
        rpc_error(-32601),
        rpc_error(-32603),
        "a 1.0 request names 1.0 methods only; the SDK fails inside",
    ),
    "jsonrpc 1.0": Case(call1("GetTask", {"id": "x"}, jsonrpc="1.0"), rpc_error(-32600)),
    "id an object": Case(call1("GetTask", {"id": "x"}, id={"a": 1}), rpc_error(-32600, None)),
    "id a fraction": Case(
        call1("GetTask", {"id": "x"}, id=1.5),
        rpc_error(-32001, 1.5),
        rpc_error(-32600, None),
        "JSON-RPC 2.0: an id is a string, number or null (fractions SHOULD NOT, not MUST NOT)",
    ),
    "id beyond 64 bits": Case(call1("GetTask", {"id": "x"}, id=2**70), rpc_error(-32001, 2**70)),
    "params an array": Case(call1("GetTask", ["x"]), rpc_error(-32602)),
    "method a number": Case(call1(5, {}), rpc_error(-32600, 1)),  # type: ignore[arg-type]
    "a notification": Case(
        Call(
            "rpc",
            "POST",
            "",
            {"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "x"}},
            V1_HEADERS,
        ),
        Outcome(204, "", "empty"),
        rpc_error(-32001, None),
        "JSON-RPC 2.0 §4.1: the server MUST NOT reply to a notification",
    ),
    "empty body": Case(raw(b""), rpc_error(-32700, None)),
    "not JSON": Case(raw(b"{nope"), rpc_error(-32700, None)),
    "not UTF-8": Case(
        raw(b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"\xff"}}'),
        rpc_error(-32700, None),
        rpc_error(-32603, None),
        "RFC 8259 §8.1: JSON text is UTF-8; the SDK fails inside",
    ),
    "a batch": Case(
        Call("rpc", "POST", "", [rpc("GetTask", {"id": "x"})], V1_HEADERS),
        rpc_error(-32600, None),
    ),
    "wrong content type": Case(
        raw(
            b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}',
            {**V1_HEADERS, "Content-Type": "text/plain"},
        ),
        rpc_error(-32600, None, 415),
        rpc_error(-32001),
        "A2A v1.0 §9.1: Content-Type application/json; the SDK reads any",
    ),
    "unsupported A2A-Version": Case(
        Call("rpc", "POST", "", rpc("GetTask", {"id": "x"}), {"A2A-Version": "2.0"}),
        rpc_error(-32009),
    ),
    "A2A-Version with a patch number": Case(
        Call("rpc", "POST", "", rpc("ListTasks", {}), {"A2A-Version": "1.0.3"}), result(LIST)
    ),
    "A2A-Version 1.1": Case(
        Call("rpc", "POST", "", rpc("ListTasks", {}), {"A2A-Version": "1.1"}),
        rpc_error(-32009),
        result(LIST),
        "A2A v1.0 §3.6.2: a version the server does not speak is VersionNotSupportedError",
    ),
    "A2A-Version as a request parameter": Case(
        Call("rpc", "POST", "?A2A-Version=1.0", rpc("tasks/get", {"id": "x"})),
        rpc_error(-32601),
        rpc_error(-32001),
        "A2A v1.0 §3.6.1: the version MAY come as a request parameter; the SDK reads only the"
        " header, so it serves the v0.3 method",
    ),
    "a v1.0 method without a version header": Case(
        Call("rpc", "POST", "", rpc("GetTask", {"id": "no-such"})),
        rpc_error(-32001),
        rpc_error(-32009),
        "a2a_trio serves a 1.0 method name as 1.0 (the names tell the versions apart); the SDK"
        " takes the missing header for 0.3 (§3.6.1) and refuses",
    ),
    "GET on the JSON-RPC URL": Case(
        Call("rpc", "GET", "", None, V1_HEADERS),
        rpc_error(-32600, None, 405),
        Outcome(405, "text/plain", "text"),
        "every a2a_trio answer is JSON",
    ),
    # --- v1.0 JSON-RPC on a finished task -------------------------------------------------------
    "get a finished task": Case(
        call1("GetTask", {"id": "{done}"}), result("artifacts,contextId,history,id,status")
    ),
    "message to a finished task": Case(send1({"message": msg(taskId="{done}")}), rpc_error(-32004)),
    "cancel a finished task": Case(call1("CancelTask", {"id": "{done}"}), rpc_error(-32002)),
    "subscribe to a finished task": Case(
        call1("SubscribeToTask", {"id": "{done}"}), rpc_error(-32004)
    ),
    # --- v1.0 HTTP+JSON ---------------------------------------------------------------------
    "REST send": served_over_rest(rest("POST", "/message:send", {"message": msg()}), "task"),
    "REST stream": Case(
        rest("POST", "/message:stream", {"message": msg()}),
        events("object task", "object statusUpdate"),
    ),
    "REST send without message": Case(
        rest("POST", "/message:send", {}), problem(400, "INVALID_ARGUMENT", "INVALID_PARAMS")
    ),
    "REST send not JSON": Case(
        rest("POST", "/message:send", b"{nope", JSON_HEADERS),
        problem(400, "INVALID_ARGUMENT", "JSON_PARSE"),
        problem(400, "INVALID_ARGUMENT", "INVALID_REQUEST"),
        "the reason for JSONParseError (-32700) is JSON_PARSE, as for every A2A error",
    ),
    "REST send a body that is no object": Case(
        rest("POST", "/message:send", b"[1]", JSON_HEADERS),
        problem(400, "INVALID_ARGUMENT", "INVALID_PARAMS"),
        problem(400, "INVALID_ARGUMENT", "INVALID_REQUEST"),
        "the spec leaves the reason open: a2a_trio reads the body as the request's params",
    ),
    "REST send text/plain": Case(
        rest("POST", "/message:send", b"{}", {**V1_HEADERS, "Content-Type": "text/plain"}),
        problem(415, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED"),
        problem(400, "INVALID_ARGUMENT", "INVALID_PARAMS"),
        "A2A v1.0 §11.1: bodies are application/json",
    ),
    "REST get an unknown task": Case(
        rest("GET", "/tasks/no-such"), problem(404, "NOT_FOUND", "TASK_NOT_FOUND")
    ),
    "REST cancel an unknown task": Case(
        rest("POST", "/tasks/no-such:cancel"), problem(404, "NOT_FOUND", "TASK_NOT_FOUND")
    ),
    "REST subscribe to an unknown task": Case(
        rest("POST", "/tasks/no-such:subscribe"), problem(404, "NOT_FOUND", "TASK_NOT_FOUND")
    ),
    "REST list": served_over_rest(rest("GET", "/tasks"), LIST),
    "REST list pageSize 0": Case(
        rest("GET", "/tasks?pageSize=0"), problem(400, "INVALID_ARGUMENT", "INVALID_PARAMS")
    ),
    "REST list with an unknown state": Case(
        rest("GET", "/tasks?status=sleeping"),
        problem(400, "INVALID_ARGUMENT", "INVALID_PARAMS"),
        ok(LIST, SDK_REST),
        "the SDK ignores a state it does not know and lists every task",
    ),
    "REST list with an unknown parameter": Case(
        rest("GET", "/tasks?colour=red"),
        problem(400, "INVALID_ARGUMENT", "INVALID_PARAMS"),
        ok(LIST, SDK_REST),
        "a2a_trio refuses a parameter it would otherwise silently ignore",
    ),
    "REST version as a request parameter": Case(
        rest("GET", "/tasks/no-such?A2A-Version=1.0", headers={}),
        problem(404, "NOT_FOUND", "TASK_NOT_FOUND"),
        problem(400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"),
        "A2A v1.0 §3.6.1: the version MAY come as a request parameter",
    ),
    "REST without a version header": Case(
        rest("GET", "/tasks/no-such", headers={}),
        problem(404, "NOT_FOUND", "TASK_NOT_FOUND"),
        problem(400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"),
        "a2a_trio's root paths are 1.0 resources (v0.3 REST is under /v1); the SDK takes the"
        " missing header for 0.3 (§3.6.1) and refuses",
    ),
    "REST under a tenant": Case(
        rest("GET", "/t1/tasks/no-such"),
        problem(404, "NOT_FOUND", "TASK_NOT_FOUND"),
        PLAIN_404,
        "the v1.0 proto's additional_bindings serve every path under /{tenant} too",
    ),
    "REST version with a patch number": Case(
        rest("GET", "/tasks/no-such", headers={"A2A-Version": "1.0.0"}),
        problem(404, "NOT_FOUND", "TASK_NOT_FOUND"),
    ),
    "REST unsupported version": unimplemented(
        rest("GET", "/tasks/no-such", headers={"A2A-Version": "2.0"}), "VERSION_NOT_SUPPORTED"
    ),
    "REST unknown path": Case(
        rest("GET", "/no/such"),
        problem(404, "NOT_FOUND", "METHOD_NOT_FOUND"),
        PLAIN_404,
        "every a2a_trio answer is an AIP-193 problem",
    ),
    "REST wrong verb": Case(
        rest("DELETE", "/tasks/no-such"),
        problem(405, "UNIMPLEMENTED", "METHOD_NOT_FOUND"),
        PLAIN_404,
        "RFC 9110 §15.5.6: a resource that exists but not for this verb is 405",
    ),
    "REST get a finished task, no history": served_over_rest(
        rest("GET", "/tasks/{done}?historyLength=0"), "artifacts,contextId,id,status"
    ),
    "REST message to a finished task": unimplemented(
        rest("POST", "/message:send", {"message": msg(taskId="{done}")}), "UNSUPPORTED_OPERATION"
    ),
    "REST cancel a finished task": Case(
        rest("POST", "/tasks/{done}:cancel"),
        problem(409, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"),
        problem(400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"),
        "A2A v1.0 §5.4 maps TaskNotCancelableError to HTTP 409",
    ),
    "REST subscribe to a finished task": unimplemented(
        rest("POST", "/tasks/{done}:subscribe"), "UNSUPPORTED_OPERATION"
    ),
    # --- v0.3 JSON-RPC (no A2A-Version header) ------------------------------------------------
    "v0.3 send": Case(call03("message/send", {"message": msg03()}), result(TASK_V03)),
    "v0.3 send file and data parts": Case(
        call03(
            "message/send",
            {
                "message": msg03(
                    parts=[
                        {"kind": "file", "file": {"bytes": "aGVsbG8=", "mimeType": "text/plain"}},
                        {"kind": "file", "file": {"uri": "http://x/y", "mimeType": "text/plain"}},
                        {"kind": "data", "data": {"x": {"y": [1]}}},
                    ]
                )
            },
        ),
        result(TASK_V03),
    ),
    "v0.3 stream": Case(
        call03("message/stream", {"message": msg03()}),
        events(
            "result contextId,history,id,kind,status id=1",
            "result contextId,final,kind,status,taskId id=1",
        ),
    ),
    "v0.3 get an unknown task": Case(call03("tasks/get", {"id": "no-such"}), rpc_error(-32001)),
    "v0.3 get without id": Case(
        call03("tasks/get", {}),
        rpc_error(-32602),
        rpc_error(-32600),
        "JSON-RPC 2.0 §5.1: invalid method parameters are -32602",
    ),
    "v0.3 get with an empty id": Case(call03("tasks/get", {"id": ""}), rpc_error(-32602)),
    "v0.3 cancel with an empty id": Case(call03("tasks/cancel", {"id": ""}), rpc_error(-32602)),
    "v0.3 resubscribe with an empty id": Case(
        call03("tasks/resubscribe", {"id": ""}),
        rpc_error(-32602),
        events("error -32602 id=1", "error -32602 id=1"),
        "the SDK answers a refusal as a stream",
    ),
    "v0.3 params an array": Case(
        call03("tasks/get", ["x"]),
        rpc_error(-32602),
        rpc_error(-32600),
        "JSON-RPC 2.0 §5.1: invalid method parameters are -32602",
    ),
    "v0.3 send with an unknown part kind": Case(
        call03("message/send", {"message": msg03(parts=[{"kind": "video", "text": "x"}])}),
        rpc_error(-32602),
        rpc_error(-32600),
        "JSON-RPC 2.0 §5.1: invalid method parameters are -32602",
    ),
    "v0.3 send a file with bytes and uri": Case(
        call03(
            "message/send",
            {"message": msg03(parts=[{"kind": "file", "file": {"bytes": "aGk=", "uri": "u"}}])},
        ),
        rpc_error(-32602),
        result(TASK_V03),
        "v0.3 FileWithBytes and FileWithUri are exclusive; the SDK keeps the bytes",
    ),
    "v0.3 list": Case(
        call03("tasks/list", {}),
        result(LIST),
        rpc_error(-32601),
        "the SDK's v0.3 adapter has no tasks/list",
    ),
    "v0.3 extended card when not declared": Case(
        call03("agent/getAuthenticatedExtendedCard", {}),
        rpc_error(-32004),
        rpc_error(-32603),
        "the SDK's agent declares the card, but its v0.3 adapter fails inside",
    ),
    "v0.3 cancel a finished task": Case(
        call03("tasks/cancel", {"id": "{done}"}), rpc_error(-32002)
    ),
    "v0.3 resubscribe to a finished task": refused_before_any_event(
        call03("tasks/resubscribe", {"id": "{done}"})
    ),
    "v0.3 stream to a finished task": refused_before_any_event(
        call03("message/stream", {"message": msg03(taskId="{done}")})
    ),
    "v0.3 message to a finished task": Case(
        call03("message/send", {"message": msg03(taskId="{done}")}), rpc_error(-32004)
    ),
}


@attrs.frozen
class Server:
    """One of the two servers: where its bindings are, and a finished task made on demand."""

    http: httpx.AsyncClient
    rpc_url: str
    rest_url: str

    async def finished_task(self) -> dict[str, Any]:
        body = rpc("SendMessage", {"message": msg()})
        response = await self.http.post(self.rpc_url, json=body, headers=V1_HEADERS)
        task: dict[str, Any] = response.json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        return task

    async def send(self, call: Call) -> httpx.Response:
        done = (await self.finished_task())["id"] if "{done}" in repr(call) else ""
        return await self.http.request(
            call.verb,
            call.url(self.rpc_url, self.rest_url, done),
            content=call.content(done),
            headers={"Content-Type": JSON, **call.headers}
            if call.body is not None
            else call.headers,
        )


@attrs.frozen
class Peers:
    ours: Server
    sdk: Server


@pytest.fixture(scope="module")
def own_sdk_agent() -> Iterator[str]:
    """An SDK echo agent for this module alone: the invalid input the SDK stores (an empty part)
    must not reach other tests' listings of the session's agent."""
    with running_sdk_agent() as url:
        yield url


@pytest.fixture
async def peers(base_url: str, own_sdk_agent: str) -> AsyncIterator[Peers]:
    async with httpx.AsyncClient(timeout=10) as http:
        yield Peers(
            Server(http, base_url + "/", base_url),
            Server(http, own_sdk_agent + "/", own_sdk_agent + "/rest"),
        )


@pytest.mark.parametrize("name", CASES)
async def test_outcome_classes(peers: Peers, name: str) -> None:
    case = CASES[name]
    assert outcome_of(await peers.ours.send(case.call)) == case.spec
    assert outcome_of(await peers.sdk.send(case.call)) == (case.sdk or case.spec), case.why


async def shapes(server: Server, call: Call) -> Any:
    return shape((await server.send(call)).json())


async def test_a_finished_task_has_the_same_shape(peers: Peers) -> None:
    """GetTask without history: the same fields, types, enum names and timestamp form (A2A v1.0
    §5.6.1: UTC with Z, milliseconds) from both, on JSON-RPC and on HTTP+JSON."""
    task: dict[str, Any] = {
        "artifacts": [{"artifactId": "string", "name": "string", "parts": [{"text": "string"}]}],
        "contextId": "string",
        "id": "string",
        "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "timestamp, 3 fraction digits, Z"},
    }
    by_rpc = call1("GetTask", {"id": "{done}", "historyLength": 0})
    assert await shapes(peers.ours, by_rpc) == {"id": "int", "jsonrpc": "string", "result": task}
    sdk_task = (await shapes(peers.sdk, by_rpc))["result"]
    assert sdk_task == task | {
        "status": task["status"] | {"timestamp": sdk_task["status"]["timestamp"]}
    }
    assert sdk_task["status"]["timestamp"].endswith(" fraction digits, Z")  # the SDK: 6 digits
    by_rest = rest("GET", "/tasks/{done}?historyLength=0")
    assert await shapes(peers.ours, by_rest) == task
    assert await shapes(peers.sdk, by_rest) == sdk_task


async def test_rest_lists_leave_default_values_out(peers: Peers) -> None:
    """ProtoJSON leaves fields at their default value out (A2A v1.0 §5.7); the SDK's HTTP+JSON
    list writes them (``extensions: []``, ``mediaType: ""``, ``referenceTaskIds: []``)."""
    await peers.ours.finished_task()
    await peers.sdk.finished_task()
    listing = rest("GET", "/tasks?historyLength=1&pageSize=1")
    (ours,) = (await peers.ours.send(listing)).json()["tasks"]
    (theirs,) = (await peers.sdk.send(listing)).json()["tasks"]
    assert set(ours["history"][0]) == {"contextId", "messageId", "parts", "role", "taskId"}
    assert ours["history"][0]["parts"] == [{"text": "echo me"}]
    assert {"extensions", "referenceTaskIds"} <= set(theirs["history"][0])
    assert theirs["history"][0]["parts"][0]["mediaType"] == ""


def sse_blocks(body: bytes, separator: bytes) -> list[list[bytes]]:
    assert body.endswith(separator), "the stream ends after a whole event"
    return [block.split(separator[: len(separator) // 2]) for block in body.split(separator)[:-1]]


@pytest.mark.parametrize(
    "call",
    [
        call1("SendStreamingMessage", {"message": msg()}),
        rest("POST", "/message:stream", {"message": msg()}),
    ],
    ids=["JSON-RPC", "HTTP+JSON"],
)
async def test_event_stream_framing(peers: Peers, call: Call) -> None:
    """SSE framing: a2a_trio writes ``id:`` (the event's sequence number, for Last-Event-ID) and
    one ``data:`` line per event, LF line ends, and ends the body after the final status update;
    the SDK writes CRLF line ends and no ``id:``.  Both are valid SSE (WHATWG HTML §9.2.6)."""
    ours = await peers.ours.send(call)
    assert ours.headers["content-type"].startswith(SSE)
    blocks = sse_blocks(ours.content, b"\n\n")
    assert [block[0] for block in blocks] == [b"id: %d" % n for n in range(1, len(blocks) + 1)]
    assert all(len(block) == 2 and block[1].startswith(b"data: ") for block in blocks)
    theirs = await peers.sdk.send(call)
    assert theirs.headers["content-type"].startswith(SSE)
    sdk_blocks = sse_blocks(theirs.content, b"\r\n\r\n")
    assert all(len(block) == 1 and block[0].startswith(b"data: ") for block in sdk_blocks)
    for stream in (blocks, sdk_blocks):
        last = json.loads(stream[-1][-1].removeprefix(b"data: "))
        update = last.get("result", last)["statusUpdate"]
        assert update["status"]["state"] == "TASK_STATE_COMPLETED"


SDK_AGENT_WORDS = ("hello", "wait", "slow", "fail")  # texts the SDK's echo agent acts on
texts = st.text(min_size=1, max_size=20).filter(
    lambda text: not any(word in text for word in SDK_AGENT_WORDS)
)
parts = st.one_of(
    texts.map(lambda text: {"text": text}),
    json_values.map(lambda value: {"data": value}),
    texts.map(lambda text: {"text": text, "mediaType": "text/plain", "filename": "a.txt"}),
)
unknown_fields = st.dictionaries(
    st.sampled_from(["zzz", "kind", "x-extra"]), json_values, max_size=2
)


@st.composite
def odd_but_valid_sends(draw: st.DrawFn) -> dict[str, Any]:
    """SendMessage params every A2A v1.0 server must serve: any parts of the kinds the echo
    agents take, metadata, client-chosen contextId, referenceTaskIds, extensions, unknown keys."""
    message = msg(parts=draw(st.lists(parts, min_size=1, max_size=3)))
    optional = {
        "metadata": st.dictionaries(st.text(max_size=5), json_values, max_size=3),
        "contextId": st.uuids().map(str),
        "referenceTaskIds": st.lists(st.text(min_size=1, max_size=5), max_size=2),
        "extensions": st.lists(st.just("urn:example:ext"), max_size=1),
    }
    for key, values in optional.items():
        if draw(st.booleans()):
            message[key] = draw(values)
    params: dict[str, Any] = {"message": message | draw(unknown_fields), **draw(unknown_fields)}
    if draw(st.booleans()):
        params["configuration"] = {"historyLength": draw(st.integers(0, 5))}
    return params


async def both_answer(sdk_url: str, call: Call) -> tuple[Outcome, Outcome]:
    """``call`` answered by a fresh a2a_trio server and by the SDK's."""
    async with trio.open_nursery() as nursery, httpx.AsyncClient(timeout=10) as http:
        url: str = await nursery.start(partial(serve, agent, port=0, config=CONFIG))
        ours = Server(http, url + "/", url)
        theirs = Server(http, sdk_url + "/", sdk_url + "/rest")
        answers = outcome_of(await ours.send(call)), outcome_of(await theirs.send(call))
        nursery.cancel_scope.cancel()
    return answers


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=odd_but_valid_sends(), binding=st.sampled_from(["rpc", "rest"]))
def test_odd_but_valid_sends_are_served_by_both(
    own_sdk_agent: str, params: dict[str, Any], binding: str
) -> None:
    """Hypothesis' variants run each in their own trio run (async fixtures cannot span them)."""
    call = send1(params) if binding == "rpc" else rest("POST", "/message:send", params)
    ours, theirs = trio.run(both_answer, own_sdk_agent, call)
    assert ours == (result("task") if binding == "rpc" else ok("task"))
    assert (theirs.status, theirs.answer) == (ours.status, ours.answer)


async def context_of_three(server: Server) -> tuple[str, list[str]]:
    """Three finished tasks in a fresh context of ``server``: the context and the ids, oldest
    first."""
    context = str(uuid.uuid4())
    ids = []
    for n in range(3):
        sent = msg(messageId=f"m-{n}", contextId=context)
        response = await server.http.post(
            server.rpc_url, json=rpc("SendMessage", {"message": sent}), headers=V1_HEADERS
        )
        ids.append(response.json()["result"]["task"]["id"])
    return context, ids


async def list_tasks(server: Server, **params: Any) -> dict[str, Any]:
    response = await server.http.post(
        server.rpc_url, json=rpc("ListTasks", params), headers=V1_HEADERS
    )
    listing: dict[str, Any] = response.json()["result"]
    return listing


@pytest.mark.parametrize("server", ["ours", "sdk"])
async def test_list_pages_newest_first(peers: Peers, server: str) -> None:
    """A2A v1.0 §3.1.4: newest update first, cursor paging, ``nextPageToken`` always present and
    empty on the last page, ``pageSize`` and ``totalSize`` in every answer; both servers agree."""
    peer = getattr(peers, server)
    context, ids = await context_of_three(peer)
    first = await list_tasks(peer, contextId=context, pageSize=2)
    assert [task["id"] for task in first["tasks"]] == [ids[2], ids[1]]
    assert (first["pageSize"], first["totalSize"], bool(first["nextPageToken"])) == (2, 3, True)
    token = first["nextPageToken"]
    last = await list_tasks(peer, contextId=context, pageSize=2, pageToken=token)
    assert [task["id"] for task in last["tasks"]] == [ids[0]]
    assert (last["pageSize"], last["totalSize"], last["nextPageToken"]) == (2, 3, "")
    everything = await list_tasks(peer, contextId=context)
    assert (everything["pageSize"], everything["nextPageToken"]) == (50, "")


async def test_list_history_length_0_leaves_history_out(peers: Peers) -> None:
    """A2A v1.0 §3.2.4: ``historyLength: 0`` returns no history (the field SHOULD be omitted);
    the SDK's ListTasks still writes it (its GetTask leaves it out)."""
    context, _ids = await context_of_three(peers.ours)
    (ours,) = (await list_tasks(peers.ours, contextId=context, historyLength=0, pageSize=1))[
        "tasks"
    ]
    assert set(ours) == {"contextId", "id", "status"}
    context, _ids = await context_of_three(peers.sdk)
    (theirs,) = (await list_tasks(peers.sdk, contextId=context, historyLength=0, pageSize=1))[
        "tasks"
    ]
    assert set(theirs) == {"contextId", "history", "id", "status"}
