"""What the client raises when the failure is on its side of the wire, and remote error mapping.

::

    ClientError                 a call did not produce an A2A answer (local view of a failure)
    ├── TransportError          connect/read failed, timed out or dropped, an HTTP status with
    │                           no A2A error in the body, or a redirect to another origin
    ├── InvalidResponseError    the peer answered, but not with valid A2A (bad JSON, wrong
    │                           shape) or more than ``Limits.max_body_bytes``
    └── AgentCardError          no card found, the card is invalid, unsigned or too large, it
                                was redirected to another origin, no usable interface

Errors the agent reports (task not found, not cancelable, bad params, ...) are the shared
``a2a_trio.errors`` classes, raised with the message and data the agent sent.  The class comes
from the v1.0 ``google.rpc.ErrorInfo`` reason when there is one this package knows, else from
the JSON-RPC code, or over HTTP+JSON from the gRPC status name / HTTP status (A2A v1.0 §3.3.2,
§5.4), so the same agent error is the same class on every binding.  What none of these names
becomes a :class:`RemoteError` carrying the code the agent sent (over HTTP+JSON, the HTTP
status).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from ..errors import (
    ERRORS_BY_CODE,
    A2AError,
    AuthenticationRequiredError,
    FieldError,
    InternalError,
    InvalidParamsError,
    TaskNotFoundError,
)
from ..model import JsonValue

ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"


class ClientError(Exception):
    """A call failed before or outside the A2A protocol."""


class TransportError(ClientError):
    """The HTTP exchange failed: connection, timeout, a dropped stream, a bare HTTP error, or a
    redirect to an origin the client may not send to."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        self.status_code = status_code
        super().__init__(message)


class InvalidResponseError(ClientError):
    """The peer answered with something that is not valid A2A, or more than
    :attr:`Limits.max_body_bytes` of it."""


class AgentCardError(ClientError):
    """The agent card could not be found, read, verified or used.

    ``status_code`` is the HTTP status when the card was refused with one (e.g. 403);
    ``untrusted_origin`` names the origin (``https://host:port``) of the only usable interface
    when it is on another origin than the card and so was not used.  The message then ends
    with the ``trusted_origins=`` value that allows it; ``reason`` is the message without
    that advice, for a caller that offers the choice in its own words (the CLI's
    ``--trust-origin``).
    """

    def __init__(
        self, reason: str, *, status_code: int | None = None, untrusted_origin: str = ""
    ) -> None:
        self.reason = reason
        self.status_code = status_code
        self.untrusted_origin = untrusted_origin
        advice = f" (to use it, pass trusted_origins=[{untrusted_origin!r}])"
        super().__init__(reason + (advice if untrusted_origin else ""))


class RemoteError(A2AError):
    """An error code the agent sent that this package has no class for."""


@functools.cache
def _unknown_code_class(code: int) -> type[A2AError]:
    # One subclass per unknown code, so ``exc.code`` is that code like for every other error.
    return type("RemoteError", (RemoteError,), {"code": code, "__module__": __name__})


def _reason(cls: type[A2AError]) -> str:
    """``TaskNotFoundError`` -> ``TASK_NOT_FOUND`` (the ErrorInfo ``reason`` of A2A v1.0 §9.5)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__.removesuffix("Error")).upper()


ERRORS_BY_REASON: dict[str, type[A2AError]] = {
    _reason(cls): cls for cls in (*ERRORS_BY_CODE.values(), AuthenticationRequiredError)
}
ERRORS_BY_REASON["JSON_PARSE"] = ERRORS_BY_CODE[-32700]
ERRORS_BY_REASON["INTERNAL_ERROR"] = InternalError  # the official SDK's spelling

# An HTTP+JSON error without a known reason: the generic error categories of A2A v1.0 §3.3.2
# and the one-to-one rows of the §5.4 table (NOT_FOUND is TaskNotFoundError's only status).
# Statuses shared by several errors (FAILED_PRECONDITION, UNIMPLEMENTED) decide nothing.
ERRORS_BY_STATUS: dict[str, type[A2AError]] = {
    "INVALID_ARGUMENT": InvalidParamsError,
    "UNAUTHENTICATED": AuthenticationRequiredError,
    "NOT_FOUND": TaskNotFoundError,
    "INTERNAL": InternalError,
    "UNAVAILABLE": InternalError,
}
# The gRPC status an HTTP status stands for, when an AIP-193 body leaves ``status`` out.
STATUS_BY_HTTP: dict[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    404: "NOT_FOUND",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def error_reason(details: Any) -> str:
    """The ErrorInfo ``reason`` in a v1.0 error's details, if one is there."""
    info = _error_info(details)
    reason = info.get("reason") if info else None
    return reason if isinstance(reason, str) else ""


def _error_info(details: Any) -> dict[str, Any] | None:
    if isinstance(details, list):
        for item in details:
            if isinstance(item, dict) and item.get("@type") == ERROR_INFO_TYPE:
                return item
    return None


def _field_where(data: Any) -> tuple[str, str]:
    """``(path, reason)`` of a field error's data (InvalidParams, ContentTypeNotSupported), if
    it says.

    v1.0 puts them in the ErrorInfo's ``metadata``; v0.3 servers send ``{path, reason}``.
    """
    info = _error_info(data)
    where = info.get("metadata") if info is not None else data
    if not isinstance(where, dict):
        return "", ""
    path, reason = where.get("path"), where.get("reason")
    return (path if isinstance(path, str) else "", reason if isinstance(reason, str) else "")


def _build(cls: type[A2AError], message: str, data: JsonValue) -> A2AError:
    if issubclass(cls, FieldError):
        invalid = cls(message)  # the agent's message as sent, not rebuilt from path and reason
        invalid.data = data
        path, reason = _field_where(data)
        invalid.path = path
        invalid.reason = reason or invalid.reason
        return invalid
    return cls(message, data=data)


def remote_error(code: int, message: str, data: JsonValue = None, *, reason: str = "") -> A2AError:
    """The typed exception for a JSON-RPC error an agent sent (by ErrorInfo reason, else code)."""
    cls = ERRORS_BY_REASON.get(reason) or ERRORS_BY_CODE.get(code) or _unknown_code_class(code)
    return _build(cls, message, data)


def rest_error(http_status: int, status: str, message: str, details: JsonValue = None) -> A2AError:
    """The typed exception for an AIP-193 error (HTTP+JSON): by ErrorInfo reason, else by the
    gRPC ``status`` name or the HTTP status; what neither names is a RemoteError carrying the
    HTTP status as its code.  An HTTP 401 is always :class:`AuthenticationRequiredError`."""
    status = status or STATUS_BY_HTTP.get(http_status, "")
    if http_status == 401:
        cls: type[A2AError] = AuthenticationRequiredError
    else:
        cls = (
            ERRORS_BY_REASON.get(error_reason(details))
            or ERRORS_BY_STATUS.get(status)
            or _unknown_code_class(http_status)
        )
    return _build(cls, message, details)
