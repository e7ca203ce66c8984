"""Legacy producer dialect surfaces: ``GET {path}/.well-known/agent.json`` and ``POST {path}``.

Each configured skill gets a surface at its path prefix (``ServerConfig.legacy_prefixes``, or
``/{skill_id}`` for every skill with ``legacy_mount_all``).  Its five methods run through the same
request handler as every other binding, with the skill pinned in ``message.metadata.skillId``;
ids, translation and the bearer gate are in the sans-IO ``_legacy`` and ``wire._legacy``.

Every ``POST {path}`` passes the dialect's bearer gate (``legacy_bearer``) and then the
server's own authentication (``ServerConfig.authenticate``), as every other binding does; its
tasks belong to that owner in the default tenant (the dialect has no tenants), so they are
isolated from other callers on every binding.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import trio
from quart import Response, request
from quart_trio import QuartTrio

from .. import model as m
from ..errors import (
    A2AError,
    AgentMisuseError,
    AuthenticationRequiredError,
    InternalError,
    InvalidParamsError,
    Mention,
    MethodNotFoundError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    Vocabulary,
)
from ..model import JsonValue
from ..runtime import LogEntry, Skill, SubscriberOverflow, TaskStream
from ..store import CallerScope
from ..wire import _legacy as wire
from ..wire import dumps
from . import _jsonrpc as rpc
from ._body import BodyTooLargeError, BodyTooSlowError, body_deadline, read_body
from ._handler import UNEXPECTED_FAILURE, push_not_supported
from ._legacy import LegacyEvents, LegacyIds, LegacyTask, bearer_refusal, result_text
from ._sse import encode_event
from ._streaming import event_stream_response
from ._tenants import authenticated_owner, caller_scope, request_headers

if TYPE_CHECKING:
    from ._app import A2AServer

CARD_SUFFIX = "/.well-known/agent.json"
VERBS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
CHALLENGE = {"WWW-Authenticate": "Bearer"}
VOCABULARY: Final = Vocabulary(
    wire.spell, {Mention.STREAM: "tasks/sendSubscribe", Mention.SUBSCRIBE: "tasks/resubscribe"}
)
"""How the dialect's errors name states, roles and the methods they point to."""


def legacy_surfaces(server: A2AServer) -> dict[str, Skill]:
    """Path prefix -> skill, from the config; refuses unknown skills and clashing paths."""
    config = server.config
    skills = {skill.id: skill for skill in server.agent.skills}
    wanted: Mapping[str, str] = config.legacy_prefixes
    if config.legacy_mount_all:
        wanted = {skill_id: "/" + skill_id for skill_id in skills} | dict(wanted)
    surfaces: dict[str, Skill] = {}
    for skill_id, prefix in wanted.items():
        path = "/" + prefix.strip("/")
        if skill_id not in skills:
            raise AgentMisuseError(f"legacy_prefixes names unknown skill {skill_id!r}")
        if path in ("/", config.jsonrpc_path.rstrip("/") or "/") or path in surfaces:
            raise AgentMisuseError(f"legacy path {prefix!r} for {skill_id!r} is already taken")
        surfaces[path] = skills[skill_id]
    return surfaces


logger = logging.getLogger("a2a_trio.server")

RPC_ENDPOINT: Final = "legacy rpc "
"""How the endpoint names of the legacy JSON-RPC routes begin (then their path)."""


def mount_legacy(app: QuartTrio, server: A2AServer) -> None:
    """Add the legacy card and JSON-RPC routes of every configured surface."""
    for path, skill in legacy_surfaces(server).items():
        surface = LegacySurface(server, skill, path)
        for rule in (path + CARD_SUFFIX, path + CARD_SUFFIX + "/"):
            app.add_url_rule(
                rule, f"legacy card {rule}", surface.card, methods=["GET"], strict_slashes=True
            )
        for rule in (path, path + "/"):  # every verb, so a wrong one is 405 here, not REST's 404
            app.add_url_rule(
                rule,
                RPC_ENDPOINT + rule,
                surface.dispatch,
                methods=VERBS,
                strict_slashes=True,
                provide_automatic_options=False,  # OPTIONS is a wrong verb too
            )


type Operation = Callable[[CallerScope, Any, JsonValue], Awaitable[Response]]
"""A legacy method: the caller's scope, its params and the request id to echo (any JSON
value, §4.1)."""


class LegacySurface:
    """One skill's legacy surface: its card, its task ids and its five methods."""

    def __init__(self, server: A2AServer, skill: Skill, path: str) -> None:
        self._server = server
        self._skill = skill
        self._path = path
        self._ids = LegacyIds(server.config.legacy_eviction, has_job=self._has_job)
        self._methods: dict[str, Operation] = {
            "tasks/send": self._send,
            "tasks/get": self._get,
            "tasks/cancel": self._cancel,
            "tasks/sendSubscribe": self._send_subscribe,
            "tasks/resubscribe": self._resubscribe,
        }

    async def card(self) -> Response:
        agent, config = self._server.agent, self._server.config
        base = (config.public_url or request.host_url).rstrip("/")
        body = wire.encode_card(
            agent.name,
            agent.description,
            agent.version,
            self._skill.card_entry(),
            url=base + self._path,
            default_modes=(agent.default_input_modes, agent.default_output_modes),
            bearer=config.legacy_bearer,
        )
        return Response(dumps(body), content_type="application/json")

    async def dispatch(self) -> Response:
        config = self._server.config
        if request.method != "POST":
            wrong = rpc.wrong_verb(request.method, self._path + CARD_SUFFIX)
            return _answer(rpc.failure(None, wrong), status=405, headers={"Allow": rpc.ALLOW})
        headers = request_headers(request.headers.items())
        if config.legacy_bearer:
            refusal = bearer_refusal(headers.get("authorization"), config.legacy_token_check)
            if refusal:
                return _unauthenticated(AuthenticationRequiredError(refusal))
        try:
            owner = await authenticated_owner(config, headers)
        except AuthenticationRequiredError as refused:
            return _unauthenticated(refused)
        except A2AError as failed:  # the hook's own fault (InternalError), or its refusal
            return _answer(rpc.failure(None, failed), status=failed.http_status)
        scope = caller_scope(config, "", owner)  # the dialect has no tenants: the default one
        document: Any = None
        try:
            with body_deadline(config.body_timeout):
                body = await read_body(request, config.max_body_bytes)
        except (BodyTooLargeError, BodyTooSlowError) as refused:
            return _answer(rpc.failure(None, refused), status=refused.http_status)
        try:
            document = rpc.load_request(body)
        except A2AError as error:
            return _answer(rpc.failure(None, error), status=400)
        try:
            call = rpc.parse_legacy_request(document)
            operation = self._methods.get(call.method)
            if operation is None:
                raise MethodNotFoundError(f"Method not implemented: {call.method[:100]}")
            return await operation(scope, call.params, call.id)
        except A2AError as error:  # states, roles and methods named as the dialect does
            spelled = error.spelled(VOCABULARY)
            return _answer(rpc.failure(rpc.legacy_request_id(document), spelled))
        except Exception:  # the request's boundary: a bug (ours, a custom store's) is never leaked
            logger.exception("legacy request failed on an unexpected error")
            unexpected = InternalError(UNEXPECTED_FAILURE)
            return _answer(rpc.failure(rpc.legacy_request_id(document), unexpected))

    # --- the five methods ------------------------------------------------------------------

    async def _send(self, scope: CallerScope, params: Any, rid: JsonValue) -> Response:
        entry, stream, head = await self._start(scope, params)
        if isinstance(head, m.Message):
            return _answer(rpc.success(rid, self._reply_envelope(params, entry, head)))
        try:
            await self._until_answerable(scope, stream, head.id)
        finally:
            stream.close()
        return _answer(rpc.success(rid, await self._envelope(scope, params["id"], entry)))

    async def _get(self, scope: CallerScope, params: Any, rid: JsonValue) -> Response:
        legacy_id = _required_id(params, "tasks/get")
        entry = self._ids.lookup(scope, legacy_id, trio.current_time())
        return _answer(rpc.success(rid, await self._envelope(scope, legacy_id, entry)))

    async def _cancel(self, scope: CallerScope, params: Any, rid: JsonValue) -> Response:
        legacy_id = _required_id(params, "tasks/cancel")
        entry = self._ids.lookup(scope, legacy_id, trio.current_time())
        request = m.CancelTaskRequest(id=entry.task_id)
        try:
            await self._server.handler.cancel_task(scope, request)
        except TaskNotCancelableError:  # idempotent: answered as it stands
            pass
        except TaskNotFoundError:  # e.g. purged from the store by its retention
            raise _unknown(legacy_id) from None
        return _answer(rpc.success(rid, await self._envelope(scope, legacy_id, entry)))

    async def _send_subscribe(self, scope: CallerScope, params: Any, rid: JsonValue) -> Response:
        entry, stream, head = await self._start(scope, params)
        events = self._events(params["id"], entry, resubscribed=False)
        return self._stream(stream, events, rid, first=[head])

    async def _resubscribe(self, scope: CallerScope, params: Any, rid: JsonValue) -> Response:
        legacy_id = _required_id(params, "tasks/resubscribe")
        entry = self._ids.lookup(scope, legacy_id, trio.current_time())
        try:
            stream = await self._server.handler.subscribe_to_task(
                scope, m.SubscribeToTaskRequest(id=entry.task_id)
            )
        except UnsupportedOperationError:  # already finished: its terminal frames, then close
            task = await self._task(scope, legacy_id, entry)
            stream = TaskStream([LogEntry(0, task)], None, stop_on_interrupt=False)
        except TaskNotFoundError:
            raise _unknown(legacy_id) from None
        events = self._events(legacy_id, entry, resubscribed=True)
        return self._stream(stream, events, rid, first=[])

    # --- helpers ---------------------------------------------------------------------------

    def _has_job(self, scope: CallerScope, task_id: str) -> bool:
        return self._server.runtime.has_job(scope, task_id)

    async def _start(
        self, scope: CallerScope, params: Any
    ) -> tuple[LegacyTask, TaskStream, m.Task | m.Message]:
        """Claim the id and start the task; the first event tells the runtime's task id.

        ``pushNotification`` (the field the dialect's A2A lineage puts beside ``id`` and
        ``message``) is refused, not ignored: the surface's card says ``pushNotifications:
        false``, and the refusal comes before the id is claimed, so nothing is kept."""
        if params.get("pushNotification") is not None:
            raise push_not_supported()
        legacy_id = _key(params, "id") or m.new_id()
        session_id = _key(params, "sessionId") or legacy_id
        params["id"] = legacy_id
        message = wire.decode_message(
            params.get("message"), session_id=session_id, skill_id=self._skill.id
        )
        entry = self._ids.reserve(scope, legacy_id, session_id, trio.current_time())
        started = False
        try:
            stream = await self._server.handler.send_streaming_message(
                scope, m.SendMessageRequest(message=message)
            )
            head = (await stream.receive()).event
            if isinstance(head, m.Task):
                entry.task_id = head.id
                started = True
        finally:
            if not started:
                self._ids.release(scope, legacy_id)
        assert isinstance(head, m.Task | m.Message)
        return entry, stream, head

    async def _until_answerable(self, scope: CallerScope, stream: TaskStream, task_id: str) -> None:
        """Wait until tasks/send can answer: the task settled, or it is parked on a job."""
        runtime = self._server.runtime
        try:
            while True:
                event = (await stream.receive()).event
                if (
                    isinstance(event, m.TaskStatusUpdateEvent)
                    and event.status.state is m.TaskState.WORKING
                    and runtime.is_parked(scope, task_id)
                ):
                    return
        except (trio.EndOfChannel, SubscriberOverflow):
            return

    async def _task(self, scope: CallerScope, legacy_id: str, entry: LegacyTask) -> m.Task:
        try:
            task = await self._server.handler.get_task(scope, m.GetTaskRequest(id=entry.task_id))
        except TaskNotFoundError:  # e.g. purged from the store by its retention
            raise _unknown(legacy_id) from None
        self._ids.observe(entry, task.status.state, trio.current_time())
        return task

    async def _envelope(
        self, scope: CallerScope, legacy_id: str, entry: LegacyTask
    ) -> dict[str, Any]:
        task = await self._task(scope, legacy_id, entry)
        return wire.encode_task(legacy_id, entry.session_id, task, result_text(task))

    def _reply_envelope(self, params: Any, entry: LegacyTask, reply: m.Message) -> dict[str, Any]:
        """A message-only skill answered at once: shown as a completed task."""
        status = m.TaskStatus(m.TaskState.COMPLETED, message=reply, timestamp=m.utcnow())
        task = m.Task(id=params["id"], context_id=entry.session_id, status=status)
        return wire.encode_task(params["id"], entry.session_id, task, result_text(task))

    def _events(self, legacy_id: str, entry: LegacyTask, *, resubscribed: bool) -> LegacyEvents:
        def on_state(state: m.TaskState) -> None:
            self._ids.observe(entry, state, trio.current_time())

        return LegacyEvents(legacy_id, resubscribed=resubscribed, on_state=on_state)

    def _stream(
        self,
        stream: TaskStream,
        events: LegacyEvents,
        rid: JsonValue,
        *,
        first: list[m.StreamEvent],
    ) -> Response:
        def render(entry: LogEntry) -> list[bytes]:
            return _frames(events, entry.event, rid)

        def failure() -> bytes:
            return encode_event(dumps(rpc.failure(rid, InternalError(UNEXPECTED_FAILURE))))

        opening = [frame for event in first for frame in _frames(events, event, rid)]
        keepalive = self._server.config.keepalive
        return event_stream_response(stream, render, keepalive, failure=failure, first=opening)


def _frames(events: LegacyEvents, event: m.StreamEvent, rid: JsonValue) -> list[bytes]:
    """One ``data:`` line per result, no ``id:`` lines (the dialect's parsers expect none)."""
    return [encode_event(dumps(rpc.success(rid, r))) for r in events.translate(event)]


def _key(params: Any, name: str) -> str | None:
    """``params.id`` or ``params.sessionId`` of a new task, refused here, under its own name,
    if it holds a NUL: the session id (by default the id) becomes the task's context id, which
    the runtime refuses under ``$.params.message.contextId``, a field the client never sent."""
    value = wire.optional_string(params, name)
    if value is not None and "\x00" in value:
        raise InvalidParamsError("must not contain a NUL character", path=f"$.params.{name}")
    return value


def _unknown(legacy_id: str) -> InvalidParamsError:
    """The dialect's answer for an id the caller has no task under (-32602, never -32001)."""
    return InvalidParamsError(f"Unknown task id: {legacy_id[:100]}")


def _required_id(params: Any, method: str) -> str:
    legacy_id = wire.optional_string(params, "id")
    if legacy_id is None:
        raise InvalidParamsError(f"Invalid params: 'id' is required for {method}")
    return legacy_id


def _unauthenticated(error: AuthenticationRequiredError) -> Response:
    """The dialect's refusal (§6.2): HTTP 401, -32001, ``id: null`` (the body is not read)."""
    return _answer(rpc.failure(None, error), status=401, headers=CHALLENGE)


def _answer(document: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        dumps(document), status=status, content_type="application/json", headers=headers
    )
