"""One exception family for everything a2a_trio raises.

::

    A2AError                         a protocol error a remote peer can see (code, message, data)
    ├── JSONRPCError                 JSON-RPC 2.0 framing errors
    │   ├── ParseError               -32700  body is not JSON
    │   ├── InvalidRequestError      -32600  not a JSON-RPC request
    │   ├── MethodNotFoundError      -32601  unknown method
    │   ├── InvalidParamsError       -32602  params fail validation (carries a JSON path)
    │   └── InternalError            -32603  a server fault, never with internals
    ├── TaskNotFoundError            -32001
    ├── TaskNotCancelableError       -32002
    ├── PushNotificationNotSupportedError  -32003
    ├── UnsupportedOperationError    -32004
    ├── ContentTypeNotSupportedError -32005  (carries a JSON path when it is about a part)
    ├── InvalidAgentResponseError    -32006
    ├── ExtendedAgentCardNotConfiguredError -32007
    ├── ExtensionSupportRequiredError -32008
    ├── VersionNotSupportedError     -32009
    └── AuthenticationRequiredError  -32001 on the legacy dialect, 401 on HTTP
    AgentMisuseError                 a programming error in an agent (local, never sent as-is)

``InvalidParamsError`` and ``ContentTypeNotSupportedError`` are also :class:`FieldError`: they
can name the field they are about by a JSON path, which each binding spells as its client sent
that field.

Every protocol error knows its JSON-RPC code, HTTP status and gRPC status (A2A v1.0 §5.4), so
bindings map errors and handlers simply raise.  This module imports nothing from the rest of the
package but the model: the wire codecs raise ``InvalidParamsError`` too.

A message naming a task state or a role holds it as a value (a :class:`Phrase`), not as text:
each binding sends the error :meth:`~A2AError.spelled` as its wire form writes those values
(``TASK_STATE_INPUT_REQUIRED`` in v1.0, ``input-required`` in v0.3 JSON-RPC), so a client reads
the names it sends and receives.  Unspelled, a message uses the proto names (v1.0's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Self

import attrs

from .model import JsonValue, Role, TaskState, proto_name

type Term = TaskState | Role
"""A value an error message names, which each wire form spells its own way."""
type Spelling = Callable[[Term], str]
"""How one wire form writes a :data:`Term` (its codec's ``spell``)."""


@attrs.frozen
class Phrase:
    """Message text with the states and roles it names kept as values, spelled when sent."""

    pieces: tuple[str | Term, ...]

    @classmethod
    def of(cls, *pieces: str | Term) -> Phrase:
        return cls(pieces)

    def spell(self, spelling: Spelling = proto_name) -> str:
        return "".join(p if isinstance(p, str) else spelling(p) for p in self.pieces)

    @property
    def names_terms(self) -> bool:
        return not all(isinstance(p, str) for p in self.pieces)


class A2AError(Exception):
    """A protocol error: what a client receives as a JSON-RPC error or HTTP problem.

    ``message`` may be a :class:`Phrase`; ``self.message`` is then spelled with proto names
    until a binding asks for its own spelling (:meth:`spelled`).
    """

    code: ClassVar[int] = -32603
    http_status: ClassVar[int] = 500
    grpc_status: ClassVar[str] = "INTERNAL"
    default_message: ClassVar[str] = "Internal error"

    def __init__(self, message: str | Phrase | None = None, *, data: JsonValue = None) -> None:
        self.wording = message if isinstance(message, Phrase) else Phrase.of(message or "")
        self.data = data
        super().__init__()
        self._say(self.wording.spell() or self.default_message)

    def _say(self, text: str) -> None:
        self.message = text
        self.args = (text,)

    def spelled(self, spelling: Spelling) -> Self:
        """This error as a binding sends it: the states and roles its message names written
        with ``spelling`` (its wire form's names), for good.  Codes stay as they are."""
        if not self.wording.names_terms:
            return self
        text = self.wording.spell(spelling)
        spelled = type(self).__new__(type(self))
        spelled.__dict__.update(self.__dict__)
        spelled.wording = Phrase.of(text)
        spelled._say(text)
        return spelled


class JSONRPCError(A2AError):
    """Errors of the JSON-RPC 2.0 envelope itself."""


class ParseError(JSONRPCError):
    code = -32700
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"
    default_message = "Parse error: the request body is not valid JSON"


class InvalidRequestError(JSONRPCError):
    code = -32600
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"
    default_message = "Invalid request: not a JSON-RPC 2.0 request object"


class MethodNotFoundError(JSONRPCError):
    code = -32601
    http_status = 404
    grpc_status = "UNIMPLEMENTED"
    default_message = "Method not found"


class FieldError(A2AError):
    """An error about one field of the request: ``path`` says where, ``reason`` what is wrong.

    The path is a JSON path into the request as the runtime reads it (``$.params.message``);
    each binding re-roots it to name the field as its client sent it (REST's body, v0.3's
    proto names), which a path inside the message text could not be.
    """

    def __init__(self, reason: str | Phrase | None = None, *, path: str = "") -> None:
        self.path = path
        super().__init__(reason)

    def _say(self, text: str) -> None:
        self.reason = text
        super()._say(f"{self.path}: {text}" if self.path else text)
        self.data = {"path": self.path, "reason": text} if self.path else None

    def at(self, path: str) -> Self:
        """The same reason (its states and roles still values) about the field at ``path``."""
        return type(self)(self.wording, path=path)

    def under(self, prefix: str) -> Self:
        """The same error with its path rooted under ``prefix`` (e.g. ``params``)."""
        return self.at(prefix + self.path.removeprefix("$") if self.path else prefix)


class InvalidParamsError(FieldError, JSONRPCError):
    """Input that does not fit the schema."""

    code = -32602
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"
    default_message = "Invalid params"


class InternalError(JSONRPCError):
    code = -32603
    http_status = 500
    grpc_status = "INTERNAL"
    default_message = "Internal error"


class TaskNotFoundError(A2AError):
    code = -32001
    http_status = 404
    grpc_status = "NOT_FOUND"
    default_message = "Task not found"


class TaskNotCancelableError(A2AError):
    code = -32002
    http_status = 409
    grpc_status = "FAILED_PRECONDITION"
    default_message = "Task cannot be canceled"


class PushNotificationNotSupportedError(A2AError):
    code = -32003
    http_status = 400
    grpc_status = "UNIMPLEMENTED"
    default_message = "Push notifications are not supported"


class UnsupportedOperationError(A2AError):
    code = -32004
    http_status = 400
    grpc_status = "UNIMPLEMENTED"
    default_message = "This operation is not supported"


class ContentTypeNotSupportedError(FieldError):
    """A part (``path``) or body whose media type the agent does not accept."""

    code = -32005
    http_status = 415
    grpc_status = "INVALID_ARGUMENT"
    default_message = "Incompatible content types"


class InvalidAgentResponseError(A2AError):
    code = -32006
    http_status = 502
    grpc_status = "INTERNAL"
    default_message = "Invalid agent response"


class ExtendedAgentCardNotConfiguredError(A2AError):
    code = -32007
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    default_message = "No extended agent card is configured"


class ExtensionSupportRequiredError(A2AError):
    code = -32008
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    default_message = "A required extension is not supported by the client"


class VersionNotSupportedError(A2AError):
    code = -32009
    http_status = 400
    grpc_status = "UNIMPLEMENTED"
    default_message = "This A2A protocol version is not supported"


class AuthenticationRequiredError(A2AError):
    code = -32001
    http_status = 401
    grpc_status = "UNAUTHENTICATED"
    default_message = "Authentication required"


class ContextMismatchError(InvalidParamsError):
    """A follow-up message names a task but a different context."""


class AgentMisuseError(Exception):
    """An agent used the API wrongly (a local programming error, never a remote one)."""


ERRORS_BY_CODE: dict[int, type[A2AError]] = {
    cls.code: cls
    for cls in (
        ParseError,
        InvalidRequestError,
        MethodNotFoundError,
        InvalidParamsError,
        InternalError,
        TaskNotFoundError,
        TaskNotCancelableError,
        PushNotificationNotSupportedError,
        UnsupportedOperationError,
        ContentTypeNotSupportedError,
        InvalidAgentResponseError,
        ExtendedAgentCardNotConfiguredError,
        ExtensionSupportRequiredError,
        VersionNotSupportedError,
    )
}


class StoreError(Exception):
    """A task store refused a write; local, mapped by the runtime before a client sees it."""


class ConcurrencyError(StoreError):
    """The task changed since the version the writer read (optimistic concurrency)."""


class TaskTerminalStateError(StoreError):
    """A state change was attempted on a task already in a terminal state."""


class InvalidTransitionError(StoreError):
    """A state change the task lifecycle does not allow (e.g. COMPLETED -> WORKING)."""


class StoreUnavailableError(StoreError):
    """The store's database could not do the work (locked, unreachable, out of space): nothing
    was written, and the same call may succeed later."""
