"""The soak's companion for crashes and restarts: "tasks survive restarts", under load.

A real ``a2a-trio serve`` process (``bindings.soak_agents:crash_agent``, on a SQLite file or a
PostgreSQL schema) takes the soak's random load from concurrent clients on four bindings, plus
a resumable skill.  Mid-load it is killed with SIGKILL, once or twice, and started again on the
same store (on a new port: the clients find it again); in the graceful variant it gets SIGTERM
instead, and drains.  Once the load ends the questions left are answered and the holders
cancelled, then the checks run (docs/architecture.md, "Restarts" and "Shutdown is structured";
docs/stores.md, "Restarts and crashes"):

- every task is terminal: resumable ones completed (run again after a crash); others completed,
  cancelled, or FAILED with the documented message (restarted, or shut down after the grace);
  every end a client saw is the stored one; an answered question completed as answered;
- every stored log is numbered 1..n and ends with the task's stored status, and every stream
  read to the end matches it;
- a client resuming a stream dropped before a restart with ``Last-Event-ID`` (during the load,
  its task perhaps running again, and at the end) gets the events after that id, with no gap
  or repeat, as stored;
- the SQLite file passes ``PRAGMA integrity_check``; no server logged an error or a traceback,
  and its warnings are the documented ones;
- graceful: new tasks are refused ("shutting down") during the drain, and streams following a
  task that outlives the grace end with its FAILED event; a cancel sent as the grace ends is
  told CANCELED (it came first) or refused as too late (the task ended FAILED first), and the
  store and the task's stream say the same.

The seed is printed; ``A2A_TRIO_CRASH_SOAK_SEED`` replays one (as far as scheduling allows).
Each variant takes 10-25 s on two cores (the graceful one waits out the 10 s grace of
``a2a-trio serve``); marked ``slow`` like the soak, and run by CI.
"""

from __future__ import annotations

import os
import random
import re
import signal
import sqlite3
from collections import Counter
from collections.abc import Awaitable, Callable
from contextlib import closing
from pathlib import Path

import httpx
import pytest
import trio
import trio.lowlevel
from serve_process import Server, run_server
from store.conftest import SQL_BACKENDS, make_backend

from a2a_trio import model as m
from a2a_trio.store import ANONYMOUS, TaskStore, open_store
from a2a_trio.wire._legacy import parts_text

from .drivers import CallFailed, Driver, Numbered, V1JsonRpc, task_outcome
from .test_soak import (
    ABANDONED,
    DRIVERS,
    TERMINAL,
    Soak,
    Tracked,
    all_task_ids,
    check_log,
    check_stream,
    last_state,
    words,
)

pytestmark = pytest.mark.slow

SEED_VARIABLE = "A2A_TRIO_CRASH_SOAK_SEED"
CLIENTS = 24
AGENT = "bindings.soak_agents:crash_agent"
RESTARTED = "The server restarted before this task finished; please send it again."
"""What recovery records for a task a killed server left running (docs/stores.md)."""
SHUT_DOWN = "The server shut down before this task finished; please send it again."
"""What a drain records for a job that outlived the grace (docs/architecture.md)."""
CANCEL_SENT = "sent"
"""A cancel's note in ``Tracked.cancels`` while it has no answer (kept if it never gets one)."""
TOO_LATE = "too late"
"""A cancel refused during a drain: the task ended first (a holder: FAILED, the grace over)."""
GRACE = 10.0
"""``a2a-trio serve``'s shutdown grace."""
REFUSED = "The server is shutting down; try again shortly"
DOCUMENTED_WARNINGS = re.compile(
    r"WARNING a2a_trio\.serve: SIGTERM received: stopping; new tasks are refused and running"
    r" ones get up to 10 s to finish \(send SIGTERM again to stop at once\)$"
)


class CrashSoak(Soak):
    """The soak's clients, who find the server again after it went away, and resumable work."""

    def __init__(self, store: TaskStore) -> None:
        super().__init__()
        self.store = store
        self.url = ""
        self.up = trio.Event()
        self.draining = False
        self.cut = 0
        """Operations cut short by a kill or the end of a drain (each made at most one task
        its client does not know of)."""
        self.refusals = 0
        self.epoch = 0
        self.resume_points: list[tuple[int, str, int]] = []
        """(epoch, task id, the last event id seen) of streams dropped early."""
        self.dropped = trio.Event()
        """Set once a stream of this epoch's server was dropped early (one to resume)."""
        self.enough = trio.Event()
        """Set once the clients made more tasks than there are clients."""

    def track(self, task_id: str, skill: str, text: str = "") -> Tracked[list[Numbered]]:
        tracked = super().track(task_id, skill, text)
        if len(self.tasks) > CLIENTS:
            self.enough.set()
        return tracked

    def operations(self) -> list[tuple[Callable[[Driver, random.Random], Awaitable[None]], int]]:
        return [*super().operations(), (self.send_rerun, 3), (self.peek, 2), (self.resume, 1)]

    async def send_rerun(self, driver: Driver, rng: random.Random) -> None:
        """Send the resumable skill, waiting for it or not."""
        text = words(rng)
        if rng.random() < 0.5:
            self.track(await driver.start("rerun", text), "rerun", text)
            return
        task_id, outcome = await driver.send("rerun", text)
        self.track(task_id, "rerun", text)
        assert (outcome.state, outcome.text) == ("COMPLETED", text)
        self.saw_end(task_id, outcome.state)

    async def peek(self, driver: Driver, rng: random.Random) -> None:
        """Stream a resumable or a trickle and drop it after an event or two, to resume it
        with ``Last-Event-ID`` after the restarts."""
        skill, text = rng.choice(["rerun", "trickle"]), words(rng)
        events = await driver.stream_numbered(skill, text, limit=rng.choice([1, 2]))
        first = events[0][1]
        assert isinstance(first, m.Task), first
        self.track(first.id, skill, text + " " if skill == "trickle" else text)
        self.resume_points.append((self.epoch, first.id, events[-1][0]))
        self.dropped.set()

    async def resume(self, driver: Driver, rng: random.Random) -> None:
        """Resume a stream dropped before a restart, with ``Last-Event-ID``, while the load
        goes on (its task may be running again): it goes on right after that id."""
        earlier = [(task, seq) for epoch, task, seq in self.resume_points if epoch < self.epoch]
        if not earlier:
            return
        task_id, seq = rng.choice(earlier)
        events = await driver.subscribe_numbered(task_id, last_event_id=seq)
        assert [at for at, _ in events] == list(range(seq + 1, seq + 1 + len(events))), events
        self.tasks[task_id].streams.append(events)
        self.saw_end(task_id, last_state(events))

    async def cancel_one(self, driver: Driver, task_id: str) -> None:
        """Note what the cancel was told: CANCELED, or ``TOO_LATE`` when a drain refuses it
        (the task ended first: a holder once the grace is over), or nothing when a kill or the
        server's exit cut it short (it may have been recorded all the same: ``CANCEL_SENT``
        stays).  Any other refusal propagates."""
        cancels = self.tasks[task_id].cancels
        cancels.append(CANCEL_SENT)
        try:
            await super().cancel_one(driver, task_id)  # notes CANCELED
        except CallFailed as refused:
            cancels.remove(CANCEL_SENT)
            if not (self.draining and refused.kind == "TaskNotCancelableError"):
                raise
            cancels.append(TOO_LATE)
        else:
            cancels.remove(CANCEL_SENT)

    async def client(self, url: str, rng: random.Random) -> None:
        """Work on whichever server is up (``self.url``, not ``url``); a kill or a drain's end
        cuts the work short and the client waits for the next server.  During a drain a new
        task is refused."""
        self.clients += 1
        try:
            while not self.over:
                await self.up.wait()
                async with httpx.AsyncClient(base_url=self.url, timeout=30) as http:
                    try:
                        await self.work(http, rng)
                    except httpx.TransportError:
                        self.cut += 1
                    except CallFailed as refused:
                        if not (self.draining and REFUSED in str(refused.body)):
                            raise
                        self.refusals += 1
                await trio.sleep(0.05)  # the server may be on its way down
        finally:
            self.clients -= 1

    def going_down(self) -> None:
        """Clients wait for the next server from now on."""
        self.up = trio.Event()

    def came_up(self, url: str) -> None:
        """A restarted server: its holders and trickles ended (recovered, or at the drain)."""
        self.url, self.draining = url, False
        self.holding.clear()
        self.trickling.clear()
        self.epoch += 1
        self.dropped = trio.Event()
        self.up.set()

    async def adopt_untracked(self) -> int:
        """Track the stored tasks no client heard of (their answer was cut off, or their
        client gave up), by the skill and text of their first message; how many (no more
        than the operations cut short, besides the abandoned sends)."""
        untracked = await all_task_ids(self.store) - set(self.tasks)
        for task_id in untracked:
            stored = await self.store.load_task(ANONYMOUS, task_id)
            assert stored is not None and stored.task.history, task_id
            first = stored.task.history[0]
            skill = (first.metadata or {}).get("skillId", "echo")
            text = {"echo": parts_text(first.parts), "rerun": parts_text(first.parts)}
            text["trickle"] = parts_text(first.parts) + " "
            self.track(task_id, skill, text.get(skill, ""))
        lost = [task for task in untracked if self.tasks[task].text != ABANDONED]
        assert len(lost) <= self.cut, (lost, self.cut)
        return len(untracked)

    async def settle_all(self, driver: Driver) -> int:
        """Once the clients are done, answer every question and cancel every holder, the
        store's untracked ones too, and wait for the rest (resumable tasks run again) to end.
        How many tasks were untracked."""
        with trio.fail_after(30):
            while self.clients:  # some follow a holder until it is cancelled
                await self.settle(driver)
                await trio.sleep(0.05)
            untracked = await self.adopt_untracked()
            while True:
                pending = False
                for task_id, tracked in self.tasks.items():
                    state = (await driver.get(task_id)).state
                    if state == "INPUT_REQUIRED":
                        await self.answer_one(driver, task_id)
                    elif state == "WORKING" and tracked.skill == "hold":
                        await self.cancel_one(driver, task_id)
                    pending = pending or state not in TERMINAL
                if not pending:
                    return untracked
                await trio.sleep(0.1)


def allowed_ends(tracked: Tracked, *, killed: bool) -> set[str]:
    """The states a task may end in once the load has settled (docs/architecture.md,
    Restarts, and "Shutdown is structured"): a resumable one runs again to completion; a
    holder ends only when cancelled or failed by the restart (or at the drain's end); the
    others complete within the drain's grace, or fail when a kill caught them running; a
    cancel whose answer a kill cut off may have been recorded."""
    if "CANCELED" in tracked.cancels:
        return {"CANCELED"}
    others = {"COMPLETED", "FAILED"} if killed else {"COMPLETED"}
    ends = {"rerun": {"COMPLETED"}, "hold": {"FAILED"}}.get(tracked.skill, others)
    return ends | {"CANCELED"} if CANCEL_SENT in tracked.cancels else ends


async def check_tasks(soak: CrashSoak, *, killed: bool) -> Counter[str]:
    """Every task ended as allowed, as its clients saw it end, with the message of a restart
    (``killed``) or of a shutdown if FAILED; its log is whole and every stream read to the end
    matches it.  How many ended in each state, and how many resumable ones ran again."""
    ends: Counter[str] = Counter()
    failure = RESTARTED if killed else SHUT_DOWN
    for task_id, tracked in soak.tasks.items():
        stored = await soak.store.load_task(ANONYMOUS, task_id)
        assert stored is not None, task_id
        outcome = task_outcome(stored.task)
        assert outcome.state in allowed_ends(tracked, killed=killed), (task_id, outcome, tracked)
        assert tracked.ends_seen <= {outcome.state}, (task_id, outcome, tracked)
        if outcome.state == "COMPLETED":
            assert outcome.text == tracked.text, (task_id, outcome, tracked)
        if outcome.state == "FAILED":
            message = stored.task.status.message
            assert message is not None and parts_text(message.parts) == failure, (task_id, message)
        log = await check_log(soak.store, task_id)
        for events in tracked.streams:
            check_stream(events, log)
            expected = {"INPUT_REQUIRED"} if tracked.skill == "ask" else {outcome.state}
            assert last_state(events) in expected, (task_id, events)
        ends[outcome.state] += 1
        if tracked.skill == "rerun":  # each run starts with a snapshot of the task
            ends["resumable, run again"] += sum(isinstance(e, m.Task) for e in log.values()) > 1
    return ends


async def check_resumes(soak: CrashSoak, http: httpx.AsyncClient, rng: random.Random) -> int:
    """Streams dropped before a restart, resumed with ``Last-Event-ID`` now: each gets the
    stored events after that id, numbered on without a gap or a repeat.  How many."""
    points = [(task, seq) for epoch, task, seq in soak.resume_points if epoch < soak.epoch]
    for task_id, seq in points:
        driver = rng.choice(DRIVERS)(http)
        events = await driver.subscribe_numbered(task_id, last_event_id=seq)
        log = await check_log(soak.store, task_id)
        assert [at for at, _ in events] == list(range(seq + 1, len(log) + 1)), (task_id, events)
        assert all(event == log[at] for at, event in events), (task_id, events, log)
    return len(points)


def check_logged(servers: list[Server]) -> None:
    """No server logged anything but the documented drain warning."""
    for server in servers:
        unexpected = [line for line in server.stderr if not DOCUMENTED_WARNINGS.match(line)]
        assert not unexpected, unexpected


def check_sqlite_file(url: str) -> None:
    path = url.removeprefix("sqlite:///")
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


async def follow_to_the_end(driver: Driver, task_id: str, into: list[list[Numbered]]) -> None:
    into.append(await driver.subscribe_numbered(task_id))


async def drain(soak: CrashSoak, server: Server, rng: random.Random) -> str:
    """SIGTERM mid-load: new tasks are refused while the running ones get the grace, and the
    streams of holders (which outlive it) end with their FAILED event, but for the holder
    cancelled as the grace ends (its id is returned): before (CANCELED) or after (refused as
    too late) as the server saw it, or as the server exits (cut); then the server exits."""
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        drivers = [cls(http) for cls in DRIVERS]
        holders = [await rng.choice(drivers).start("hold", "hold") for _ in range(4)]
        late = holders[-1]
        streams: list[list[Numbered]] = []
        async with trio.open_nursery() as followers:
            for task_id in holders:
                soak.track(task_id, "hold")
                followers.start_soon(follow_to_the_end, rng.choice(drivers), task_id, streams)
            soak.draining = True
            server.process.send_signal(signal.SIGTERM)
            grace_ends = trio.current_time() + GRACE
            at = grace_ends + rng.uniform(-0.3, 0.3)
            followers.start_soon(cancel_at, soak, rng.choice(drivers), late, at)
            await refused_at_last(rng.choice(drivers), soak)
        soak.going_down()
    for events in streams:
        soak.stream_read(events)
        task = events[0][1]
        assert isinstance(task, m.Task), events
        assert task.id == late or last_state(events) == "FAILED", events
    assert await server.process.wait() == 0, "\n".join(server.stderr)
    return late


async def cancel_at(soak: CrashSoak, driver: Driver, task_id: str, when: float) -> None:
    """Cancel a task at ``when`` (trio's clock), however the server then answers."""
    await trio.sleep_until(when)
    try:
        await soak.cancel_one(driver, task_id)
    except httpx.TransportError:  # the server exited first
        soak.cut += 1


async def refused_at_last(driver: Driver, soak: CrashSoak) -> None:
    """Send new tasks until one is refused as the drain says (the first may come before the
    signal is handled)."""
    while True:
        try:
            task_id, outcome = await driver.send("echo", "probe")
        except CallFailed as refused:
            assert refused.kind == "UnsupportedOperationError", refused
            assert REFUSED in str(refused.body), refused
            return
        soak.track(task_id, "echo", "probe")
        soak.saw_end(task_id, outcome.state)
        await trio.sleep(0.01)


@pytest.mark.parametrize("store", SQL_BACKENDS)
@pytest.mark.parametrize("stop", ["sigkill", "sigterm"])
async def test_crash_soak(store: str, stop: str, tmp_path: Path) -> None:
    seed = int(os.environ.get(SEED_VARIABLE) or random.randrange(2**32))
    print(f"crash soak seed {seed} ({SEED_VARIABLE}={seed} replays it)")
    rng = random.Random(seed)
    # A bound for a hang, not a speed check: 25-30 s on an idle 2-core machine, up to 60 s
    # when other work loads it (load average ~10).
    with trio.fail_after(120):
        async with make_backend(store, tmp_path) as backend, trio.open_nursery() as running:
            server = await running.start(run_server, AGENT, backend.url)
            servers = [server]
            async with open_store(backend.url) as opened, trio.open_nursery() as clients:
                soak = CrashSoak(opened)
                soak.came_up(server.url)
                for _ in range(CLIENTS):
                    clients.start_soon(soak.client, "", random.Random(rng.getrandbits(64)))
                graceful = ""
                for _ in range(rng.choice([1, 2]) if stop == "sigkill" else 1):
                    await trio.sleep(rng.uniform(1.5, 3))
                    await soak.dropped.wait()  # a stream to resume after the restart
                    if stop == "sigkill":
                        soak.going_down()
                        server.process.send_signal(signal.SIGKILL)
                        assert await server.process.wait() == -signal.SIGKILL
                    else:
                        late = await drain(soak, server, rng)
                        graceful = f"; the cancel as the grace ended: {soak.tasks[late].cancels}"
                    server = await running.start(run_server, AGENT, backend.url)
                    servers.append(server)
                    soak.came_up(server.url)
                await trio.sleep(rng.uniform(1, 2))
                await soak.enough.wait()  # a loaded machine needs longer to prove anything
                soak.over = True
                async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
                    adopted = await soak.settle_all(V1JsonRpc(http))
                    resumed = await check_resumes(soak, http, rng)
                server.process.send_signal(signal.SIGTERM)
                assert await server.process.wait() == 0, "\n".join(server.stderr)
                ends = await check_tasks(soak, killed=stop == "sigkill")
                print(
                    f"{len(soak.tasks)} tasks ({adopted} found in the store only), ended"
                    f" {dict(ends)}; {soak.cut} operations cut, {soak.refusals} refused,"
                    f" {resumed} streams resumed{graceful}; operations: {dict(soak.done)}"
                )
        assert resumed > 0
        assert soak.cut > 0 or stop == "sigterm", "no kill caught a request in flight"
        check_logged(servers)
        if store == "sqlite":
            check_sqlite_file(backend.url)
