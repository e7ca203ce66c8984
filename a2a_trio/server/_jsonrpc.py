"""JSON-RPC 2.0 framing (sans-IO): parse a request envelope, shape results and errors.

Decisions: batches (JSON arrays) are refused with -32600, since A2A's streaming methods cannot
share one HTTP response and no A2A client sends them; a request without ``id`` is a notification
and gets no response body; ``params`` must be an object.  Ids follow JSON-RPC 2.0 (string, number
or null) except in the legacy dialect, whose ids are any JSON value (:func:`parse_legacy_request`).
"""

from __future__ import annotations

from typing import Any, Final

import attrs
import orjson

from ..errors import A2AError, InvalidParamsError, InvalidRequestError
from ..model import JsonValue

type RequestId = str | int | float | None
"""A JSON-RPC 2.0 id (its §4: a string, number or null)."""


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
    params = document.get("params", {})
    if not isinstance(params, dict):
        raise InvalidParamsError("params must be an object", path="$.params")
    return method, params, "id" not in document


ALLOW: Final = "POST"
"""The one verb a JSON-RPC endpoint takes; the ``Allow`` header of a wrong verb's 405."""


def wrong_verb(verb: str) -> InvalidRequestError:
    """The error for any verb but POST on a JSON-RPC endpoint, answered 405 with ``Allow:
    POST`` (the A2A JSON-RPC endpoint and the legacy surfaces alike)."""
    return InvalidRequestError(f"{verb[:20]} is not allowed here: POST a JSON-RPC request")


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
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def success_bytes(rid: RequestId, result: bytes) -> bytes:
    """A success response around an already-serialized result (same bytes as ``success``)."""
    return b'{"jsonrpc":"2.0","id":' + orjson.dumps(rid) + b',"result":' + result + b"}"


def failure(rid: JsonValue, error: A2AError, data: Any = None) -> dict[str, Any]:
    """An error response; its ``data`` member is ``data`` if given, else ``error.data``."""
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if data is None:
        data = error.data
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": body}
