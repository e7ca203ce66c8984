"""One refusal, one wording: the same bad input sent through every binding that can carry it
gets the same reason from each, at the field as that binding's client sent it.

Codes and error shapes stay each binding's own (the specifications decide those: -32602 in a
JSON-RPC body, HTTP 400 with an ``ErrorInfo`` on HTTP+JSON); only the words are compared here.
Where the refusal is not the same it is left out: a REST resource takes its task id from its
path, not from a field; the legacy dialect answers an unknown task id with its own words (its
specification's "Unknown task id: ...") and reads no ``Content-Type``.  Task states and roles,
which each binding spells its own way, are tests/bindings/test_dialect_errors.py's.
"""

from __future__ import annotations

import re
from typing import Any

import attrs
import httpx
import pytest

from a2a_trio.errors import ParseError
from a2a_trio.wire import loads

from .drivers import V1_HEADERS

type Call = tuple[str, str, dict[str, str], Any]
"""verb, path, headers, and a JSON body (``bytes``: sent as they are, as ``application/json``
unless the headers say otherwise)."""

V1_MESSAGE = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}
V03_MESSAGE = {"kind": "message", "messageId": "m", "role": "user", "parts": [{"text": "x"}]}
PROTO_MESSAGE = {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "x"}]}
LEGACY_MESSAGE = {"role": "user", "parts": [{"type": "text", "text": "x"}]}


def rpc(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


@attrs.frozen
class Refusal:
    """A reason, and per binding the call that should get it and the path it names ("" for a
    message naming no field)."""

    reason: str
    calls: dict[str, tuple[Call, str]]


def messages_with(field: str, value: Any, where: str) -> dict[str, tuple[Call, str]]:
    """A send on every binding whose message has ``field`` (``parts`` or ``metadata``; v0.3
    HTTP+JSON calls the parts ``content``) set to ``value``; ``where`` is the path below it."""
    proto = "content" if field == "parts" else field
    return {
        "v1.0 JSON-RPC": (
            ("POST", "/", V1_HEADERS, rpc("SendMessage", {"message": V1_MESSAGE | {field: value}})),
            f"$.params.message.{field}{where}",
        ),
        "v1.0 HTTP+JSON": (
            ("POST", "/message:send", V1_HEADERS, {"message": V1_MESSAGE | {field: value}}),
            f"$.message.{field}{where}",
        ),
        "v0.3 JSON-RPC": (
            ("POST", "/", {}, rpc("message/send", {"message": V03_MESSAGE | {field: value}})),
            f"$.params.message.{field}{where}",
        ),
        "v0.3 HTTP+JSON": (
            ("POST", "/v1/message:send", {}, {"request": PROTO_MESSAGE | {proto: value}}),
            f"$.request.{proto}{where}",
        ),
        "legacy": (
            ("POST", "/echo", {}, rpc("tasks/send", {"message": LEGACY_MESSAGE | {field: value}})),
            f"$.params.message.{field}{where}",
        ),
    }


def task_ids(value: Any) -> dict[str, tuple[Call, str]]:
    """A task named by ``value`` in the params of every JSON-RPC binding."""
    return {
        "v1.0 JSON-RPC": (("POST", "/", V1_HEADERS, rpc("GetTask", {"id": value})), "$.params.id"),
        "v0.3 JSON-RPC": (("POST", "/", {}, rpc("tasks/get", {"id": value})), "$.params.id"),
        "legacy": (("POST", "/echo", {}, rpc("tasks/cancel", {"id": value})), "$.params.id"),
    }


def every_body(body: Any, headers: dict[str, str] | None = None) -> dict[str, tuple[Call, str]]:
    """``body`` as the whole request of a send on every binding (no field named)."""
    extra = headers or {}
    return {
        "v1.0 JSON-RPC": (("POST", "/", V1_HEADERS | extra, body), ""),
        "v1.0 HTTP+JSON": (("POST", "/message:send", V1_HEADERS | extra, body), ""),
        "v0.3 JSON-RPC": (("POST", "/", extra, body), ""),
        "v0.3 HTTP+JSON": (("POST", "/v1/message:send", extra, body), ""),
        "legacy": (("POST", "/echo", extra, body), ""),
    }


def parse_reason(document: bytes) -> str:
    try:
        loads(document)
    except ParseError as error:
        return error.message
    raise AssertionError("the document parsed")


DEEP: Any = 1
for _ in range(70):
    DEEP = [DEEP]
NOT_JSON = b"{nope"
NO_LEGACY = {"v1.0 JSON-RPC", "v1.0 HTTP+JSON", "v0.3 JSON-RPC", "v0.3 HTTP+JSON"}


def only(calls: dict[str, tuple[Call, str]], bindings: set[str]) -> dict[str, tuple[Call, str]]:
    return {name: call for name, call in calls.items() if name in bindings}


REFUSALS: dict[str, Refusal] = {
    "parts not an array": Refusal("expected an array, got number", messages_with("parts", 5, "")),
    "a part not an object": Refusal(
        "expected an object, got number", messages_with("parts", [5], "[0]")
    ),
    "a text not a string": Refusal(
        "expected a string, got number", messages_with("parts", [{"text": 5}], "[0].text")
    ),
    "a required field left out": Refusal(
        "required field missing",
        {
            "v1.0 JSON-RPC": (
                ("POST", "/", V1_HEADERS, rpc("SendMessage", {})),
                "$.params.message",
            ),
            "v1.0 HTTP+JSON": (("POST", "/message:send", V1_HEADERS, {}), "$.message"),
            "v0.3 JSON-RPC": (("POST", "/", {}, rpc("message/send", {})), "$.params.message"),
            "v0.3 HTTP+JSON": (("POST", "/v1/message:send", {}, {}), "$.message"),
        }
        | only(messages_with("parts", [{"type": "text"}], "[0].text"), {"legacy"}),
    ),
    "a task id not a string": Refusal("expected a string, got number", task_ids(5)),
    "an empty task id": Refusal("id must not be empty", task_ids("")),
    "params not an object": Refusal(
        "expected an object, got array",
        {
            "v1.0 JSON-RPC": (("POST", "/", V1_HEADERS, rpc("GetTask", [1])), "$.params"),
            "v1.0 HTTP+JSON": (("POST", "/message:send", V1_HEADERS, [1]), "$"),
            "v0.3 JSON-RPC": (("POST", "/", {}, rpc("tasks/get", [1])), "$.params"),
            "v0.3 HTTP+JSON": (("POST", "/v1/message:send", {}, [1]), "$"),
            "legacy": (("POST", "/echo", {}, rpc("tasks/get", [1])), "$.params"),
        },
    ),
    "a body that is not JSON": Refusal(parse_reason(NOT_JSON), every_body(NOT_JSON)),
    "a body of another media type": Refusal(
        "Content-Type must be application/json or application/a2a+json, not 'text/plain'",
        only(every_body(b"{}", {"Content-Type": "text/plain"}), NO_LEGACY),
    ),
    "JSON nested too deep": Refusal(
        "JSON nested deeper than 64 levels", messages_with("metadata", {"a": DEEP}, "")
    ),
    "a data part nested too deep": Refusal(
        "JSON nested deeper than 64 levels",
        messages_with("parts", [{"data": {"a": DEEP}}], "[0].data")
        | only(
            messages_with("parts", [{"data": {"data": {"a": DEEP}}}], "[0].data.data"),
            {"v0.3 HTTP+JSON"},
        ),
    ),
    "an unknown task": Refusal(
        "Task nope not found",
        {
            "v1.0 JSON-RPC": (("POST", "/", V1_HEADERS, rpc("GetTask", {"id": "nope"})), ""),
            "v1.0 HTTP+JSON": (("GET", "/tasks/nope", V1_HEADERS, None), ""),
            "v0.3 JSON-RPC": (("POST", "/", {}, rpc("tasks/get", {"id": "nope"})), ""),
            "v0.3 HTTP+JSON": (("GET", "/v1/tasks/nope", {}, None), ""),
        },
    ),
}


async def said(http: httpx.AsyncClient, call: Call) -> str:
    """The error message ``call`` is answered with, after checking it leaks nothing."""
    verb, path, headers, body = call
    if isinstance(body, bytes):
        headers = {"Content-Type": "application/json"} | headers
        response = await http.request(verb, path, content=body, headers=headers)
    else:
        response = await http.request(verb, path, json=body, headers=headers)
    assert not re.search(r'Traceback|File "|\.py\b|/work/', response.text), response.text
    message: str = response.json()["error"]["message"]
    return message


@pytest.mark.parametrize("refusal", list(REFUSALS.values()), ids=list(REFUSALS))
async def test_one_refusal_has_one_wording_on_every_binding(
    http: httpx.AsyncClient, refusal: Refusal
) -> None:
    """Before: the legacy dialect said ``parts must be an array``, ``a part must be an
    object``, ``a text part needs a string 'text'`` and ``Invalid params: 'id' must be a
    non-empty string`` (after a path naming the id); JSON-RPC said ``params must be an object``
    and HTTP+JSON ``the request body must be a JSON object``; JSON-RPC asked for
    ``application/json`` only, though it takes ``application/a2a+json`` as HTTP+JSON does."""
    answers = {name: await said(http, call) for name, (call, _where) in refusal.calls.items()}
    expected = {
        name: f"{where}: {refusal.reason}" if where else refusal.reason
        for name, (_call, where) in refusal.calls.items()
    }
    assert answers == expected


async def test_a_file_with_bytes_and_uri_is_refused_naming_the_keys_the_client_sent(
    http: httpx.AsyncClient,
) -> None:
    """The two v0.3 forms call a file's content differently; each refusal names its own keys.
    Before: v0.3 HTTP+JSON named v0.3 JSON-RPC's ``bytes`` and ``uri``."""
    rpc_file = {"kind": "file", "file": {"bytes": "AA==", "uri": "https://x"}}
    proto_file = {"file": {"fileWithBytes": "AA==", "fileWithUri": "https://x"}}
    rpc_call = (
        "POST",
        "/",
        {},
        rpc("message/send", {"message": V03_MESSAGE | {"parts": [rpc_file]}}),
    )
    rest_call = (
        "POST",
        "/v1/message:send",
        {},
        {"request": PROTO_MESSAGE | {"content": [proto_file]}},
    )
    assert await said(http, rpc_call) == (
        "$.params.message.parts[0]: file: exactly one of bytes, uri must be set"
    )
    assert await said(http, rest_call) == (
        "$.request.content[0]: file: exactly one of fileWithBytes, fileWithUri must be set"
    )
