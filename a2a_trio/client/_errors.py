"""What the client raises when the failure is on its side of the wire, and remote error mapping.

::

    ClientError                 a call did not produce an A2A answer (local view of a failure)
    ├── TransportError          connect/read failed, timed out or dropped, or an HTTP status
    │                           with no A2A error in the body
    ├── InvalidResponseError    the peer answered, but not with valid A2A (bad JSON, wrong shape)
    └── AgentCardError          no card found, the card is invalid or unsigned, no usable interface

Errors the agent reports (task not found, not cancelable, bad params, ...) are the shared
``a2a_trio.errors`` classes, raised with the code, message and data the agent sent; a code this
package does not know becomes a :class:`RemoteError` carrying that code.
"""

from __future__ import annotations

import functools
import re

from ..errors import ERRORS_BY_CODE, A2AError, AuthenticationRequiredError, InvalidParamsError
from ..model import JsonValue


class ClientError(Exception):
    """A call failed before or outside the A2A protocol."""


class TransportError(ClientError):
    """The HTTP exchange failed: connection, timeout, a dropped stream or a bare HTTP error."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        self.status_code = status_code
        super().__init__(message)


class InvalidResponseError(ClientError):
    """The peer answered with something that is not valid A2A."""


class AgentCardError(ClientError):
    """The agent card could not be found, read, verified or used."""


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


def remote_error(code: int, message: str, data: JsonValue = None, *, reason: str = "") -> A2AError:
    """The typed exception for an error an agent sent (by ErrorInfo reason, else by code)."""
    cls = ERRORS_BY_REASON.get(reason) or ERRORS_BY_CODE.get(code) or _unknown_code_class(code)
    if issubclass(cls, InvalidParamsError):
        invalid = cls(message)
        invalid.data = data
        return invalid
    return cls(message, data=data)
