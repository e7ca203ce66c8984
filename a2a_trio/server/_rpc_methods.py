"""The A2A v1.0 JSON-RPC method table: method name -> params type, operation, result encoder.

A dispatch table rather than branches, so the v0.3 method names slot in as a second table.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

import attrs

from .. import model as m
from ..runtime import TaskStream
from ..store import CallerScope
from ..wire import V1, V03Codec, V1Codec, dumps
from ._handler import RequestHandler


@attrs.frozen
class CallInfo:
    """Per-call facts from the transport (headers) that some operations need."""

    last_event_id: int | None = None


type Unary = Callable[[RequestHandler, CallerScope, Any, CallInfo], Awaitable[Any]]
type Streaming = Callable[[RequestHandler, CallerScope, Any, CallInfo], Awaitable[TaskStream]]


type Decode = Callable[[Any], Any]


@attrs.frozen
class UnaryMethod:
    """A request/response method: decode params, call the operation, encode its result."""

    decode: Decode
    call: Unary
    encode: Callable[[Any], Any]


@attrs.frozen
class StreamingMethod:
    """An event-stream method: each event is encoded into one JSON-RPC response frame."""

    decode: Decode
    call: Streaming
    encode_event: Callable[[m.StreamEvent], Any]
    encode_event_bytes: Callable[[m.StreamEvent], bytes] = attrs.field(init=False)

    @encode_event_bytes.default
    def _serialize(self) -> Callable[[m.StreamEvent], bytes]:
        encode = self.encode_event
        return lambda event: dumps(encode(event))


type Method = UnaryMethod | StreamingMethod


def _encode(value: Any) -> Any:
    return V1.encode(value)


def v1_params(cls: type) -> Decode:
    """Decode v1.0 ProtoJSON params as ``cls``; error paths start at ``$.params``."""
    return lambda params: V1.decode(params, cls, path="$.params")


def _empty(_value: Any) -> Any:
    return {}


@attrs.frozen
class TaskList:
    """ListTasks' page and whether its request asked for artifacts, which its encoding
    needs: a task without artifacts is then written with an empty list."""

    page: m.ListTasksResponse
    include_artifacts: bool


async def _list_tasks(
    handler: RequestHandler, scope: CallerScope, request: m.ListTasksRequest, _info: CallInfo
) -> TaskList:
    page = await handler.list_tasks(scope, request)
    return TaskList(page, bool(request.include_artifacts))


def task_list_encoder(codec: V1Codec | V03Codec) -> Callable[[TaskList], Any]:
    """ListTasks' result encoder for ``codec``'s binding."""
    return lambda listed: codec.encode_task_list(
        listed.page, include_artifacts=listed.include_artifacts
    )


V1_METHODS: Final[dict[str, Method]] = {
    "SendMessage": UnaryMethod(
        v1_params(m.SendMessageRequest),
        lambda h, s, p, i: h.send_message(s, p),
        V1.encode_send_result,
    ),
    "SendStreamingMessage": StreamingMethod(
        v1_params(m.SendMessageRequest),
        lambda h, s, p, i: h.send_streaming_message(s, p),
        V1.encode_stream_response,
    ),
    "GetTask": UnaryMethod(
        v1_params(m.GetTaskRequest), lambda h, s, p, i: h.get_task(s, p), _encode
    ),
    "ListTasks": UnaryMethod(v1_params(m.ListTasksRequest), _list_tasks, task_list_encoder(V1)),
    "CancelTask": UnaryMethod(
        v1_params(m.CancelTaskRequest), lambda h, s, p, i: h.cancel_task(s, p), _encode
    ),
    "SubscribeToTask": StreamingMethod(
        v1_params(m.SubscribeToTaskRequest),
        lambda h, s, p, i: h.subscribe_to_task(s, p, last_event_id=i.last_event_id),
        V1.encode_stream_response,
    ),
    "CreateTaskPushNotificationConfig": UnaryMethod(
        v1_params(m.TaskPushNotificationConfig),
        lambda h, s, p, i: h.create_push_config(s, p),
        _encode,
    ),
    "GetTaskPushNotificationConfig": UnaryMethod(
        v1_params(m.GetTaskPushNotificationConfigRequest),
        lambda h, s, p, i: h.get_push_config(s, p),
        _encode,
    ),
    "ListTaskPushNotificationConfigs": UnaryMethod(
        v1_params(m.ListTaskPushNotificationConfigsRequest),
        lambda h, s, p, i: h.list_push_configs(s, p),
        _encode,
    ),
    "DeleteTaskPushNotificationConfig": UnaryMethod(
        v1_params(m.DeleteTaskPushNotificationConfigRequest),
        lambda h, s, p, i: h.delete_push_config(s, p),
        _empty,
    ),
    "GetExtendedAgentCard": UnaryMethod(
        v1_params(m.GetExtendedAgentCardRequest),
        lambda h, s, p, i: h.get_extended_agent_card(s, p),
        _encode,
    ),
}
