"""The client against the official a2a-sdk server, over JSON-RPC and HTTP+JSON (A2A v1.0)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import attrs
import httpx
import pytest
import trio

from a2a_trio import model as m
from a2a_trio.client import (
    HTTP_JSON,
    JSONRPC,
    AgentCardError,
    CardCache,
    Client,
    Reconnect,
    TransportError,
    fetch_card,
    open_client,
)
from a2a_trio.errors import (
    InternalError,
    InvalidParamsError,
    MethodNotFoundError,
    TaskNotCancelableError,
    TaskNotFoundError,
)

from .cutting_proxy import open_cutting_proxy


@pytest.fixture(params=[JSONRPC, HTTP_JSON])
async def client(sdk_agent: str, request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    async with open_client(sdk_agent, bindings=[request.param]) as client:
        assert client.interface.protocol_binding == request.param
        yield client


def texts(parts: tuple[m.Part, ...]) -> str:
    return "".join(p.text for p in parts if isinstance(p, m.TextPart))


async def test_send_blocks_until_the_task_completes(client: Client) -> None:
    task = await client.send("abcdef")
    assert isinstance(task, m.Task)
    assert task.status.state is m.TaskState.COMPLETED
    assert [texts(a.parts) for a in task.artifacts] == ["abcdef"]


async def test_send_can_be_answered_by_a_message(client: Client) -> None:
    reply = await client.send("hello")
    assert isinstance(reply, m.Message)
    assert reply.role is m.Role.AGENT
    assert texts(reply.parts) == "hello back"


async def test_return_immediately_then_cancel(client: Client) -> None:
    task = await client.send("wait", return_immediately=True)
    assert isinstance(task, m.Task)
    assert not m.is_terminal(task.status.state)
    canceled = await client.cancel_task(task.id)
    assert canceled.status.state is m.TaskState.CANCELED
    with pytest.raises(TaskNotCancelableError) as info:
        await client.cancel_task(task.id)
    assert info.value.code == -32002


async def test_stream_yields_typed_events_in_order(client: Client) -> None:
    async with client.stream("abcd") as events:
        seen = [event async for event in events]
    assert isinstance(seen[0], m.Task)
    kinds = [type(e).__name__ for e in seen[1:]]
    assert kinds == [
        "TaskStatusUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]
    chunks = [e for e in seen if isinstance(e, m.TaskArtifactUpdateEvent)]
    assert [texts(c.artifact.parts) for c in chunks] == ["ab", "cd"]
    assert chunks[1].append and chunks[1].last_chunk
    last = seen[-1]
    assert isinstance(last, m.TaskStatusUpdateEvent)
    assert last.status.state is m.TaskState.COMPLETED
    assert events.task_id == seen[0].id


async def follow_then_cancel(
    client: Client, message: m.Message | str = "wait"
) -> list[m.StreamEvent]:
    """Subscribe to a task that works until canceled (the agent's answer to ``message``),
    cancel it once subscribed, collect all; the first is the task, the last says CANCELED."""
    task = await client.send(message, return_immediately=True)
    assert isinstance(task, m.Task)
    async with client.subscribe(task.id) as events:
        seen = [await anext(events)]
        canceled = await client.cancel_task(task.id)
        seen += [event async for event in events]
    assert events.task_id == task.id
    assert canceled.status.state is m.TaskState.CANCELED
    assert isinstance(seen[0], m.Task) and seen[0].id == task.id
    last = seen[-1]
    assert isinstance(last, m.TaskStatusUpdateEvent | m.Task)
    assert last.status.state is m.TaskState.CANCELED
    return seen


async def test_subscribe_follows_a_running_task(client: Client) -> None:
    await follow_then_cancel(client)


async def test_get_task_with_history_length(client: Client) -> None:
    sent = await client.send("history")
    assert isinstance(sent, m.Task)
    task = await client.get_task(sent.id, history_length=1)
    assert task.id == sent.id
    assert len(task.history) == 1
    assert task.artifacts == sent.artifacts


async def test_list_pages_and_iterates_over_all(client: Client) -> None:
    context = m.new_id()
    for i in range(5):
        await client.send(m.text_message(f"task {i}", context_id=context))
    page = await client.list_tasks(context_id=context, page_size=2)
    assert len(page.tasks) == 2
    assert page.next_page_token
    assert page.total_size == 5
    every = [task async for task in client.iter_tasks(context_id=context, page_size=2)]
    assert len({task.id for task in every}) == 5
    assert all(task.context_id == context for task in every)


async def test_list_filters_by_state(client: Client) -> None:
    task = await client.send("wait", return_immediately=True)
    assert isinstance(task, m.Task)
    working = [t.id async for t in client.iter_tasks(status=m.TaskState.WORKING)]
    assert task.id in working
    await client.cancel_task(task.id)


async def test_push_config_crud(client: Client) -> None:
    task = await client.send("wait", return_immediately=True)
    assert isinstance(task, m.Task)
    config = m.TaskPushNotificationConfig(
        url="https://example.com/hook", id="hook-1", task_id=task.id, token="secret"
    )
    created = await client.create_push_config(config)
    assert (created.url, created.id, created.task_id) == (config.url, "hook-1", task.id)
    fetched = await client.get_push_config(task.id, "hook-1")
    assert fetched.token == "secret"
    listed = await client.list_push_configs(task.id)
    assert [c.id for c in listed.configs] == ["hook-1"]
    await client.delete_push_config(task.id, "hook-1")
    assert (await client.list_push_configs(task.id)).configs == ()
    await client.cancel_task(task.id)


async def test_unknown_task_is_a_typed_error_with_code_and_data(client: Client) -> None:
    with pytest.raises(TaskNotFoundError) as info:
        await client.get_task("no-such-task")
    assert info.value.code == -32001
    assert info.value.message
    assert isinstance(info.value.data, list)
    assert info.value.data[0]["reason"] == "TASK_NOT_FOUND"


async def test_subscribe_to_unknown_task_raises_before_streaming(client: Client) -> None:
    with pytest.raises(TaskNotFoundError):
        async with client.subscribe("no-such-task") as events:
            await anext(events)


async def test_extended_card(client: Client) -> None:
    card = await client.get_extended_card()
    assert card.name == "SDK echo (extended)"
    assert card.skills == client.card.skills


async def test_an_agent_internal_error_is_internal_error_on_every_binding(client: Client) -> None:
    """The SDK sends INTERNAL_ERROR over HTTP+JSON and -32603 over JSON-RPC: one class."""
    with pytest.raises(InternalError, match="database unavailable") as info:
        await client.send("fail internal")
    assert info.value.code == -32603


async def test_invalid_params_are_reported_as_such(client: Client) -> None:
    with pytest.raises(InvalidParamsError):
        await client.list_tasks(page_size=1000)


async def test_open_by_card_url_and_by_card(sdk_agent: str) -> None:
    async with open_client(sdk_agent + "/.well-known/agent-card.json") as client:
        card = client.card
    assert card.name == "SDK echo"
    async with open_client(card, bindings=[HTTP_JSON, JSONRPC]) as client:
        assert client.interface.protocol_binding == HTTP_JSON
        assert isinstance(await client.send("by card"), m.Task)


async def test_the_cards_first_interface_is_used_unless_the_caller_ranks_bindings(
    sdk_agent: str,
) -> None:
    """A card listing HTTP+JSON first is spoken to over HTTP+JSON (A2A v1.0 §8.3.2)."""
    async with httpx.AsyncClient() as http:
        card = await fetch_card(http, sdk_agent)
    assert [i.protocol_binding for i in card.supported_interfaces] == [JSONRPC, HTTP_JSON]
    rest_first = attrs.evolve(card, supported_interfaces=card.supported_interfaces[::-1])
    async with open_client(rest_first) as client:
        assert client.interface.protocol_binding == HTTP_JSON
        assert client.interface.url.endswith("/rest")
        task = await client.send("card order")
        assert isinstance(task, m.Task)
        assert task.status.state is m.TaskState.COMPLETED
    async with open_client(card) as client:
        assert client.interface.protocol_binding == JSONRPC
    async with open_client(rest_first, bindings=[JSONRPC]) as client:
        assert client.interface.protocol_binding == JSONRPC


async def test_card_cache_honours_max_age_and_etag(sdk_agent: str) -> None:
    statuses: list[int] = []

    async def record(response: httpx.Response) -> None:
        statuses.append(response.status_code)

    cache = CardCache()
    async with httpx.AsyncClient(event_hooks={"response": [record]}) as http:
        first = await fetch_card(http, sdk_agent, cache=cache)
        again = await fetch_card(http, sdk_agent, cache=cache)
        assert again is first
        assert statuses == [200]  # max-age=60: the second fetch made no request
        url = sdk_agent + "/revalidate/"
        await fetch_card(http, url, cache=cache)
        revalidated = await fetch_card(http, url, cache=cache)
        assert statuses == [200, 200, 304]  # no-cache: revalidated with If-None-Match
        assert revalidated.name == first.name


async def test_no_card_is_an_agent_card_error(sdk_agent: str) -> None:
    with pytest.raises(AgentCardError, match="no agent card found"):
        async with open_client(sdk_agent + "/nowhere"):
            pass


async def test_no_usable_interface(sdk_agent: str) -> None:
    with pytest.raises(AgentCardError, match="unsupported binding"):
        async with open_client(sdk_agent, bindings=["GRPC"]):
            pass


async def test_unreachable_agent_is_a_transport_error() -> None:
    with trio.socket.socket() as sock:
        await sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(TransportError, match="fetching the agent card"):
        async with open_client(f"http://127.0.0.1:{port}"):
            pass


# --- v0.3: the SDK's compatibility mode, found through a v0.3 card at /.well-known/agent.json


@pytest.fixture
async def v03_client(sdk_agent: str) -> AsyncIterator[Client]:
    async with open_client(sdk_agent + "/v03") as client:
        yield client


async def test_v03_card_is_found_at_the_legacy_path(v03_client: Client) -> None:
    assert v03_client.card.name == "SDK echo (v0.3 card)"
    assert v03_client.interface.protocol_version == "0.3.0"
    assert v03_client.interface.protocol_binding == JSONRPC


async def test_v03_send_stream_get_cancel(v03_client: Client) -> None:
    task = await v03_client.send("abcdef")
    assert isinstance(task, m.Task)
    assert task.status.state is m.TaskState.COMPLETED
    assert [texts(a.parts) for a in task.artifacts] == ["abcdef"]
    reply = await v03_client.send("hello")
    assert isinstance(reply, m.Message)
    assert texts(reply.parts) == "hello back"
    async with v03_client.stream("abcd") as events:
        seen = [event async for event in events]
    assert isinstance(seen[0], m.Task)
    assert [texts(e.artifact.parts) for e in seen if isinstance(e, m.TaskArtifactUpdateEvent)] == [
        "ab",
        "cd",
    ]
    fetched = await v03_client.get_task(task.id, history_length=1)
    assert fetched.id == task.id
    running = await v03_client.send("wait", return_immediately=True)
    assert isinstance(running, m.Task)
    assert (await v03_client.cancel_task(running.id)).status.state is m.TaskState.CANCELED


async def test_v03_subscribe(v03_client: Client) -> None:
    await follow_then_cancel(v03_client)


async def test_v03_push_config_crud(v03_client: Client) -> None:
    task = await v03_client.send("wait", return_immediately=True)
    assert isinstance(task, m.Task)
    config = m.TaskPushNotificationConfig(url="https://example.com/h", id="h1", task_id=task.id)
    assert (await v03_client.create_push_config(config)).id == "h1"
    assert (await v03_client.get_push_config(task.id, "h1")).url == config.url
    assert [c.id for c in (await v03_client.list_push_configs(task.id)).configs] == ["h1"]
    await v03_client.delete_push_config(task.id, "h1")
    assert (await v03_client.list_push_configs(task.id)).configs == ()
    await v03_client.cancel_task(task.id)


async def test_v03_errors_are_typed(v03_client: Client) -> None:
    with pytest.raises(TaskNotFoundError) as info:
        await v03_client.get_task("no-such-task")
    assert info.value.code == -32001
    with pytest.raises(MethodNotFoundError):  # the SDK's v0.3 mode has no tasks/list
        await v03_client.list_tasks()


async def test_v03_stream_resumed_after_the_task_finished_ends_with_the_task(
    sdk_agent: str,
) -> None:
    """The SDK's v0.3 tasks/resubscribe refuses a finished task with an error as the first
    event of a 200 event stream; the stream must end with the task as fetched."""
    async with httpx.AsyncClient() as http:
        card = await fetch_card(http, sdk_agent + "/v03")
    async with open_cutting_proxy(sdk_agent, cut_after=1, marker=b"data:") as proxy:
        proxied = tuple(
            attrs.evolve(i, url=i.url.replace(sdk_agent, proxy.url))
            for i in card.supported_interfaces
        )
        card = attrs.evolve(card, supported_interfaces=proxied)
        late = Reconnect(attempts=2, initial_delay=2.0)  # the task (about 1 s) is over by then
        async with open_client(card, reconnect=late) as client:
            assert client.interface.protocol_version.startswith("0.3")
            async with client.stream("slow abcd") as events:
                seen = [event async for event in events]
    assert proxy.cuts == 1
    assert isinstance(seen[0], m.Task)
    last = seen[-1]
    assert isinstance(last, m.Task)
    assert last.status.state is m.TaskState.COMPLETED
    assert [texts(a.parts) for a in last.artifacts] == ["slow abcd"]
    assert events.reconnects == 1
