"""The one set of A2A operations every binding translates to (A2A v1.0 §3.1).

Bindings parse their wire form into model requests, call these, and encode the results; so the
same request gives the same result on every binding.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING

import attrs

from .. import model as m
from .._throttle import ThrottledLog
from ..errors import (
    FIELD,
    InternalError,
    InvalidParamsError,
    Mention,
    Phrase,
    PushNotificationNotSupportedError,
    StoreDamagedError,
    StoreUnavailableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from ..runtime import OnStart, TaskRuntime, TaskStream
from ..store import CallerScope

if TYPE_CHECKING:  # imported by the server only with push on: it brings httpx along
    from ._push import PushSender

logger = logging.getLogger("a2a_trio.server")


UNEXPECTED_FAILURE = "The server failed on this request; its log says why"
"""What a client is told of a failure nobody planned for, a bug (a2a_trio's or a custom
store's) met at a request's boundary: its traceback goes to the log only."""


def push_not_supported() -> PushNotificationNotSupportedError:
    """The refusal of anything push-related: the card says ``pushNotifications: false`` and a
    capability the card does not declare MUST be refused (A2A v1.0 §3.3.4).  It points to
    streaming by the method (or route) names of the client's binding."""
    return PushNotificationNotSupportedError(
        Phrase.of(
            "This agent does not support push notifications (capabilities.pushNotifications "
            "is false); use ",
            Mention.STREAM,
            " or ",
            Mention.SUBSCRIBE,
        )
    )


def _push_config_of(request: m.SendMessageRequest) -> m.TaskPushNotificationConfig | None:
    """The push config a send carries, if any."""
    configuration = request.configuration
    return None if configuration is None else configuration.task_push_notification_config


def _no_config(task_id: str, config_id: str) -> TaskNotFoundError:
    """A2A v1.0 §3.1.8 answers an unknown config with TaskNotFoundError."""
    return TaskNotFoundError(
        f"Task {task_id[:200]} has no push notification config {config_id[:200]!r}"
    )


def _task_id(request: m.GetTaskRequest | m.CancelTaskRequest | m.SubscribeToTaskRequest) -> str:
    """The task a request names. Its ``id`` is REQUIRED (A2A v1.0 §5.7: "present and set"), and
    ProtoJSON cannot tell ``""`` from a field left out: invalid params, as a missing ``id`` is,
    not a lookup of a task nobody can have made."""
    return _require_task_id(request.id, "$.params.id")


def _require_task_id(task_id: str, path: str) -> str:
    """``task_id``, which must be set (see ``_task_id``; ``path`` is where the request has it)."""
    if not task_id:
        raise InvalidParamsError(Phrase.of(FIELD, " must not be empty"), path=path)
    return task_id


class _StoreOutage:
    """A store that cannot work right now, or a damaged one, is the server's fault, said
    plainly to the client (JSON-RPC -32603 / HTTP 500) and logged in one line, never a bare
    500 with an empty body; the same problem again is logged at most once a minute, with the
    number left out (``ThrottledLog``), so a server under load does not flood its log.  (A
    class, not ``@contextmanager``: every request enters it, and a generator costs more.)"""

    def __init__(self) -> None:
        self._log = ThrottledLog(logger)

    def __enter__(self) -> None:
        pass

    def __exit__(self, _type: object, exc: BaseException | None, _traceback: object) -> None:
        if isinstance(exc, StoreDamagedError):  # no use trying again: the operator has to act
            self._log.log(logging.ERROR, "request failed: %s", exc)
            raise InternalError(
                "The task store is damaged; the server's log says what to do"
            ) from None
        if isinstance(exc, StoreUnavailableError):
            self._log.log(logging.WARNING, "request failed, the task store is unavailable: %s", exc)
            raise InternalError(
                "The task store is unavailable right now; try again shortly"
            ) from None


class RequestHandler:
    """A2A operations over a :class:`~a2a_trio.runtime.TaskRuntime`."""

    def __init__(self, runtime: TaskRuntime, push: PushSender | None = None) -> None:
        self.runtime = runtime
        self.push = push
        self._store_outage = _StoreOutage()

    async def send_message(
        self, scope: CallerScope, request: m.SendMessageRequest
    ) -> m.SendMessageResult:
        on_start = None
        if self.push is not None or request.configuration is not None:  # (else: nothing to do)
            on_start = await self._push_on_start(scope, request)
        with self._store_outage:
            return await self.runtime.send(scope, request, on_start=on_start)

    async def send_streaming_message(
        self, scope: CallerScope, request: m.SendMessageRequest
    ) -> TaskStream:
        on_start = None
        if self.push is not None or request.configuration is not None:  # (else: nothing to do)
            on_start = await self._push_on_start(scope, request)
        with self._store_outage:
            return await self.runtime.send_stream(scope, request, on_start=on_start)

    async def _push_on_start(
        self, scope: CallerScope, request: m.SendMessageRequest
    ) -> OnStart | None:
        """For a send carrying a push config: its webhook checked before anything is stored,
        then, once the task's job has started, the config stored for that task and its events
        watched from the message's own.  Refused when push is off: the client would wait for
        notifications that never come.  A follow-up message without one has its task watched
        again if the task has configs and nothing here watches it."""
        config = _push_config_of(request)
        if config is None:
            if self.push is None or not request.message.task_id:
                return None
            return partial(self.push.watch_again, scope)  # its configs, if it has any
        push = self._require_push()
        await push.check(config, under="$.params.configuration.taskPushNotificationConfig")

        async def on_start(task_id: str, after: int) -> None:
            await self.runtime.store.set_push_config(
                scope, attrs.evolve(config, task_id=task_id), delivered_through=after
            )
            push.watch(scope, task_id, after=after)

        return on_start

    def _require_push(self) -> PushSender:
        if self.push is None:
            raise push_not_supported()
        return self.push

    async def get_task(self, scope: CallerScope, request: m.GetTaskRequest) -> m.Task:
        with self._store_outage:
            return await self.runtime.get(scope, _task_id(request), request.history_length)

    async def list_tasks(
        self, scope: CallerScope, request: m.ListTasksRequest
    ) -> m.ListTasksResponse:
        with self._store_outage:
            page = await self.runtime.list(scope, request)
        return m.ListTasksResponse(
            tasks=page.tasks,
            next_page_token=page.next_page_token,
            page_size=page.page_size,
            total_size=page.total_size,
        )

    async def cancel_task(self, scope: CallerScope, request: m.CancelTaskRequest) -> m.Task:
        with self._store_outage:
            return await self.runtime.cancel(scope, _task_id(request))

    async def subscribe_to_task(
        self,
        scope: CallerScope,
        request: m.SubscribeToTaskRequest,
        *,
        last_event_id: int | None = None,
    ) -> TaskStream:
        with self._store_outage:
            return await self.runtime.subscribe(
                scope, _task_id(request), last_event_id=last_event_id
            )

    async def create_push_config(
        self, scope: CallerScope, config: m.TaskPushNotificationConfig
    ) -> m.TaskPushNotificationConfig:
        """CreateTaskPushNotificationConfig: stored, then the task's next events delivered."""
        push = self._require_push()
        _require_task_id(config.task_id, "$.params.taskId")
        await push.check(config, under="$.params")
        with self._store_outage:
            # Read first: an event written between the two reads is then delivered, not lost.
            after = await self.runtime.store.last_event_seq(scope, config.task_id)
            stored = await self.runtime.store.set_push_config(
                scope, config, delivered_through=after
            )
        push.watch(scope, stored.task_id, after=after)
        return stored

    async def get_push_config(
        self, scope: CallerScope, request: m.GetTaskPushNotificationConfigRequest
    ) -> m.TaskPushNotificationConfig:
        self._require_push()
        _require_task_id(request.task_id, "$.params.taskId")
        store = self.runtime.store
        with self._store_outage:
            found = await store.get_push_config(scope, request.task_id, request.id)
            if found is None:
                await store.last_event_seq(scope, request.task_id)  # the task is not found?
                raise _no_config(request.task_id, request.id)
        return found

    async def list_push_configs(
        self, scope: CallerScope, request: m.ListTaskPushNotificationConfigsRequest
    ) -> m.ListTaskPushNotificationConfigsResponse:
        """All of a task's configs, oldest first; with ``pageSize``, that many after the
        config whose id is ``pageToken``."""
        self._require_push()
        _require_task_id(request.task_id, "$.params.taskId")
        if request.page_size < 0:
            raise InvalidParamsError(
                Phrase.of(FIELD, f" must not be negative, not {request.page_size}"),
                path="$.params.pageSize",
            )
        with self._store_outage:
            configs = await self.runtime.store.list_push_configs(scope, request.task_id)
        start = 0
        if request.page_token:
            ids = [config.id for config in configs]
            if request.page_token not in ids:
                raise InvalidParamsError(
                    Phrase.of(
                        FIELD,
                        " is not a token this list gave (its config may have been deleted"
                        " since); list from the start",
                    ),
                    path="$.params.pageToken",
                )
            start = ids.index(request.page_token) + 1
        end = start + request.page_size if request.page_size else len(configs)
        page = configs[start:end]
        more = end < len(configs)
        return m.ListTaskPushNotificationConfigsResponse(
            configs=page, next_page_token=page[-1].id if more and page else ""
        )

    async def delete_push_config(
        self, scope: CallerScope, request: m.DeleteTaskPushNotificationConfigRequest
    ) -> None:
        """Idempotent (A2A v1.0 §3.1.10): deleting a config that is gone succeeds."""
        self._require_push()
        _require_task_id(request.task_id, "$.params.taskId")
        store = self.runtime.store
        with self._store_outage:
            if not await store.delete_push_config(scope, request.task_id, request.id):
                await store.last_event_seq(scope, request.task_id)  # the task is not found?

    async def get_extended_agent_card(
        self, scope: CallerScope, request: m.GetExtendedAgentCardRequest
    ) -> m.AgentCard:
        """Unsupported: the card never declares ``capabilities.extendedAgentCard`` (there is no
        way to configure one), and A2A v1.0 §3.3.4 says that MUST be UnsupportedOperationError.
        ExtendedAgentCardNotConfiguredError is for an agent that declares it and has none."""
        raise UnsupportedOperationError(
            Phrase.of(
                "This agent has no extended agent card (",
                Mention.EXTENDED_CARD,
                " is false); its public card is at ",
                Mention.PUBLIC_CARD,
            )
        )
