"""Remote errors become the shared typed exceptions, by ErrorInfo reason or by code."""

from __future__ import annotations

import httpx
import pytest

from a2a_trio.client import RemoteError, TransportError
from a2a_trio.client._errors import ERROR_INFO_TYPE, ERRORS_BY_REASON, remote_error, rest_error
from a2a_trio.client._transport import http_errors
from a2a_trio.errors import (
    ERRORS_BY_CODE,
    A2AError,
    AuthenticationRequiredError,
    ContentTypeNotSupportedError,
    InternalError,
    InvalidParamsError,
    MethodNotFoundError,
    TaskNotCancelableError,
    TaskNotFoundError,
)
from a2a_trio.model import JsonValue


@pytest.mark.parametrize(("code", "cls"), sorted(ERRORS_BY_CODE.items()))
def test_every_known_code_maps_to_its_class(code: int, cls: type[A2AError]) -> None:
    error = remote_error(code, "said the agent", {"k": [1]})
    assert type(error) is cls
    assert (error.code, error.message, error.data) == (code, "said the agent", {"k": [1]})


def test_reasons_cover_every_error_and_win_over_codes() -> None:
    assert ERRORS_BY_REASON["TASK_NOT_FOUND"] is TaskNotFoundError
    assert ERRORS_BY_REASON["VERSION_NOT_SUPPORTED"].code == -32009
    assert ERRORS_BY_REASON["EXTENDED_AGENT_CARD_NOT_CONFIGURED"].code == -32007
    assert ERRORS_BY_REASON["INVALID_PARAMS"] is InvalidParamsError
    # HTTP+JSON errors carry the HTTP status as their code: the reason decides.
    assert type(remote_error(404, "gone", reason="TASK_NOT_FOUND")) is TaskNotFoundError
    assert type(remote_error(401, "who?", reason="AUTHENTICATION_REQUIRED")) is (
        AuthenticationRequiredError
    )


def test_unknown_codes_keep_their_code() -> None:
    error = remote_error(-32050, "custom", "extra")
    assert isinstance(error, RemoteError)
    assert isinstance(error, A2AError)
    assert (error.code, error.message, error.data) == (-32050, "custom", "extra")
    assert type(remote_error(-32050, "again")) is type(error)
    assert remote_error(-32051, "other").code == -32051


def test_invalid_params_keeps_the_agent_message() -> None:
    error = remote_error(-32602, "$.message.parts: required", {"path": "$.message.parts"})
    assert isinstance(error, InvalidParamsError)
    assert error.message == "$.message.parts: required"
    assert error.data == {"path": "$.message.parts"}


def test_an_httpx_error_without_a_message_is_named_by_its_type() -> None:
    """httpx raises some failures with an empty message; the error must still say something."""
    with pytest.raises(TransportError) as info, http_errors("reading the event stream"):
        raise httpx.ReadError("")
    assert str(info.value) == "reading the event stream: ReadError"
    with pytest.raises(TransportError) as info, http_errors("sending"):
        raise httpx.ConnectError("connection refused")
    assert str(info.value) == "sending: connection refused"


def info(error_reason: str, **metadata: str) -> list[JsonValue]:
    detail: dict[str, JsonValue] = {"@type": ERROR_INFO_TYPE, "reason": error_reason}
    if metadata:
        detail["metadata"] = dict(metadata)
    return [detail]


REST_ERRORS = [
    (401, "UNAUTHENTICATED", None, AuthenticationRequiredError),
    (401, "", info("TASK_NOT_FOUND"), AuthenticationRequiredError),  # HTTP 401 decides
    (500, "INTERNAL", None, InternalError),
    (500, "INTERNAL", info("INTERNAL_ERROR"), InternalError),  # the SDK's reason
    (500, "", None, InternalError),  # no status name: the HTTP status stands for it
    (503, "UNAVAILABLE", None, InternalError),
    (400, "INVALID_ARGUMENT", None, InvalidParamsError),
    (404, "NOT_FOUND", None, TaskNotFoundError),
    (404, "NOT_FOUND", info("METHOD_NOT_FOUND"), MethodNotFoundError),  # the reason wins
    (409, "FAILED_PRECONDITION", info("TASK_NOT_CANCELABLE"), TaskNotCancelableError),
]


@pytest.mark.parametrize(("http_status", "status", "details", "cls"), REST_ERRORS)
def test_rest_errors_by_reason_then_status(
    http_status: int, status: str, details: JsonValue, cls: type[A2AError]
) -> None:
    error = rest_error(http_status, status, "said the agent", details)
    assert type(error) is cls
    assert (error.code, error.message, error.data) == (cls.code, "said the agent", details)


@pytest.mark.parametrize(
    ("http_status", "status"), [(400, "FAILED_PRECONDITION"), (403, "PERMISSION_DENIED"), (429, "")]
)
def test_rest_errors_no_table_names_keep_the_http_status(http_status: int, status: str) -> None:
    """Statuses shared by several A2A errors, or by none, decide nothing."""
    error = rest_error(http_status, status, "hmm")
    assert isinstance(error, RemoteError)
    assert error.code == http_status


@pytest.mark.parametrize(
    "data",
    [
        info("INVALID_PARAMS", path="$.params.pageSize", reason="must be 1 to 100"),
        {"path": "$.params.pageSize", "reason": "must be 1 to 100"},  # v0.3 servers
    ],
)
def test_invalid_params_carry_the_agents_path_and_reason(data: JsonValue) -> None:
    error = remote_error(-32602, "$.params.pageSize: must be 1 to 100", data, reason="")
    assert isinstance(error, InvalidParamsError)
    assert (error.path, error.reason) == ("$.params.pageSize", "must be 1 to 100")
    assert error.message == "$.params.pageSize: must be 1 to 100"
    assert error.data == data
    rest = rest_error(400, "INVALID_ARGUMENT", "bad", data)
    assert isinstance(rest, InvalidParamsError)
    assert (rest.path, rest.reason) == ("$.params.pageSize", "must be 1 to 100")


def test_a_refused_media_type_carries_the_part_it_names() -> None:
    """Before: the part was named in the message text only, never in ``path``."""
    reason = "media type 'image/png' is not accepted by skill 'echo'"
    rpc_path, rest_path = "$.params.message.parts[1]", "$.request.content[1]"
    rpc = remote_error(-32005, f"{rpc_path}: {reason}", {"path": rpc_path, "reason": reason})
    details = info("CONTENT_TYPE_NOT_SUPPORTED", path=rest_path, reason=reason)
    rest = rest_error(415, "INVALID_ARGUMENT", f"{rest_path}: {reason}", details)
    for error, path in ((rpc, rpc_path), (rest, rest_path)):
        assert isinstance(error, ContentTypeNotSupportedError)
        assert (error.path, error.reason, error.message) == (path, reason, f"{path}: {reason}")


def test_invalid_params_without_a_path_keep_the_message_as_reason() -> None:
    error = remote_error(-32602, "page size out of range", info("INVALID_PARAMS"))
    assert isinstance(error, InvalidParamsError)
    assert (error.path, error.reason) == ("", "page size out of range")
