"""Remote errors become the shared typed exceptions, by ErrorInfo reason or by code."""

from __future__ import annotations

import httpx
import pytest

from a2a_trio.client import RemoteError, TransportError
from a2a_trio.client._errors import ERRORS_BY_REASON, remote_error
from a2a_trio.client._transport import http_errors
from a2a_trio.errors import (
    ERRORS_BY_CODE,
    A2AError,
    AuthenticationRequiredError,
    InvalidParamsError,
    TaskNotFoundError,
)


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
