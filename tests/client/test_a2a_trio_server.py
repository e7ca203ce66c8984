"""The client against a2a_trio's own server, over every binding it serves."""

from __future__ import annotations

import ssl
import threading
from collections.abc import AsyncIterator, Mapping
from functools import partial
from typing import Any

import httpx
import pytest
import trio

from a2a_trio import Agent, ServerConfig, TaskContext, _trust, serve
from a2a_trio import model as m
from a2a_trio.client import (
    HTTP_JSON,
    JSONRPC,
    BearerAuth,
    Client,
    Reconnect,
    Timeouts,
    TransportError,
    open_client,
)
from a2a_trio.errors import (
    A2AError,
    AuthenticationRequiredError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
)

from .cutting_proxy import open_cutting_proxy

agent = Agent("client test agent", "Skills the client tests drive", version="0.0.1")
gates: dict[str, trio.Event] = {}


@agent.skill(default=True)
async def echo(ctx: TaskContext) -> str:
    """Complete with the received text."""
    return ctx.text


@agent.skill()
async def gated(ctx: TaskContext) -> str:
    """Report progress, wait for the test to open the gate named by the text, then stream."""
    await ctx.update("waiting", progress=0.5)
    await gates.setdefault(ctx.text, trio.Event()).wait()
    await ctx.emit_artifact("one ", artifact_id="a1", last_chunk=False)
    await ctx.emit_artifact("two", artifact_id="a1", append=True, last_chunk=True)
    return "done"


@agent.skill()
async def ask(ctx: TaskContext) -> str:
    """Ask for a name, then greet."""
    reply = await ctx.ask("What is your name?")
    return "hello " + "".join(p.text for p in reply.parts if isinstance(p, m.TextPart))


def to(skill: str, text: str, **fields: str) -> m.Message:
    return m.text_message(text, metadata={"skillId": skill}, **fields)


def texts(parts: tuple[m.Part, ...]) -> str:
    return "".join(p.text for p in parts if isinstance(p, m.TextPart))


@pytest.fixture
async def server(nursery: trio.Nursery) -> str:
    url: str = await nursery.start(
        partial(serve, agent, port=0, config=ServerConfig(keepalive=0.2))
    )
    return url


BINDINGS = [(JSONRPC, "1.0"), (HTTP_JSON, "1.0"), (JSONRPC, "0.3")]


@pytest.fixture(params=BINDINGS, ids=["jsonrpc", "rest", "v03"])
async def client(server: str, request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    binding, version = request.param
    async with open_client(server, bindings=[binding], versions=[version]) as client:
        assert client.interface.protocol_version.startswith(version[:3])
        yield client


async def test_send_and_get(client: Client) -> None:
    task = await client.send("ping")
    assert isinstance(task, m.Task)
    assert task.status.state is m.TaskState.COMPLETED
    assert [texts(a.parts) for a in task.artifacts] == ["ping"]
    again = await client.get_task(task.id)
    assert again.id == task.id
    assert again.status.state is m.TaskState.COMPLETED


async def test_stream_shows_progress_and_chunks(client: Client) -> None:
    gates["stream"] = trio.Event()
    async with client.stream(to("gated", "stream")) as events:
        first = await anext(events)
        assert isinstance(first, m.Task)
        rest = []
        async for event in events:
            rest.append(event)
            if isinstance(event, m.TaskStatusUpdateEvent) and event.status.message:
                gates["stream"].set()
    chunks = [texts(e.artifact.parts) for e in rest if isinstance(e, m.TaskArtifactUpdateEvent)]
    assert "".join(chunks) in ("one two", "one twodone")
    states = [e.status.state for e in rest if isinstance(e, m.TaskStatusUpdateEvent)]
    assert states[-1] is m.TaskState.COMPLETED


async def test_multi_turn_input_required(client: Client) -> None:
    task = await client.send(to("ask", "hi"))
    assert isinstance(task, m.Task)
    assert task.status.state is m.TaskState.INPUT_REQUIRED
    done = await client.send(m.text_message("Ada", task_id=task.id, context_id=task.context_id))
    assert isinstance(done, m.Task)
    assert done.status.state is m.TaskState.COMPLETED
    assert texts(done.artifacts[-1].parts) == "hello Ada"


async def test_cancel_and_errors(client: Client) -> None:
    gates["cancel"] = trio.Event()
    task = await client.send(to("gated", "cancel"), return_immediately=True)
    assert isinstance(task, m.Task)
    canceled = await client.cancel_task(task.id)
    assert canceled.status.state is m.TaskState.CANCELED
    with pytest.raises(TaskNotCancelableError):
        await client.cancel_task(task.id)
    with pytest.raises(TaskNotFoundError) as info:
        await client.get_task("missing")
    assert info.value.code == -32001


async def test_subscribe_to_running_task(client: Client) -> None:
    gates["sub"] = trio.Event()
    task = await client.send(to("gated", "sub"), return_immediately=True)
    assert isinstance(task, m.Task)
    async with client.subscribe(task.id) as events:
        seen = [await anext(events)]
        gates["sub"].set()
        seen += [event async for event in events]
    last = seen[-1]
    assert isinstance(last, m.TaskStatusUpdateEvent | m.Task)
    assert last.status.state is m.TaskState.COMPLETED


async def test_a_stream_left_early_is_picked_up_from_its_last_event_id(client: Client) -> None:
    """A caller that stops reading and subscribes later with ``last_event_id`` gets exactly
    the events it did not take, however many the stream had read from the network."""
    gates["left"] = gate = trio.Event()
    async with client.stream(to("gated", "left")) as events:
        taken = [await anext(events)]
        while not isinstance(taken[-1], m.TaskStatusUpdateEvent) or not taken[-1].status.message:
            taken.append(await anext(events))  # up to the "waiting" update
        gate.set()
        taken.append(await anext(events))  # the first chunk; the rest may be read already
        left_at = events.last_event_id
    async with client.subscribe(events.task_id, last_event_id=left_at) as rest:
        after = [signature(event) async for event in rest]
    assert isinstance(taken[-1], m.TaskArtifactUpdateEvent)
    assert texts(taken[-1].artifact.parts) == "one "
    assert after == [
        ("TaskArtifactUpdateEvent", "two"),
        ("TaskArtifactUpdateEvent", "done"),
        ("TaskStatusUpdateEvent", "COMPLETED"),
    ]


async def test_list_iterates_every_page(client: Client) -> None:
    context = m.new_id()
    for i in range(3):
        await client.send(m.text_message(f"t{i}", context_id=context))
    try:
        tasks = [t async for t in client.iter_tasks(context_id=context, page_size=1)]
    except A2AError as exc:  # v0.3 servers need not implement tasks/list
        assert client.interface.protocol_version.startswith("0.3"), exc
        return
    assert len({t.id for t in tasks}) == 3


def signature(event: m.StreamEvent) -> tuple[str, str]:
    """What an event says, without ids and timestamps (to compare two runs)."""
    match event:
        case m.Task(status=status) | m.TaskStatusUpdateEvent(status=status):
            return type(event).__name__, status.state.name
        case m.TaskArtifactUpdateEvent(artifact=artifact):
            return type(event).__name__, texts(artifact.parts)
    return type(event).__name__, ""


@pytest.mark.parametrize("binding", [JSONRPC, HTTP_JSON])
async def test_cut_stream_resumes_without_losing_or_repeating_events(
    server: str, binding: str, nursery: trio.Nursery
) -> None:
    fast = Reconnect(attempts=3, initial_delay=0.01)
    # A reference run without a cut: the gate opens once the "waiting" update is out.
    async with open_client(server, bindings=[binding], versions=["1.0"]) as client:
        gates["reference"] = gate = trio.Event()
        reference = []
        async with client.stream(to("gated", "reference")) as events:
            async for event in events:
                reference.append(event)
                if isinstance(event, m.TaskStatusUpdateEvent) and event.status.message:
                    gate.set()
    # The same through a proxy that drops the connection after the first two events; the
    # gate opens only once the client has resubscribed, so the rest is sent after the cut.
    async with open_cutting_proxy(server, cut_after=2) as proxy:
        gates["cut"] = gate = trio.Event()

        async def open_gate_after_resume() -> None:
            await proxy.stream_opened.wait()
            gate.set()

        nursery.start_soon(open_gate_after_resume)
        async with (
            open_client(proxy.url, bindings=[binding], versions=["1.0"], reconnect=fast) as c,
            c.stream(to("gated", "cut")) as events,
        ):
            seen = [event async for event in events]
    assert proxy.cuts == 1
    assert events.reconnects == 1
    assert [signature(e) for e in seen] == [signature(e) for e in reference]
    chunks = [texts(e.artifact.parts) for e in seen if isinstance(e, m.TaskArtifactUpdateEvent)]
    assert chunks[:2] == ["one ", "two"]


@pytest.mark.parametrize("binding", [JSONRPC, HTTP_JSON])
async def test_tenant_scopes_every_call(server: str, binding: str) -> None:
    async with open_client(server, bindings=[binding], tenant="acme") as acme:
        task = await acme.send("for acme")
        assert isinstance(task, m.Task)
        assert (await acme.get_task(task.id)).id == task.id
    async with open_client(server, bindings=[binding]) as default:
        with pytest.raises(TaskNotFoundError):
            await default.get_task(task.id)


async def test_stream_ends_when_the_task_needs_input(client: Client) -> None:
    async with client.stream(to("ask", "hi")) as events:
        seen = [event async for event in events]
    last = seen[-1]
    assert isinstance(last, m.TaskStatusUpdateEvent | m.Task)
    assert last.status.state is m.TaskState.INPUT_REQUIRED
    assert events.reconnects == 0
    assert client.statistics().open_streams == 0


async def owner_of(headers: Mapping[str, str]) -> str:
    """Accept bearer tokens ``alice`` and ``bob``; each is its own owner."""
    token = headers.get("authorization", "").removeprefix("Bearer ")
    if token not in ("alice", "bob"):
        raise AuthenticationRequiredError("send a bearer token")
    return token


@pytest.mark.parametrize("binding", [JSONRPC, HTTP_JSON])
async def test_bearer_auth_against_an_authenticating_server(
    nursery: trio.Nursery, binding: str
) -> None:
    config = ServerConfig(authenticate=owner_of)
    url: str = await nursery.start(partial(serve, agent, port=0, config=config))
    async with open_client(url, bindings=[binding]) as anonymous:
        with pytest.raises(AuthenticationRequiredError):
            await anonymous.send("let me in")
    async with open_client(url, bindings=[binding], auth=BearerAuth("alice")) as alice:
        task = await alice.send("mine")
        assert isinstance(task, m.Task)
        assert (await alice.get_task(task.id)).id == task.id
    async with open_client(url, bindings=[binding], auth=BearerAuth("bob")) as bob:
        with pytest.raises(TaskNotFoundError):
            await bob.get_task(task.id)


async def test_invalid_params_say_where_and_why_on_every_binding(client: Client) -> None:
    """The server names the field in ErrorInfo metadata (v1.0) or the error data (v0.3)."""
    with pytest.raises(InvalidParamsError) as info:
        await client.get_task("t1", history_length=-1)
    assert info.value.path.endswith("historyLength")
    assert info.value.reason == "historyLength must not be negative"


async def test_clients_share_one_tls_context_built_off_the_event_loop(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """httpx built a TLS context, reading its CA bundle, for every client a :class:`Client`
    made for itself: tens to hundreds of milliseconds with the trio run standing still, each
    time an agent opened a client to call another.  Now one context is built, in a worker
    thread, and shared."""
    monkeypatch.setattr(_trust, "_loaded", {})
    built_in: list[threading.Thread] = []
    create = ssl.create_default_context

    def spied(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        built_in.append(threading.current_thread())
        return create(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", spied)
    for _ in range(3):
        async with open_client(server) as client:
            assert (await client.send("hi")).status.state is m.TaskState.COMPLETED
    assert len(built_in) == 1, "each client built its own TLS context"
    assert built_in[0] is not threading.main_thread(), "built on the event loop's thread"


async def test_one_client_holds_more_streams_than_httpx_pools_by_default(server: str) -> None:
    """httpx's default pool opens at most 100 connections and each open stream holds one: the
    call after the hundredth stream waited, for ever, for one of them to end.  The client's own
    HTTP client has no such cap now."""
    streams = 110
    gate = "many"
    gates[gate] = trio.Event()
    started = 0
    ended: list[m.TaskState] = []

    async def follow(client: Client) -> None:
        nonlocal started
        async with client.stream(to("gated", gate)) as events:
            await anext(events)
            started += 1
            async for event in events:
                if isinstance(event, m.TaskStatusUpdateEvent):
                    last = event.status.state
        ended.append(last)

    async with open_client(server) as client:
        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                for _ in range(streams):
                    nursery.start_soon(follow, client)
                while started < streams:  # noqa: ASYNC110 (counting the streams that began)
                    await trio.sleep(0.01)
                assert client.statistics().open_streams == streams
                assert (await client.send("one more")).status.state is m.TaskState.COMPLETED
                gates[gate].set()
    assert ended == [m.TaskState.COMPLETED] * streams


async def test_a_call_waiting_for_a_pooled_connection_gives_up_after_the_pool_timeout(
    server: str,
) -> None:
    """With an ``http=`` client whose ``limits`` are all held by streams, a call waits at most
    ``Timeouts.pool`` for a free connection and says so (it waited for ever)."""
    gate = "pool"
    gates[gate] = trio.Event()
    limited = httpx.AsyncClient(limits=httpx.Limits(max_connections=1))
    timeouts = Timeouts(pool=0.5)
    async with (
        limited,
        open_client(server, http=limited, timeouts=timeouts) as client,
        client.stream(to("gated", gate)) as events,
    ):
        await anext(events)
        with trio.fail_after(10), pytest.raises(TransportError) as waited:
            await client.send("no room")
        gates[gate].set()
        assert [event async for event in events]
    assert "waiting for a free connection" in str(waited.value)
