"""A randomized client soak: a2a_trio's client through a proxy that breaks connections.

Real peers serve on 127.0.0.1, both on their v1.0 JSON-RPC, HTTP+JSON and v0.3 JSON-RPC
bindings: a2a_trio (hypercorn, memory store) and the official a2a-sdk server (uvicorn).
Between the clients and each peer sits a :class:`FaultProxy` dealing each connection a seeded
fault (clean, closed at once, request or answer cut after some bytes, answer stalled or held
past the client's timeout, tiny writes, head only).  Client tasks with short timeouts (a
stream's silences bounded, or not, as by default) pick random operations, one after another or
several at once on a shared client: blocking sends, streams read to the end, left early or
unread, with waits given up on mid-stream, subscriptions, gets, cancels, lists, card fetches,
calls given up on.

The invariants: every call returns a correct answer (checked again against the peer's state
once the load is over) or raises :class:`TransportError` (the proxy never alters a byte, so no
other error is right), never anything raw; no call outlives its timeouts plus a margin
(``trio.fail_after``); a stream read to the end through cuts and resumes shows each artifact
chunk once, none missing (a2a_trio numbers its events, so its updates come once each too); once
closed, a client leaves no stream and no socket open; nothing is logged as an error.

The seed is printed (pytest shows it with a failure); ``A2A_TRIO_CLIENT_SOAK_SEED`` replays one,
as far as the scheduling allows, and ``A2A_TRIO_CLIENT_SOAK_SECONDS`` sets the load's length
(6 s per peer by default).  Marked ``slow``; CI runs it.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, suppress
from functools import partial
from pathlib import Path

import attrs
import httpx
import pytest
import trio
from bindings.soak_agents import soak_agent
from bindings.test_soak import open_descriptors
from cli.test_wrong_targets import run_cli

from a2a_trio import ServerConfig, serve
from a2a_trio import model as m
from a2a_trio.client import (
    HTTP_JSON,
    JSONRPC,
    Client,
    EventStream,
    Reconnect,
    Timeouts,
    TransportError,
    fetch_card,
    open_client,
)
from a2a_trio.errors import A2AError, TaskNotCancelableError, UnsupportedOperationError

from .fault_proxy import Fault, FaultProxy, Plan, open_fault_proxy, random_plans

pytestmark = pytest.mark.slow

SEED_VARIABLE = "A2A_TRIO_CLIENT_SOAK_SEED"
SECONDS_VARIABLE = "A2A_TRIO_CLIENT_SOAK_SECONDS"
CLIENTS = 8
"""Client tasks per peer."""
TIMEOUT = 1.0
"""Every timeout of the soaked clients (connect, write, read, stream silence, card)."""
TIMEOUTS = Timeouts(connect=TIMEOUT, read=TIMEOUT, write=TIMEOUT, stream_read=TIMEOUT, card=TIMEOUT)
PATIENT_STREAMS = attrs.evolve(TIMEOUTS, stream_read=None)
"""As the default is: no limit on a stream's silences (``read`` still bounds its start)."""
RECONNECT = Reconnect(attempts=2, initial_delay=0.02, max_delay=0.1)
STALLS = (0.2, 3 * TIMEOUT)
"""How long the proxy stalls an answer: shorter than the timeouts, or past them (a stream that
bounds no silence waits it out)."""
HOLDS = (3 * TIMEOUT, 120.0)
"""How long the proxy holds an answer back: past the timeouts, or as good as forever."""
UNARY_BOUND = 4 * TIMEOUT + 6
"""A unary call (or a stream's opening) ends within this: connect, write, the read timeout
on a held answer, and room for a loaded machine."""
STREAM_BOUND = 20.0
"""A stream read to the end ends within this, its resumes included (each bounded as above)."""
TLS = httpx.create_ssl_context()
"""One TLS context for the soak's many HTTP clients: httpx builds one per client otherwise,
reading its CA bundle with the test process's trio run (the a2a_trio server's too) standing
still, 200 ms a client on a loaded machine, until the card fetches through the proxy timed out
more often than not."""
STREAMED_BOUND = 30.0
"""How much longer than its seconds a run goes on while no stream has been read to the end
yet (on a loaded machine, with two connections in three faulty, that can take a while)."""


def texts(parts: tuple[m.Part, ...]) -> str:
    return "".join(p.text for p in parts if isinstance(p, m.TextPart))


def artifact_text(artifacts: tuple[m.Artifact, ...]) -> str:
    return "".join(texts(artifact.parts) for artifact in artifacts)


@attrs.frozen
class Peer:
    """A server as the soak drives it: how to open a client on a binding through the proxy,
    and what its skills answer."""

    name: str
    opener: Callable[[str, httpx.AsyncClient, Timeouts], AbstractAsyncContextManager[Client]]
    """Opens a client on a binding, through the proxy, with an HTTP client and timeouts."""
    direct: Callable[[], AbstractAsyncContextManager[Client]]
    """Opens a client straight to the server (for the checks)."""
    bindings: tuple[str, ...]
    numbered: bool
    """Whether the peer numbers its events (``id:``), so a resume misses nothing."""
    echo: Callable[[str], m.Message]
    """The message of a task that completes with the text as its artifact."""
    trickle: Callable[[str], m.Message]
    """The message of a task that streams the text in several chunks."""
    trickled: Callable[[str], str]
    """The artifact text of a trickle of that text."""
    hold: Callable[[], m.Message]
    """The message of a task that runs until cancelled."""
    card_name: str


@attrs.define
class Expected:
    """A task the clients made and what it must end as."""

    text: str
    canceled: bool = False

    def state(self) -> m.TaskState:
        return m.TaskState.CANCELED if self.canceled else m.TaskState.COMPLETED


def words(rng: random.Random) -> str:
    """A few different words: two equal chunks of a trickle would be equal events."""
    return " ".join(f"w{n}" for n in rng.sample(range(1000), rng.randrange(2, 7)))


class Soak:
    """The clients of one peer and what they learnt."""

    def __init__(self, peer: Peer, proxy: FaultProxy) -> None:
        self.peer = peer
        self.proxy = proxy
        self.tasks: dict[str, Expected] = {}
        self.holding: list[str] = []
        self.outcomes: Counter[str] = Counter()
        """``operation: ok`` or ``operation: TransportError`` (printed with the seed)."""
        self.over = False
        self.streamed = trio.Event()
        """Set when a stream was read to the end: the run lasts at least until then."""

    async def call[T](self, what: str, bound: float, action: Awaitable[T]) -> T | None:
        """``action``'s result, or ``None`` when it raised :class:`TransportError`; fails the
        test when it outlives ``bound`` seconds."""
        started = trio.current_time()
        try:
            with trio.fail_after(bound):
                result = await action
        except trio.TooSlowError:
            raise AssertionError(f"{what} took over {bound} s (since {started:.1f})") from None
        except TransportError:
            self.outcomes[f"{what}: TransportError"] += 1
            return None
        self.outcomes[f"{what}: ok"] += 1
        if what == "stream":
            self.streamed.set()
        return result

    # --- operations -----------------------------------------------------------------------

    async def send(self, client: Client, rng: random.Random) -> None:
        text = words(rng)
        task = await self.call("send", UNARY_BOUND, client.send(self.peer.echo(text)))
        if task is not None:
            assert isinstance(task, m.Task), task
            assert task.status.state is m.TaskState.COMPLETED, task
            assert artifact_text(task.artifacts) == text, task
            self.tasks[task.id] = Expected(text)

    async def stream(self, client: Client, rng: random.Random) -> None:
        """Stream an echo or a trickle, to the end or left after a few events."""
        text = words(rng)
        trickle = rng.random() < 0.5
        message = self.peer.trickle(text) if trickle else self.peer.echo(text)
        expected = self.peer.trickled(text) if trickle else text
        await self.read(client.stream(message), expected, rng.choice([None, None, 0, 1, 2]), rng)

    async def start_and_subscribe(self, client: Client, rng: random.Random) -> None:
        text = words(rng)
        task = await self.call(
            "start", UNARY_BOUND, client.send(self.peer.trickle(text), return_immediately=True)
        )
        if task is not None:
            assert isinstance(task, m.Task), task
            try:
                await self.read(client.subscribe(task.id), self.peer.trickled(text), None, rng)
            except UnsupportedOperationError:  # it ended before the subscription
                self.outcomes["subscribe: task already over"] += 1
                self.tasks[task.id] = Expected(self.peer.trickled(text))

    async def read(
        self, events: EventStream, text: str, limit: int | None, rng: random.Random
    ) -> None:
        """Read ``events`` (all, or ``limit`` of them: 0 leaves at once), perhaps giving up on
        some waits for an event (the stream then resumes); a stream read to the end must say
        ``text`` exactly, each numbered update once."""
        seen: list[m.StreamEvent] = []
        patience = rng.choice([math.inf, math.inf, rng.uniform(0.1, 1.0)])

        async def follow() -> bool:
            async with events:
                while len(seen) != limit:
                    with trio.move_on_after(patience) as wait:
                        try:
                            event = await anext(events)
                        except StopAsyncIteration:
                            break
                    if wait.cancelled_caught:
                        self.outcomes["stream: a wait given up"] += 1
                    else:
                        seen.append(event)
            return True

        what = "stream" if limit is None else "stream left early"
        ended = await self.call(what, STREAM_BOUND, follow())
        if events.task_id:
            self.tasks.setdefault(events.task_id, Expected(text))
        if ended and limit is None:  # it ended because the task did
            assert m.is_terminal(final_state(seen)), (events.reconnects, show(seen))
            check_stream(seen, text, numbered=self.peer.numbered)

    async def hold(self, client: Client, rng: random.Random) -> None:
        task = await self.call(
            "start", UNARY_BOUND, client.send(self.peer.hold(), return_immediately=True)
        )
        if task is not None:
            assert isinstance(task, m.Task), task
            self.tasks[task.id] = Expected("", canceled=True)
            self.holding.append(task.id)

    async def cancel(self, client: Client, rng: random.Random) -> None:
        if not self.holding:
            return
        task_id = self.holding[rng.randrange(len(self.holding))]
        try:
            task = await self.call("cancel", UNARY_BOUND, client.cancel_task(task_id))
        except TaskNotCancelableError:  # an earlier cancel went through, its answer was lost
            self.outcomes["cancel: already canceled"] += 1
            task = await self.call("get", UNARY_BOUND, client.get_task(task_id))
        if task is not None:
            assert (task.id, task.status.state) == (task_id, m.TaskState.CANCELED), task
            if task_id in self.holding:
                self.holding.remove(task_id)

    async def abandon(self, client: Client, rng: random.Random) -> None:
        """Give up on a call after a moment, as a caller with its own deadline does (the
        client's later calls must not suffer; a task it may have made is not checked)."""
        with trio.move_on_after(rng.uniform(0, 0.5)):
            if self.tasks and rng.random() < 0.5:
                task_id = rng.choice(list(self.tasks))
                await self.call("abandoned", UNARY_BOUND, client.get_task(task_id))
            else:
                await self.call("abandoned", UNARY_BOUND, client.send(self.peer.echo("gone")))

    async def get(self, client: Client, rng: random.Random) -> None:
        if self.tasks:
            task_id = rng.choice(list(self.tasks))
            task = await self.call("get", UNARY_BOUND, client.get_task(task_id))
            assert task is None or task.id == task_id, task

    async def list_tasks(self, client: Client, rng: random.Random) -> None:
        try:
            page = await self.call("list", UNARY_BOUND, client.list_tasks(page_size=5))
        except A2AError:  # v0.3 agents need not list tasks
            assert client.interface.protocol_version.startswith("0.3"), client.interface
            return
        assert page is None or len(page.tasks) <= 5, page

    async def card(self, http: httpx.AsyncClient) -> None:
        card = await self.call(
            "card", UNARY_BOUND, fetch_card(http, self.proxy.url, timeouts=TIMEOUTS)
        )
        assert card is None or card.name == self.peer.card_name, card

    # --- clients --------------------------------------------------------------------------

    def operations(self) -> list[tuple[Callable[[Client, random.Random], Awaitable[None]], int]]:
        return [
            (self.send, 4),
            (self.stream, 5),
            (self.start_and_subscribe, 2),
            (self.hold, 1),
            (self.cancel, 2),
            (self.get, 3),
            (self.list_tasks, 1),
            (self.abandon, 1),
        ]

    async def client(self, rng: random.Random) -> None:
        """Open a client on a random binding, use it for a few operations, close it, and
        again until the load is over."""
        while not self.over:
            async with httpx.AsyncClient(verify=TLS) as http:
                if rng.random() < 0.2:
                    await self.card(http)
                await self.session(http, rng)

    async def session(self, http: httpx.AsyncClient, rng: random.Random) -> None:
        """A few operations with one client (none when it cannot open: its card fetch
        failed)."""
        operations, weights = zip(*self.operations(), strict=True)
        async with AsyncExitStack() as stack:
            timeouts = rng.choice([TIMEOUTS, PATIENT_STREAMS])
            opening = self.peer.opener(rng.choice(self.peer.bindings), http, timeouts)
            client = await self.call("open", UNARY_BOUND, stack.enter_async_context(opening))
            if client is None:
                return
            chosen = rng.choices(operations, weights, k=rng.randrange(1, 8))
            if rng.random() < 0.3:  # at once, sharing the client and its connections
                async with trio.open_nursery() as nursery:
                    for operation in chosen:
                        nursery.start_soon(operation, client, random.Random(rng.getrandbits(64)))
            else:
                for operation in chosen:
                    await operation(client, rng)
            assert client.statistics().open_streams == 0

    async def run(self, rng: random.Random, seconds: float) -> None:
        async with trio.open_nursery() as nursery:
            for _ in range(CLIENTS):
                nursery.start_soon(self.client, random.Random(rng.getrandbits(64)))
            await trio.sleep(seconds)
            with trio.move_on_after(STREAMED_BOUND):  # a loaded machine needs longer
                await self.streamed.wait()
            self.over = True

    async def check(self) -> None:
        """Cancel what still holds, then every task the clients made is as they were told."""
        async with self.peer.direct() as client:
            for task_id in self.holding:
                with suppress(TaskNotCancelableError):
                    await client.cancel_task(task_id)
            for task_id, expected in self.tasks.items():
                task = await client.get_task(task_id)
                with trio.fail_after(10):
                    while not m.is_terminal(task.status.state):
                        await trio.sleep(0.05)
                        task = await client.get_task(task_id)
                assert task.status.state is expected.state(), (task_id, expected, task)
                if not expected.canceled:
                    assert artifact_text(task.artifacts) == expected.text, (expected, task)


def final_state(seen: list[m.StreamEvent]) -> m.TaskState:
    event = seen[-1]
    assert isinstance(event, m.Task | m.TaskStatusUpdateEvent), event
    return event.status.state


def check_stream(seen: list[m.StreamEvent], text: str, *, numbered: bool) -> None:
    """The artifact text the events build is ``text`` (a chunk seen twice or missed shows);
    numbered updates come once each (a resume's snapshot may repeat what it holds).

    A peer that does not number its events is resumed by subscribing again, and the official
    SDK's server may then send an update its snapshot already holds (an event published
    between its subscribing and its reading the task is in both; docs/bindings.md): right
    after a snapshot, an update that
    would take the text off ``text`` while the snapshot's is on it is that repeat, skipped."""
    built = ""
    after_snapshot = False
    for event in seen:
        match event:
            case m.Task(artifacts=artifacts):
                built = artifact_text(artifacts)
                after_snapshot = not numbered
            case m.TaskArtifactUpdateEvent(artifact=artifact, append=append):
                grown = built + texts(artifact.parts) if append else texts(artifact.parts)
                if after_snapshot and text.startswith(built) and not text.startswith(grown):
                    continue  # the snapshot held it already
                built, after_snapshot = grown, False
    assert built == text, show(seen)
    if numbered:
        updates = [event for event in seen if not isinstance(event, m.Task)]
        assert all(updates.count(event) == 1 for event in updates), show(seen)


def show(seen: list[m.StreamEvent]) -> list[str]:
    """The events in brief (for a failure's message)."""
    brief = []
    for event in seen:
        match event:
            case m.Task(status=status, artifacts=artifacts):
                said = f"{status.state.name} {artifact_text(artifacts)!r}"
            case m.TaskStatusUpdateEvent(status=status):
                said = status.state.name
            case m.TaskArtifactUpdateEvent(artifact=artifact, append=append):
                said = f"{'+' if append else ''}{texts(artifact.parts)!r}"
            case _:
                said = ""
        brief.append(f"{type(event).__name__} {said}")
    return brief


# --- peers ----------------------------------------------------------------------------------

SDK_BINDINGS = {"jsonrpc": (JSONRPC, "v1.0"), "rest": (HTTP_JSON, "v1.0"), "v03": (JSONRPC, "v0.3")}
"""The SDK agent's bindings: which card offers each."""
A2A_TRIO_BINDINGS = {
    "jsonrpc": (JSONRPC, "1.0"),
    "rest": (HTTP_JSON, "1.0"),
    "v03": (JSONRPC, "0.3"),
}


def to(skill: str, text: str) -> m.Message:
    return m.text_message(text, metadata={"skillId": skill})


def a2a_trio_peer(server: str, proxy: FaultProxy) -> Peer:
    def opener(
        name: str, http: httpx.AsyncClient, timeouts: Timeouts
    ) -> AbstractAsyncContextManager[Client]:
        binding, version = A2A_TRIO_BINDINGS[name]
        return open_client(
            proxy.url,
            bindings=[binding],
            versions=[version],
            timeouts=timeouts,
            reconnect=RECONNECT,
            http=http,
        )

    return Peer(
        "a2a_trio",
        opener,
        partial(open_client, server),
        tuple(A2A_TRIO_BINDINGS),
        numbered=True,
        echo=partial(to, "echo"),
        trickle=partial(to, "trickle"),
        trickled=lambda text: text + " ",
        hold=partial(to, "hold", "hold"),
        card_name=soak_agent.name,
    )


def through(card: m.AgentCard, server: str, proxy: FaultProxy) -> m.AgentCard:
    """``card`` with its interfaces at the proxy instead of the server."""
    interfaces = card.supported_interfaces
    moved = tuple(attrs.evolve(i, url=i.url.replace(server, proxy.url)) for i in interfaces)
    return attrs.evolve(card, supported_interfaces=moved)


async def sdk_peer(server: str, proxy: FaultProxy) -> Peer:
    """The SDK agent's cards (v1.0, and v0.3 for its v0.3 JSON-RPC) name its own address: the
    soak's copies name the proxy's."""
    async with httpx.AsyncClient() as http:
        card = await fetch_card(http, server)
        cards = {"v1.0": through(card, server, proxy)}
        cards["v0.3"] = through(await fetch_card(http, server + "/v03"), server, proxy)

    def opener(
        name: str, http: httpx.AsyncClient, timeouts: Timeouts
    ) -> AbstractAsyncContextManager[Client]:
        binding, version = SDK_BINDINGS[name]
        return open_client(
            cards[version], bindings=[binding], timeouts=timeouts, reconnect=RECONNECT, http=http
        )

    return Peer(
        "a2a-sdk",
        opener,
        partial(open_client, card),
        tuple(SDK_BINDINGS),
        numbered=False,
        echo=m.text_message,
        trickle=lambda text: m.text_message("slow " + text),
        trickled=lambda text: "slow " + text,
        hold=partial(m.text_message, "wait"),
        card_name=card.name,
    )


def client_sockets(proxy_ports: set[int]) -> int:
    """This process's sockets connected to one of ``proxy_ports`` (the clients' side)."""
    kinds = open_descriptors(None, Path("/nonexistent"))
    return sum(
        count
        for kind, count in kinds.items()
        if any(kind.startswith(f"socket to port {port} ") for port in proxy_ports)
    )


@pytest.fixture
async def a2a_trio_server(nursery: trio.Nursery) -> str:
    url: str = await nursery.start(
        partial(serve, soak_agent, port=0, config=ServerConfig(keepalive=0.2))
    )
    return url


async def test_client_soak(
    a2a_trio_server: str, sdk_agent: str, caplog: pytest.LogCaptureFixture
) -> None:
    seed = int(os.environ.get(SEED_VARIABLE) or random.randrange(2**32))
    seconds = float(os.environ.get(SECONDS_VARIABLE) or 6)
    print(f"client soak seed {seed} ({SEED_VARIABLE}={seed} replays it), {seconds} s per peer")
    caplog.set_level(logging.WARNING)
    rng = random.Random(seed)
    async with (
        open_fault_proxy(a2a_trio_server, random_plans(rng, stalls=STALLS, holds=HOLDS)) as ours,
        open_fault_proxy(sdk_agent, random_plans(rng, stalls=STALLS, holds=HOLDS)) as theirs,
    ):
        peers = [a2a_trio_peer(a2a_trio_server, ours), await sdk_peer(sdk_agent, theirs)]
        soaks = [Soak(peer, proxy) for peer, proxy in zip(peers, (ours, theirs), strict=True)]
        async with trio.open_nursery() as nursery:
            for soak in soaks:
                nursery.start_soon(soak.run, random.Random(rng.getrandbits(64)), seconds)
        for soak in soaks:
            print(soak.peer.name, dict(soak.outcomes), dict(soak.proxy.dealt))
            assert soak.outcomes["stream: ok"] > 0, "no stream got through: the soak proved little"
            await soak.check()
        assert client_sockets({int(p.url.rsplit(":", 1)[1]) for p in (ours, theirs)}) == 0
    problems = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not problems, [r.getMessage() for r in problems]


# --- the command line ---------------------------------------------------------------------

type PlanFor = Callable[[Counter[str]], Plan]
"""A fault placed after the card's exchange, given the bytes that exchange moved."""


def refuse(card: Counter[str]) -> Plan:
    return Plan(Fault.REFUSE)


def cut_next_answer(card: Counter[str]) -> Plan:
    return Plan(Fault.CUT_ANSWER, at=card["answer"] + 60)


def cut_next_request(card: Counter[str]) -> Plan:
    return Plan(Fault.CUT_REQUEST, at=card["request"] + 30)


def next_head_only(card: Counter[str]) -> Plan:
    return Plan(Fault.HEAD_ONLY, at=card["answer"] + 1)


def stall_next_answer(card: Counter[str]) -> Plan:
    return Plan(Fault.STALL, at=card["answer"] + 60, seconds=3.0)


def split_bytes(card: Counter[str]) -> Plan:
    return Plan(Fault.SPLIT, chunk=1)


# (the command and its arguments after the URL, the fault, the exit code, what stderr says:
# one of several texts where the OS decides)
CLI_CASES: list[tuple[list[str], PlanFor, int, str | tuple[str, ...]]] = [
    (["card"], refuse, 2, "fetching the agent card at "),
    (["send", "hi"], cut_next_answer, 2, "/: "),
    # A request cut while the client still writes it: the peer's close reads as a reset or,
    # when the whole request was out first, as a close before any answer (a race of the OS).
    (
        ["cancel", "t1"],
        cut_next_request,
        2,
        ("/: Server disconnected without sending a response", "Connection reset by peer"),
    ),
    (["get", "t1"], next_head_only, 2, "/: peer closed connection without sending complete"),
    (["send", "hi", "--timeout", "1"], stall_next_answer, 2, "timed out waiting for the answer"),
    (["stream", "hi", "--timeout", "1"], stall_next_answer, 2, "pass --timeout SECONDS"),
    (["subscribe", "t1"], split_bytes, 2, "TaskNotFoundError (-32001)"),
    (["send", "hi", "--json"], split_bytes, 0, ""),
]


async def card_exchange(server: str) -> Counter[str]:
    """The bytes of the command line's card request and its answer (a command's first
    exchange), as ``a2a-trio card`` moves them through a clean proxy."""
    async with open_fault_proxy(server, itertools.repeat(Plan(Fault.CLEAN))) as proxy:
        result = await run_cli(["card"], proxy.url)
        assert result.returncode == 0, result.stderr
        return proxy.forwarded.copy()


async def test_cli_under_faults(a2a_trio_server: str) -> None:
    """Each command through a fault after (or at) the card's exchange: it exits 2 with one
    line saying what failed, never a traceback; split writes change nothing."""
    card = await card_exchange(a2a_trio_server)
    results: dict[int, tuple[int, str, str]] = {}

    async def run(index: int, args: list[str], plan: Plan) -> None:
        async with open_fault_proxy(a2a_trio_server, itertools.repeat(plan)) as proxy:
            result = await run_cli(args, proxy.url)
        results[index] = (result.returncode, result.stdout.decode(), result.stderr.decode())

    async with trio.open_nursery() as nursery:
        for index, (args, plan_for, _, _) in enumerate(CLI_CASES):
            nursery.start_soon(run, index, args, plan_for(card))
    wrong = []
    for index, (args, _, code, said) in enumerate(CLI_CASES):
        returncode, stdout, stderr = results[index]
        if code == 0:
            task = json.loads(stdout)["task"]
            ok = stderr == "" and task["status"]["state"] == "TASK_STATE_COMPLETED"
        else:
            one_line = stderr.startswith("error: ") and stderr.count("\n") == 1
            texts = (said,) if isinstance(said, str) else said
            ok = (stdout, one_line, any(text in stderr for text in texts)) == ("", True, True)
        if returncode != code or not ok:
            wrong.append((args, returncode, stdout, stderr))
    assert not wrong, wrong
