"""One client per binding, all with the same small API, so one scenario runs on every binding.

Each driver speaks its wire form with plain httpx and reduces what comes back to an
:class:`Outcome` (state name, artifact text) or raises :class:`CallFailed` naming the error class,
so results from different bindings can be compared for equality.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from contextlib import aclosing
from typing import Any, ClassVar

import attrs
import httpx
import orjson

from a2a_trio import model as m
from a2a_trio.errors import ERRORS_BY_CODE
from a2a_trio.wire import V03, V03_PROTO, V1, SSEDecoder
from a2a_trio.wire._legacy import parts_text

V1_HEADERS = {"A2A-Version": "1.0"}


@attrs.frozen
class Outcome:
    """What a client can see of a task: its state (v1.0 enum name) and its result text."""

    state: str
    text: str = ""


class CallFailed(Exception):
    """The binding answered with an error; ``kind`` is the error class name."""

    def __init__(self, kind: str, status: int, body: Any) -> None:
        self.kind = kind
        self.status = status
        self.body = body
        super().__init__(f"{kind} (HTTP {status}): {body}")


def _kind(code: int) -> str:
    return ERRORS_BY_CODE[code].__name__


def task_outcome(task: m.Task) -> Outcome:
    text = "".join(parts_text(a.parts) for a in task.artifacts)
    if not text and task.status.state is m.TaskState.COMPLETED and task.status.message:
        text = parts_text(task.status.message.parts)
    return Outcome(task.status.state.name, text)


def events_outcome(events: list[m.StreamEvent]) -> tuple[list[str], Outcome]:
    """States seen and the final outcome of a v1.0 model event stream."""
    states: list[str] = []
    text = ""
    for event in events:
        if isinstance(event, m.Task):
            states.append(event.status.state.name)
            text = "".join(parts_text(a.parts) for a in event.artifacts) or text
        elif isinstance(event, m.TaskStatusUpdateEvent):
            states.append(event.status.state.name)
        elif isinstance(event, m.TaskArtifactUpdateEvent):
            text += parts_text(event.artifact.parts)
        else:
            states.append("COMPLETED")
            text = parts_text(event.parts)
    return states, Outcome(states[-1], text)


def _message(text: str, skill: str, task_id: str | None) -> m.Message:
    return m.Message(
        message_id=str(uuid.uuid4()),
        role=m.Role.USER,
        parts=(m.TextPart(text),),
        task_id=task_id or "",
        metadata={"skillId": skill},
    )


type Numbered = tuple[int, m.StreamEvent]
"""A stream event with its SSE ``id:`` (the task's event sequence number)."""


async def _sse_frames(
    response: httpx.Response, ready: Callable[[], None] | None, limit: int | None = None
) -> list[tuple[str, Any]]:
    """The (id, parsed data) frames of an event stream; after ``limit`` frames the caller
    leaves the response unread, which closes its connection mid-stream."""
    decoder = SSEDecoder()
    found: list[tuple[str, Any]] = []
    async with aclosing(response.aiter_bytes()) as chunks:
        async for chunk in chunks:
            for event in decoder.feed(chunk):
                found.append((event.id, orjson.loads(event.data)))
                if ready is not None and len(found) == 1:
                    ready()
                if len(found) == limit:
                    return found
    return found


def _resume_header(last_event_id: int | None) -> dict[str, str]:
    return {} if last_event_id is None else {"Last-Event-ID": str(last_event_id)}


def _events(numbered: list[Numbered]) -> list[m.StreamEvent]:
    return [event for _, event in numbered]


class Driver:
    """The shared API; ``legacy`` drivers lack list and multi-turn (the dialect has neither)."""

    name: ClassVar[str]
    legacy: ClassVar[bool] = False

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def send(self, skill: str, text: str, task_id: str | None = None) -> tuple[str, Outcome]:
        raise NotImplementedError

    async def start(self, skill: str, text: str) -> str:
        """Start a task and return its id without waiting for it to finish."""
        raise NotImplementedError

    async def stream(self, skill: str, text: str) -> tuple[list[str], Outcome]:
        return events_outcome(_events(await self.stream_numbered(skill, text)))

    async def stream_numbered(
        self, skill: str, text: str, *, limit: int | None = None
    ) -> list[Numbered]:
        """SendStreamingMessage's events with their ids; with ``limit``, the connection is
        closed after that many."""
        raise NotImplementedError

    async def subscribe_numbered(
        self, task_id: str, *, limit: int | None = None, last_event_id: int | None = None
    ) -> list[Numbered]:
        """SubscribeToTask's events with their ids, as :meth:`stream_numbered`; with
        ``last_event_id``, a resume after that event (the ``Last-Event-ID`` header)."""
        raise NotImplementedError

    async def get(self, task_id: str) -> Outcome:
        raise NotImplementedError

    async def cancel(self, task_id: str) -> Outcome:
        raise NotImplementedError

    async def subscribe(self, task_id: str, ready: Callable[[], None]) -> Outcome:
        raise NotImplementedError

    async def list(self) -> set[str]:
        raise NotImplementedError


class JsonRpcDriver(Driver):
    """JSON-RPC with a codec: v1.0 (``V1``) or v0.3 (``V03``)."""

    methods: ClassVar[dict[str, str]]
    headers: ClassVar[dict[str, str]]

    async def _call(self, method: str, params: Any) -> Any:
        envelope = {"jsonrpc": "2.0", "id": 1, "method": self.methods[method], "params": params}
        response = await self.http.post("/", json=envelope, headers=self.headers)
        body = response.json()
        if "error" in body:
            raise CallFailed(_kind(body["error"]["code"]), response.status_code, body)
        return body["result"]

    async def _stream(
        self,
        method: str,
        params: Any,
        ready: Callable[[], None] | None = None,
        limit: int | None = None,
        resume: dict[str, str] | None = None,
    ) -> list[Numbered]:
        envelope = {"jsonrpc": "2.0", "id": 1, "method": self.methods[method], "params": params}
        headers = self.headers | (resume or {})
        async with self.http.stream("POST", "/", json=envelope, headers=headers) as response:
            if not response.headers["content-type"].startswith("text/event-stream"):
                body = orjson.loads(await response.aread())
                raise CallFailed(_kind(body["error"]["code"]), response.status_code, body)
            frames = await _sse_frames(response, ready, limit)
        return [(int(seq), self.event(frame["result"])) for seq, frame in frames]

    def event(self, result: Any) -> m.StreamEvent:
        raise NotImplementedError

    def send_params(self, message: m.Message, immediately: bool) -> Any:
        raise NotImplementedError

    def task(self, result: Any) -> m.Task:
        raise NotImplementedError

    async def send(self, skill: str, text: str, task_id: str | None = None) -> tuple[str, Outcome]:
        result = await self._call("send", self.send_params(_message(text, skill, task_id), False))
        event = self.event(result)
        assert isinstance(event, m.Task)
        return event.id, task_outcome(event)

    async def start(self, skill: str, text: str) -> str:
        result = await self._call("send", self.send_params(_message(text, skill, None), True))
        return str(result["id"] if "id" in result else result["task"]["id"])

    async def stream_numbered(
        self, skill: str, text: str, *, limit: int | None = None
    ) -> list[Numbered]:
        params = self.send_params(_message(text, skill, None), False)
        return await self._stream("stream", params, limit=limit)

    async def subscribe_numbered(
        self, task_id: str, *, limit: int | None = None, last_event_id: int | None = None
    ) -> list[Numbered]:
        resume = _resume_header(last_event_id)
        return await self._stream("subscribe", {"id": task_id}, limit=limit, resume=resume)

    async def get(self, task_id: str) -> Outcome:
        return task_outcome(self.task(await self._call("get", {"id": task_id})))

    async def cancel(self, task_id: str) -> Outcome:
        return task_outcome(self.task(await self._call("cancel", {"id": task_id})))

    async def subscribe(self, task_id: str, ready: Callable[[], None]) -> Outcome:
        return events_outcome(_events(await self._stream("subscribe", {"id": task_id}, ready)))[1]

    async def list(self) -> set[str]:
        result = await self._call("list", {})
        return {task["id"] for task in result["tasks"]}


class V1JsonRpc(JsonRpcDriver):
    name = "v1.0 JSON-RPC"
    headers = V1_HEADERS
    methods: ClassVar = {
        "send": "SendMessage",
        "stream": "SendStreamingMessage",
        "get": "GetTask",
        "cancel": "CancelTask",
        "subscribe": "SubscribeToTask",
        "list": "ListTasks",
    }

    def event(self, result: Any) -> m.StreamEvent:
        return V1.decode_stream_response(result)

    def send_params(self, message: m.Message, immediately: bool) -> Any:
        config = m.SendMessageConfiguration(return_immediately=immediately)
        return V1.encode(m.SendMessageRequest(message=message, configuration=config))

    def task(self, result: Any) -> m.Task:
        return V1.decode(result, m.Task)


class V03JsonRpc(JsonRpcDriver):
    name = "v0.3 JSON-RPC"
    headers: ClassVar[dict[str, str]] = {}  # no header: 0.3 (A2A v1.0 §3.2.6)
    methods: ClassVar = {
        "send": "message/send",
        "stream": "message/stream",
        "get": "tasks/get",
        "cancel": "tasks/cancel",
        "subscribe": "tasks/resubscribe",
        "list": "tasks/list",
    }

    def event(self, result: Any) -> m.StreamEvent:
        return V03.decode_stream_event(result)[0]

    def send_params(self, message: m.Message, immediately: bool) -> Any:
        config = m.SendMessageConfiguration(return_immediately=immediately)
        return V03.encode(m.SendMessageRequest(message=message, configuration=config))

    def task(self, result: Any) -> m.Task:
        return V03.decode(result, m.Task)


class RestDriver(Driver):
    """HTTP+JSON: v1.0 at the root paths (``V1``) or v0.3 under ``/v1`` (``V03_PROTO``)."""

    prefix: ClassVar[str]
    headers: ClassVar[dict[str, str]]

    async def _call(self, verb: str, path: str, body: Any = None, **query: str) -> Any:
        response = await self.http.request(
            verb, self.prefix + path, json=body, params=query or None, headers=self.headers
        )
        if response.status_code >= 400:
            raise CallFailed(_rest_kind(response.json()), response.status_code, response.json())
        return response.json()

    async def _stream(
        self,
        path: str,
        body: Any,
        ready: Callable[[], None] | None = None,
        limit: int | None = None,
        resume: dict[str, str] | None = None,
    ) -> list[Numbered]:
        headers = self.headers | (resume or {})
        async with self.http.stream(
            "POST", self.prefix + path, json=body, headers=headers
        ) as response:
            if response.status_code >= 400:
                error = orjson.loads(await response.aread())
                raise CallFailed(_rest_kind(error), response.status_code, error)
            frames = await _sse_frames(response, ready, limit)
        return [(int(seq), self.event(frame)) for seq, frame in frames]

    def event(self, frame: Any) -> m.StreamEvent:
        raise NotImplementedError

    def encode(self, request: m.SendMessageRequest) -> Any:
        raise NotImplementedError

    def task(self, result: Any) -> m.Task:
        raise NotImplementedError

    def _request(self, skill: str, text: str, task_id: str | None, immediately: bool) -> Any:
        config = m.SendMessageConfiguration(return_immediately=immediately)
        message = _message(text, skill, task_id)
        return self.encode(m.SendMessageRequest(message=message, configuration=config))

    async def send(self, skill: str, text: str, task_id: str | None = None) -> tuple[str, Outcome]:
        result = await self._call(
            "POST", "/message:send", self._request(skill, text, task_id, False)
        )
        task = self.task(result["task"])
        return task.id, task_outcome(task)

    async def start(self, skill: str, text: str) -> str:
        result = await self._call("POST", "/message:send", self._request(skill, text, None, True))
        return str(result["task"]["id"])

    async def stream_numbered(
        self, skill: str, text: str, *, limit: int | None = None
    ) -> list[Numbered]:
        body = self._request(skill, text, None, False)
        return await self._stream("/message:stream", body, limit=limit)

    async def subscribe_numbered(
        self, task_id: str, *, limit: int | None = None, last_event_id: int | None = None
    ) -> list[Numbered]:
        path, resume = f"/tasks/{task_id}:subscribe", _resume_header(last_event_id)
        return await self._stream(path, None, limit=limit, resume=resume)

    async def get(self, task_id: str) -> Outcome:
        return task_outcome(self.task(await self._call("GET", f"/tasks/{task_id}")))

    async def cancel(self, task_id: str) -> Outcome:
        return task_outcome(self.task(await self._call("POST", f"/tasks/{task_id}:cancel")))

    async def subscribe(self, task_id: str, ready: Callable[[], None]) -> Outcome:
        path = f"/tasks/{task_id}:subscribe"
        return events_outcome(_events(await self._stream(path, None, ready)))[1]

    async def list(self) -> set[str]:
        return {task["id"] for task in (await self._call("GET", "/tasks"))["tasks"]}


class V1Rest(RestDriver):
    name = "v1.0 HTTP+JSON"
    prefix = ""
    headers = V1_HEADERS

    def event(self, frame: Any) -> m.StreamEvent:
        return V1.decode_stream_response(frame)

    def encode(self, request: m.SendMessageRequest) -> Any:
        return V1.encode(request)

    def task(self, result: Any) -> m.Task:
        return V1.decode(result, m.Task)


class V03Rest(RestDriver):
    """v0.3 ProtoJSON bodies (what the official SDK sends), no version header."""

    name = "v0.3 HTTP+JSON"
    prefix = "/v1"
    headers: ClassVar[dict[str, str]] = {}

    def event(self, frame: Any) -> m.StreamEvent:
        return V03_PROTO.decode_stream_response(frame)[0]

    def encode(self, request: m.SendMessageRequest) -> Any:
        return V03_PROTO.encode(request)

    def task(self, result: Any) -> m.Task:
        return V03_PROTO.decode(result, m.Task)


def _rest_kind(body: Any) -> str:
    """The error class an AIP-193 body names through its ErrorInfo reason."""
    reason = body["error"]["details"][0]["reason"]
    by_reason = {
        "TASK_NOT_FOUND": "TaskNotFoundError",
        "TASK_NOT_CANCELABLE": "TaskNotCancelableError",
        "INVALID_PARAMS": "InvalidParamsError",
        "UNSUPPORTED_OPERATION": "UnsupportedOperationError",
        "METHOD_NOT_FOUND": "MethodNotFoundError",
        "VERSION_NOT_SUPPORTED": "VersionNotSupportedError",
    }
    return by_reason[reason]


LEGACY_STATES = {
    "working": "WORKING",
    "completed": "COMPLETED",
    "failed": "FAILED",
    "canceled": "CANCELED",
}


def legacy_outcome(result: Any) -> Outcome:
    artifacts = result.get("artifacts") or []
    text = artifacts[0]["parts"][0]["text"] if artifacts else ""
    return Outcome(LEGACY_STATES[result["status"]["state"]], text)


class Legacy(Driver):
    """The legacy producer dialect: one surface per skill at ``/{skill_id}``."""

    name = "legacy dialect"
    legacy = True

    def __init__(self, http: httpx.AsyncClient) -> None:
        super().__init__(http)
        self.skills: dict[str, str] = {}

    async def _call(self, skill: str, method: str, params: Any) -> Any:
        envelope = {"jsonrpc": "2.0", "id": "r1", "method": method, "params": params}
        response = await self.http.post(f"/{skill}", json=envelope)
        body = response.json()
        assert body["id"] == "r1"
        if "error" in body:
            raise CallFailed(_kind(body["error"]["code"]), response.status_code, body)
        return body["result"]

    async def _stream(
        self, skill: str, method: str, params: Any, ready: Callable[[], None] | None = None
    ) -> list[Any]:
        envelope = {"jsonrpc": "2.0", "id": 9, "method": method, "params": params}
        async with self.http.stream("POST", f"/{skill}", json=envelope) as response:
            if not response.headers["content-type"].startswith("text/event-stream"):
                body = orjson.loads(await response.aread())
                raise CallFailed(_kind(body["error"]["code"]), response.status_code, body)
            frames = [data for _, data in await _sse_frames(response, ready)]
        assert all(frame["id"] == 9 for frame in frames)
        return [frame["result"] for frame in frames]

    @staticmethod
    def _message(text: str) -> Any:
        return {"role": "user", "parts": [{"type": "text", "text": text}]}

    def _skill(self, task_id: str) -> str:
        return self.skills.get(task_id, "echo")

    async def send(self, skill: str, text: str, task_id: str | None = None) -> tuple[str, Outcome]:
        result = await self._call(skill, "tasks/send", {"message": self._message(text)})
        self.skills[result["id"]] = skill
        return result["id"], legacy_outcome(result)

    async def start(self, skill: str, text: str) -> str:
        task_id = str(uuid.uuid4())
        self.skills[task_id] = skill
        params = {"id": task_id, "message": self._message(text)}
        envelope = {"jsonrpc": "2.0", "id": 9, "method": "tasks/sendSubscribe", "params": params}
        async with self.http.stream("POST", f"/{skill}", json=envelope) as response:
            decoder = SSEDecoder()
            async for chunk in response.aiter_bytes():
                if any(True for _ in decoder.feed(chunk)):
                    break  # the first frame: running; disconnecting does not cancel it
        return task_id

    async def stream(self, skill: str, text: str) -> tuple[list[str], Outcome]:
        results = await self._stream(skill, "tasks/sendSubscribe", {"message": self._message(text)})
        return _legacy_events(results)

    async def get(self, task_id: str) -> Outcome:
        return legacy_outcome(await self._call(self._skill(task_id), "tasks/get", {"id": task_id}))

    async def cancel(self, task_id: str) -> Outcome:
        result = await self._call(self._skill(task_id), "tasks/cancel", {"id": task_id})
        return legacy_outcome(result)

    async def subscribe(self, task_id: str, ready: Callable[[], None]) -> Outcome:
        results = await self._stream(
            self._skill(task_id), "tasks/resubscribe", {"id": task_id}, ready
        )
        return _legacy_events(results)[1]


def _legacy_events(results: list[Any]) -> tuple[list[str], Outcome]:
    states: list[str] = []
    text = ""
    for result in results:
        if "artifact" in result:
            text = result["artifact"]["parts"][0]["text"]
        else:
            states.append(LEGACY_STATES[result["status"]["state"]])
    return states, Outcome(states[-1], text)


DRIVERS: list[type[Driver]] = [V1JsonRpc, V1Rest, V03JsonRpc, V03Rest, Legacy]
