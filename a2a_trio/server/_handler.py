"""The one set of A2A operations every binding translates to (A2A v1.0 §3.1).

Bindings parse their wire form into model requests, call these, and encode the results; so the
same request gives the same result on every binding.
"""

from __future__ import annotations

import logging
from typing import NoReturn

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
    UnsupportedOperationError,
)
from ..runtime import TaskRuntime, TaskStream
from ..store import CallerScope

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


def _refuse_push_config(request: m.SendMessageRequest) -> None:
    """A send asking for push delivery is refused before anything is stored, not served
    without it: the client would wait for notifications that never come."""
    configuration = request.configuration
    if configuration is not None and configuration.task_push_notification_config is not None:
        raise push_not_supported()


def _task_id(request: m.GetTaskRequest | m.CancelTaskRequest | m.SubscribeToTaskRequest) -> str:
    """The task a request names. Its ``id`` is REQUIRED (A2A v1.0 §5.7: "present and set"), and
    ProtoJSON cannot tell ``""`` from a field left out: invalid params, as a missing ``id`` is,
    not a lookup of a task nobody can have made."""
    if not request.id:
        raise InvalidParamsError(Phrase.of(FIELD, " must not be empty"), path="$.params.id")
    return request.id


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

    def __init__(self, runtime: TaskRuntime) -> None:
        self.runtime = runtime
        self._store_outage = _StoreOutage()

    async def send_message(
        self, scope: CallerScope, request: m.SendMessageRequest
    ) -> m.SendMessageResult:
        _refuse_push_config(request)
        with self._store_outage:
            return await self.runtime.send(scope, request)

    async def send_streaming_message(
        self, scope: CallerScope, request: m.SendMessageRequest
    ) -> TaskStream:
        _refuse_push_config(request)
        with self._store_outage:
            return await self.runtime.send_stream(scope, request)

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

    async def push_config(self, scope: CallerScope, request: object) -> NoReturn:
        """All four push-config operations, until push delivery lands."""
        raise push_not_supported()

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
