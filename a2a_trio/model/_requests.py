"""Requests and responses of the A2A service, and push-notification configs (A2A v1.0 §3, §4.3)."""

from __future__ import annotations

from datetime import datetime

import attrs

from ._core import Message, Task, TaskState
from ._fields import REQUIRED, check_aware, to_tuple
from ._json import JsonObject


@attrs.frozen
class AuthenticationInfo:
    """Credentials the agent presents when it delivers a push notification."""

    scheme: str = attrs.field(metadata=REQUIRED)
    credentials: str = ""


@attrs.frozen
class TaskPushNotificationConfig:
    """Where and how to deliver push notifications for one task."""

    url: str = attrs.field(metadata=REQUIRED)
    tenant: str = ""
    id: str = ""
    task_id: str = ""
    token: str = ""
    authentication: AuthenticationInfo | None = None


@attrs.frozen
class SendMessageConfiguration:
    """Options of a send: output modes, push config, history length, blocking or not."""

    accepted_output_modes: tuple[str, ...] = attrs.field(default=(), converter=to_tuple)
    task_push_notification_config: TaskPushNotificationConfig | None = None
    history_length: int | None = None
    return_immediately: bool = False


@attrs.frozen
class SendMessageRequest:
    """``SendMessage`` and ``SendStreamingMessage``."""

    message: Message = attrs.field(metadata=REQUIRED)
    configuration: SendMessageConfiguration | None = None
    metadata: JsonObject | None = None
    tenant: str = ""


@attrs.frozen
class GetTaskRequest:
    """``GetTask``."""

    id: str = attrs.field(metadata=REQUIRED)
    history_length: int | None = None
    tenant: str = ""


@attrs.frozen
class ListTasksRequest:
    """``ListTasks``: filters, a page size (1..100, 50 when unset) and a cursor."""

    context_id: str = ""
    status: TaskState = TaskState.UNSPECIFIED
    page_size: int | None = None
    page_token: str = ""
    history_length: int | None = None
    status_timestamp_after: datetime | None = attrs.field(default=None, validator=check_aware)
    include_artifacts: bool | None = None
    tenant: str = ""


@attrs.frozen
class ListTasksResponse:
    """One page of tasks, by status time, newest first; ``next_page_token`` is empty on the last
    page."""

    tasks: tuple[Task, ...] = attrs.field(default=(), metadata=REQUIRED, converter=to_tuple)
    next_page_token: str = attrs.field(default="", metadata=REQUIRED)
    page_size: int = attrs.field(default=0, metadata=REQUIRED)
    total_size: int = attrs.field(default=0, metadata=REQUIRED)


@attrs.frozen
class CancelTaskRequest:
    """``CancelTask``."""

    id: str = attrs.field(metadata=REQUIRED)
    metadata: JsonObject | None = None
    tenant: str = ""


@attrs.frozen
class SubscribeToTaskRequest:
    """``SubscribeToTask``."""

    id: str = attrs.field(metadata=REQUIRED)
    tenant: str = ""


@attrs.frozen
class GetTaskPushNotificationConfigRequest:
    """``GetTaskPushNotificationConfig``."""

    task_id: str = attrs.field(metadata=REQUIRED)
    id: str = attrs.field(metadata=REQUIRED)
    tenant: str = ""


@attrs.frozen
class DeleteTaskPushNotificationConfigRequest:
    """``DeleteTaskPushNotificationConfig``."""

    task_id: str = attrs.field(metadata=REQUIRED)
    id: str = attrs.field(metadata=REQUIRED)
    tenant: str = ""


@attrs.frozen
class ListTaskPushNotificationConfigsRequest:
    """``ListTaskPushNotificationConfigs``."""

    task_id: str = attrs.field(metadata=REQUIRED)
    page_size: int = 0
    page_token: str = ""
    tenant: str = ""


@attrs.frozen
class ListTaskPushNotificationConfigsResponse:
    """One page of push configs."""

    configs: tuple[TaskPushNotificationConfig, ...] = attrs.field(default=(), converter=to_tuple)
    next_page_token: str = ""


@attrs.frozen
class GetExtendedAgentCardRequest:
    """``GetExtendedAgentCard``."""

    tenant: str = ""
