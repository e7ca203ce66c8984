"""The client against a scripted agent: stream resumption, bad answers, auth headers, timeouts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx
import pytest
import trio

from a2a_trio import model as m
from a2a_trio.client import (
    ApiKeyAuth,
    BearerAuth,
    ClientStatistics,
    HeaderAuth,
    InvalidResponseError,
    Reconnect,
    RemoteError,
    Timeouts,
    TransportError,
    open_client,
)
from a2a_trio.errors import (
    A2AError,
    AuthenticationRequiredError,
    InternalError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_trio.wire import V03, V1, dumps

from .stub_agent import (
    Reply,
    Request,
    card_for,
    open_stub_agent,
    rpc_error,
    rpc_result,
    stream_result,
)

ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
FAST = Reconnect(attempts=3, initial_delay=0.01, max_delay=0.05)


def status(state: m.TaskState) -> m.TaskStatusUpdateEvent:
    return m.TaskStatusUpdateEvent("t1", "c1", m.TaskStatus(state))


def chunk(text: str) -> m.TaskArtifactUpdateEvent:
    return m.TaskArtifactUpdateEvent("t1", "c1", m.Artifact("a1", (m.TextPart(text),)), append=True)


TASK = m.Task("t1", m.TaskStatus(m.TaskState.WORKING), context_id="c1")
SCRIPT: list[m.StreamEvent] = [
    TASK,
    status(m.TaskState.WORKING),
    chunk("one"),
    chunk("two"),
    status(m.TaskState.COMPLETED),
]


def method(request: Request) -> str:
    name: str = request.json()["method"]
    return name


type Cut = Callable[[Reply], Awaitable[None]]


def resumable(cut: Cut) -> Callable[[Request, Reply], Awaitable[None]]:
    """A server that numbers its events, cuts the first stream after two, honours Last-Event-ID."""

    async def handler(request: Request, reply: Reply) -> None:
        after = int(request.headers.get("last-event-id") or 0)
        await reply.start_sse()
        for seq, event in enumerate(SCRIPT, 1):
            if seq > after:
                await reply.event(stream_result(event), event_id=str(seq))
            if seq == 2 and method(request) == "SendStreamingMessage":
                await cut(reply)
                return
        await reply.end_sse()

    return handler


async def _drop_connection(reply: Reply) -> None:
    await reply.stream.aclose()  # chunked body never terminated: a broken stream


async def _end_early(reply: Reply) -> None:
    await reply.end_sse()  # a clean end, but before the task finished


async def _drop_inside_the_next_event(reply: Reply) -> None:
    """The third event's ``id:`` line is out, its data and end are not: it must be resent."""
    await reply.chunk(b'id: 3\ndata: {"jsonrpc": "2.0", "id": 1, "res')
    await reply.stream.aclose()


@pytest.mark.parametrize("cut", [_drop_connection, _end_early, _drop_inside_the_next_event])
async def test_cut_stream_resumes_without_loss_or_repeats(
    cut: Cut,
) -> None:
    async with (
        open_stub_agent(resumable(cut)) as agent,
        open_client(agent.url, reconnect=FAST) as client,
    ):
        async with client.stream("go") as events:
            seen = [await anext(events)]
            assert client.statistics() == ClientStatistics(0, 1, 1, 0)
            seen += [event async for event in events]
        assert seen == SCRIPT
        assert events.reconnects == 1
        assert events.last_event_id == "5"
        assert client.statistics() == ClientStatistics(
            calls=0, streams=2, open_streams=0, reconnects=1
        )
    resume = agent.requests[-1]
    assert method(resume) == "SubscribeToTask"
    assert resume.json()["params"] == {"id": "t1"}
    assert resume.headers["last-event-id"] == "2"
    assert resume.headers["a2a-version"] == "1.0"


async def test_last_event_id_is_the_last_event_handed_out_not_the_last_read() -> None:
    """All five events come in one network read; a caller that takes two and leaves is told
    the second one's id, and subscribing with it gets the three it never saw (before: the id
    of the fifth, so a resume with it skipped them)."""

    async def handler(request: Request, reply: Reply) -> None:
        after = int(request.headers.get("last-event-id") or 0)
        await reply.start_sse()
        frames = [
            b"id: %d\ndata: %s\n\n" % (seq, dumps(stream_result(event)))
            for seq, event in enumerate(SCRIPT, 1)
            if seq > after
        ]
        await reply.chunk(b"".join(frames))
        await reply.end_sse()

    async with (
        open_stub_agent(handler) as agent,
        open_client(agent.url, reconnect=FAST) as client,
    ):
        async with client.stream("go") as events:
            assert events.last_event_id == ""
            seen = [await anext(events), await anext(events)]
            assert events.last_event_id == "2"
        async with client.subscribe("t1", last_event_id=events.last_event_id) as rest:
            assert rest.last_event_id == "2"
            seen += [event async for event in rest]
            assert rest.last_event_id == "5"
    assert seen == SCRIPT
    assert agent.requests[-1].headers["last-event-id"] == "2"
    assert rest.reconnects == 0


async def test_reconnection_gives_up_after_the_bounded_attempts() -> None:
    async def handler(request: Request, reply: Reply) -> None:
        await reply.start_sse()
        if method(request) == "SendStreamingMessage":
            await reply.event(stream_result(TASK), event_id="1")
        await reply.stream.aclose()

    async with open_stub_agent(handler) as agent, open_client(agent.url, reconnect=FAST) as client:
        with pytest.raises(TransportError):
            async with client.stream("go") as events:
                async for _ in events:
                    pass
    assert [method(r) for r in agent.requests[1:]] == ["SendStreamingMessage"] + [
        "SubscribeToTask"
    ] * FAST.attempts


async def test_task_that_finished_while_away_ends_with_its_snapshot() -> None:
    done = m.Task("t1", m.TaskStatus(m.TaskState.COMPLETED), context_id="c1")

    async def handler(request: Request, reply: Reply) -> None:
        match method(request):
            case "SendStreamingMessage":
                await reply.start_sse()
                await reply.event(stream_result(TASK), event_id="1")
                await reply.stream.aclose()
            case "SubscribeToTask":
                await reply.json(rpc_error(-32004, "task is terminal"))
            case "GetTask":
                await reply.json(rpc_result(V1.encode(done)))

    async with (
        open_stub_agent(handler) as agent,
        open_client(agent.url, reconnect=FAST) as client,
        client.stream("go") as events,
    ):
        seen = [event async for event in events]
    assert seen == [TASK, done]


async def test_stream_without_task_id_cannot_resume() -> None:
    async def handler(request: Request, reply: Reply) -> None:
        await reply.start_sse()
        await reply.stream.aclose()

    async with open_stub_agent(handler) as agent, open_client(agent.url, reconnect=FAST) as client:
        with pytest.raises(TransportError):
            async with client.stream("go") as events:
                await anext(events)
    assert len(agent.requests) == 2  # the card, then one stream: nothing to resubscribe to


async def test_keepalives_keep_an_idle_stream_under_its_read_timeout() -> None:
    async def handler(request: Request, reply: Reply) -> None:
        await reply.start_sse()
        await reply.event(stream_result(TASK))
        for _ in range(15):  # 1.5 s of silence but for keepalives: longer than the timeout
            await trio.sleep(0.1)
            await reply.chunk(b": keepalive\n\n")
        await reply.event(stream_result(status(m.TaskState.COMPLETED)))
        await reply.end_sse()

    timeouts = Timeouts(stream_read=0.6)
    async with (
        open_stub_agent(handler) as agent,
        open_client(agent.url, timeouts=timeouts) as client,
        client.stream("go") as events,
    ):
        seen = [event async for event in events]
    assert seen == [TASK, status(m.TaskState.COMPLETED)]


async def test_a_silent_stream_times_out_when_asked_to() -> None:
    async def handler(request: Request, reply: Reply) -> None:
        await reply.start_sse()
        await trio.sleep(5)

    timeouts = Timeouts(stream_read=0.2)
    async with (
        open_stub_agent(handler) as agent,
        open_client(agent.url, timeouts=timeouts, reconnect=FAST) as client,
    ):
        with pytest.raises(TransportError, match="timed out"):
            async with client.stream("go") as events:
                await anext(events)


async def test_a_streaming_call_never_answered_times_out_after_the_read_timeout() -> None:
    """No ``stream_read`` (the default: an idle stream is never cut), yet the answer's start
    is bounded by ``read``, as a unary call's is: for the call and for a resume alike."""
    streams = 0

    async def handler(request: Request, reply: Reply) -> None:
        nonlocal streams
        streams += 1
        if method(request) == "SendStreamingMessage" and streams == 1:
            await reply.start_sse()
            await reply.event(stream_result(TASK), event_id="1")
            await reply.stream.aclose()  # dropped: the resubscribe is never answered
            return
        await trio.sleep(5)  # accepted, never answered

    timeouts = Timeouts(read=0.3)
    async with (
        open_stub_agent(handler) as agent,
        open_client(agent.url, timeouts=timeouts, reconnect=FAST) as client,
    ):
        with trio.fail_after(3), pytest.raises(TransportError, match="timed out waiting"):
            async with client.stream("go") as events:
                assert await anext(events) == TASK
                await anext(events)
        with trio.fail_after(3), pytest.raises(TransportError, match="timed out waiting"):
            async with client.stream("go"):
                pass
    assert [method(r) for r in agent.requests[1:]] == [
        "SendStreamingMessage",
        *["SubscribeToTask"] * FAST.attempts,
        "SendStreamingMessage",
    ]


BAD_ANSWERS = [
    (200, b"<html>oops</html>", "text/html", InvalidResponseError, "JSON-RPC response"),
    (500, b"internal meltdown", "text/plain", TransportError, "HTTP 500"),
    (401, b"", "text/plain", AuthenticationRequiredError, "Authentication required"),
    (401, b'{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"token please"}}',
     "application/json", AuthenticationRequiredError, "token please"),
    (200, b'{"jsonrpc": "2.0", "id": 1}', "application/json", InvalidResponseError,
     "JSON-RPC response"),
    (200, b'{"jsonrpc":"2.0","id":1,"result":{"id":5}}', "application/json", InvalidResponseError,
     r"\$\.result\.id"),
    (200, b'{"jsonrpc":"2.0","id":1,"error":{"code":-32999,"message":"odd","data":{"x":1}}}',
     "application/json", RemoteError, "odd"),
    (200, b'{"jsonrpc":"2.0","id":1,"error":"broken"}', "application/json",
     InvalidResponseError, "JSON-RPC error"),
]  # fmt: skip


@pytest.mark.parametrize(("status_code", "body", "content_type", "error", "match"), BAD_ANSWERS)
async def test_bad_unary_answers_are_typed_errors(
    status_code: int, body: bytes, content_type: str, error: type[Exception], match: str
) -> None:
    async def handler(request: Request, reply: Reply) -> None:
        await reply.send(status_code, body, content_type)

    async with open_stub_agent(handler) as agent, open_client(agent.url) as client:
        with pytest.raises(error, match=match) as info:
            await client.get_task("t1")
    if isinstance(info.value, RemoteError):
        assert (info.value.code, info.value.data) == (-32999, {"x": 1})


async def test_stream_answered_with_a_json_error() -> None:
    async def handler(request: Request, reply: Reply) -> None:
        await reply.json(rpc_error(-32001, "no such task"))

    async with open_stub_agent(handler) as agent, open_client(agent.url) as client:
        with pytest.raises(TaskNotFoundError, match="no such task"):
            async with client.subscribe("t9") as events:
                await anext(events)


async def test_error_and_garbage_inside_a_stream() -> None:
    async def handler(request: Request, reply: Reply) -> None:
        await reply.start_sse()
        await reply.event(stream_result(TASK))
        if request.json()["params"]["message"]["parts"][0]["text"] == "error":
            await reply.event(rpc_error(-32004, "not now"))
        else:
            await reply.chunk(b"data: {not json\n\n")
        await reply.end_sse()

    async with open_stub_agent(handler) as agent, open_client(agent.url) as client:
        async with client.stream("error") as events:
            assert await anext(events) == TASK
            with pytest.raises(UnsupportedOperationError, match="not now"):
                await anext(events)
        async with client.stream("garbage") as events:
            assert await anext(events) == TASK
            with pytest.raises(InvalidResponseError) as refused:
                await anext(events)
        # the parser's reason, not the server's "the request body is not valid JSON"
        assert str(refused.value) == (
            "invalid stream event from the agent:"
            " not JSON (unexpected character, expected a string key)"
        )


WRONG_EVENTS = {  # (an event in v1.0 form, in v0.3 form): what is said of it after the path
    "no-event": (
        {"bogus": 1},
        {"bogus": 1},
        {
            "1.0": "exactly one of task, message, statusUpdate, artifactUpdate must be set",
            "0.3": "kind must be one of task, message, status-update, artifact-update",
        },
    ),
    "wrong-field": (
        {"statusUpdate": {"taskId": 5}},
        {"kind": "status-update", "taskId": 5},
        {"1.0": ".statusUpdate.taskId: expected a string", "0.3": ".taskId: expected a string"},
    ),
    "not-an-object": ([1], [1], {"1.0": ": expected an object", "0.3": ": expected an object"}),
}


@pytest.mark.parametrize(
    ("binding", "version", "at"),
    [("JSONRPC", "1.0", "$.result"), ("HTTP+JSON", "1.0", "$"), ("JSONRPC", "0.3", "$.result")],
)
@pytest.mark.parametrize("wrong", WRONG_EVENTS)
async def test_a_stream_event_of_the_wrong_shape_is_named_with_its_path(
    binding: str, version: str, at: str, wrong: str
) -> None:
    """In each binding the client reads events of: an event that parses as JSON but is not
    one is an error saying where and what."""
    v1_event, v03_event, said_of = WRONG_EVENTS[wrong]
    first, event = V1.encode_stream_response(TASK), v1_event
    if version == "0.3":
        first, event = V03.encode(TASK), v03_event

    async def handler(request: Request, reply: Reply) -> None:
        if request.path == "/.well-known/agent-card.json":
            await reply.json(card_for(agent.url, binding, version))
            return
        await reply.start_sse()
        for payload in (first, event):
            await reply.event(rpc_result(payload) if binding == "JSONRPC" else payload)
        await reply.end_sse()

    async with (
        open_stub_agent(handler, serves_card=False) as agent,
        open_client(agent.url) as client,
        client.stream("x") as events,
    ):
        assert await anext(events) == TASK
        with pytest.raises(InvalidResponseError) as refused:
            await anext(events)
    said = str(refused.value)
    assert said.startswith("invalid stream event from the agent: " + at), said
    assert said_of[version] in said, said


@pytest.mark.parametrize(
    ("auth", "header", "value"),
    [
        (BearerAuth("tok"), "authorization", "Bearer tok"),
        (ApiKeyAuth("k1", header="X-Key"), "x-key", "k1"),
        (ApiKeyAuth("k2"), "x-api-key", "k2"),
    ],
)
async def test_auth_headers_on_every_request(auth: httpx.Auth, header: str, value: str) -> None:
    async def handler(request: Request, reply: Reply) -> None:
        await reply.json(rpc_result(V1.encode(TASK)))

    async with (
        open_stub_agent(handler) as agent,
        open_client(agent.url, auth=auth, headers={"X-Extra": "1"}) as client,
    ):
        await client.get_task("t1")
    assert [r.headers.get(header) for r in agent.requests] == [value, value]
    assert [r.headers.get("x-extra") for r in agent.requests] == ["1", "1"]


async def test_header_provider_is_called_per_request() -> None:
    calls = 0

    async def provider() -> dict[str, str]:
        nonlocal calls
        calls += 1
        return {"Authorization": f"Bearer fresh-{calls}"}

    async def handler(request: Request, reply: Reply) -> None:
        await reply.json(rpc_result(V1.encode(TASK)))

    async with (
        open_stub_agent(handler) as agent,
        open_client(agent.url, auth=HeaderAuth(provider), extensions=["urn:x", "urn:y"]) as client,
    ):
        await client.get_task("t1")
        await client.get_task("t1")
    assert [r.headers["authorization"] for r in agent.requests] == [
        "Bearer fresh-1",
        "Bearer fresh-2",
        "Bearer fresh-3",
    ]
    assert agent.requests[-1].headers["a2a-extensions"] == "urn:x, urn:y"


async def test_a_drop_after_the_final_event_is_not_resumed() -> None:
    async def handler(request: Request, reply: Reply) -> None:
        await reply.start_sse()
        await reply.event(stream_result(TASK), event_id="1")
        await reply.event(stream_result(status(m.TaskState.COMPLETED)), event_id="2")
        await reply.stream.aclose()  # broken chunked body, but the task had finished

    async with (
        open_stub_agent(handler) as agent,
        open_client(agent.url, reconnect=FAST) as client,
        client.stream("go") as events,
    ):
        seen = [event async for event in events]
    assert seen == [TASK, status(m.TaskState.COMPLETED)]
    assert events.reconnects == 0
    assert [method(r) for r in agent.requests[1:]] == ["SendStreamingMessage"]


async def test_iterating_a_stream_without_entering_it_is_a_clear_error() -> None:
    async def handler(request: Request, reply: Reply) -> None:
        await reply.json(rpc_result(V1.encode(TASK)))

    async with open_stub_agent(handler) as agent, open_client(agent.url) as client:
        with pytest.raises(RuntimeError, match="async with"):
            await anext(client.subscribe("t1"))


async def test_leaving_a_stream_before_reading_it_closes_it_quietly() -> None:
    """The body of the ``async with`` may end (or fail) before the first event is read: the
    connection is closed, and nothing but the body's own error comes out."""

    async def handler(request: Request, reply: Reply) -> None:
        await reply.start_sse()
        await reply.event(stream_result(TASK), event_id="1")
        await trio.sleep(5)

    async with open_stub_agent(handler) as agent, open_client(agent.url) as client:
        async with client.stream("go"):
            pass
        with pytest.raises(KeyError, match="the caller's own"):
            async with client.subscribe("t1"):
                raise KeyError("the caller's own")
        assert client.statistics().open_streams == 0


async def test_rest_paths_queries_and_aip193_errors() -> None:
    not_found = {
        "error": {
            "code": 404,
            "status": "NOT_FOUND",
            "message": "no task t9",
            "details": [{"@type": ERROR_INFO, "reason": "TASK_NOT_FOUND", "domain": "a2a"}],
        }
    }

    async def handler(request: Request, reply: Reply) -> None:
        if request.path.startswith("/rpc/tasks/t9"):
            await reply.json(not_found, status=404)
        elif request.path.startswith("/rpc/tasks/gone"):
            await reply.send(404, b"<h1>nothing here</h1>", "text/html")
        elif request.path.startswith("/rpc/tasks?"):
            await reply.json(V1.encode(m.ListTasksResponse(tasks=(TASK,), page_size=1)))
        else:  # the stream: one event, then an error object mid-stream
            await reply.start_sse()
            await reply.event(V1.encode_stream_response(TASK))
            await reply.event({"error": {"code": 409, "message": "stop", "details": []}})
            await reply.end_sse()

    async with (
        open_stub_agent(handler, binding="HTTP+JSON") as agent,
        open_client(agent.url) as client,
    ):
        with pytest.raises(TaskNotFoundError, match="no task t9") as info:
            await client.get_task("t9", history_length=2)
        assert info.value.data == not_found["error"]["details"]
        with pytest.raises(TransportError, match="HTTP 404") as bare:
            await client.get_task("gone")
        assert bare.value.status_code == 404
        page = await client.list_tasks(
            context_id="c 1", status=m.TaskState.WORKING, page_size=2, include_artifacts=True
        )
        assert page.tasks == (TASK,)
        async with client.stream("go") as events:
            assert await anext(events) == TASK
            with pytest.raises(RemoteError, match="stop") as odd:
                await anext(events)
            assert odd.value.code == 409  # no A2A class for it: the HTTP status is all there is
    get, _, listing, stream = agent.requests[1:]
    assert (get.method, get.path) == ("GET", "/rpc/tasks/t9?historyLength=2")
    assert get.headers["a2a-version"] == "1.0"
    assert listing.path == (
        "/rpc/tasks?contextId=c+1&status=TASK_STATE_WORKING&pageSize=2&includeArtifacts=true"
    )
    assert (stream.method, stream.path) == ("POST", "/rpc/message:stream")
    assert stream.json()["message"]["parts"] == [{"text": "go"}]


async def _fall_silent(reply: Reply) -> None:
    await trio.sleep(5)  # silent until the client gives up waiting


@pytest.mark.parametrize("cut", [_fall_silent, _drop_connection])
async def test_a_wait_cancelled_by_a_timeout_resumes_on_the_next_iteration(cut: Cut) -> None:
    """The timeout lands while the stream waits on a silent connection, or (a dropped one)
    in the backoff before the resubscribe, between two connections: either way the next
    iteration resumes the stream."""

    async def handler(request: Request, reply: Reply) -> None:
        await reply.start_sse()
        if method(request) == "SendStreamingMessage":
            await reply.event(stream_result(TASK), event_id="1")
            await cut(reply)
            return
        await reply.event(stream_result(status(m.TaskState.COMPLETED)), event_id="2")
        await reply.end_sse()

    slow = Reconnect(attempts=3, initial_delay=0.5)
    async with (
        open_stub_agent(handler) as agent,
        open_client(agent.url, reconnect=slow) as client,
        client.stream("go") as events,
    ):
        assert await anext(events) == TASK
        with trio.move_on_after(0.2) as scope:
            await anext(events)
        assert scope.cancelled_caught
        rest = [event async for event in events]
    assert rest == [status(m.TaskState.COMPLETED)]
    assert agent.requests[-1].headers["last-event-id"] == "1"
    assert client.statistics().open_streams == 0


async def test_iter_tasks_follows_pages_and_may_stop_early() -> None:
    pages = {
        "": m.ListTasksResponse(tasks=(TASK,), next_page_token="p2", page_size=1, total_size=3),
        "p2": m.ListTasksResponse(tasks=(TASK, TASK), page_size=2, total_size=3),
    }

    async def handler(request: Request, reply: Reply) -> None:
        token = request.json()["params"].get("pageToken", "")
        await reply.json(rpc_result(V1.encode(pages[token])))

    async with open_stub_agent(handler) as agent, open_client(agent.url) as client:
        assert len([t async for t in client.iter_tasks(page_size=2)]) == 3
        async for task in client.iter_tasks():
            assert task == TASK
            break  # stopping early leaves nothing half-done behind
    tokens = [r.json()["params"].get("pageToken", "") for r in agent.requests[1:]]
    assert tokens == ["", "p2", ""]


async def test_an_answer_to_another_request_is_refused() -> None:
    async def handler(request: Request, reply: Reply) -> None:
        wrong = {"jsonrpc": "2.0", "id": 999, "result": V1.encode(TASK)}
        await reply.send(200, dumps(wrong))

    async with open_stub_agent(handler) as agent, open_client(agent.url) as client:
        with pytest.raises(InvalidResponseError, match="another request"):
            await client.get_task("t1")


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_events_read_together_with_an_error_are_all_delivered_first(binding: str) -> None:
    """One network read carrying two events and an error: both events, in order, then the error."""
    working = status(m.TaskState.WORKING)
    if binding == "JSONRPC":
        payloads = [stream_result(TASK), stream_result(working), rpc_error(-32603, "crashed")]
    else:
        info = {"@type": ERROR_INFO, "reason": "INTERNAL", "domain": "a2a-protocol.org"}
        error = {"code": 500, "status": "INTERNAL", "message": "crashed", "details": [info]}
        encoded = [V1.encode_stream_response(e) for e in (TASK, working)]
        payloads = [*encoded, {"error": error}]

    async def handler(request: Request, reply: Reply) -> None:
        await reply.start_sse()
        await reply.chunk(b"".join(b"data: %s\n\n" % dumps(p) for p in payloads))
        await reply.end_sse()

    async with (
        open_stub_agent(handler, binding=binding) as agent,
        open_client(agent.url, reconnect=FAST) as client,
        client.stream("go") as events,
    ):
        seen = []
        with pytest.raises(InternalError, match="crashed"):
            async for event in events:
                seen.append(event)
        assert seen == [TASK, working]
        assert [e async for e in events] == []  # the error ended the stream: no resubscribe
    assert [r.method for r in agent.requests[1:]] == ["POST"]
    assert client.statistics().open_streams == 0


async def _keep_open(reply: Reply) -> None:
    """Keepalives and nothing else for as long as the client listens."""
    while True:
        await reply.chunk(b": keepalive\n\n")
        await trio.sleep(0.05)


@pytest.mark.parametrize("last", [m.TaskState.COMPLETED, m.TaskState.INPUT_REQUIRED])
async def test_a_stream_ends_at_its_last_event_though_the_server_keeps_it_open(
    last: m.TaskState,
) -> None:
    async def handler(request: Request, reply: Reply) -> None:
        await reply.start_sse()
        await reply.event(stream_result(TASK), event_id="1")
        await reply.event(stream_result(status(last)), event_id="2")
        await _keep_open(reply)

    async with (
        open_stub_agent(handler) as agent,
        open_client(agent.url, reconnect=FAST) as client,
    ):
        with trio.fail_after(5):
            async with client.stream("go") as events:
                seen = [event async for event in events]
        assert seen == [TASK, status(last)]
        assert client.statistics().open_streams == 0
    assert [method(r) for r in agent.requests[1:]] == ["SendStreamingMessage"]


async def test_subscribe_follows_a_task_past_an_interruption_while_the_server_streams() -> None:
    """subscribe() is not cut at INPUT_REQUIRED: the task goes on once someone answers it."""
    waiting = m.Task("t1", m.TaskStatus(m.TaskState.INPUT_REQUIRED), context_id="c1")

    async def handler(request: Request, reply: Reply) -> None:
        await reply.start_sse()
        await reply.event(stream_result(waiting), event_id="1")
        await trio.sleep(0.2)  # another client answers the question
        await reply.event(stream_result(status(m.TaskState.WORKING)), event_id="2")
        await reply.event(stream_result(status(m.TaskState.COMPLETED)), event_id="3")
        await _keep_open(reply)

    async with (
        open_stub_agent(handler) as agent,
        open_client(agent.url, reconnect=FAST) as client,
    ):
        with trio.fail_after(5):
            async with client.subscribe("t1") as events:
                seen = [event async for event in events]
    assert seen == [waiting, status(m.TaskState.WORKING), status(m.TaskState.COMPLETED)]


async def test_a_resubscribe_refused_inside_the_stream_ends_with_the_snapshot() -> None:
    """v0.3 servers answer tasks/resubscribe to a finished task 200 text/event-stream whose
    first event is the UnsupportedOperation error: the task finished while we were away."""
    done = m.Task("t1", m.TaskStatus(m.TaskState.COMPLETED), context_id="c1")

    async def handler(request: Request, reply: Reply) -> None:
        match method(request):
            case "SendStreamingMessage":
                await reply.start_sse()
                await reply.event(stream_result(TASK))
                await reply.stream.aclose()
            case "SubscribeToTask":
                await reply.start_sse()
                await reply.event(rpc_error(-32004, "Task t1 is in terminal state"))
                await reply.end_sse()
            case "GetTask":
                await reply.json(rpc_result(V1.encode(done)))

    async with (
        open_stub_agent(handler) as agent,
        open_client(agent.url, reconnect=FAST) as client,
        client.stream("go") as events,
    ):
        seen = [event async for event in events]
    assert seen == [TASK, done]
    assert [method(r) for r in agent.requests[1:]] == [
        "SendStreamingMessage",
        "SubscribeToTask",
        "GetTask",
    ]


async def test_the_same_error_later_in_a_resumed_stream_is_raised() -> None:
    """Only a refusal before anything else on the resumed stream means 'finished'."""

    async def handler(request: Request, reply: Reply) -> None:
        await reply.start_sse()
        await reply.event(stream_result(TASK))
        if method(request) == "SubscribeToTask":
            await reply.event(rpc_error(-32004, "not now"))
        await reply.end_sse()

    async with (
        open_stub_agent(handler) as agent,
        open_client(agent.url, reconnect=FAST) as client,
        client.stream("go") as events,
    ):
        assert [await anext(events), await anext(events)] == [TASK, TASK]
        with pytest.raises(UnsupportedOperationError, match="not now"):
            await anext(events)


@pytest.mark.parametrize("snapshot_id", ["", "1"])
async def test_resubscribes_that_bring_only_the_same_snapshot_exhaust_the_attempts(
    snapshot_id: str,
) -> None:
    """An agent that ends every stream after re-sending the same WORKING snapshot."""

    async def handler(request: Request, reply: Reply) -> None:
        await reply.start_sse()
        await reply.event(stream_result(TASK), event_id=snapshot_id)
        await reply.end_sse()

    seen: list[m.StreamEvent] = []
    async with open_stub_agent(handler) as agent, open_client(agent.url, reconnect=FAST) as client:
        with trio.fail_after(5), pytest.raises(TransportError, match="ended before the task"):
            async with client.stream("go") as events:
                async for event in events:
                    seen.append(event)
        assert events.reconnects == FAST.attempts
    assert seen == [TASK] * (1 + FAST.attempts)
    assert [method(r) for r in agent.requests[1:]] == ["SendStreamingMessage"] + [
        "SubscribeToTask"
    ] * FAST.attempts


async def test_resubscribes_that_bring_progress_restore_the_attempts() -> None:
    """Each stream ends after one new update: more resumes than attempts, all useful."""
    updates = [chunk(str(n)) for n in range(2 * FAST.attempts)]

    async def handler(request: Request, reply: Reply) -> None:
        after = int(request.headers.get("last-event-id") or 0)
        await reply.start_sse()
        await reply.event(stream_result(TASK), event_id=str(after))
        if after < len(updates):
            await reply.event(stream_result(updates[after]), event_id=str(after + 1))
        else:
            await reply.event(stream_result(status(m.TaskState.COMPLETED)), event_id="end")
        await reply.end_sse()

    async with (
        open_stub_agent(handler) as agent,
        open_client(agent.url, reconnect=FAST) as client,
        client.stream("go") as events,
    ):
        seen = [event async for event in events]
    assert [e for e in seen if isinstance(e, m.TaskArtifactUpdateEvent)] == updates
    assert seen[-1] == status(m.TaskState.COMPLETED)
    assert events.reconnects == len(updates) > FAST.attempts


AIP193_ANSWERS = [
    (401, {"code": 401, "status": "UNAUTHENTICATED", "message": "token missing"},
     AuthenticationRequiredError),
    (401, {"code": 401, "message": "who?", "details": [
        {"@type": ERROR_INFO, "reason": "TASK_NOT_FOUND", "domain": "a2a-protocol.org"}]},
     AuthenticationRequiredError),
    (500, {"code": 500, "status": "INTERNAL", "message": "db down"}, InternalError),
    (500, {"code": 500, "status": "INTERNAL", "message": "db down", "details": [
        {"@type": ERROR_INFO, "reason": "INTERNAL_ERROR", "domain": "a2a-protocol.org"}]},
     InternalError),
    (404, {"code": 404, "status": "NOT_FOUND", "message": "no t1"}, TaskNotFoundError),
]  # fmt: skip


@pytest.mark.parametrize(("status_code", "error", "cls"), AIP193_ANSWERS)
async def test_rest_errors_are_the_classes_json_rpc_gives(
    status_code: int, error: dict[str, object], cls: type[A2AError]
) -> None:
    """The same agent error is the same class over HTTP+JSON as over JSON-RPC, for unary
    calls and for a stream refused before it starts."""

    async def handler(request: Request, reply: Reply) -> None:
        await reply.json({"error": error}, status=status_code)

    async with (
        open_stub_agent(handler, binding="HTTP+JSON") as agent,
        open_client(agent.url) as client,
    ):
        with pytest.raises(cls, match=str(error["message"])) as unary:
            await client.get_task("t1")
        with pytest.raises(cls, match=str(error["message"])) as refused:
            async with client.stream("go") as events:
                await anext(events)
    for raised in (unary.value, refused.value):
        assert raised.code == cls.code
        assert raised.data == error.get("details")


async def test_a_card_behind_authentication_asks_for_credentials() -> None:
    """A 401 on the card is AuthenticationRequiredError, like every 401, not a bad card."""

    async def handler(request: Request, reply: Reply) -> None:
        authorized = request.headers.get("authorization") == "Bearer tok"
        if not authorized:
            await reply.json({"error": "unauthorized"}, status=401)
        else:
            await reply.json(card_for(agent.url))

    async with open_stub_agent(handler) as agent:
        card_url = agent.url + "/private/agent-card.json"
        with pytest.raises(AuthenticationRequiredError, match="requires authentication") as info:
            async with open_client(card_url):
                pass
        assert card_url in info.value.message
        async with open_client(card_url, auth=BearerAuth("tok")) as client:
            assert client.card.name == "stub"
    assert [r.path for r in agent.requests] == ["/private/agent-card.json"] * 2
