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
    TrustStoreError                  the CAs to trust for HTTPS cannot be loaded (local)

``InvalidParamsError`` and ``ContentTypeNotSupportedError`` are also :class:`FieldError`: they
can name the field they are about by a JSON path, which each binding spells as its client sent
that field.

Every protocol error knows its JSON-RPC code, HTTP status and gRPC status (A2A v1.0 §5.4), so
bindings map errors and handlers simply raise.  This module imports nothing from the rest of the
package but the model: the wire codecs raise ``InvalidParamsError`` too.

A message naming a task state, a role, or a method or card field the client should use holds
it as a value (a :class:`Phrase`), not as text: each binding sends the error
:meth:`~A2AError.spelled` in its own :class:`Vocabulary` (``TASK_STATE_INPUT_REQUIRED`` in v1.0,
``input-required`` in v0.3 JSON-RPC; ``SendStreamingMessage``, ``message/stream`` or
``POST /message:stream``), so a client reads the names it sends and receives.  Unspelled, a
message uses v1.0 JSON-RPC's names.  A :class:`FieldError`'s reason names its field through its
path (:data:`FIELD`), so it follows the path when a binding re-spells it (``history_length``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping
from typing import ClassVar, Final, Self

import attrs

from .model import JsonValue, Role, TaskState, proto_name


class Mention(enum.Enum):
    """A method, route, card field or path an error message points the client to, which each
    binding calls by its own name (v1.0 JSON-RPC's ``SendStreamingMessage`` is v0.3's
    ``message/stream``, REST's ``POST /message:stream``).  The value is v1.0 JSON-RPC's name."""

    STREAM = "SendStreamingMessage"
    SUBSCRIBE = "SubscribeToTask"
    EXTENDED_CARD = "capabilities.extendedAgentCard"
    PUBLIC_CARD = "/.well-known/agent-card.json"


class _Field(enum.Enum):
    NAME = "the field"


FIELD: Final = _Field.NAME
"""In a :class:`FieldError`'s reason: the name of its field, the last key of its path as the
binding spells it (``historyLength``, or ``history_length`` to a v0.3 HTTP+JSON client)."""

type Value = TaskState | Role
"""A value an error message names, which each wire form spells its own way (its codec's
``spell``)."""
type Term = Value | Mention
"""Anything an error message names that each binding writes its own way."""
type Spelling = Callable[[Term], str]
"""How one binding writes a :data:`Term` (its :class:`Vocabulary`)."""
type Piece = str | Term | _Field


def v1_spelling(term: Term) -> str:
    """A term as v1.0 JSON-RPC writes it: the proto names, the method names."""
    return term.value if isinstance(term, Mention) else proto_name(term)


@attrs.frozen
class Vocabulary:
    """How one binding writes the terms of its error messages: states and roles as its codec
    does (``values``), methods and card fields by the names its clients know (``mentions``;
    one left out is v1.0 JSON-RPC's, for a binding that never meets it)."""

    values: Callable[[Value], str]
    mentions: Mapping[Mention, str] = attrs.field(factory=dict)

    def __call__(self, term: Term) -> str:
        if isinstance(term, Mention):
            return self.mentions.get(term, term.value)
        return self.values(term)


_LAST_KEY: Final = re.compile(r"\.([^.\[\]]+)(?:\[\d+\])*$")


def _field_name(path: str) -> str:
    """The last key of a JSON path (``$.params.message.parts[0]`` -> ``parts``)."""
    found = _LAST_KEY.search(path)
    return found.group(1) if found else FIELD.value


@attrs.frozen
class Phrase:
    """Message text with the terms it names kept as values, spelled when sent."""

    pieces: tuple[Piece, ...]

    @classmethod
    def of(cls, *pieces: Piece) -> Phrase:
        return cls(pieces)

    def spell(self, spelling: Spelling = v1_spelling, *, field: str = FIELD.value) -> str:
        """The text, its terms written by ``spelling`` and :data:`FIELD` as ``field``."""
        return "".join(
            p if isinstance(p, str) else field if isinstance(p, _Field) else spelling(p)
            for p in self.pieces
        )

    def respelled(self, spelling: Spelling) -> Phrase:
        """The phrase with its terms written by ``spelling``; :data:`FIELD` is kept, so it
        still follows the error's path."""
        return Phrase(tuple(p if isinstance(p, str | _Field) else spelling(p) for p in self.pieces))

    @property
    def names_terms(self) -> bool:
        return not all(isinstance(p, str | _Field) for p in self.pieces)


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
        self._say(self._text() or self.default_message)

    def _text(self) -> str:
        return self.wording.spell()

    def _say(self, text: str) -> None:
        self.message = text
        self.args = (text,)

    def spelled(self, spelling: Spelling) -> Self:
        """This error as a binding sends it: the terms its message names written with
        ``spelling`` (its :class:`Vocabulary`), for good.  Codes stay as they are."""
        if not self.wording.names_terms:
            return self
        spelled = type(self).__new__(type(self))
        spelled.__dict__.update(self.__dict__)
        spelled.wording = self.wording.respelled(spelling)
        spelled._say(spelled._text())
        return spelled


class JSONRPCError(A2AError):
    """Errors of the JSON-RPC 2.0 envelope itself."""


class ParseError(JSONRPCError):
    code = -32700
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"
    default_message = "Parse error: the request body is not valid JSON"
    reason: str = ""
    """What the parser found wrong, in words that fit any document (a client's answer too)."""


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
    proto names), which a path inside the message text could not be; a reason names the field
    as :data:`FIELD`, which reads the (re-spelled) path.
    """

    def __init__(self, reason: str | Phrase | None = None, *, path: str = "") -> None:
        self.path = path
        super().__init__(reason)

    def _text(self) -> str:
        return self.wording.spell(field=_field_name(self.path))

    def _say(self, text: str) -> None:
        self.reason = text
        super()._say(f"{self.path}: {text}" if self.path else text)
        self.data = {"path": self.path, "reason": text} if self.path else None

    def at(self, path: str) -> Self:
        """The same reason (its terms and :data:`FIELD` still values) about the field at
        ``path``."""
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


class TrustStoreError(Exception):
    """The CA certificates that HTTPS connections are verified against cannot be loaded
    (``SSL_CERT_FILE`` names a missing file, or one of something else); the message says
    which, and what to do."""


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
    was written (unless the connection dropped after a commit, before its answer: the runtime
    reads a final write back), and the same call may succeed later."""


class StoreDamagedError(StoreUnavailableError):
    """The store's database file is damaged (SQLite met a page it cannot read): the message
    says which file and what to do.  Unlike an outage, the same call will not succeed later;
    the store writes nothing more to the file, so the damage goes no further."""
