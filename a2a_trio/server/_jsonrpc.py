"""JSON-RPC 2.0 framing (sans-IO): parse a request envelope, shape results and errors.

Decisions: batches (JSON arrays) are refused with -32600, since A2A's streaming methods cannot
share one HTTP response and no A2A client sends them; a request without ``id`` is a notification
and gets no response body; ``params`` must be an object.  Ids follow JSON-RPC 2.0 (string, number
or null) except in the legacy dialect, whose ids are any JSON value (:func:`parse_legacy_request`).
Either way an answer carries the id exactly as sent, integers beyond 64 bits too
(:func:`load_request`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any, Final

import attrs
import orjson

from ..errors import A2AError, InvalidRequestError
from ..model import JsonValue
from ..wire import expect_object, loads

type RequestId = str | int | float | None
"""A JSON-RPC 2.0 id (its §4: a string, number or null)."""


INT64_MIN: Final = -(2**63)
UINT64_MAX: Final = 2**64 - 1
"""orjson reads and writes integers in this range; one beyond it is read as a float, and not
written at all."""


def load_request(body: bytes) -> Any:
    """The JSON document of a request body (``ParseError`` if it is not JSON), its ``id`` as
    sent.

    orjson reads an integer literal beyond 64 bits as the nearest float, and the answer would
    carry ``1.2345678901234568e+29`` for ``123456789012345678901234567890``.  Only an id holding
    such a float (an integral one beyond the 64-bit range) is read again, by the standard
    library, which keeps every integer exact; any other request costs one type check.
    """
    document = loads(body)
    rid = document.get("id") if isinstance(document, dict) else None
    if isinstance(rid, float | list | dict) and any(map(_rounded, _scalars(rid))):
        with contextlib.suppress(ValueError, RecursionError):  # deeper than the stdlib goes
            document["id"] = json.loads(body)["id"]
    return document


def _rounded(value: Any) -> bool:
    """Whether orjson may have rounded an integer literal to ``value``."""
    return isinstance(value, float) and value.is_integer() and abs(value) >= 2**63


def _scalars(value: Any) -> Iterator[Any]:
    """The scalars in a JSON value, without recursion (a legacy id may be any JSON value)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        else:
            yield item


def _writable(rid: JsonValue) -> Any:
    """``rid`` as orjson can write it: an id holding an integer beyond 64 bits (which orjson
    refuses) is written by the standard library, as a ready-made piece of JSON."""
    if isinstance(rid, str | float) or rid is None:
        return rid  # most ids, without a walk
    if any(type(x) is int and not INT64_MIN <= x <= UINT64_MAX for x in _scalars(rid)):
        return orjson.Fragment(json.dumps(rid, ensure_ascii=False, separators=(",", ":")))
    return rid


@attrs.frozen
class RpcRequest[I: JsonValue = RequestId]:
    id: I
    method: str
    params: dict[str, Any]
    is_notification: bool


def parse_request(document: Any) -> RpcRequest:
    """Validate a decoded JSON-RPC request; raises ``InvalidRequestError``/``InvalidParamsError``.

    The raised error's ``data`` is left alone; use :func:`request_id` to answer with the id.
    """
    return RpcRequest(request_id(document), *_envelope(document, ids_checked=True))


def parse_legacy_request(document: Any) -> RpcRequest[JsonValue]:
    """:func:`parse_request` with the legacy dialect's ids: any JSON value the client picks,
    echoed back as sent (legacy-producer-dialect.txt §4.1); use :func:`legacy_request_id`."""
    return RpcRequest(legacy_request_id(document), *_envelope(document, ids_checked=False))


def _envelope(document: Any, *, ids_checked: bool) -> tuple[str, dict[str, Any], bool]:
    """Method, params and whether the request is a notification."""
    if isinstance(document, list):
        raise InvalidRequestError("Invalid request: batch requests are not supported")
    if not isinstance(document, dict):
        raise InvalidRequestError("Invalid request: the body must be a JSON-RPC request object")
    if document.get("jsonrpc") != "2.0":
        raise InvalidRequestError('Invalid request: "jsonrpc" must be exactly "2.0"')
    if ids_checked and "id" in document and not _valid_id(document["id"]):
        raise InvalidRequestError('Invalid request: "id" must be a string, number or null')
    method = document.get("method")
    if not isinstance(method, str) or not method:
        raise InvalidRequestError('Invalid request: "method" must be a non-empty string')
    params = expect_object(document.get("params", {}), path="$.params")
    return method, params, "id" not in document


ALLOW: Final = "POST"
"""The one verb a JSON-RPC endpoint takes; the ``Allow`` header of a wrong verb's 405."""


def wrong_verb(verb: str, card_path: str) -> InvalidRequestError:
    """The error for any verb but POST on a JSON-RPC endpoint, answered 405 with ``Allow:
    POST`` (the A2A JSON-RPC endpoint and the legacy surfaces alike); it names the card, what
    a browser opening the agent's URL was most likely after."""
    return InvalidRequestError(
        f"{verb[:20]} is not allowed here: POST a JSON-RPC request, or GET {card_path} for"
        " the agent card"
    )


def request_id(document: Any) -> RequestId:
    """The id to echo in an error response: the request's if it is valid, else null."""
    if isinstance(document, dict) and _valid_id(document.get("id")):
        found: RequestId = document.get("id")
        return found
    return None


def legacy_request_id(document: Any) -> JsonValue:
    """The id to echo in the legacy dialect: whatever the request has (null without one)."""
    found: JsonValue = document.get("id") if isinstance(document, dict) else None
    return found


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


def success(rid: JsonValue, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": _writable(rid), "result": result}


def success_head(rid: RequestId) -> bytes:
    """A success response around an already-serialized result is ``success_head(rid) + result
    + SUCCESS_TAIL`` (the same bytes as ``success``): an event stream encodes the head once,
    not for every event."""
    return b'{"jsonrpc":"2.0","id":' + orjson.dumps(_writable(rid)) + b',"result":'


SUCCESS_TAIL: Final = b"}"


def failure(rid: JsonValue, error: A2AError, data: Any = None) -> dict[str, Any]:
    """An error response; its ``data`` member is ``data`` if given, else ``error.data``."""
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if data is None:
        data = error.data
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": _writable(rid), "error": body}
