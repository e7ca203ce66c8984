"""HTTP+JSON/REST binding logic (A2A v1.0 §11), sans-IO: routes, query typing, error bodies.

The v0.3 HTTP+JSON binding (``/v1/...`` paths, ``_rest_v03``) is a second route table read by
the same functions; :func:`rest_version` says which one a request is for.

A REST request is turned into the same ProtoJSON ``params`` object a JSON-RPC request carries
(path fields and the ``/{tenant}`` prefix set into it, query parameters typed), and then goes
through the v1.0 method table; so both bindings share decoding, the handler call and encoding
(their errors then name the field where the REST request carried it: :func:`as_sent`).
Paths are the ``google.api.http`` options of ``a2a-v1.0.proto``; subscribe is served on both
GET (the proto) and POST (the spec text and the official SDK).  Path ids cannot contain ``/``
or ``:`` (they would be ambiguous with the ``:verb`` suffixes).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, Final

import attrs

from .. import errors
from .. import model as m
from ..errors import (
    FIELD,
    A2AError,
    FieldError,
    InvalidParamsError,
    Mention,
    ParseError,
    Phrase,
    Spelling,
    Value,
    VersionNotSupportedError,
    Vocabulary,
)
from ..wire import V1, expect_object
from ._versions import V1_0, VERSION_HEADERS, requested_version

type QueryType = Callable[[str, str], Any]

ERROR_INFO_TYPE: Final = "type.googleapis.com/google.rpc.ErrorInfo"
ERROR_DOMAIN: Final = "a2a-protocol.org"


def string(_name: str, value: str) -> str:
    return value


_DECIMAL: Final = re.compile(r"-?[0-9]+")


def integer(name: str, value: str) -> int:
    """A decimal integer: ASCII digits, optionally after a minus, and nothing else.  Python's
    ``int`` also takes ``1_0``, ``+5``, `` 5`` and non-ASCII digits, which no client means; the
    range is checked where the field is decoded."""
    try:
        if _DECIMAL.fullmatch(value):
            return int(value)
    except ValueError:  # more digits than Python converts: no field takes that many anyway
        pass
    raise InvalidParamsError(
        Phrase.of(FIELD, f" must be a decimal integer (digits only), got {value[:40]!r}"),
        path=f"$.query.{name}",
    )


def boolean(name: str, value: str) -> bool:
    if value in ("true", "false"):
        return value == "true"
    raise InvalidParamsError(f"expected true or false, got {value[:40]!r}", path=f"$.query.{name}")


def unknown_state(name: str, value: str, spell: Callable[[Value], str]) -> InvalidParamsError:
    """A ``status`` query parameter that names no state: refused with the value as the client
    sent it, listing the states as ``spell`` (the binding's bodies) writes them."""
    states = ", ".join(spell(state) for state in m.TaskState if state)
    return InvalidParamsError(
        f"unknown task state {value[:40]!r} (one of {states})", path=f"$.query.{name}"
    )


_V1_STATES: Final = frozenset(V1.spell(state) for state in m.TaskState)


def _task_state(name: str, value: str) -> str:
    """``working``, ``input-required`` and ``TASK_STATE_WORKING`` all name the same state."""
    state = value.strip().upper().replace("-", "_")
    state = state if state.startswith("TASK_STATE_") else "TASK_STATE_" + state
    if state not in _V1_STATES:
        raise unknown_state(name, value, V1.spell)
    return state


@attrs.frozen
class Route:
    """One REST resource: its path template, verbs, the v1.0 method and the query it takes."""

    template: str
    verbs: frozenset[str]
    method: str
    query: Mapping[str, QueryType] = attrs.field(factory=dict)
    pattern: re.Pattern[str] = attrs.field(init=False)

    @pattern.default
    def _compile(self) -> re.Pattern[str]:
        pieces = re.split(r"\{(\w+)\}", self.template)  # literal, name, literal, ...
        return re.compile(
            "".join(f"(?P<{p}>[^/:]+)" if i % 2 else re.escape(p) for i, p in enumerate(pieces))
        )


PAGE_QUERY: Final = {"pageSize": integer, "pageToken": string}
"""The query parameters of a paged list, in both protocol versions."""

ROUTES: Final = (
    Route("/message:send", frozenset({"POST"}), "SendMessage"),
    Route("/message:stream", frozenset({"POST"}), "SendStreamingMessage"),
    Route("/tasks", frozenset({"GET"}), "ListTasks", {
        "contextId": string,
        "status": _task_state,
        "historyLength": integer,
        "statusTimestampAfter": string,
        "includeArtifacts": boolean,
        **PAGE_QUERY,
    }),
    Route("/tasks/{id}", frozenset({"GET"}), "GetTask", {"historyLength": integer}),
    Route("/tasks/{id}:cancel", frozenset({"POST"}), "CancelTask"),
    Route("/tasks/{id}:subscribe", frozenset({"GET", "POST"}), "SubscribeToTask"),
    Route(
        "/tasks/{taskId}/pushNotificationConfigs",
        frozenset({"POST"}),
        "CreateTaskPushNotificationConfig",
    ),
    Route(
        "/tasks/{taskId}/pushNotificationConfigs",
        frozenset({"GET"}),
        "ListTaskPushNotificationConfigs",
        PAGE_QUERY,
    ),
    Route(
        "/tasks/{taskId}/pushNotificationConfigs/{id}",
        frozenset({"GET"}),
        "GetTaskPushNotificationConfig",
    ),
    Route(
        "/tasks/{taskId}/pushNotificationConfigs/{id}",
        frozenset({"DELETE"}),
        "DeleteTaskPushNotificationConfig",
    ),
    Route("/extendedAgentCard", frozenset({"GET"}), "GetExtendedAgentCard"),
)  # fmt: skip


@attrs.frozen
class RestBinding:
    """A route table and where it is served: under ``prefix``, with ``/{tenant}`` or not;
    ``spell`` names states and roles in its errors as its bodies write them, and operations
    by their routes."""

    routes: tuple[Route, ...]
    spell: Spelling
    prefix: str = ""
    tenants: bool = True


V1_REST: Final = RestBinding(
    ROUTES,
    Vocabulary(
        V1.spell,
        {Mention.STREAM: "POST /message:stream", Mention.SUBSCRIBE: "GET /tasks/{id}:subscribe"},
    ),
)
V03_PREFIX: Final = "/v1"


def rest_version(path: str, headers: Mapping[str, str]) -> str:
    """Which REST binding a request is for (``headers`` with lower-case names).

    ``/v1/...`` paths are v0.3's (its routes all start there) unless the request says 1.0, in
    which case ``v1`` is a tenant; other paths are v1.0 resources, so no header is served as
    1.0, and an explicit 0.3 there is refused.
    """
    version = requested_version(headers)
    if version == V1_0 or path.startswith(V03_PREFIX + "/"):
        return version
    if any(headers.get(name, "").strip() for name in VERSION_HEADERS):
        raise VersionNotSupportedError(
            f"A2A 0.3 HTTP+JSON is served under {V03_PREFIX}/ (POST {V03_PREFIX}/message:send); "
            "the root paths speak 1.0 (send A2A-Version: 1.0)"
        )
    return V1_0


class RouteNotFound(errors.MethodNotFoundError):
    """No REST resource at this path (HTTP 404)."""

    http_status = 404
    grpc_status = "NOT_FOUND"


class VerbNotAllowed(errors.MethodNotFoundError):
    """The resource exists but not with this HTTP method (HTTP 405, with ``allow``)."""

    http_status = 405
    grpc_status = "UNIMPLEMENTED"

    def __init__(self, message: str, *, allow: Iterable[str]) -> None:
        self.allow = tuple(sorted(allow))
        super().__init__(message)


@attrs.frozen
class RestCall:
    """A matched request: the v1.0 method to run and its ProtoJSON params (body not yet in)."""

    route: Route
    tenant: str
    fields: dict[str, str]


def _match(path: str, routes: Iterable[Route]) -> list[tuple[Route, dict[str, str]]]:
    return [
        (route, found.groupdict())
        for route in routes
        if (found := route.pattern.fullmatch(path)) is not None
    ]


def match_route(verb: str, path: str, binding: RestBinding = V1_REST) -> RestCall:
    """The route ``verb path`` names in ``binding``: under its prefix, and (where the binding
    has tenants) without or with a leading ``/{tenant}`` segment.

    Raises ``RouteNotFound`` for an unknown path and ``VerbNotAllowed`` for a wrong verb.
    """
    resource = path.removeprefix(binding.prefix)
    candidates = [(route, fields, "") for route, fields in _match(resource, binding.routes)]
    tenant, slash, rest = resource.removeprefix("/").partition("/")
    if not candidates and slash and tenant and binding.tenants:
        candidates = [
            (route, fields, tenant) for route, fields in _match("/" + rest, binding.routes)
        ]
    if not candidates:
        raise RouteNotFound(f"No A2A resource at {path[:200]!r}")
    for route, fields, tenant in candidates:
        if verb in route.verbs:
            return RestCall(route, tenant, fields)
    allowed = {v for route, _f, _t in candidates for v in route.verbs}
    raise VerbNotAllowed(f"{verb} is not allowed on {path[:200]!r}", allow=allowed)


def rest_params(call: RestCall, body: Any, query: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The ProtoJSON params for ``call``: the body object (POST) or typed query (GET/DELETE),
    with the path fields and tenant set in."""
    params = {} if body is None else dict(expect_object(body, path="$"))
    for name, value in query:
        convert = call.route.query.get(name)
        if convert is None:
            known = ", ".join(call.route.query) or "none"
            raise InvalidParamsError(
                f"unknown query parameter (this resource takes: {known})",
                path=f"$.query.{name[:60]}",
            )
        if name in params:
            raise InvalidParamsError("given more than once", path=f"$.query.{name}")
        params[name] = convert(name, value)
    params.update(call.fields)
    if call.tenant:
        params["tenant"] = call.tenant
    return params


_PARAMS: Final = re.compile(r"\$\.params(?=$|[.\[])")
_FIRST: Final = re.compile(r"\.(\w+)")


def as_sent[E: FieldError](
    error: E,
    query: Collection[str],
    spell: Callable[[str], str] | None = None,
) -> E:
    """``error`` naming the field as the REST request carried it.

    The decoders and the runtime a REST request shares with JSON-RPC name fields of the
    ``params`` object its request becomes (``$.params.pageSize``, ``$.params.message.parts``).
    A REST client sent no such object: a field that came in the query (``query``: the
    parameter names sent) is ``$.query.{name}``, as when :func:`rest_params` refuses the value;
    any other is a field of the body (the path fields set in), ``$.message.parts``, spelled by
    ``spell`` where the binding's body uses other names than the model (v0.3's proto).  Paths
    this layer names itself (``$``, ``$.query``) are left alone.
    """
    rooted = _PARAMS.match(error.path)
    if rooted is None:
        return error
    relative = "$" + error.path[rooted.end() :]
    first = _FIRST.match(relative, 1)
    if first is not None and first[1] in query:
        return error.at("$.query" + relative[1:])
    return error.at(spell(relative) if spell else relative)


REASONS_NOT_BY_NAME: Final = {"ParseError": "JSON_PARSE", "InternalError": "INTERNAL_ERROR"}
"""Reasons of the standard JSON-RPC errors, whose reason A2A v1.0 leaves open (its rule names
the A2A errors): ``INTERNAL_ERROR`` is what the official SDK sends and what its HTTP+JSON
clients turn back into their ``InternalError`` (``INTERNAL`` they leave a generic error)."""


def _reason(error: A2AError) -> str:
    """The ErrorInfo reason (A2A v1.0 §11.6): the error type in UPPER_SNAKE, no ``Error``."""
    name = _public_name(error)
    by_name = re.sub(r"(?<!^)(?=[A-Z])", "_", name.removesuffix("Error")).upper()
    return REASONS_NOT_BY_NAME.get(name, by_name)


def _public_name(error: A2AError) -> str:
    """The name of the A2A error ``error`` is: the ``errors`` class that gives it its code.
    A refinement (``ContextMismatchError``, a store's or a binding's own subclass) goes on the
    wire as the error it refines."""
    return next(
        c for c in type(error).__mro__ if c.__module__ == errors.__name__ and "code" in vars(c)
    ).__name__


def error_type(error: A2AError) -> str:
    """The A2A error's type name as the v0.3 schema spells it (``TaskNotFoundError``)."""
    return "JSONParseError" if isinstance(error, ParseError) else _public_name(error)


def error_info(error: A2AError) -> dict[str, Any]:
    """The ``google.rpc.ErrorInfo`` naming ``error``'s A2A reason (A2A v1.0 §9.5, §11)."""
    info: dict[str, Any] = {"@type": ERROR_INFO_TYPE, "reason": _reason(error)}
    info["domain"] = ERROR_DOMAIN
    if isinstance(error, FieldError) and error.path:
        info["metadata"] = {"path": error.path, "reason": error.reason}
    return info


def problem(error: A2AError) -> dict[str, Any]:
    """An AIP-193 error body carrying a ``google.rpc.ErrorInfo`` with the A2A reason."""
    info = error_info(error)
    return {
        "error": {
            "code": error.http_status,
            "status": error.grpc_status,
            "message": error.message,
            "details": [info],
        }
    }
