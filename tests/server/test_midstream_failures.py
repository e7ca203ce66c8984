"""A failure nobody planned for in the middle of an event stream (after its 200 and its first
events) ends the stream with one last event in the binding's own error shape, then a complete
body; the traceback goes to the log once, and the task's job runs on.  Before, the exception
escaped the response and the connection was cut: an incomplete chunked body, no explanation.

Most streams follow a task through the store at the replica that does not run it, and that
replica's store has a bug: once armed, ``last_event_seq`` (the follower's poll) raises.  A
legacy stream never follows the store, and a burst of queued events needs a failure between
two of them: those two get a bug in rendering an event instead.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing, asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import a2a.types as t
import attrs
import httpx
import orjson
import pytest
import trio
from a2a.client import ClientConfig, create_client
from a2a.utils.errors import A2AError
from a2a.utils.errors import InternalError as SdkInternalError
from runtime.test_replicas import Proxy
from store.conftest import make_backend

from a2a_trio import ServerConfig, serve
from a2a_trio import model as m
from a2a_trio.runtime import LogEntry, RuntimeConfig
from a2a_trio.server import _jsonrpc_endpoint as endpoint
from a2a_trio.server._handler import UNEXPECTED_FAILURE
from a2a_trio.server._legacy import LegacyEvents
from a2a_trio.store import TaskStore, open_store
from a2a_trio.wire import SSEDecoder, SSEEvent

from . import agents
from .conftest import V1_HEADERS, rpc, user_message

SECRET = "/srv/secret/store/path"

CONFIG = ServerConfig(
    keepalive=0.05,
    legacy_mount_all=True,
    runtime=RuntimeConfig(poll_interval=0.01, follow_interval=0.02, recovery_lease=3600.0),
)


class BuggyOnceArmed(Proxy):
    """A replica's store whose ``last_event_seq`` has a bug once the test arms it."""

    armed = False

    async def last_event_seq(self, *args: Any, **kwargs: Any) -> int:
        if self.armed:
            raise RuntimeError(f"bug in the custom store at {SECRET}")
        seq: int = await self.store.last_event_seq(*args, **kwargs)
        return seq


@attrs.frozen
class Replicas:
    """Two servers on one SQLite file: ``running`` runs the task, ``following`` (its store
    ``buggy``) streams it from the store."""

    running: str
    following: str
    buggy: BuggyOnceArmed


@pytest.fixture
async def replicas(tmp_path: Path, nursery: trio.Nursery) -> AsyncIterator[Replicas]:
    async with make_backend("sqlite", tmp_path) as backend:
        opened: list[BuggyOnceArmed] = []

        @asynccontextmanager
        async def buggy_store() -> AsyncIterator[TaskStore]:
            async with open_store(backend.url) as store:
                opened.append(BuggyOnceArmed(store))
                yield opened[-1]  # a proxy: every call but last_event_seq is the store's

        serving = partial(serve, agents.agent, port=0, config=CONFIG)
        running: str = await nursery.start(partial(serving, store=backend.url))
        following: str = await nursery.start(partial(serving, store=buggy_store))
        yield Replicas(running, following, opened[0])


async def running_task(base_url: str) -> str:
    """The id of a new ``gated`` task running at ``base_url`` (its gate stays shut)."""
    gate = f"midstream {m.new_id()}"
    configuration = {"returnImmediately": True}
    params = {"message": user_message(gate, skill="gated"), "configuration": configuration}
    async with httpx.AsyncClient(base_url=base_url, headers=V1_HEADERS) as http:
        reply = await http.post("/", json=rpc("SendMessage", params))
    task_id: str = reply.json()["result"]["task"]["id"]
    return task_id


@attrs.frozen
class Binding:
    name: str
    request: Callable[[str], tuple[str, str, dict[str, str], Any]]
    """The subscription to a task id: verb, path, headers, JSON body."""
    rest: bool
    v03: bool


BINDINGS = [
    Binding(
        "v1.0 JSON-RPC",
        lambda task_id: ("POST", "/", V1_HEADERS, rpc("SubscribeToTask", {"id": task_id}, 7)),
        rest=False,
        v03=False,
    ),
    Binding(
        "v0.3 JSON-RPC",
        lambda task_id: ("POST", "/", {}, rpc("tasks/resubscribe", {"id": task_id}, "r-7")),
        rest=False,
        v03=True,
    ),
    Binding(
        "v1.0 HTTP+JSON",
        lambda task_id: ("POST", f"/tasks/{task_id}:subscribe", V1_HEADERS, None),
        rest=True,
        v03=False,
    ),
    Binding(
        "v0.3 HTTP+JSON",
        lambda task_id: ("GET", f"/v1/tasks/{task_id}:subscribe", {}, None),
        rest=True,
        v03=True,
    ),
]


async def read_to_the_end(response: httpx.Response, arm: BuggyOnceArmed) -> list[SSEEvent]:
    """Every event of ``response`` until its body ends (httpx raises if the body is cut);
    the store is armed once the first event is in."""
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    async with aclosing(response.aiter_bytes()) as chunks:
        async for chunk in chunks:
            events += decoder.feed(chunk)
            arm.armed = bool(events)
    return events


def one_traceback(caplog: pytest.LogCaptureFixture) -> None:
    """The log has exactly one ERROR, with the store's exception and its traceback."""
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    assert errors[0].exc_info is not None and errors[0].exc_info[2] is not None
    assert SECRET in str(errors[0].exc_info[1])


@pytest.mark.parametrize("binding", BINDINGS, ids=lambda b: b.name)
async def test_a_store_bug_mid_stream_ends_it_with_the_bindings_internal_error(
    replicas: Replicas, binding: Binding, caplog: pytest.LogCaptureFixture
) -> None:
    """The snapshot, then exactly one error event (JSON-RPC: -32603 with the request's id;
    HTTP+JSON: ``event: error`` carrying the INTERNAL problem), then the end of the body."""
    task_id = await running_task(replicas.running)
    verb, path, headers, body = binding.request(task_id)
    async with httpx.AsyncClient(base_url=replicas.following, headers=headers) as http:
        with trio.fail_after(10):
            async with http.stream(verb, path, json=body) as response:
                assert response.status_code == 200
                events = await read_to_the_end(response, replicas.buggy)
    assert SECRET not in "".join(event.data for event in events)
    snapshot, failure = events
    assert task_id in snapshot.data  # the task as stored, sent before the store broke
    error = orjson.loads(failure.data)
    if binding.rest:
        assert failure.event == "error"  # what the official SDK's REST clients read
        assert error["error"]["code"] == 500 and error["error"]["status"] == "INTERNAL"
        assert error["error"]["message"] == UNEXPECTED_FAILURE
        assert error["error"]["details"][0]["reason"] == "INTERNAL_ERROR"
        assert ("type" in error) is binding.v03  # v0.3 also names the error's type
    else:
        assert orjson.loads(snapshot.data)["id"] == body["id"]
        assert failure.event == "message"  # every JSON-RPC frame is a plain data event
        assert error["id"] == body["id"]
        assert (error["error"]["code"], error["error"]["message"]) == (-32603, UNEXPECTED_FAILURE)
        if not binding.v03:  # v1.0's data names the A2A reason
            assert error["error"]["data"][0]["reason"] == "INTERNAL_ERROR"
    one_traceback(caplog)


async def test_a_legacy_stream_that_fails_mid_way_ends_with_an_internal_error_and_the_job_runs_on(
    replicas: Replicas, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tasks/sendSubscribe, whose rendering of the artifact event has a bug (the dialect's
    streams never follow the store: its ids live in the replica that started the task): the
    frames before it, one JSON-RPC error with the request's id, the end; the task completes."""
    translate = LegacyEvents.translate

    def buggy_translate(self: LegacyEvents, event: m.StreamEvent) -> list[dict[str, Any]]:
        if isinstance(event, m.TaskArtifactUpdateEvent):
            raise RuntimeError(f"bug in the codec at {SECRET}")
        return translate(self, event)

    monkeypatch.setattr(LegacyEvents, "translate", buggy_translate)
    gate, legacy_id = f"legacy {m.new_id()}", f"l-{m.new_id()}"
    message = {"role": "user", "parts": [{"type": "text", "text": gate}]}
    envelope = rpc("tasks/sendSubscribe", {"id": legacy_id, "message": message}, "s-1")
    decoder = SSEDecoder()
    frames: list[dict[str, Any]] = []
    async with httpx.AsyncClient(base_url=replicas.following) as http:
        with trio.fail_after(10):
            async with (
                http.stream("POST", "/gated", json=envelope) as response,
                aclosing(response.aiter_bytes()) as chunks,
            ):
                async for chunk in chunks:
                    frames += [orjson.loads(event.data) for event in decoder.feed(chunk)]
                    if "waiting" in orjson.dumps(frames).decode():
                        agents.open_gate(gate)
            *events, failure = frames
            (waiting,) = (frame["result"]["status"] for frame in events)
            assert (waiting["state"], waiting["message"]["parts"][0]["text"]) == (
                "working",
                "waiting",
            )
            assert failure["id"] == "s-1"
            assert failure["error"] == {"code": -32603, "message": UNEXPECTED_FAILURE}
            assert SECRET not in orjson.dumps(frames).decode()
            one_traceback(caplog)
            while True:  # the job was not the stream's: it finishes the task
                reply = await http.post("/gated", json=rpc("tasks/get", {"id": legacy_id}))
                if reply.json()["result"]["status"]["state"] == "completed":
                    break
                await trio.sleep(0.01)


SDK_LEAVES_ITS_GENERATORS = (
    "ignore:Exception ignored in. <async_generator object "
    "(parse_sse_stream|send_http_stream_request) :pytest.PytestUnraisableExceptionWarning"
)
"""The SDK raises an error event from inside its SSE generators without closing them, which
trio reports once they are garbage collected (the connection itself is closed)."""


@pytest.mark.filterwarnings(SDK_LEAVES_ITS_GENERATORS)
@pytest.mark.parametrize("transport", ["JSONRPC", "HTTP+JSON"])
async def test_the_official_sdk_client_raises_its_a2a_error_mid_stream(
    replicas: Replicas, transport: str
) -> None:
    """The a2a-sdk 1.3.0 client subscribed at the following replica raises its own error,
    not a transport error (before: "Network communication error", a cut body): its
    InternalError on both bindings (over HTTP+JSON it goes by the ErrorInfo reason
    ``INTERNAL_ERROR``)."""
    task_id = await running_task(replicas.running)
    async with httpx.AsyncClient(timeout=10) as sdk_http:
        config = ClientConfig(
            httpx_client=sdk_http, streaming=True, supported_protocol_bindings=[transport]
        )
        client = await create_client(replicas.following, config)
        with trio.fail_after(10):
            async with aclosing(client.subscribe(t.SubscribeToTaskRequest(id=task_id))) as events:
                first = await anext(events)
                assert first.task.id == task_id
                replicas.buggy.armed = True
                with pytest.raises(A2AError) as raised:
                    await anext(events)
    failure = raised.value
    assert not isinstance(failure.__cause__, httpx.HTTPError)
    assert isinstance(failure, SdkInternalError)
    assert UNEXPECTED_FAILURE in str(failure)
    assert SECRET not in str(failure)


async def test_events_rendered_before_a_codec_bug_in_the_same_burst_are_still_sent(
    http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A JSON-RPC resume replays a finished task's events in one burst (one body chunk); a bug
    rendering the third of them: the two before it, then the error, then the end."""
    frame = endpoint._frame

    def buggy_frame(reply: endpoint.StreamReply, entry: LogEntry) -> bytes:
        if entry.seq == 4:
            raise RuntimeError(f"bug in the codec at {SECRET}")
        return frame(reply, entry)

    monkeypatch.setattr(endpoint, "_frame", buggy_frame)
    sent = await http.post(
        "/", json=rpc("SendMessage", {"message": user_message("x", skill="chunks")})
    )
    task_id = sent.json()["result"]["task"]["id"]
    resume = rpc("SubscribeToTask", {"id": task_id}, rid="r")
    with trio.fail_after(10):
        async with http.stream("POST", "/", json=resume, headers={"Last-Event-ID": "1"}) as r:
            events = SSEDecoder().feed(await r.aread())
    *replayed, failure = [orjson.loads(event.data) for event in events]
    assert [event.id for event in events[:-1]] == ["2", "3"]
    assert all("artifactUpdate" in event["result"] for event in replayed)
    assert failure["id"] == "r" and failure["error"]["code"] == -32603
    one_traceback(caplog)
