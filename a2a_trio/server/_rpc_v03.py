"""The A2A v0.3 JSON-RPC method table: the same operations as v1.0, in v0.3 wire shapes.

Each v0.3 method decodes its params with the ``V03`` codec into the v1.0 model request the
handler takes, and encodes results and stream events back into v0.3 shapes (``kind`` tags,
lowercase states, ``final`` on status updates).  Nothing here is v0.3-specific behaviour: the
handler call is the one the v1.0 table makes.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, Final

from .. import model as m
from ..errors import InvalidParamsError, Mention, Vocabulary
from ..store import CallerScope
from ..wire import V03
from ._handler import RequestHandler
from ._rpc_methods import (
    V1_METHODS,
    CallInfo,
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


_SEND_PUSH: Final = (
    (
        "$.params.configuration.taskPushNotificationConfig",
        "$.params.configuration.pushNotificationConfig",
    ),
)
_CONFIG_IDS: Final = (
    ("$.params.taskId", "$.params.id"),
    ("$.params.id", "$.params.pushNotificationConfigId"),
)
V03_PATHS: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "message/send": _SEND_PUSH,
    "message/stream": _SEND_PUSH,
    "tasks/pushNotificationConfig/set": (
        ("$.params.taskId", "$.params.taskId"),
        ("$.params", "$.params.pushNotificationConfig"),
    ),
    "tasks/pushNotificationConfig/get": _CONFIG_IDS,
    "tasks/pushNotificationConfig/list": _CONFIG_IDS[:1],
    "tasks/pushNotificationConfig/delete": _CONFIG_IDS,
}
"""Where a v0.3 method's params hold a field the handler's checks name by its v1.0 path
(first match of each path's prefix): the push config's fields, nested in v0.3, and the ids,
named otherwise.  The decoder's own errors are spelled as sent already."""


def _moved(path: str, moves: tuple[tuple[str, str], ...]) -> str:
    for v1, v03 in moves:
        if path == v1 or path.startswith((v1 + ".", v1 + "[")):
            return v03 + path[len(v1) :]
    return path


def _spelled_as_sent[R](
    call: Callable[[RequestHandler, CallerScope, Any, CallInfo], Awaitable[R]],
    moves: tuple[tuple[str, str], ...],
) -> Callable[[RequestHandler, CallerScope, Any, CallInfo], Awaitable[R]]:
    """``call``, its ``InvalidParamsError`` naming the field where the v0.3 params hold it."""

    @functools.wraps(call)  # (its __wrapped__ is the v1.0 call: one operation, as tested)
    async def call_v03(
        handler: RequestHandler, scope: CallerScope, params: Any, info: CallInfo
    ) -> R:
        try:
            return await call(handler, scope, params, info)
        except InvalidParamsError as exc:
            raise exc.at(_moved(exc.path, moves)) from None

    return call_v03


def _v03_method(name: str) -> Method:
    shared = V1_METHODS[V1_NAME_OF_V03[name]]
    decode = v03_params(V03.PARAMS_BY_METHOD[name])
    moves = V03_PATHS.get(name)
    call = shared.call if moves is None else _spelled_as_sent(shared.call, moves)
    if isinstance(shared, StreamingMethod):
        encode = _resubscribe_event if name == "tasks/resubscribe" else _stream_event
        return StreamingMethod(decode, call, encode)
    if name == "message/send":
        return UnaryMethod(decode, call, V03.encode_send_result)
    if name == "tasks/pushNotificationConfig/delete":
        return UnaryMethod(decode, call, _empty)
    if name == "tasks/list":
        return UnaryMethod(decode, call, task_list_encoder(V03))
    return UnaryMethod(decode, call, _encode)


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
