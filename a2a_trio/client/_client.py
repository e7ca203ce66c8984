"""The client: one agent, one chosen interface, every A2A operation as a typed method."""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from functools import partial
from typing import Final, Self

import httpx

from .. import model as m
from .._trust import trusted_context
from ._bindings import Op
from ._card import CardCache, choose_binding, fetch_card
from ._options import (
    DEFAULT_LIMITS,
    DEFAULT_RECONNECT,
    DEFAULT_TIMEOUTS,
    Limits,
    Reconnect,
    Timeouts,
)
from ._signing import CardVerifier
from ._stream import EventStream
from ._transport import (
    ClientStatistics,
    Origin,
    Transport,
    TrustedOrigins,
    http_errors,
    origin,
    trusted,
)


def _as_message(message: m.Message | str, context_id: str, task_id: str) -> m.Message:
    if isinstance(message, str):
        return m.text_message(message, context_id=context_id, task_id=task_id)
    return message


class TaskPages:
    """An async iterator over the tasks of every page of a listing."""

    def __init__(self, fetch: Callable[..., Awaitable[m.ListTasksResponse]]) -> None:
        self._fetch = fetch
        self._pending: deque[m.Task] = deque()
        self._token = ""
        self._done = False

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> m.Task:
        while not self._pending:
            if self._done:
                raise StopAsyncIteration
            page = await self._fetch(page_token=self._token)
            self._pending.extend(page.tasks)
            self._done = not page.next_page_token or page.next_page_token == self._token
            self._token = page.next_page_token
        return self._pending.popleft()


class Client:
    """Talks to one agent over the interface chosen from its card.  Made by :func:`open_client`.

    Every method raises the typed A2A error the agent answers with (``TaskNotFoundError``, ...),
    :class:`TransportError` when the exchange fails, and :class:`InvalidResponseError` when
    the answer is not valid A2A.
    """

    def __init__(
        self,
        card: m.AgentCard,
        interface: m.AgentInterface,
        transport: Transport,
        *,
        reconnect: Reconnect,
    ) -> None:
        self.card = card
        """The agent card the client was opened with."""
        self.interface = interface
        """The interface in use (URL, binding, protocol version)."""
        self._transport = transport
        self._reconnect = reconnect

    def statistics(self) -> ClientStatistics:
        """Counters so far: calls, streams opened, streams open now, reconnects."""
        return self._transport.statistics()

    def _send_request(
        self,
        message: m.Message | str,
        *,
        context_id: str,
        task_id: str,
        return_immediately: bool,
        history_length: int | None,
        accepted_output_modes: Sequence[str],
        push_config: m.TaskPushNotificationConfig | None,
        metadata: m.JsonObject | None,
    ) -> m.SendMessageRequest:
        configuration = m.SendMessageConfiguration(
            accepted_output_modes=tuple(accepted_output_modes),
            task_push_notification_config=push_config,
            history_length=history_length,
            return_immediately=return_immediately,
        )
        return m.SendMessageRequest(
            message=_as_message(message, context_id, task_id),
            configuration=configuration if configuration != m.SendMessageConfiguration() else None,
            metadata=metadata,
        )

    async def send(
        self,
        message: m.Message | str,
        *,
        context_id: str = "",
        task_id: str = "",
        return_immediately: bool = False,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] = (),
        push_config: m.TaskPushNotificationConfig | None = None,
        metadata: m.JsonObject | None = None,
    ) -> m.Task | m.Message:
        """Send a message (text becomes a one-part user message) and return the answer.

        Blocks until the task reaches a terminal or interrupted state, unless
        ``return_immediately`` asks the agent to answer as soon as the task exists.
        """
        request = self._send_request(
            message,
            context_id=context_id,
            task_id=task_id,
            return_immediately=return_immediately,
            history_length=history_length,
            accepted_output_modes=accepted_output_modes,
            push_config=push_config,
            metadata=metadata,
        )
        result: m.Task | m.Message = await self._transport.unary(Op.SEND, request)
        return result

    def stream(
        self,
        message: m.Message | str,
        *,
        context_id: str = "",
        task_id: str = "",
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] = (),
        metadata: m.JsonObject | None = None,
    ) -> EventStream:
        """Send a message and follow the task's events as they happen.

        Use as ``async with client.stream("hi") as events: async for event in events: ...``.
        A dropped connection is resumed from the last event id (see :class:`Reconnect`).
        """
        request = self._send_request(
            message,
            context_id=context_id,
            task_id=task_id,
            return_immediately=False,
            history_length=history_length,
            accepted_output_modes=accepted_output_modes,
            push_config=None,
            metadata=metadata,
        )
        return EventStream(self._transport, Op.STREAM, request, reconnect=self._reconnect)

    def subscribe(self, task_id: str, *, last_event_id: str = "") -> EventStream:
        """Follow the events of a running task (an ``EventStream``, used like :meth:`stream`).

        With ``last_event_id`` (an earlier stream's :attr:`EventStream.last_event_id`), the
        stream starts after that event (``Last-Event-ID``), where an agent that numbers its
        events (a2a_trio does) replays what came after it; else with the task's snapshot.
        """
        request = m.SubscribeToTaskRequest(id=task_id)
        return EventStream(
            self._transport,
            Op.SUBSCRIBE,
            request,
            reconnect=self._reconnect,
            last_event_id=last_event_id,
        )

    async def get_task(self, task_id: str, *, history_length: int | None = None) -> m.Task:
        """The task's current state, artifacts and (up to ``history_length``) history."""
        task: m.Task = await self._transport.unary(
            Op.GET, m.GetTaskRequest(id=task_id, history_length=history_length)
        )
        return task

    async def list_tasks(
        self,
        *,
        context_id: str = "",
        status: m.TaskState = m.TaskState.UNSPECIFIED,
        page_size: int | None = None,
        page_token: str = "",
        history_length: int | None = None,
        status_timestamp_after: datetime | None = None,
        include_artifacts: bool | None = None,
    ) -> m.ListTasksResponse:
        """One page of tasks, filtered; pass ``next_page_token`` back for the next page."""
        request = m.ListTasksRequest(
            context_id=context_id,
            status=status,
            page_size=page_size,
            page_token=page_token,
            history_length=history_length,
            status_timestamp_after=status_timestamp_after,
            include_artifacts=include_artifacts,
        )
        page: m.ListTasksResponse = await self._transport.unary(Op.LIST, request)
        return page

    def iter_tasks(
        self,
        *,
        context_id: str = "",
        status: m.TaskState = m.TaskState.UNSPECIFIED,
        page_size: int | None = None,
        history_length: int | None = None,
        include_artifacts: bool | None = None,
    ) -> TaskPages:
        """Every matching task, fetching page after page as the iteration goes.

        ``async for task in client.iter_tasks(...)``; stopping early is fine (no generator is
        left suspended: each page is fetched whole before its tasks are handed out).
        """
        fetch = partial(
            self.list_tasks,
            context_id=context_id,
            status=status,
            page_size=page_size,
            history_length=history_length,
            include_artifacts=include_artifacts,
        )
        return TaskPages(fetch)

    async def cancel_task(self, task_id: str, *, metadata: m.JsonObject | None = None) -> m.Task:
        """Ask the agent to cancel the task; returns the task as it stands afterwards."""
        task: m.Task = await self._transport.unary(
            Op.CANCEL, m.CancelTaskRequest(id=task_id, metadata=metadata)
        )
        return task

    async def create_push_config(
        self, config: m.TaskPushNotificationConfig
    ) -> m.TaskPushNotificationConfig:
        """Register where the agent should push this task's updates."""
        created: m.TaskPushNotificationConfig = await self._transport.unary(Op.CREATE_PUSH, config)
        return created

    async def get_push_config(self, task_id: str, config_id: str) -> m.TaskPushNotificationConfig:
        """One push-notification config of a task."""
        config: m.TaskPushNotificationConfig = await self._transport.unary(
            Op.GET_PUSH, m.GetTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)
        )
        return config

    async def list_push_configs(
        self, task_id: str, *, page_size: int = 0, page_token: str = ""
    ) -> m.ListTaskPushNotificationConfigsResponse:
        """The push-notification configs of a task (one page)."""
        request = m.ListTaskPushNotificationConfigsRequest(
            task_id=task_id, page_size=page_size, page_token=page_token
        )
        page: m.ListTaskPushNotificationConfigsResponse = await self._transport.unary(
            Op.LIST_PUSH, request
        )
        return page

    async def delete_push_config(self, task_id: str, config_id: str) -> None:
        """Remove a push-notification config."""
        await self._transport.unary(
            Op.DELETE_PUSH, m.DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)
        )

    async def get_extended_card(self) -> m.AgentCard:
        """The extended agent card an authenticated client may see."""
        card: m.AgentCard = await self._transport.unary(
            Op.EXTENDED_CARD, m.GetExtendedAgentCardRequest()
        )
        return card


@asynccontextmanager
async def open_client(
    agent: str | m.AgentCard,
    *,
    auth: httpx.Auth | None = None,
    headers: Mapping[str, str] | None = None,
    bindings: Sequence[str] | None = None,
    versions: Sequence[str] = ("1.0", "0.3"),
    extensions: Sequence[str] = (),
    tenant: str = "",
    timeouts: Timeouts = DEFAULT_TIMEOUTS,
    limits: Limits = DEFAULT_LIMITS,
    reconnect: Reconnect = DEFAULT_RECONNECT,
    card_cache: CardCache | None = None,
    verifier: CardVerifier | None = None,
    trusted_origins: Iterable[str] | TrustedOrigins = (),
    http: httpx.AsyncClient | None = None,
) -> AsyncIterator[Client]:
    """Open a client for the agent at a base URL, a card URL, or described by a card.

    Credentials (``auth``, ``headers``) and messages go only to the origin (scheme, host,
    port) of the URL given, or, for a card given as a value, of the interface chosen from it,
    and to ``trusted_origins``.  A redirect elsewhere is not followed (``AgentCardError`` for
    the card, ``TransportError`` for a call), and an interface the card places on another
    origin is not used.

    Args:
        agent: the agent's base URL (its card is discovered), a card URL ending in ``.json``,
            or an :class:`~a2a_trio.model.AgentCard` already in hand.
        auth: credentials for every request (:class:`BearerAuth`, :class:`ApiKeyAuth`,
            :class:`HeaderAuth` or any ``httpx.Auth``).
        headers: extra headers for every request.
        bindings: the bindings this client may use, most preferred first (``"JSONRPC"``,
            ``"HTTP+JSON"``); by default both, in the order the card lists them.
        versions: the protocol versions this client may speak, most preferred first
            (``"1.0"``, ``"0.3"``; v0.3 is JSON-RPC only).
        extensions: extension URIs to request (sent as ``A2A-Extensions``).
        tenant: the tenant to address, when the agent hosts several.
        timeouts: connect/read limits (streams have no read limit by default).
        limits: the largest card, answer or stream event read (:class:`Limits`, 16 MiB).
        reconnect: how dropped streams are resumed.
        card_cache: a shared :class:`CardCache`; without one the card is fetched every time.
        verifier: require the card to carry a signature that verifies with one of these keys.
        trusted_origins: other origins (``"https://api.example.com"``, or a
            :class:`TrustedOrigins` already parsed) the card may place its interface on and
            redirects may lead to; they get the credentials too.
        http: an ``httpx.AsyncClient`` to use (not closed here); else one is opened and closed.
            Its ``follow_redirects`` setting is not used: redirects follow the rule above.

    Raises:
        AgentCardError: no card, an invalid or unverified card, or no interface this client
            speaks.
        AuthenticationRequiredError: the card is served only with credentials (HTTP 401).
        TransportError: the agent could not be reached.
        TrustStoreError: without ``http``, ``SSL_CERT_FILE`` names no file of CA certificates.
        ValueError: one of ``trusted_origins`` is not an ``http(s)://`` origin.
    """
    extra = dict(headers or {})
    trust = trusted(trusted_origins)  # read once: the card's fetch gets it as it is
    allowed = trust.origins
    async with _http_client(http) as client:
        if isinstance(agent, str):
            card = await fetch_card(
                client,
                agent,
                cache=card_cache,
                auth=auth,
                headers=extra,
                timeouts=timeouts,
                limits=limits,
                trusted_origins=trust,
            )
            with http_errors(f"fetching the agent card at {agent}"):
                home: Origin | None = origin(client.build_request("GET", agent).url)
        else:
            card = agent
            home = None  # a card you hand over is trusted as it is: any of its interfaces
        if verifier is not None:
            verifier.verify(card)
        if home is not None:  # the card's interface must be on its origin, or one you trust
            allowed |= {home}
        interface, binding = choose_binding(
            card,
            bindings,
            versions=versions,
            tenant=tenant,
            origins=None if home is None else allowed,
        )
        with http_errors(f"using the interface at {interface.url}"):
            allowed |= {origin(interface.url)}
        if extensions:
            extra["A2A-Extensions"] = ", ".join(extensions)
        transport = Transport(
            client,
            binding,
            auth=auth,
            headers=extra,
            timeouts=timeouts,
            limits=limits,
            origins=allowed,
        )
        yield Client(card, interface, transport, reconnect=reconnect)


OWN_CLIENT_LIMITS: Final = httpx.Limits(max_connections=None, max_keepalive_connections=20)
"""The HTTP client a :class:`Client` makes for itself opens as many connections as its calls
need: each open stream holds one, and httpx's default cap of 100 made the call after the
hundredth stream wait for one to end."""


@asynccontextmanager
async def _http_client(http: httpx.AsyncClient | None) -> AsyncIterator[httpx.AsyncClient]:
    if http is not None:
        yield http
        return
    # httpx would load a CA bundle for each client, with the trio run standing still: tens of
    # milliseconds of CPU, hundreds on a loaded machine (every stream of a server whose agent
    # calls others).  The clients share one context, loaded in a worker thread.
    tls = await trusted_context()
    async with httpx.AsyncClient(limits=OWN_CLIENT_LIMITS, verify=tls) as client:
        yield client
