"""A randomized soak: many concurrent clients on several bindings, then invariants.

Sixty-four client tasks in one nursery pick random operations (blocking sends, streams read to
the end or dropped after a few events, subscriptions, cancels, answers to a question, reads,
lists, requests given up on, and a few bad requests) on the v1.0 and v0.3 JSON-RPC and HTTP+JSON
bindings (the legacy dialect numbers tasks its own way) of one real server (hypercorn on
127.0.0.1 serving ``create_app``), on each store.  When the load ends, what is left is answered
or cancelled, and the checks run: every task is terminal, as its skill and the cancels say; its
stored log is numbered 1..n and ends with its stored status; every stream read to the end saw
the stored events in order; no job, subscriber, connection or descriptor is left; nothing was
logged as an error.

The seed is printed (pytest shows it with a failure); ``A2A_TRIO_SOAK_SEED`` replays one, as
far as the scheduling allows, and ``A2A_TRIO_SOAK_SECONDS`` changes the load's length (15 s by
default: about 20 s per store, a bit over a minute for the three on two cores).  Marked
``slow`` but not deselected anywhere: CI (``.ci/run``, ``scripts/test.sh``) runs it on every
push, PostgreSQL included, because it fits the budget.
"""

from __future__ import annotations

import logging
import os
import random
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import attrs
import httpx
import hypercorn.trio
import pytest
import trio
from hypercorn.config import Config as HypercornConfig
from store.conftest import ALL_BACKENDS, make_backend

from a2a_trio import model as m
from a2a_trio.runtime import TaskRuntime
from a2a_trio.server import ServerConfig, create_app, hypercorn_config
from a2a_trio.store import ANONYMOUS, MAX_PAGE_SIZE, TaskQuery, TaskStore
from a2a_trio.wire._legacy import parts_text

from .conftest import CONFIG
from .drivers import (
    V1_HEADERS,
    CallFailed,
    Driver,
    Numbered,
    V03JsonRpc,
    V03Rest,
    V1JsonRpc,
    V1Rest,
)
from .soak_agents import soak_agent

pytestmark = pytest.mark.slow

SEED_VARIABLE = "A2A_TRIO_SOAK_SEED"
SECONDS_VARIABLE = "A2A_TRIO_SOAK_SECONDS"
CLIENTS = 64
DRIVERS: list[type[Driver]] = [V1JsonRpc, V1Rest, V03JsonRpc, V03Rest]


@attrs.define
class Tracked[S]:
    """What the clients know of one task: its skill, the text it completes with, the states
    they saw it end in, the cancels' answers and the streams they read to the end (each an
    ``S``, as the clients read it)."""

    skill: str
    text: str = ""
    ends_seen: set[str] = attrs.field(factory=set)
    cancels: list[str] = attrs.field(factory=list)
    streams: list[S] = attrs.field(factory=list)

    def expected_state(self) -> str:
        return "CANCELED" if "CANCELED" in self.cancels else "COMPLETED"


ABANDONED = "abandoned"
"""The text of the sends their clients give up on."""
TERMINAL = {"COMPLETED", "CANCELED", "FAILED", "REJECTED"}


def words(rng: random.Random) -> str:
    return " ".join(f"w{rng.randrange(1000)}" for _ in range(rng.randrange(3, 9)))


def last_state(events: list[Numbered]) -> str:
    event = events[-1][1]
    assert isinstance(event, m.Task | m.TaskStatusUpdateEvent), event
    return event.status.state.name


class Book[S, V]:
    """The clients' shared knowledge: every task they made, and the pools they draw from
    (``S``: a stream read to the end, as the clients read it; ``V``: what they call through,
    a driver or a client)."""

    def __init__(self) -> None:
        self.tasks: dict[str, Tracked[S]] = {}
        self.holding: list[str] = []
        self.awaiting: list[str] = []
        self.trickling: list[str] = []
        self.over = False
        self.clients = 0
        self.done: Counter[str] = Counter()
        """Operations done, by name (printed: a failure shows what the load was)."""

    def track(self, task_id: str, skill: str, text: str = "") -> Tracked[S]:
        return self.tasks.setdefault(task_id, Tracked(skill, text))

    def saw_end(self, task_id: str, state: str) -> None:
        if state in TERMINAL:
            self.tasks[task_id].ends_seen.add(state)
            if task_id in self.trickling:
                self.trickling.remove(task_id)

    async def track_abandoned(self, store: TaskStore) -> None:
        """Track the tasks in ``store`` no client knows of: each must be a send given up on
        (``ABANDONED``), so an echo of that text."""
        for task_id in await all_task_ids(store) - set(self.tasks):
            stored = await store.load_task(ANONYMOUS, task_id)
            assert stored is not None and stored.task.history, task_id
            text = parts_text(stored.task.history[0].parts)
            assert text == ABANDONED, f"task {task_id} ({text!r}) was made by no client"
            self.track(task_id, "echo", ABANDONED)

    def operations(self) -> list[tuple[Callable[[V, random.Random], Awaitable[None]], int]]:
        """The clients' operations, each with its weight."""
        raise NotImplementedError

    async def operate(self, vias: Sequence[V], rng: random.Random) -> None:
        """Random operations, drawn by weight, each through one of ``vias``, until the load is
        over; each counted in ``done``."""
        operations, weights = zip(*self.operations(), strict=True)
        while not self.over:
            operation = rng.choices(operations, weights)[0]
            await operation(rng.choice(vias), rng)
            self.done[operation.__name__] += 1

    async def cancel_one(self, via: V, task_id: str) -> None:
        raise NotImplementedError

    async def answer_one(self, via: V, task_id: str) -> None:
        raise NotImplementedError

    async def settle_until_done(self, via: V) -> None:
        """Once the load is over: settle what the clients leave until the last one is done
        (the ones following a holder's stream wait for its cancel)."""
        while self.clients:
            await self.settle(via)
            await trio.sleep(0.05)
        await self.settle(via)

    async def settle(self, via: V) -> None:
        """Cancel the holders and answer the questions left in the pools."""
        while self.holding or self.awaiting:
            if self.holding:
                await self.cancel_one(via, self.holding.pop())
            else:
                await self.answer_one(via, self.awaiting.pop())


class Soak(Book[list[Numbered], Driver]):
    """The bindings' clients: operations through the drivers, on the shared knowledge."""

    def stream_read(self, events: list[Numbered]) -> None:
        first = events[0][1]
        assert isinstance(first, m.Task), first
        tracked = self.tasks[first.id]
        tracked.streams.append(events)
        self.saw_end(first.id, last_state(events))

    # --- operations -----------------------------------------------------------------------

    async def send_echo(self, driver: Driver, rng: random.Random) -> None:
        text = words(rng)
        task_id, outcome = await driver.send("echo", text)
        self.track(task_id, "echo", text)
        assert (outcome.state, outcome.text) == ("COMPLETED", text)
        self.saw_end(task_id, outcome.state)

    async def stream(self, driver: Driver, rng: random.Random) -> None:
        """Stream an echo or a trickle, to the end or dropped after a few events."""
        skill, text = rng.choice(["echo", "trickle"]), words(rng)
        limit = rng.choice([None, 1, 2, 3])
        events = await driver.stream_numbered(skill, text, limit=limit)
        first = events[0][1]
        assert isinstance(first, m.Task), first
        self.track(first.id, skill, text + " " if skill == "trickle" else text)
        if limit is None:
            self.stream_read(events)
        elif skill == "trickle":
            self.trickling.append(first.id)

    async def start_trickle(self, driver: Driver, rng: random.Random) -> None:
        text = words(rng)
        task_id = await driver.start("trickle", text)
        self.track(task_id, "trickle", text + " ")
        self.trickling.append(task_id)

    async def start_hold(self, driver: Driver, rng: random.Random) -> None:
        task_id = await driver.start("hold", "hold")
        self.track(task_id, "hold")
        self.holding.append(task_id)

    async def ask(self, driver: Driver, rng: random.Random) -> None:
        if rng.random() < 0.5:
            task_id, outcome = await driver.send("ask", "?")
            state = outcome.state
        else:
            events = await driver.stream_numbered("ask", "?")
            first = events[0][1]
            assert isinstance(first, m.Task), first
            task_id, state = first.id, last_state(events)
            self.track(task_id, "ask").streams.append(events)
        self.track(task_id, "ask")
        assert state == "INPUT_REQUIRED"
        self.awaiting.append(task_id)

    async def answer(self, driver: Driver, rng: random.Random) -> None:
        if self.awaiting:
            await self.answer_one(driver, self.awaiting.pop(rng.randrange(len(self.awaiting))))

    async def answer_one(self, driver: Driver, task_id: str) -> None:
        name = f"n{uuid.uuid4().hex[:6]}"
        self.tasks[task_id].text = "hello " + name
        _, outcome = await driver.send("ask", name, task_id)
        assert (outcome.state, outcome.text) == ("COMPLETED", "hello " + name)
        self.saw_end(task_id, outcome.state)

    async def subscribe(self, driver: Driver, rng: random.Random) -> None:
        """Subscribe to a holder or a trickle, to the end or dropped after a few events."""
        running = self.holding + self.trickling
        if not running:
            return
        task_id = rng.choice(running)
        limit = rng.choice([None, 1, 2])
        try:
            events = await driver.subscribe_numbered(task_id, limit=limit)
        except CallFailed as refused:  # it ended meanwhile: a terminal task has no updates
            assert refused.kind == "UnsupportedOperationError", refused
            state = (await driver.get(task_id)).state
            assert state in TERMINAL, state
            self.saw_end(task_id, state)
            return
        if limit is None:
            self.stream_read(events)

    async def cancel(self, driver: Driver, rng: random.Random) -> None:
        """Cancel a holder (always cancelable) or a trickle (cancelable until it ends)."""
        if self.holding and (rng.random() < 0.7 or not self.trickling):
            task_id = self.holding.pop(rng.randrange(len(self.holding)))
            await self.cancel_one(driver, task_id)
        elif self.trickling:
            task_id = rng.choice(self.trickling)
            try:
                await self.cancel_one(driver, task_id)
            except CallFailed as refused:
                assert refused.kind == "TaskNotCancelableError", refused
                self.tasks[task_id].cancels.append("not cancelable")

    async def cancel_one(self, driver: Driver, task_id: str) -> None:
        outcome = await driver.cancel(task_id)
        assert outcome.state == "CANCELED", outcome
        self.tasks[task_id].cancels.append(outcome.state)
        self.saw_end(task_id, outcome.state)

    async def get(self, driver: Driver, rng: random.Random) -> None:
        if self.tasks:
            task_id = rng.choice(list(self.tasks))
            self.saw_end(task_id, (await driver.get(task_id)).state)

    async def list_tasks(self, driver: Driver, rng: random.Random) -> None:
        assert len(await driver.list()) <= 50  # one page, newest first

    async def bad(self, driver: Driver, rng: random.Random) -> None:
        """A request that must be refused in the spec's shapes, changing nothing."""
        choice = rng.randrange(3)
        json_headers = {**V1_HEADERS, "content-type": "application/json"}
        if choice == 0:
            try:
                await driver.get(str(uuid.uuid4()))
            except CallFailed as refused:
                assert refused.kind == "TaskNotFoundError", refused
            else:
                raise AssertionError("an unknown task id was found")
        elif choice == 1:
            torn = b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {'
            response = await driver.http.post("/", content=torn, headers=json_headers)
            body = response.json()
            assert (body["id"], body["error"]["code"]) == (None, -32700), body
        else:
            response = await driver.http.post(
                "/message:send", content=b"{not json", headers=json_headers
            )
            assert response.status_code == 400, response.text
            assert response.json()["error"]["status"] == "INVALID_ARGUMENT"

    async def abandon(self, driver: Driver, rng: random.Random) -> None:
        """Give up on a request after a moment, as a client with a short timeout does (a task
        it may have made is found in the store at the end by its text)."""
        with trio.move_on_after(rng.uniform(0, 0.02)):
            if rng.random() < 0.5:
                await driver.send("echo", ABANDONED)
            elif self.tasks:
                await driver.get(rng.choice(list(self.tasks)))
            else:
                await driver.list()

    # --- clients --------------------------------------------------------------------------

    def operations(self) -> list[tuple[Callable[[Driver, random.Random], Awaitable[None]], int]]:
        return [
            (self.send_echo, 4),
            (self.stream, 6),
            (self.start_trickle, 2),
            (self.start_hold, 2),
            (self.ask, 2),
            (self.answer, 3),
            (self.subscribe, 3),
            (self.cancel, 2),
            (self.get, 3),
            (self.list_tasks, 1),
            (self.bad, 1),
            (self.abandon, 1),
        ]

    async def client(self, url: str, rng: random.Random) -> None:
        self.clients += 1
        try:
            async with httpx.AsyncClient(base_url=url, timeout=60, limits=CLIENT_LIMITS) as http:
                await self.work(http, rng)
        finally:
            self.clients -= 1

    async def work(self, http: httpx.AsyncClient, rng: random.Random) -> None:
        """Random operations through ``http`` on every binding, until the load is over."""
        await self.operate([cls(http) for cls in DRIVERS], rng)

    async def run(self, url: str, rng: random.Random, seconds: float) -> None:
        """``CLIENTS`` clients for ``seconds``, then settle what they leave until the last
        one is done (the ones following a holder's stream wait for its cancel)."""
        async with trio.open_nursery() as clients:
            for _ in range(CLIENTS):
                clients.start_soon(self.client, url, random.Random(rng.getrandbits(64)))
            await trio.sleep(seconds)
            self.over = True
            async with httpx.AsyncClient(base_url=url, timeout=60, limits=CLIENT_LIMITS) as http:
                await self.settle_until_done(V1JsonRpc(http))
        print(f"{len(self.tasks)} tasks; operations: {dict(self.done)}")


TCP_STATES = {
    "01": "ESTABLISHED",
    "02": "SYN_SENT",
    "03": "SYN_RECV",
    "04": "FIN_WAIT1",
    "05": "FIN_WAIT2",
    "06": "TIME_WAIT",
    "07": "CLOSE",
    "08": "CLOSE_WAIT",
    "09": "LAST_ACK",
    "0A": "LISTEN",
    "0B": "CLOSING",
}
"""The kernel's TCP states as ``/proc/net/tcp`` numbers them."""


def open_descriptors(store_port: int | None, store_dir: Path) -> Counter[str]:
    """This process's open descriptors by kind (Linux's ``/proc``), leaving out the store's own
    (its connection pool and reader connections grow under load and are kept for reuse)."""
    peers: dict[str, tuple[int, str]] = {}
    for table in (Path("/proc/net/tcp"), Path("/proc/net/tcp6")):
        for line in table.read_text().splitlines()[1:] if table.exists() else ():
            fields = line.split()
            peers[fields[9]] = (int(fields[2].rsplit(":", 1)[1], 16), TCP_STATES[fields[3]])
    kinds: Counter[str] = Counter()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except FileNotFoundError:  # the listing's own descriptor, closed by now
            continue
        if target.startswith("socket:["):
            port, state = peers.get(target[len("socket:[") : -1], (None, "not TCP"))
            if port is not None and port == store_port:
                continue
            target = f"socket to port {port} ({state})"
        elif target.startswith(str(store_dir)):
            continue
        kinds[target.split(":")[0] if ":[" in target else target] += 1
    return kinds


async def wait_for_quiet(
    runtime: TaskRuntime, descriptors: Callable[[], Counter[str]], baseline: Counter[str]
) -> None:
    """Wait (bounded) until no stream is left and the descriptors are back to ``baseline``."""
    with trio.move_on_after(10):
        # /proc has no event to wait on
        while runtime.statistics().stream_subscribers or descriptors() != baseline:  # noqa: ASYNC110
            await trio.sleep(0.05)


CLIENT_LIMITS = httpx.Limits(keepalive_expiry=0.5)
"""The soak clients' keep-alive ends before the server's 1 s timer: a request sent on a
connection the server's timer is closing meanwhile meets a reset (the race any HTTP client has
with a server's idle timer; seed 1847200957 hit it), which the soak would count as a fault."""


def soak_hypercorn_config(keep_alive: float = 1) -> HypercornConfig:
    """``serve``'s hypercorn settings with a short keep-alive timer: hypercorn's trio worker
    holds a keep-alive connection the client closed while idle until that timer ends (30 s in
    ``hypercorn_config``), and the descriptor check waits for the server to let go."""
    config = hypercorn_config("127.0.0.1", 0)
    config.keep_alive_timeout = keep_alive
    return config


@asynccontextmanager
async def serving_soak(
    store: str, tmp_path: Path, config: ServerConfig, *, keep_alive: float = 1
) -> AsyncIterator[tuple[str, TaskRuntime]]:
    """A real server (hypercorn on 127.0.0.1 serving ``create_app``) of the soak agent on
    ``store``, closing idle connections after ``keep_alive`` seconds: its URL and runtime
    inside; once the body is done, no job, subscriber, connection or descriptor may be left."""
    async with make_backend(store, tmp_path) as backend, trio.open_nursery() as nursery:
        app: Any = create_app(soak_agent, store=backend.url, config=config)  # ASGI types
        (url,) = await nursery.start(
            partial(hypercorn.trio.serve, app, soak_hypercorn_config(keep_alive))
        )
        runtime = app.server.runtime
        pg_port = (urlsplit(backend.url).port or 5432) if store == "postgres" else None
        descriptors = partial(open_descriptors, pg_port, tmp_path)
        baseline = descriptors()
        yield url, runtime
        assert runtime.statistics().running_jobs == 0
        await wait_for_quiet(runtime, descriptors, baseline)
        assert runtime.statistics().stream_subscribers == 0
        assert descriptors() == baseline
        nursery.cancel_scope.cancel()


def assert_no_errors_logged(caplog: pytest.LogCaptureFixture) -> None:
    problems = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not problems, [r.getMessage() for r in problems]


@pytest.mark.parametrize("store", ALL_BACKENDS)
async def test_soak(store: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    seed = int(os.environ.get(SEED_VARIABLE) or random.randrange(2**32))
    seconds = float(os.environ.get(SECONDS_VARIABLE) or 15)
    print(f"soak seed {seed} ({SEED_VARIABLE}={seed} replays it), {seconds} s of load")
    caplog.set_level(logging.WARNING)
    soak = Soak()
    with trio.fail_after(seconds + 60):
        async with serving_soak(store, tmp_path, CONFIG) as (url, runtime):
            await soak.run(url, random.Random(seed), seconds)
            async with httpx.AsyncClient(base_url=url, timeout=60, limits=CLIENT_LIMITS) as http:
                await check_tasks(soak, V1JsonRpc(http), runtime.store)
    assert_no_errors_logged(caplog)


async def check_tasks(soak: Soak, driver: Driver, store: TaskStore) -> None:
    """Every task ended as its skill and its cancels say, in the store and to every client."""
    assert len(soak.tasks) > CLIENTS, "the load made too few tasks to prove anything"
    await soak.track_abandoned(store)
    for task_id, tracked in soak.tasks.items():
        outcome = await driver.get(task_id)
        expected = tracked.expected_state()
        assert outcome.state == expected, (task_id, tracked)
        if expected == "COMPLETED":
            assert outcome.text == tracked.text, (task_id, tracked)
        assert tracked.ends_seen <= {expected}, (task_id, tracked)
        log = await check_log(store, task_id)
        for events in tracked.streams:
            check_stream(events, log)
            state = last_state(events)
            assert state == ("INPUT_REQUIRED" if tracked.skill == "ask" else expected), state


async def all_task_ids(store: TaskStore) -> set[str]:
    found: set[str] = set()
    query = TaskQuery(page_size=MAX_PAGE_SIZE)
    while True:
        page = await store.list_tasks(ANONYMOUS, query)
        found |= {task.id for task in page.tasks}
        if not page.next_page_token:
            return found
        query = attrs.evolve(query, page_token=page.next_page_token)


async def check_log(store: TaskStore, task_id: str) -> dict[int, m.StreamEvent]:
    """The task's stored log, numbered 1..n and ending with the task's stored status."""
    stored = await store.load_task(ANONYMOUS, task_id)
    assert stored is not None
    log = await store.load_events(ANONYMOUS, task_id)
    assert [seq for seq, _ in log] == list(range(1, len(log) + 1)), (task_id, log)
    last = log[-1][1]
    assert isinstance(last, m.TaskStatusUpdateEvent), last
    assert last.status == stored.task.status
    return dict(log)


def check_stream(events: list[Numbered], log: dict[int, m.StreamEvent]) -> None:
    """A stream read to the end: numbered on without a gap, each event as stored.  A
    subscription starts with the task as it is, numbered as the last event it includes."""
    seqs = [seq for seq, _ in events]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
    for seq, event in events:
        if isinstance(event, m.Task) and seq > 1:
            assert event.status == status_at(log, seq), (seq, event)
        else:
            assert event == log[seq], (seq, event, log[seq])


def status_at(log: dict[int, m.StreamEvent], seq: int) -> m.TaskStatus:
    """The task's status once the log's events up to ``seq`` happened."""
    event = next(
        log[at] for at in range(seq, 0, -1) if not isinstance(log[at], m.TaskArtifactUpdateEvent)
    )
    assert isinstance(event, m.Task | m.TaskStatusUpdateEvent), event
    return event.status
