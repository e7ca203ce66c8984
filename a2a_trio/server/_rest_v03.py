"""The A2A v0.3 HTTP+JSON/REST binding (v0.3 spec §3.2.3, the "REST" tab of each method).

Routes are the ``google.api.http`` paths of ``a2a-v0.3.proto`` under ``/v1`` (no tenants in
v0.3); bodies and results are ProtoJSON of the v0.3 proto (``V03_PROTO``, see
``docs/bindings.md`` for why).  Each route names a v0.3 JSON-RPC method and shares that
method's handler call; requests built only from the path and query (``{id, historyLength}``)
have the v0.3 JSON-RPC params' keys, so they reuse its decoders too.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, Final

from .. import model as m
from ..errors import A2AError, FieldError, Mention, Vocabulary
from ..wire import V03, V03_PROTO
from ._rest import (
    PAGE_QUERY,
    V03_PREFIX,
    RestBinding,
    Route,
    as_sent,
    boolean,
    error_type,
    integer,
    problem,
    string,
    unknown_state,
)
from ._rpc_methods import Decode, Method, StreamingMethod, UnaryMethod, task_list_encoder
from ._rpc_v03 import V03_CARD_MENTIONS, V03_METHODS, ends_resubscription


def _query_form(value: str) -> str:
    return value.strip().lower().removeprefix("task_state_").replace("_", "-")


_V03_STATES: Final = {
    _query_form(spelled): V03.spell(state)
    for state in m.TaskState
    for spelled in (V03.spell(state), V03_PROTO.spell(state))
}


def _v03_state(name: str, value: str) -> str:
    """``working``, ``input-required`` and ``TASK_STATE_WORKING`` name the same state, in the
    form the v0.3 JSON-RPC decoder reads (the first).  The proto's zero value,
    ``TASK_STATE_UNSPECIFIED``, is JSON-RPC's ``unknown``: no filter, as on v1.0."""
    state = _V03_STATES.get(_query_form(value))
    if state is None:
        raise unknown_state(name, value, V03_PROTO.spell)
    return state


_CONFIG: Final = "/tasks/{id}/pushNotificationConfigs"

V03_ROUTES: Final = (
    Route("/message:send", frozenset({"POST"}), "message/send"),
    Route("/message:stream", frozenset({"POST"}), "message/stream"),
    Route("/tasks", frozenset({"GET"}), "tasks/list", {
        "contextId": string,
        "status": _v03_state,
        "historyLength": integer,
        "lastUpdatedAfter": integer,
        "includeArtifacts": boolean,
        **PAGE_QUERY,
    }),
    Route("/tasks/{id}", frozenset({"GET"}), "tasks/get", {"historyLength": integer}),
    Route("/tasks/{id}:cancel", frozenset({"POST"}), "tasks/cancel"),
    Route("/tasks/{id}:subscribe", frozenset({"GET", "POST"}), "tasks/resubscribe"),
    Route(_CONFIG, frozenset({"POST"}), "tasks/pushNotificationConfig/set"),
    Route(_CONFIG, frozenset({"GET"}), "tasks/pushNotificationConfig/list", PAGE_QUERY),
    Route(
        _CONFIG + "/{pushNotificationConfigId}",
        frozenset({"GET"}),
        "tasks/pushNotificationConfig/get",
    ),
    Route(
        _CONFIG + "/{pushNotificationConfigId}",
        frozenset({"DELETE"}),
        "tasks/pushNotificationConfig/delete",
    ),
    Route("/card", frozenset({"GET"}), "agent/getAuthenticatedExtendedCard"),
)  # fmt: skip

V03_REST: Final = RestBinding(
    V03_ROUTES,
    Vocabulary(
        V03_PROTO.spell,
        {
            Mention.STREAM: f"POST {V03_PREFIX}/message:stream",
            Mention.SUBSCRIBE: f"POST {V03_PREFIX}/tasks/{{id}}:subscribe",  # the spec's §3.5.6
        }
        | V03_CARD_MENTIONS,
    ),
    prefix=V03_PREFIX,
    tenants=False,
)


def _proto_params(cls: type) -> Decode:
    """Decode a v0.3 ProtoJSON body (path fields set in) as ``cls``."""
    return lambda params: V03_PROTO.decode(params, cls, path="$")


def _empty(_value: Any) -> Any:
    return {}  # google.protobuf.Empty


# Methods whose body is a v0.3 proto message (the others are read from the path and query).
_BODIES: Final = {
    "message/send": _proto_params(m.SendMessageRequest),
    "message/stream": _proto_params(m.SendMessageRequest),
    "tasks/pushNotificationConfig/set": _proto_params(m.TaskPushNotificationConfig),
}
_ENCODERS: Final[dict[str, Callable[[Any], Any]]] = {
    "message/send": V03_PROTO.encode_send_response,
    "tasks/list": task_list_encoder(V03_PROTO),
    "tasks/pushNotificationConfig/delete": _empty,
}


def _stream_response(event: m.StreamEvent) -> Any:
    return V03_PROTO.encode_stream_response(event)


def _resubscribe_response(event: m.StreamEvent) -> Any:
    return V03_PROTO.encode_stream_response(event, final=ends_resubscription(event))


def _rest_method(name: str) -> Method:
    rpc = V03_METHODS[name]
    decode = _BODIES.get(name, rpc.decode)
    if isinstance(rpc, StreamingMethod):
        encode = _resubscribe_response if name == "tasks/resubscribe" else _stream_response
        return StreamingMethod(decode, rpc.call, encode)
    return UnaryMethod(decode, rpc.call, _ENCODERS.get(name, V03_PROTO.encode))


V03_REST_METHODS: Final[dict[str, Method]] = {
    route.method: _rest_method(route.method) for route in V03_ROUTES
}


def v03_problem(error: A2AError) -> dict[str, Any]:
    """The AIP-193 body v1.0 REST sends, plus the top-level ``type``, ``code`` and ``message``
    the v0.3 REST clients read: the official Python SDK raises its exception class by that
    ``type``, the JavaScript SDK (``@a2a-js/sdk``) by ``code``, the error's v0.3 JSON-RPC code."""
    return {
        **problem(error),
        "type": error_type(error),
        "code": error.code,
        "message": error.message,
    }


def v03_as_sent[E: FieldError](error: E, params: Mapping[str, Any], query: Collection[str]) -> E:
    """``error`` naming the field as the client sent it (:func:`~._rest.as_sent`): a field of
    the body spelled with the keys ``params`` (the body, path fields set in) used, as
    :meth:`V03_PROTO.sent_path <a2a_trio.wire.V03ProtoCodec.sent_path>` spells it
    (``$.request.content`` for the model's ``$.message.parts``).  The body decoder's paths are
    already as sent."""
    return as_sent(error, query, lambda relative: V03_PROTO.sent_path(relative, params))
