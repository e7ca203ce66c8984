"""The official a2a-sdk client (JSON-RPC transport) performs every A2A v1.0 operation against
a real a2a_trio server and gets spec-correct results (A2A v1.0 §3.1, §3.2.4, §9)."""

from __future__ import annotations

import base64
import uuid
from collections.abc import AsyncIterator
from contextlib import aclosing

import a2a.types as t
import httpx
import pytest
import trio
from a2a.client import A2ACardResolver, Client, ClientConfig, create_client
from a2a.client.transports.http_helpers import parse_sse_stream
from a2a.client.transports.jsonrpc import JsonRpcTransport
from a2a.utils.errors import (
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from .agents import agent, cleanups, gates

COMPLETED = t.TaskState.TASK_STATE_COMPLETED
WORKING = t.TaskState.TASK_STATE_WORKING


@pytest.fixture
async def sdk_http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


@pytest.fixture
async def client(base_url: str, sdk_http: httpx.AsyncClient) -> Client:
    """The SDK's non-streaming client (SendMessage)."""
    return await create_client(base_url, ClientConfig(httpx_client=sdk_http, streaming=False))


@pytest.fixture
async def streaming(base_url: str, sdk_http: httpx.AsyncClient) -> Client:
    """The SDK's streaming client (SendStreamingMessage, SubscribeToTask)."""
    return await create_client(base_url, ClientConfig(httpx_client=sdk_http, streaming=True))


def message(
    text: str, skill: str | None = None, *, task_id: str = "", context_id: str = ""
) -> t.Message:
    msg = t.Message(
        message_id=str(uuid.uuid4()),
        role=t.Role.ROLE_USER,
        parts=[t.Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )
    if skill is not None:
        msg.metadata.update({"skillId": skill})
    return msg


def request(
    msg: t.Message, *, return_immediately: bool = False, history_length: int | None = None
) -> t.SendMessageRequest:
    config = t.SendMessageConfiguration(return_immediately=return_immediately)
    if history_length is not None:
        config.history_length = history_length
    return t.SendMessageRequest(message=msg, configuration=config)


async def collect(events: AsyncIterator[t.StreamResponse]) -> list[t.StreamResponse]:
    async with aclosing(events) as stream:  # type: ignore[type-var]
        return [event async for event in stream]


async def send(client: Client, req: t.SendMessageRequest) -> t.StreamResponse:
    """One non-streaming SendMessage: the SDK yields exactly one response."""
    (response,) = await collect(client.send_message(req))
    return response


async def send_task(client: Client, req: t.SendMessageRequest) -> t.Task:
    response = await send(client, req)
    assert response.WhichOneof("payload") == "task"
    return response.task


async def wait_state(client: Client, task_id: str, state: t.TaskState) -> t.Task:
    """Poll GetTask until the task reaches ``state``."""
    with trio.fail_after(5):
        while True:
            task = await client.get_task(t.GetTaskRequest(id=task_id))
            if task.status.state == state:
                return task
            await trio.sleep(0.01)


def texts(parts: object) -> list[str]:
    return [part.text for part in parts]  # type: ignore[attr-defined]


def new_gate() -> str:
    name = "gate-" + uuid.uuid4().hex
    gates[name] = trio.Event()
    return name


# --- SendMessage ---------------------------------------------------------------------------


async def test_blocking_send_returns_the_completed_task_with_its_artifact(client: Client) -> None:
    msg = message("hello there")
    task = await send_task(client, request(msg))
    assert task.status.state == COMPLETED
    assert task.id and task.context_id
    assert [texts(a.parts) for a in task.artifacts] == [["hello there"]]
    assert task.history[0].message_id == msg.message_id
    assert task.history[0].task_id == task.id


async def test_non_blocking_send_returns_at_once_then_get_task_follows_it(client: Client) -> None:
    gate = new_gate()
    task = await send_task(client, request(message(gate, "gated"), return_immediately=True))
    assert task.status.state in (t.TaskState.TASK_STATE_SUBMITTED, WORKING)
    assert not task.artifacts

    working = await wait_state(client, task.id, WORKING)
    assert working.status.message.metadata["progress"] == 0.5
    assert not working.artifacts

    gates[gate].set()
    done = await wait_state(client, task.id, COMPLETED)
    assert [texts(a.parts) for a in done.artifacts] == [["opened"], ["done"]]


# --- SendStreamingMessage ------------------------------------------------------------------


async def test_stream_starts_with_the_task_and_ends_completed(streaming: Client) -> None:
    events = await collect(streaming.send_message(request(message("streamed"))))
    kinds = [event.WhichOneof("payload") for event in events]
    assert kinds[0] == "task"
    task = events[0].task
    assert task.status.state == t.TaskState.TASK_STATE_SUBMITTED
    assert kinds[-1] == "status_update"
    assert events[-1].status_update.status.state == COMPLETED
    assert set(kinds[1:]) <= {"status_update", "artifact_update"}
    artifacts = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert [texts(a.artifact.parts) for a in artifacts] == [["streamed"]]
    for event in events[1:]:
        update = getattr(event, event.WhichOneof("payload"))
        assert (update.task_id, update.context_id) == (task.id, task.context_id)
    states = [e.status_update.status.state for e in events if e.HasField("status_update")]
    assert states.count(COMPLETED) == 1


async def test_stream_of_a_chunked_artifact_carries_append_and_last_chunk(
    streaming: Client,
) -> None:
    events = await collect(streaming.send_message(request(message("x", "chunks"))))
    assert events[0].HasField("task")
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert [(c.artifact.artifact_id, texts(c.artifact.parts)) for c in chunks] == [
        ("a1", ["one "]),
        ("a1", ["two "]),
        ("a1", ["three"]),
    ]
    assert [(c.append, c.last_chunk) for c in chunks] == [
        (False, False),
        (True, False),
        (True, True),
    ]
    assert events[-1].status_update.status.state == COMPLETED

    # The stored task holds the chunks joined into one artifact.
    final = await streaming.get_task(t.GetTaskRequest(id=events[0].task.id))
    assert [(a.artifact_id, "".join(texts(a.parts))) for a in final.artifacts] == [
        ("a1", "one two three")
    ]


async def test_stream_of_a_gated_task_reports_progress_then_the_artifact(
    streaming: Client,
) -> None:
    gate = new_gate()
    events: list[t.StreamResponse] = []
    async with aclosing(streaming.send_message(request(message(gate, "gated")))) as stream:  # type: ignore[type-var]
        async for event in stream:
            events.append(event)
            if event.HasField("status_update") and event.status_update.status.state == WORKING:
                gates[gate].set()
    kinds = [event.WhichOneof("payload") for event in events]
    assert kinds == ["task", "status_update", "artifact_update", "artifact_update", "status_update"]
    assert events[1].status_update.status.message.metadata["progress"] == 0.5
    assert texts(events[2].artifact_update.artifact.parts) == ["opened"]
    assert texts(events[3].artifact_update.artifact.parts) == ["done"]  # the return value
    assert events[4].status_update.status.state == COMPLETED


UNICODE_LINE_ENDS = "\x85\u2028\u2029"
"""Where ``str.splitlines`` ends a line besides CR and LF and JSON may hold the character raw."""


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_stream_of_text_holding_unicode_line_ends(
    base_url: str, sdk_http: httpx.AsyncClient, binding: str
) -> None:
    """The SDK reads event streams with httpx's ``aiter_lines``, which ends lines at U+0085,
    U+2028 and U+2029 too (test below); a2a_trio writes them escaped in event data (the same
    JSON string), so the SDK reads the text whole instead of failing on a torn JSON line."""
    config = ClientConfig(
        httpx_client=sdk_http, streaming=True, supported_protocol_bindings=[binding]
    )
    sdk = await create_client(base_url, config)
    text = "one" + "two".join(UNICODE_LINE_ENDS) + "end"
    events = await collect(sdk.send_message(request(message(text))))
    assert events[-1].status_update.status.state == COMPLETED
    artifacts = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert [texts(a.artifact.parts) for a in artifacts] == [[text]]


@pytest.mark.parametrize("separator", UNICODE_LINE_ENDS)
async def test_the_sdks_sse_reader_ends_lines_where_the_sse_standard_does_not(
    separator: str,
) -> None:
    """Pinned a2a-sdk 1.3.0 behaviour (``parse_sse_stream``): an SSE data line holding the
    character raw is cut there, though SSE ends lines only at CRLF, LF or CR (WHATWG HTML,
    "Server-sent events", parsing an event stream); docs/bindings.md lists it."""
    raw = f'data: {{"text": "a{separator}b"}}\n\n'.encode()
    seen = [data async for _, data in parse_sse_stream(httpx.Response(200, content=raw))]
    assert seen == ['{"text": "a']


# --- GetTask -------------------------------------------------------------------------------


async def test_get_task_history_length(client: Client) -> None:
    first = await send_task(client, request(message("start", "ask")))
    assert first.status.state == t.TaskState.TASK_STATE_INPUT_REQUIRED
    await send_task(client, request(message("Ada", task_id=first.id)))

    full = await client.get_task(t.GetTaskRequest(id=first.id))
    assert full.status.state == COMPLETED
    assert len(full.history) >= 3
    assert texts(full.history[0].parts) == ["start"]
    assert "Ada" in [text for msg in full.history for text in texts(msg.parts)]

    none = await client.get_task(t.GetTaskRequest(id=first.id, history_length=0))
    assert len(none.history) == 0
    assert none.status.state == COMPLETED

    last = await client.get_task(t.GetTaskRequest(id=first.id, history_length=1))
    assert list(last.history) == [full.history[-1]]

    two = await client.get_task(t.GetTaskRequest(id=first.id, history_length=2))
    assert list(two.history) == list(full.history[-2:])

    more = await client.get_task(t.GetTaskRequest(id=first.id, history_length=1000))
    assert list(more.history) == list(full.history)

    listed = await client.list_tasks(t.ListTasksRequest(history_length=1))
    assert [list(task.history) for task in listed.tasks] == [[full.history[-1]]]
    listed = await client.list_tasks(t.ListTasksRequest(history_length=0))
    assert [len(task.history) for task in listed.tasks] == [0]


async def test_send_configuration_history_length_trims_the_returned_task(client: Client) -> None:
    task = await send_task(client, request(message("trim me"), history_length=0))
    assert task.status.state == COMPLETED
    assert len(task.history) == 0
    assert texts(task.artifacts[0].parts) == ["trim me"]


# --- ListTasks -----------------------------------------------------------------------------


async def test_list_tasks_filters_by_context_and_status(client: Client) -> None:
    one = await send_task(client, request(message("one")))
    two = await send_task(client, request(message("two", context_id=one.context_id)))
    other = await send_task(client, request(message("other")))
    failed = await send_task(client, request(message("x", "refuse", context_id=one.context_id)))
    assert two.context_id == one.context_id != other.context_id
    assert failed.status.state == t.TaskState.TASK_STATE_FAILED

    by_context = await client.list_tasks(t.ListTasksRequest(context_id=one.context_id))
    assert [task.id for task in by_context.tasks] == [failed.id, two.id, one.id]
    assert by_context.total_size == 3
    assert by_context.next_page_token == ""

    completed = await client.list_tasks(
        t.ListTasksRequest(context_id=one.context_id, status=COMPLETED)
    )
    assert [task.id for task in completed.tasks] == [two.id, one.id]
    assert completed.total_size == 2

    failed_only = await client.list_tasks(t.ListTasksRequest(status=t.TaskState.TASK_STATE_FAILED))
    assert [task.id for task in failed_only.tasks] == [failed.id]

    # Artifacts are left out unless asked for (A2A v1.0 §3.1.4).
    assert all(len(task.artifacts) == 0 for task in by_context.tasks)
    with_artifacts = await client.list_tasks(
        t.ListTasksRequest(context_id=other.context_id, include_artifacts=True)
    )
    assert [texts(a.parts) for a in with_artifacts.tasks[0].artifacts] == [["other"]]
    # A task without artifacts comes with an empty list then, which the SDK reads as none.
    none = await client.list_tasks(
        t.ListTasksRequest(status=t.TaskState.TASK_STATE_FAILED, include_artifacts=True)
    )
    assert [(task.id, len(task.artifacts)) for task in none.tasks] == [(failed.id, 0)]


async def test_list_tasks_filters_by_status_timestamp(client: Client) -> None:
    older = await send_task(client, request(message("older")))
    await trio.sleep(0.01)  # the server's clock: a later status timestamp for the next task
    newer = await send_task(client, request(message("newer")))
    assert newer.status.timestamp.ToDatetime() > older.status.timestamp.ToDatetime()

    since = t.ListTasksRequest()
    since.status_timestamp_after.CopyFrom(newer.status.timestamp)
    assert [task.id for task in (await client.list_tasks(since)).tasks] == [newer.id]
    since.status_timestamp_after.FromSeconds(0)
    assert [task.id for task in (await client.list_tasks(since)).tasks] == [newer.id, older.id]
    since.status_timestamp_after.FromSeconds(newer.status.timestamp.seconds + 3600)
    page = await client.list_tasks(since)
    assert (list(page.tasks), page.total_size, page.next_page_token) == ([], 0, "")


async def test_list_tasks_pages_newest_updated_first(client: Client) -> None:
    gate = new_gate()
    oldest = await send_task(client, request(message(gate, "gated"), return_immediately=True))
    await wait_state(client, oldest.id, WORKING)
    middle = await send_task(client, request(message("middle")))
    newest = await send_task(client, request(message("newest")))
    gates[gate].set()  # the oldest task is updated last: it moves to the front
    await wait_state(client, oldest.id, COMPLETED)

    seen: list[str] = []
    token = ""
    with trio.fail_after(5):
        while True:
            page = await client.list_tasks(t.ListTasksRequest(page_size=1, page_token=token))
            assert page.total_size == 3
            assert page.page_size == 1
            assert len(page.tasks) == 1
            seen.append(page.tasks[0].id)
            token = page.next_page_token
            if not token:
                break
    assert seen == [oldest.id, newest.id, middle.id]


# --- CancelTask ----------------------------------------------------------------------------


async def test_cancel_a_running_task(client: Client) -> None:
    gate = new_gate()
    task = await send_task(client, request(message(gate, "gated"), return_immediately=True))
    await wait_state(client, task.id, WORKING)

    canceled = await client.cancel_task(t.CancelTaskRequest(id=task.id))
    assert canceled.id == task.id
    assert canceled.status.state == t.TaskState.TASK_STATE_CANCELED
    assert task.id in cleanups  # the handler's finally ran
    stored = await client.get_task(t.GetTaskRequest(id=task.id))
    assert stored.status.state == t.TaskState.TASK_STATE_CANCELED


async def test_cancel_a_finished_task_is_task_not_cancelable(client: Client) -> None:
    task = await send_task(client, request(message("finished")))
    assert task.status.state == COMPLETED
    with pytest.raises(TaskNotCancelableError):
        await client.cancel_task(t.CancelTaskRequest(id=task.id))
    stored = await client.get_task(t.GetTaskRequest(id=task.id))
    assert stored.status.state == COMPLETED


# --- SubscribeToTask -----------------------------------------------------------------------


async def test_subscribe_to_a_running_task(client: Client, streaming: Client) -> None:
    gate = new_gate()
    task = await send_task(client, request(message(gate, "gated"), return_immediately=True))
    await wait_state(client, task.id, WORKING)

    events: list[t.StreamResponse] = []
    with trio.fail_after(5):
        subscription = streaming.subscribe(t.SubscribeToTaskRequest(id=task.id))
        async with aclosing(subscription) as stream:  # type: ignore[type-var]
            async for event in stream:
                events.append(event)
                if len(events) == 1:
                    gates[gate].set()
    kinds = [event.WhichOneof("payload") for event in events]
    assert kinds[0] == "task"
    assert events[0].task.id == task.id
    assert events[0].task.status.state == WORKING
    assert kinds[1:] == ["artifact_update", "artifact_update", "status_update"]
    assert texts(events[1].artifact_update.artifact.parts) == ["opened"]
    assert texts(events[2].artifact_update.artifact.parts) == ["done"]
    assert events[3].status_update.task_id == task.id
    assert events[3].status_update.status.state == COMPLETED


async def test_subscribe_stays_open_through_input_required(
    client: Client, streaming: Client
) -> None:
    first = await send_task(client, request(message("start", "ask")))
    assert first.status.state == t.TaskState.TASK_STATE_INPUT_REQUIRED

    events: list[t.StreamResponse] = []
    with trio.fail_after(5):
        subscription = streaming.subscribe(t.SubscribeToTaskRequest(id=first.id))
        async with aclosing(subscription) as stream:  # type: ignore[type-var]
            async for event in stream:
                events.append(event)
                if len(events) == 1:  # answer while subscribed: the follow-up goes elsewhere
                    done = await send_task(client, request(message("Cy", task_id=first.id)))
                    assert done.status.state == COMPLETED
    assert events[0].task.status.state == t.TaskState.TASK_STATE_INPUT_REQUIRED
    states = [e.status_update.status.state for e in events if e.HasField("status_update")]
    assert states[0] == WORKING
    assert states[-1] == COMPLETED
    artifacts = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert [texts(a.artifact.parts) for a in artifacts] == [["hello Cy"]]


async def test_cancel_a_task_waiting_for_input(client: Client) -> None:
    first = await send_task(client, request(message("start", "ask")))
    assert first.status.state == t.TaskState.TASK_STATE_INPUT_REQUIRED
    canceled = await client.cancel_task(t.CancelTaskRequest(id=first.id))
    assert canceled.status.state == t.TaskState.TASK_STATE_CANCELED
    with pytest.raises(UnsupportedOperationError):  # a canceled task takes no more input
        await send(client, request(message("late", task_id=first.id)))


async def test_parked_job_streams_deduplicated_progress_then_its_result(
    streaming: Client,
) -> None:
    events = await collect(streaming.send_message(request(message("x", "parked"))))
    assert events[0].HasField("task")
    working = [
        e.status_update.status
        for e in events
        if e.HasField("status_update") and e.status_update.status.state == WORKING
    ]
    assert [status.message.metadata["progress"] for status in working] == [0.0, 0.5]
    (artifact,) = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
    assert artifact.parts[0].data.struct_value["answer"] == 42
    assert events[-1].status_update.status.state == COMPLETED


async def test_unary_errors_map_to_sdk_exceptions(client: Client) -> None:
    with pytest.raises(TaskNotFoundError):
        await client.get_task(t.GetTaskRequest(id="no-such-task"))
    with pytest.raises(TaskNotFoundError):
        await client.cancel_task(t.CancelTaskRequest(id="no-such-task"))
    with pytest.raises(InvalidParamsError):
        await send(client, request(message("x", "no-such-skill")))
    with pytest.raises(InvalidParamsError):
        await client.list_tasks(t.ListTasksRequest(page_size=101))


# --- multi-turn and message-only skills ----------------------------------------------------


async def test_multi_turn_through_the_sdk(client: Client) -> None:
    first = await send_task(client, request(message("start", "ask")))
    assert first.status.state == t.TaskState.TASK_STATE_INPUT_REQUIRED
    assert texts(first.status.message.parts) == ["What is your name?"]
    assert first.status.message.role == t.Role.ROLE_AGENT

    reply = message("Ada", task_id=first.id, context_id=first.context_id)
    done = await send_task(client, request(reply))
    assert done.id == first.id
    assert done.context_id == first.context_id
    assert done.status.state == COMPLETED
    assert [texts(a.parts) for a in done.artifacts] == [["hello Ada"]]


async def test_multi_turn_through_the_streaming_sdk(streaming: Client) -> None:
    events = await collect(streaming.send_message(request(message("start", "ask"))))
    assert events[0].HasField("task")
    task_id = events[0].task.id
    last = events[-1]
    assert last.status_update.status.state == t.TaskState.TASK_STATE_INPUT_REQUIRED

    follow = await collect(streaming.send_message(request(message("Bo", task_id=task_id))))
    assert follow[0].HasField("task")
    assert follow[0].task.id == task_id
    assert follow[-1].status_update.status.state == COMPLETED
    artifacts = [e.artifact_update for e in follow if e.HasField("artifact_update")]
    assert [texts(a.artifact.parts) for a in artifacts] == [["hello Bo"]]


async def test_message_only_skill_answers_with_a_message(client: Client) -> None:
    msg = message("ping", "quick")
    response = await send(client, request(msg))
    assert response.WhichOneof("payload") == "message"
    assert response.message.role == t.Role.ROLE_AGENT
    assert texts(response.message.parts) == ["quick ping"]
    assert response.message.task_id == ""
    listed = await client.list_tasks(t.ListTasksRequest())
    assert listed.total_size == 0


async def test_message_only_skill_over_a_stream_is_one_message(
    base_url: str, sdk_http: httpx.AsyncClient
) -> None:
    # The SDK's BaseClient stops reading at a Message without closing its transport generator
    # (a ResourceWarning under trio), so this drives the SDK's JSON-RPC transport directly and
    # reads the stream to its end: the server must close it after the one message.
    card = await A2ACardResolver(sdk_http, base_url).get_agent_card()
    transport = JsonRpcTransport(
        sdk_http, card, card.supported_interfaces[0].url, is_shared_httpx=True
    )
    stream = transport.send_message_streaming(request(message("pong", "quick")))
    events = await collect(stream)
    assert [event.WhichOneof("payload") for event in events] == ["message"]
    assert texts(events[0].message.parts) == ["quick pong"]


# --- errors the SDK maps -------------------------------------------------------------------


async def test_extended_card_is_unsupported(
    base_url: str, sdk_http: httpx.AsyncClient, client: Client
) -> None:
    # The card says extendedAgentCard=false, so the SDK client answers with the public card.
    public = await client.get_extended_agent_card(t.GetExtendedAgentCardRequest())
    assert public.name == "test agent"
    assert not public.capabilities.extended_agent_card

    # Asked anyway, the server answers UnsupportedOperationError (-32004, A2A v1.0 §3.3.4).
    card = t.AgentCard()
    card.CopyFrom(public)
    card.capabilities.extended_agent_card = True
    transport = JsonRpcTransport(
        sdk_http, card, card.supported_interfaces[0].url, is_shared_httpx=True
    )
    with pytest.raises(UnsupportedOperationError):
        await transport.get_extended_agent_card(t.GetExtendedAgentCardRequest())


async def test_push_config_methods_are_not_supported(client: Client) -> None:
    task = await send_task(client, request(message("push")))
    config = t.TaskPushNotificationConfig(task_id=task.id, url="http://127.0.0.1:9/hook")
    with pytest.raises(PushNotificationNotSupportedError):
        await client.create_task_push_notification_config(config)
    with pytest.raises(PushNotificationNotSupportedError):
        await client.get_task_push_notification_config(
            t.GetTaskPushNotificationConfigRequest(task_id=task.id, id="c1")
        )
    with pytest.raises(PushNotificationNotSupportedError):
        await client.list_task_push_notification_configs(
            t.ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
    with pytest.raises(PushNotificationNotSupportedError):
        await client.delete_task_push_notification_config(
            t.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="c1")
        )


# --- the SDK's v0.3 HTTP+JSON transport -----------------------------------------------------


async def test_the_sdks_v03_rest_transport_sends_file_bytes_base64_twice(
    base_url: str, sdk_http: httpx.AsyncClient, client: Client
) -> None:
    """Pinned a2a-sdk 1.3.0 behaviour (``compat/v0_3/proto_utils.py``): the v0.3 HTTP+JSON
    transport puts a file's base64 text, not its bytes, into the v0.3 proto's ``bytes
    file_with_bytes``, whose ProtoJSON is the base64 of the bytes, so the wire carries the
    base64 of the base64.  a2a_trio reads the field as the proto says: the agent gets the
    base64 text as the file; the SDK, undoing its own step, reads back what it sent, and
    fails on a file that is no UTF-8 text (docs/bindings.md, "Differences from the official
    SDK's client")."""
    card = await A2ACardResolver(sdk_http, base_url).get_agent_card()
    v03 = [
        i
        for i in card.supported_interfaces
        if (i.protocol_binding, i.protocol_version) == ("HTTP+JSON", "0.3")
    ]
    del card.supported_interfaces[:]
    card.supported_interfaces.extend(v03)
    config = ClientConfig(
        httpx_client=sdk_http, streaming=False, supported_protocol_bindings=["HTTP+JSON"]
    )
    rest03 = await create_client(card, config)
    msg = message("a file")
    msg.parts.append(t.Part(raw=b"\x00\x01bytes", media_type="text/plain", filename="f.bin"))
    sent = await send_task(rest03, request(msg))
    assert sent.history[0].parts[1].raw == b"\x00\x01bytes"  # the SDK's two steps undone
    stored = await client.get_task(t.GetTaskRequest(id=sent.id))  # over v1.0 JSON-RPC
    assert stored.history[0].parts[1].raw == base64.b64encode(b"\x00\x01bytes")

    # The reverse step fails on a file whose bytes are not UTF-8, sent over another binding.
    msg = message("a binary file")
    msg.parts.append(t.Part(raw=b"\xff\xfe", media_type="text/plain", filename="f.bin"))
    binary = await send_task(client, request(msg))
    with pytest.raises(UnicodeDecodeError):
        await rest03.get_task(t.GetTaskRequest(id=binary.id))


# --- agent card ----------------------------------------------------------------------------


async def test_card_discovery_by_the_sdk_resolver(
    base_url: str, sdk_http: httpx.AsyncClient
) -> None:
    card = await A2ACardResolver(sdk_http, base_url).get_agent_card()
    assert card.name == "test agent"
    assert card.version == "0.0.1"
    assert [(s.id, s.name, s.description) for s in card.skills] == [
        (s.id, s.name, s.description) for s in agent.skills
    ]
    assert {"echo", "gated", "ask", "chunks", "quick"} <= {s.id for s in card.skills}
    assert list(card.skills[0].tags) == ["test"]
    preferred = card.supported_interfaces[0]  # what the SDK's client factory picks
    assert preferred.url.rstrip("/") == base_url.rstrip("/")
    assert preferred.protocol_binding == "JSONRPC"
    assert preferred.protocol_version == "1.0"
    assert all(i.url.startswith(base_url) for i in card.supported_interfaces)
    assert card.capabilities.streaming
    assert not card.capabilities.push_notifications
    assert list(card.default_input_modes) == ["text/plain", "application/json"]
