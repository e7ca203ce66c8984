"""The A2A v0.3 JSON-RPC method table: the same operations as v1.0, in v0.3 wire shapes.

Each v0.3 method decodes its params with the ``V03`` codec into the v1.0 model request the
handler takes, and encodes results and stream events back into v0.3 shapes (``kind`` tags,
lowercase states, ``final`` on status updates).  Nothing here is v0.3-specific behaviour: the
handler call is the one the v1.0 table makes.
"""

from __future__ import annotations

from typing import Any, Final

from .. import model as m
from ..errors import Mention, Vocabulary
from ..wire import V03
from ._rpc_methods import (
    V1_METHODS,
    Decode,
    Method,
    StreamingMethod,
    UnaryMethod,
    task_list_encoder,
)


def v03_params(cls: type) -> Decode:
    """Decode v0.3 params as ``cls``; error paths start at ``$.params``."""
    return lambda params: V03.decode(params, cls, path="$.params")


def _encode(value: Any) -> Any:
    return V03.encode(value)


def _empty(_value: Any) -> Any:
    return None  # v0.3 answers tasks/pushNotificationConfig/delete with a null result


def _stream_event(event: m.StreamEvent) -> Any:
    return V03.encode_stream_event(event)


def ends_resubscription(event: m.StreamEvent) -> bool:
    """``final`` for ``tasks/resubscribe``: its stream goes on past an interrupted state (as
    v1.0's SubscribeToTask does), so only a terminal state ends it; ``message/stream`` also
    ends at an interrupted one."""
    return isinstance(event, m.TaskStatusUpdateEvent) and m.is_terminal(event.status.state)


def _resubscribe_event(event: m.StreamEvent) -> Any:
    return V03.encode_stream_event(event, final=ends_resubscription(event))


V1_NAME_OF_V03: Final = {
    # v0.3 name -> the v1.0 method whose handler call it shares
    "message/send": "SendMessage",
    "message/stream": "SendStreamingMessage",
    "tasks/get": "GetTask",
    "tasks/list": "ListTasks",
    "tasks/cancel": "CancelTask",
    "tasks/resubscribe": "SubscribeToTask",
    "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
    "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
    "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigs",
    "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
    "agent/getAuthenticatedExtendedCard": "GetExtendedAgentCard",
}


def _v03_method(name: str) -> Method:
    shared = V1_METHODS[V1_NAME_OF_V03[name]]
    decode = v03_params(V03.PARAMS_BY_METHOD[name])
    if isinstance(shared, StreamingMethod):
        encode = _resubscribe_event if name == "tasks/resubscribe" else _stream_event
        return StreamingMethod(decode, shared.call, encode)
    if name == "message/send":
        return UnaryMethod(decode, shared.call, V03.encode_send_result)
    if name == "tasks/pushNotificationConfig/delete":
        return UnaryMethod(decode, shared.call, _empty)
    if name == "tasks/list":
        return UnaryMethod(decode, shared.call, task_list_encoder(V03))
    return UnaryMethod(decode, shared.call, _encode)


V03_METHODS: Final[dict[str, Method]] = {name: _v03_method(name) for name in V1_NAME_OF_V03}

V03_CARD_MENTIONS: Final = {
    Mention.EXTENDED_CARD: "supportsAuthenticatedExtendedCard",
    Mention.PUBLIC_CARD: "/.well-known/agent.json",
}
"""What v0.3 calls the card's extended-card flag (a top-level field) and where its card is."""

V03_VOCABULARY: Final = Vocabulary(
    V03.spell,
    {Mention.STREAM: "message/stream", Mention.SUBSCRIBE: "tasks/resubscribe"} | V03_CARD_MENTIONS,
)
"""How v0.3 JSON-RPC errors name states, roles, methods and card fields."""
