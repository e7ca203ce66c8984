"""Many trio tasks calling one store at once, and, for SQL, two store objects on one database.

The Hypothesis model (``test_model.py``) drives the stores one call at a time; this drives
them concurrently and checks what the contract (docs/stores.md) promises then, against what
the stores acknowledged:

- no acknowledged write is lost, and no refused one applied: a task's history is exactly the
  messages of its acknowledged updates, in the order of the versions they returned, and every
  read shows exactly those at or below the version it read;
- versions strictly increase: each acknowledged write of a task returned its own version, they
  run 1..n, and an update at a stale ``expected_version`` is refused;
- a task's event log is numbered without gap or repeat, holds the acknowledged events (the
  newest ``MAX_EVENTS``) and nothing else; a write numbered at or below a number already
  logged is refused, whether the log still holds that number or has trimmed it away, so no
  number is acknowledged twice;
- ``load_task_with_seq`` reads a task and its log's last number as they stood together: every
  event logged with a write the task it read includes (a create or update returning that
  version or less) is numbered at or below that number, every event logged with a later write
  above it (but a number logged before, see ``check_pairs``), and the number is one logged
  (or 0), at least the newest acknowledged before the read began;
- of several creates of one id exactly one succeeds; creates with one idempotency key make
  one task and all return it;
- a listing paged while writes happen (by context, by state, or all) shows only tasks that
  match, never one twice, and every matching task no write touched meanwhile, by status time,
  newest first (as each page showed them); so do listings read after the run, of every task;
- a purge never removes an unfinished task; push configs list oldest first (one set before
  another began lists before it), store-made ids are distinct;
- every error is a documented type, raised only where the contract allows it.

``test_log_writes_racing_with_numbers_skipping_ahead_are_serializable`` races updates and
appends on one task at a time, with numbers that follow on, skip ahead, repeat or fall below a
full log's window, and checks each round against every order of its writes run one at a time.
``test_listings_paged_during_writes_show_the_quiet_tasks_newest_first`` pages listings while
other tasks are created and updated, and checks the tasks left alone (but touched and appended
to) show in exactly the order they were written.

Then the stores are closed, one is opened again on the same database, and everything read
before reads back equal.  The seed is printed; ``A2A_TRIO_STORE_CONCURRENCY_SEED`` replays one
(as far as trio's scheduling and the database's allow).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import random
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta
from pathlib import Path

import attrs
import pytest
import trio
import trio.lowlevel

from a2a_trio import model as m
from a2a_trio.errors import (
    ConcurrencyError,
    InvalidTransitionError,
    TaskNotFoundError,
    TaskTerminalStateError,
)
from a2a_trio.store import (
    ANONYMOUS,
    CallerScope,
    Retention,
    StoredTask,
    TaskAtVersion,
    TaskQuery,
    TaskStore,
    TaskUpdate,
    open_store,
)

from .conftest import ALL_BACKENDS, make_backend
from .test_contract import all_pages

S = m.TaskState
SEED_VARIABLE = "A2A_TRIO_STORE_CONCURRENCY_SEED"
WORKERS = 12
CALLS_PER_WORKER = 50
MAX_EVENTS = 3
TTL = timedelta(hours=1)
SCOPES = (ANONYMOUS, CallerScope("acme", "alice"))
CONTEXTS = ("ctx-a", "ctx-b")
STATES = (
    *(None, S.WORKING) * 10,
    *(S.SUBMITTED, S.INPUT_REQUIRED, S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED),
)
HOT = 4
"""Most calls go to the newest few tasks, so calls on one task overlap."""


@attrs.define
class Write:
    """An acknowledged create or update: the version it returned, the message it appended
    (``None`` for a create), the task it returned, and when it began and ended (ticks)."""

    version: int
    token: str | None
    task: m.Task
    began: int
    ended: int


@attrs.define
class Config:
    """A push config some set acknowledged: when the first set began and ended (ticks), the
    URLs acknowledged for it, and whether it is one to replace or to delete."""

    began: int
    ended: int
    urls: set[str]
    deletable: bool
    deleting: bool = False
    deleted: bool = False


@attrs.define
class Tracked:
    """What the stores acknowledged of one task."""

    scope: CallerScope
    task_id: str
    context_id: str
    created: int
    writes: list[Write]
    updating: list[tuple[int, int | None]] = attrs.Factory(list)
    """(began, ended) of every update tried: those may move it in a listing."""
    terminal_began: int | None = None
    """When the first acknowledged update to a terminal state began: a purge may end it after."""
    deleting: int | None = None
    deleted: bool = False
    events: dict[int, str] = attrs.Factory(dict)
    reads: list[tuple[int, tuple[str, ...]]] = attrs.Factory(list)
    """(version, history tokens) of every read of it: checked at the end against ``writes``."""
    logged_by: list[tuple[int | None, tuple[int, ...]]] = attrs.Factory(list)
    """The numbers of every acknowledged event write, with the version the create or update
    logging them returned (``None``: an append, which moves no version)."""
    paired: list[tuple[int, int, int]] = attrs.Factory(list)
    """(version, number, floor) of every ``load_task_with_seq``: the version of the task it
    read, the number read with it, and the newest number acknowledged when the read began."""
    configs: dict[str, Config] = attrs.Factory(dict)


def tokens(task: m.Task) -> tuple[str, ...]:
    """The texts of a task's history: one per message, each unique in the run."""
    return tuple(
        part.text for msg in task.history for part in msg.parts if isinstance(part, m.TextPart)
    )


class Run:
    """One concurrent run: the stores, a tick counter ordering calls as the event loop saw
    them, and what was acknowledged."""

    def __init__(self, stores: list[TaskStore]) -> None:
        self.stores = stores
        self.now = 0
        self.tasks: list[Tracked] = []
        self.losers: list[tuple[CallerScope, str]] = []
        """Task ids of creates that lost (a taken id, a taken key): never stored."""
        self.purges: list[tuple[int, int]] = []
        self.made_ids: set[str] = set()
        self.counter = 0
        self.tally: Counter[str] = Counter()
        """Outcomes by kind, printed: what a run exercised."""
        self.later: list[Callable[[], None]] = []
        """Checks that need the whole run: whether a task was gone by a tick depends on
        writes still in flight at that tick (a terminal update, then a purge)."""

    def tick(self) -> int:
        self.now += 1
        return self.now

    def unique(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}-{self.counter}"

    def may_be_gone(self, task: Tracked, at: int) -> bool:
        """Whether a delete or a purge begun by ``at`` may have removed the task (once the
        run is over: an update to a terminal state in flight at ``at`` counts if it was
        acknowledged later)."""
        if task.deleting is not None and task.deleting <= at:
            return True
        ending = task.terminal_began
        return ending is not None and ending <= at and self.purged_after(ending, at)

    def purged_after(self, began: int, at: int) -> bool:
        """Whether a purge begun by ``at`` was still running at ``began`` or later."""
        return any(start <= at and end > began for start, end in self.purges)

    def gone_by(self, task: Tracked, what: str) -> None:
        """A call found the task gone: check at the end that it may have been."""
        at = self.now

        def gone() -> None:
            assert self.may_be_gone(task, at), f"{what}: {task.task_id} was not found"

        self.later.append(gone)

    # -- the calls ------------------------------------------------------------------------------

    async def worker(self, rng: random.Random) -> None:
        calls: list[tuple[int, Callable[[random.Random, TaskStore], Awaitable[None]]]] = [
            (2, self.create),
            (1, self.create_race),
            (1, self.create_keyed),
            (14, self.update),
            (8, self.log_events),
            (8, self.read),
            (2, self.touch),
            (3, self.page),
            (1, self.unfinished),
            (3, self.add_config),
            (2, self.replace_config),
            (2, self.delete_config),
            (1, self.delete),
            (1, self.purge),
        ]
        weights = [weight for weight, _call in calls]
        for _ in range(CALLS_PER_WORKER):
            [(_weight, call)] = rng.choices(calls, weights)
            await call(rng, rng.choice(self.stores))

    def pick(self, rng: random.Random) -> Tracked | None:
        if not self.tasks:
            return None
        return rng.choice(self.tasks[-HOT:] if rng.random() < 0.85 else self.tasks)

    def new_task(self, rng: random.Random, task_id: str | None = None) -> m.Task:
        context_id = rng.choice(CONTEXTS)
        task = m.new_task(m.text_message(self.unique("created")), context_id=context_id)
        return task if task_id is None else attrs.evolve(task, id=task_id)

    def track(
        self, scope: CallerScope, stored: StoredTask, began: int, acknowledged: int
    ) -> Tracked:
        task = stored.task
        assert stored.version == 1
        write = Write(1, None, task, began, acknowledged)
        created = Tracked(scope, task.id, task.context_id, acknowledged, [write])
        self.tasks.append(created)
        return created

    async def create(self, rng: random.Random, store: TaskStore) -> None:
        """A new task, half of them with their first event logged in the same write."""
        scope = rng.choice(SCOPES)
        logged = {1: self.unique("event")} if rng.random() < 0.5 else {}
        events = [(seq, m.text_message(text)) for seq, text in logged.items()]
        began = self.tick()
        stored = await store.create_task(scope, self.new_task(rng), events=events)
        created = self.track(scope, stored, began, self.tick())
        if logged:
            created.events.update(logged)
            created.logged_by.append((1, tuple(logged)))

    async def create_race(self, rng: random.Random, store: TaskStore) -> None:
        """Three creates of one new id at once, from both stores: exactly one succeeds."""
        scope, task_id = rng.choice(SCOPES), m.new_id()
        made: list[StoredTask] = []
        refused: list[m.Task] = []

        async def one(task: m.Task) -> None:
            try:
                made.append(await rng.choice(self.stores).create_task(scope, task))
            except ConcurrencyError:
                refused.append(task)

        began = self.tick()
        async with trio.open_nursery() as nursery:
            for _ in range(3):
                nursery.start_soon(one, self.new_task(rng, task_id))
        assert len(made) == 1, f"{len(made)} creates of one id succeeded"
        assert len(refused) == 2
        self.track(scope, made[0], began, self.tick())

    async def create_keyed(self, rng: random.Random, store: TaskStore) -> None:
        """Three creates with one idempotency key at once: one task, returned to all three."""
        scope, key = rng.choice(SCOPES), self.unique("key")
        context_id = rng.choice(CONTEXTS)
        returned: list[StoredTask] = []
        tried: list[m.Task] = []

        async def one() -> None:
            task = m.new_task(m.text_message(self.unique("created")), context_id=context_id)
            tried.append(task)
            store = rng.choice(self.stores)
            returned.append(await store.create_task(scope, task, idempotency_key=key))

        began = self.tick()
        async with trio.open_nursery() as nursery:
            for _ in range(3):
                nursery.start_soon(one)
        ids = {stored.task.id for stored in returned}
        assert len(ids) == 1, f"one idempotency key made tasks {ids}"
        [winner] = ids
        first = next(stored for stored in returned if stored.version == 1)
        assert all(stored.task == first.task for stored in returned if stored.version == 1)
        self.track(scope, first, began, self.tick())
        self.losers += [(scope, task.id) for task in tried if task.id != winner]

    async def update(self, rng: random.Random, store: TaskStore) -> None:
        task = self.pick(rng)
        if task is None:
            return
        token = self.unique("said")
        state = rng.choice(STATES)
        expected = None
        if rng.random() < 0.4:  # the newest version this run knows of, perhaps stale by now
            expected = max(write.version for write in task.writes)
        update = TaskUpdate(state=state, messages=(m.text_message(token, role=m.Role.AGENT),))
        began = self.tick()
        interval = len(task.updating)
        task.updating.append((began, None))
        try:
            stored = await store.update_task(
                task.scope, task.task_id, update, expected_version=expected
            )
        except TaskNotFoundError:
            self.gone_by(task, "update")
            self.tally["update: not found"] += 1
            return
        except ConcurrencyError:
            assert expected is not None, "a write without an expected version was refused"
            self.tally["update: stale version refused"] += 1
            return
        except (TaskTerminalStateError, InvalidTransitionError) as exc:
            assert state is not None, "an append was refused"
            self.tally[f"update: {type(exc).__name__}"] += 1
            return
        finally:
            ended = self.tick()
            task.updating[interval] = (began, ended)
        if expected is not None:
            assert stored.version == expected + 1
        self.tally["update: acknowledged"] += 1
        assert tokens(stored.task)[-1] == token
        task.writes.append(Write(stored.version, token, stored.task, began, ended))
        task.reads.append((stored.version, tokens(stored.task)))
        if state is not None and m.is_terminal(state) and task.terminal_began is None:
            task.terminal_began = began

    async def log_events(self, rng: random.Random, store: TaskStore) -> None:
        """The next one or two events after the log's last, alone or with an update (which
        then appends nothing): a number taken meanwhile refuses them all.  Now and then they
        are numbered from a number before the last (a writer that read the log long ago):
        logged already, in the log or trimmed from it, so they are always refused."""
        task = self.pick(rng)
        if task is None:
            return
        began = self.tick()
        try:
            last = await store.last_event_seq(task.scope, task.task_id)
            stale = last > 0 and rng.random() < 0.25
            if stale:  # from the log's start, or a little before its last
                after = rng.choice([0, max(0, last - rng.randrange(1, MAX_EVENTS + 2))])
            else:
                after = last
            logged = {
                seq: self.unique("event") for seq in range(after + 1, after + rng.randrange(2, 4))
            }
            events = [(seq, m.text_message(text)) for seq, text in logged.items()]
            version = None
            if rng.random() < 0.5:
                await store.append_events(task.scope, task.task_id, events)
            else:
                interval = len(task.updating)
                task.updating.append((began, None))
                try:
                    stored = await store.update_task(
                        task.scope, task.task_id, TaskUpdate(), events=events
                    )
                finally:
                    ended = self.tick()
                    task.updating[interval] = (began, ended)
                task.writes.append(Write(stored.version, None, stored.task, began, ended))
                task.reads.append((stored.version, tokens(stored.task)))
                version = stored.version
        except TaskNotFoundError:
            self.gone_by(task, "events")
            self.tally["events: not found"] += 1
            return
        except ConcurrencyError:  # a number taken meanwhile, or logged before
            self.tally["events: stale numbers refused" if stale else "events: number taken"] += 1
            return
        assert not stale, f"{task.task_id}: events {list(logged)} logged after {last} taken in"
        task.events.update(logged)
        task.logged_by.append((version, tuple(logged)))
        self.tally["events: acknowledged"] += 1

    async def read(self, rng: random.Random, store: TaskStore) -> None:
        task = self.pick(rng)
        if task is None:
            return
        self.tick()
        acknowledged = max(write.version for write in task.writes)
        floor = max(task.events, default=0)
        if rng.random() < 0.5:
            stored = await store.load_task(task.scope, task.task_id)
        else:
            both = await store.load_task_with_seq(task.scope, task.task_id)
            stored = None if both is None else both[0]
            if both is not None:
                task.paired.append((both[0].version, both[1], floor))
                self.tally["read with its last event number"] += 1
        if stored is None:
            self.gone_by(task, "read")
            return
        assert stored.version >= acknowledged, "a read did not see an acknowledged write"
        assert stored.task.id == task.task_id
        task.reads.append((stored.version, tokens(stored.task)))

    async def touch(self, rng: random.Random, store: TaskStore) -> None:
        """A lease tick: touch some tasks, of both scopes, at the versions just read (one
        lock per row, in id order, beside every other write)."""
        chosen = {task.task_id: task for task in (self.pick(rng) for _ in range(3)) if task}
        at: list[TaskAtVersion] = []
        for scope in SCOPES:
            ids = [task_id for task_id, task in chosen.items() if task.scope == scope]
            versions = await store.task_versions(scope, ids)
            at += [TaskAtVersion(scope, task_id, version) for task_id, version in versions.items()]
        touched = await store.touch_tasks(at)
        assert touched <= set(at)
        self.tally["touched"] += len(touched)

    async def page(self, rng: random.Random, store: TaskStore) -> None:
        """Page through one scope's listing, perhaps of one context or state, while the others
        write: every task shown matches, none twice, by status time, newest first; every task
        created before that no write, delete or purge may have touched meanwhile, and that
        matched, is shown."""
        scope = rng.choice(SCOPES)
        context_id = rng.choice(("", *CONTEXTS))
        status = rng.choice(LISTED_STATES)
        query = TaskQuery(context_id=context_id, status=status, page_size=rng.randrange(1, 6))
        began = self.tick()
        shown = await walk(store, query, scope, rng)
        ended = self.tick()
        seen = [task.id for task in shown]
        assert len(seen) == len(set(seen)), f"a listing repeated tasks: {seen}"
        for task in shown:
            assert listed_by(query, task), f"{query} listed {task.id} in {task.status.state}"
        check_newest_first(shown)
        existing = list(self.tasks)

        def nothing_skipped() -> None:
            for task in existing:
                if (
                    task.scope == scope
                    and context_id in ("", task.context_id)
                    and task.created < began
                    and not self.may_be_gone(task, ended)
                    and not self.written_within(task, began, ended)
                ):
                    last = max(
                        (write for write in task.writes if write.ended < began),
                        key=lambda write: write.version,
                    )
                    if listed_by(query, last.task):
                        assert task.task_id in seen, f"{query} skipped {task.task_id}"

        self.later.append(nothing_skipped)

    @staticmethod
    def written_within(task: Tracked, began: int, ended: int) -> bool:
        """Whether an update of the task may have run between the two ticks."""
        return any(
            not ((end is not None and end < began) or start > ended) for start, end in task.updating
        )

    async def unfinished(self, _rng: random.Random, store: TaskStore) -> None:
        """Every task created before that no terminal update or delete may have ended."""
        began = self.tick()
        found = {scoped.stored.task.id: scoped for scoped in await store.list_unfinished()}
        ended = self.tick()
        for scoped in found.values():
            assert not m.is_terminal(scoped.stored.task.status.state)
        existing = list(self.tasks)

        def none_left_out() -> None:
            for task in existing:
                ending = task.terminal_began
                running = ending is None or ending > ended
                kept = task.deleting is None or task.deleting > ended
                if task.created < began and running and kept:
                    assert task.task_id in found, f"list_unfinished left out {task.task_id}"
                    assert found[task.task_id].scope == task.scope

        self.later.append(none_left_out)

    async def add_config(self, rng: random.Random, store: TaskStore) -> None:
        task = self.pick(rng)
        if task is None:
            return
        config_id = "" if rng.random() < 0.6 else self.unique("config")
        url = f"https://{self.unique('hook')}.example"
        config = m.TaskPushNotificationConfig(url, task_id=task.task_id, id=config_id)
        began = self.tick()
        try:
            stored = await store.set_push_config(task.scope, config)
        except TaskNotFoundError:
            self.gone_by(task, "set_push_config")
            return
        assert stored.id and (not config_id or stored.id == config_id)
        assert stored.id not in self.made_ids, f"config id {stored.id} given twice"
        self.made_ids.add(stored.id)
        task.configs[stored.id] = Config(began, self.tick(), {url}, rng.random() < 0.5)

    def pick_config(self, rng: random.Random, *, deletable: bool) -> tuple[Tracked, str, Config]:
        """A config to replace, or one to delete that no call deletes yet (``IndexError``:
        none)."""
        task = self.pick(rng)
        configs = (
            []
            if task is None
            else [
                (task, config_id, config)
                for config_id, config in task.configs.items()
                if config.deletable == deletable and not config.deleting
            ]
        )
        return rng.choice(configs)

    async def replace_config(self, rng: random.Random, store: TaskStore) -> None:
        try:
            task, config_id, config = self.pick_config(rng, deletable=False)
        except IndexError:
            return
        url = f"https://{self.unique('hook')}.example"
        replacement = m.TaskPushNotificationConfig(url, task_id=task.task_id, id=config_id)
        try:
            await store.set_push_config(task.scope, replacement)
        except TaskNotFoundError:
            self.gone_by(task, "set_push_config (replacing)")
            return
        config.urls.add(url)

    async def delete_config(self, rng: random.Random, store: TaskStore) -> None:
        try:
            task, config_id, config = self.pick_config(rng, deletable=True)
        except IndexError:
            return
        config.deleting = True
        self.tick()
        if await store.delete_push_config(task.scope, task.task_id, config_id):
            config.deleted = True
        else:
            self.gone_by(task, f"delete_push_config {config_id}")

    async def delete(self, rng: random.Random, store: TaskStore) -> None:
        alive = [task for task in self.tasks if task.deleting is None]
        if not alive:
            return
        task = rng.choice(alive)
        task.deleting = self.tick()
        if await store.delete_task(task.scope, task.task_id):
            task.deleted = True
            self.tally["deleted"] += 1
        else:
            self.gone_by(task, "delete_task")

    async def purge(self, _rng: random.Random, store: TaskStore) -> None:
        """Purge as if the TTL had passed: every terminal task may go, no other may."""
        began = self.tick()
        index = len(self.purges)  # purges overlap: another may append before this one ends
        self.purges.append((began, began))
        self.tally["purged"] += await store.purge_expired(now=m.utcnow() + 2 * TTL)
        self.purges[index] = (began, self.tick())


LISTED_STATES = (*(S.UNSPECIFIED,) * 3, S.SUBMITTED, S.WORKING, S.INPUT_REQUIRED, S.COMPLETED)
"""The state filters of the listings paged during a run (``UNSPECIFIED``: any state)."""
FINAL_STATES = (S.UNSPECIFIED, S.SUBMITTED, S.WORKING, S.COMPLETED)
"""Those of the listings read after it."""


async def walk(
    store: TaskStore, query: TaskQuery, scope: CallerScope, rng: random.Random
) -> list[m.Task]:
    """Every page of a listing, each at most a page's size, a few checkpoints between pages
    (others write)."""
    shown: list[m.Task] = []
    while True:
        page = await store.list_tasks(scope, query)
        assert len(page.tasks) <= query.page_size
        shown += page.tasks
        if not page.next_page_token:
            return shown
        query = attrs.evolve(query, page_token=page.next_page_token)
        for _ in range(rng.randrange(1, 4)):
            await trio.lowlevel.checkpoint()


def listed_by(query: TaskQuery, task: m.Task) -> bool:
    """Whether the task matches the query's context and state filters."""
    return query.context_id in ("", task.context_id) and query.status in (
        S.UNSPECIFIED,
        task.status.state,
    )


def check_newest_first(listed: Sequence[m.Task]) -> None:
    """Tasks as a listing showed them (its pages one after the other): by status time, newest
    first (A2A v1.0 §3.1.4).  A page token continues below the last task shown, so a task whose
    status changed meanwhile moves in front of the listing, not into its rest."""
    times = [task.status.timestamp for task in listed]
    assert None not in times
    for (before, earlier), (task, later) in itertools.pairwise(zip(listed, times, strict=True)):
        assert earlier >= later, (  # type: ignore[operator]
            f"{task.id}, at status time {later}, listed after {before.id}, at {earlier}"
        )


@attrs.frozen
class Snapshot:
    """Everything the store holds of the run's tasks, read after the run."""

    tasks: dict[str, StoredTask | None]
    events: dict[str, tuple[tuple[int, str], ...]]
    configs: dict[str, tuple[tuple[str, str], ...]]
    listings: dict[tuple[CallerScope, str, m.TaskState], tuple[str, ...]]
    """The ids every page of each listing shows, by scope, context and state filter."""
    unfinished: frozenset[str]


def event_text(event: m.StreamEvent) -> str:
    assert isinstance(event, m.Message)
    [part] = event.parts
    assert isinstance(part, m.TextPart)
    return part.text


async def snapshot(store: TaskStore, run: Run) -> Snapshot:
    tasks: dict[str, StoredTask | None] = {}
    events: dict[str, tuple[tuple[int, str], ...]] = {}
    configs: dict[str, tuple[tuple[str, str], ...]] = {}
    for task in run.tasks:
        stored = await store.load_task(task.scope, task.task_id)
        tasks[task.task_id] = stored
        if stored is not None:
            logged = await store.load_events(task.scope, task.task_id)
            events[task.task_id] = tuple((seq, event_text(event)) for seq, event in logged)
            listed = await store.list_push_configs(task.scope, task.task_id)
            configs[task.task_id] = tuple((config.id, config.url) for config in listed)
    listings = {}
    for scope, context_id, status in itertools.product(SCOPES, ("", *CONTEXTS), FINAL_STATES):
        query = TaskQuery(context_id=context_id, status=status, page_size=7)
        listings[scope, context_id, status] = tuple(await all_pages(store, query, scope=scope))
    unfinished = frozenset(scoped.stored.task.id for scoped in await store.list_unfinished())
    return Snapshot(tasks, events, configs, listings, unfinished)


async def check(store: TaskStore, run: Run, held: Snapshot) -> None:
    """The snapshot against what was acknowledged."""
    for deferred in run.later:
        deferred()
    for scope, loser in run.losers:
        assert await store.load_task(scope, loser) is None, f"a refused create stored {loser}"
    for task in run.tasks:
        stored = held.tasks[task.task_id]
        if stored is None:
            assert task.deleted or run.may_be_gone(task, run.now), f"{task.task_id} was lost"
            continue
        assert not task.deleted, f"deleted {task.task_id} is back"
        versions = sorted(write.version for write in task.writes)
        assert versions == list(range(1, len(versions) + 1)), f"{task.task_id}: {versions}"
        newest = max(task.writes, key=lambda write: write.version)
        assert (stored.version, stored.task) == (newest.version, newest.task)
        by_version = {write.version: write for write in task.writes}
        for version, seen in task.reads:
            said = [by_version[v].token for v in range(2, version + 1)]
            assert seen == tokens(task.writes[0].task) + tuple(t for t in said if t is not None)
        check_events(task, held.events[task.task_id])
        check_pairs(task)
        check_configs(task, held.configs[task.task_id])
        running = not m.is_terminal(stored.task.status.state)
        assert (task.task_id in held.unfinished) == running
    every = {task.task_id: task for task in run.tasks}
    for (scope, context_id, status), listed in held.listings.items():
        query = TaskQuery(context_id=context_id, status=status)
        assert len(listed) == len(set(listed))
        assert all(task_id in every and every[task_id].scope == scope for task_id in listed)
        existing = {
            task.task_id
            for task in run.tasks
            if task.scope == scope
            and (stored := held.tasks[task.task_id]) is not None
            and listed_by(query, stored.task)
        }
        assert set(listed) == existing, f"{query} listed {listed}, not {existing}"
        check_newest_first([stored.task for task_id in listed if (stored := held.tasks[task_id])])


def check_events(task: Tracked, logged: tuple[tuple[int, str], ...]) -> None:
    """Numbered on from the log's first with no gap or repeat, up to the newest acknowledged,
    the newest ``MAX_EVENTS`` of them, each the acknowledged one."""
    seqs = [seq for seq, _text in logged]
    newest = max(task.events, default=0)
    assert seqs == list(range(max(1, newest - MAX_EVENTS + 1), newest + 1)), seqs
    assert all(task.events.get(seq) == text for seq, text in logged), "an event not acknowledged"


def check_pairs(task: Tracked) -> None:
    """Each ``load_task_with_seq`` against the acknowledged event writes (all are known once
    the run is over).  The run numbers each write after the log's last number, so every number
    up to a read's was logged before that read, and no number is acknowledged twice: a write
    numbered from a stale last number is refused, also when the store has trimmed the numbers
    it reuses (it used to take them in and drop them at once)."""
    claims = Counter(seq for _version, seqs in task.logged_by for seq in seqs)
    twice = sorted(seq for seq, count in claims.items() if count > 1)
    assert not twice, f"{task.task_id}: events {twice} acknowledged twice"
    for version, seq, floor in task.paired:
        where = f"{task.task_id} read at version {version} with event {seq}"
        assert seq >= floor, f"{where}: event {floor} was acknowledged before the read"
        assert seq == 0 or seq in claims, f"{where}, never logged"
        for written, seqs in task.logged_by:
            if written is None:
                continue
            if written <= version:
                assert max(seqs) <= seq, f"{where}: version {written} logged {seqs}"
            else:
                assert min(seqs) > seq, f"{where}: version {written} logged {seqs}"


def check_configs(task: Tracked, listed: tuple[tuple[str, str], ...]) -> None:
    kept = {config_id: config for config_id, config in task.configs.items() if not config.deleted}
    assert {config_id for config_id, _url in listed} == set(kept), "configs lost or kept"
    for config_id, url in listed:
        assert url in kept[config_id].urls
    for index, (earlier, _url) in enumerate(listed):
        for later, _url in listed[index + 1 :]:
            ended, began = kept[later].ended, kept[earlier].began
            assert not ended < began, f"config {later} was set before {earlier} but lists after"


@asynccontextmanager
async def open_stores(url: str, count: int) -> AsyncIterator[list[TaskStore]]:
    retention = Retention(terminal_ttl=TTL, max_events_per_task=MAX_EVENTS)
    async with AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(open_store(url, retention=retention))
            for _ in range(count)
        ]


def seeded_rng() -> random.Random:
    """A random source seeded from ``A2A_TRIO_STORE_CONCURRENCY_SEED``, or afresh; the seed
    is printed, to replay a run."""
    seed = int(os.environ.get(SEED_VARIABLE) or random.randrange(2**32))
    print(f"store concurrency seed {seed} ({SEED_VARIABLE}={seed} replays it)")
    return random.Random(seed)


@pytest.mark.parametrize("backend_name", ALL_BACKENDS)
async def test_concurrent_calls_keep_the_contract(backend_name: str, tmp_path: Path) -> None:
    rng = seeded_rng()
    async with make_backend(backend_name, tmp_path) as backend:
        replicas = 1 if backend.name == "memory" else 2
        async with open_stores(backend.url, replicas) as stores:
            run = Run(stores)
            async with trio.open_nursery() as nursery:
                for _ in range(WORKERS):
                    nursery.start_soon(run.worker, random.Random(rng.getrandbits(64)))
            print(
                f"{len(run.tasks)} tasks;",
                ", ".join(f"{k} {v}" for k, v in sorted(run.tally.items())),
            )
            held = await snapshot(stores[0], run)
            await check(stores[0], run, held)
            if replicas > 1:
                assert await snapshot(stores[1], run) == held
        if backend.name == "memory":
            return
        async with open_stores(backend.url, 1) as [reopened]:
            assert await snapshot(reopened, run) == held


@pytest.mark.parametrize("backend_name", ALL_BACKENDS)
async def test_appends_and_updates_logging_at_once_never_deadlock(
    backend_name: str, tmp_path: Path
) -> None:
    """On PostgreSQL an append held only the key-share locks of its inserts' foreign-key
    checks, which a running task's one-statement update does not wait for: the update took
    the row and then waited for an event number the append held, while the append's next
    insert waited for the row (a deadlock, ``StoreUnavailableError``)."""
    async with make_backend(backend_name, tmp_path) as backend:
        replicas = 1 if backend.name == "memory" else 2
        async with open_stores(backend.url, replicas) as stores:
            writing, appending = stores[0], stores[-1]
            task = (await writing.create_task(ANONYMOUS, m.new_task(m.text_message("go")))).task
            await writing.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING))
            logged: dict[int, str] = {}

            async def log(append: bool) -> None:
                for number in range(25):
                    last = await appending.last_event_seq(ANONYMOUS, task.id)
                    texts = {last + 1: f"{append} {number} a", last + 2: f"{append} {number} b"}
                    events = [(seq, m.text_message(text)) for seq, text in texts.items()]
                    try:
                        if append:
                            await appending.append_events(ANONYMOUS, task.id, events)
                        else:
                            await writing.update_task(
                                ANONYMOUS, task.id, TaskUpdate(), events=events
                            )
                    except ConcurrencyError:  # a number taken meanwhile
                        continue
                    logged.update(texts)

            async with trio.open_nursery() as nursery:
                for append in (True, False) * 4:
                    nursery.start_soon(log, append)
            events = await writing.load_events(ANONYMOUS, task.id)
            newest = max(logged)
            assert [seq for seq, _event in events] == list(
                range(newest - MAX_EVENTS + 1, newest + 1)
            )
            assert all(event_text(event) == logged[seq] for seq, event in events)


@attrs.frozen
class LogWrite:
    """One write of a task's log in a race: an update (with a message) or an append, its
    numbers, and whether the store acknowledged it."""

    name: str
    seqs: tuple[int, ...]
    update: bool
    acknowledged: bool


def serial_outcome(
    writes: Sequence[LogWrite], log: dict[int, str], history: tuple[str, ...], bound: int
) -> tuple[dict[int, str], tuple[str, ...]] | None:
    """The log and the history after ``writes`` run one at a time in this order, by the
    contract (a taken number, or one below what a full log keeps, refuses the write; the log
    keeps its newest ``bound``), or ``None`` when some write would not get the answer it got."""
    log = dict(log)
    for write in writes:
        refused = any(seq in log for seq in write.seqs) or (
            sum(seq > min(write.seqs) for seq in log) >= bound
        )
        if refused == write.acknowledged:
            return None
        if refused:
            continue
        log.update((seq, f"{write.name} {seq}") for seq in write.seqs)
        log = {seq: log[seq] for seq in sorted(log)[-bound:]}
        if write.update:
            history += (write.name,)
    return log, history


@attrs.define
class Raced:
    """A task the race writes: its log and its history (past the first message) as read
    after the last round."""

    task_id: str
    log: dict[int, str] = attrs.Factory(dict)
    history: tuple[str, ...] = ()


RACE_ROUNDS = 30
RACE_TASKS = 6


@pytest.mark.parametrize("backend_name", ALL_BACKENDS)
async def test_log_writes_racing_with_numbers_skipping_ahead_are_serializable(
    backend_name: str, tmp_path: Path
) -> None:
    """Updates logging events and appends whose numbers skip ahead, follow on, repeat or fall
    below a full log's window, racing on one task from two store objects: what each writer
    was told, the log and the history a reader sees afterwards are those of the writes run
    one at a time in some order.  On PostgreSQL the one-statement update checked that no
    event was logged from its first number on in the snapshot its statement began with: an
    append committed while the update waited for the row went unseen, so the update logged
    an event below the full log's window and the log held more events than its bound."""
    rng = seeded_rng()
    tally: Counter[str] = Counter()
    async with make_backend(backend_name, tmp_path) as backend:
        replicas = 1 if backend.name == "memory" else 2
        async with open_stores(backend.url, replicas) as stores:
            writer = stores[0]  # writes each task last, so its updates take the short way

            async def one(
                store: TaskStore, task_id: str, write: LogWrite, done: list[LogWrite]
            ) -> None:
                events = [(seq, m.text_message(f"{write.name} {seq}")) for seq in write.seqs]
                for _ in range(rng.randrange(4)):
                    await trio.lowlevel.checkpoint()
                try:
                    if write.update:
                        said = m.text_message(write.name, role=m.Role.AGENT)
                        update = TaskUpdate(messages=(said,))
                        await store.update_task(ANONYMOUS, task_id, update, events=events)
                    else:
                        await store.append_events(ANONYMOUS, task_id, events)
                except ConcurrencyError:
                    done.append(write)
                    return
                done.append(attrs.evolve(write, acknowledged=True))

            async def race(task: Raced) -> None:
                task_id, log, history = task.task_id, task.log, task.history
                # The writer writes the task first, so that it knows the row as it stands
                # (an append from the other store moved its write time).
                await writer.update_task(ANONYMOUS, task_id, TaskUpdate())
                last = max(log, default=0)
                done: list[LogWrite] = []
                async with trio.open_nursery() as nursery:
                    # The writer's update, then appends and now and then an update (the full
                    # way) from the other store.
                    for index in range(rng.randrange(2, 4)):
                        start = rng.choice(
                            [last + 1, last + 1, last + MAX_EVENTS + 1, last + 2 * MAX_EVENTS, last]
                        )
                        count = rng.randrange(1, MAX_EVENTS + 1)
                        seqs = tuple(range(max(1, start), max(1, start) + count))
                        update = index == 0 or rng.random() < 0.25
                        write = LogWrite(f"{task_id} w{index}", seqs, update, False)
                        store = writer if index == 0 else stores[-1]
                        nursery.start_soon(one, store, task_id, write, done)
                both = await stores[-1].load_task_with_seq(ANONYMOUS, task_id)
                assert both is not None
                stored, newest = both
                seen = {
                    seq: event_text(event)
                    for seq, event in await stores[-1].load_events(ANONYMOUS, task_id)
                }
                assert list(seen) == sorted(seen), f"{task_id}: events out of order: {seen}"
                assert newest == max(seen, default=0)
                said = tokens(stored.task)[1:]
                serial = [
                    serial_outcome(order, log, history, MAX_EVENTS)
                    for order in itertools.permutations(done)
                ]
                assert (seen, said) in serial, (
                    f"{task_id}: log {seen} and history {said} after {done} from log {log}"
                    f" and history {history}: no order of the writes gives them"
                )
                tally.update(
                    f"{'update' if w.update else 'append'} {'ok' if w.acknowledged else 'refused'}"
                    for w in done
                )
                task.log, task.history = seen, said

            tasks = []
            for _ in range(RACE_TASKS):
                created = m.new_task(m.text_message("go"))
                await writer.create_task(ANONYMOUS, created)
                await writer.update_task(ANONYMOUS, created.id, TaskUpdate(state=S.WORKING))
                tasks.append(Raced(created.id))
            for _ in range(RACE_ROUNDS):
                async with trio.open_nursery() as nursery:
                    for task in tasks:
                        nursery.start_soon(race, task)
            print(", ".join(f"{k} {v}" for k, v in sorted(tally.items())))


QUIET_STATES = (S.SUBMITTED, S.WORKING, S.INPUT_REQUIRED, S.COMPLETED)
WALKS = 40


@pytest.mark.parametrize("backend_name", ALL_BACKENDS)
async def test_listings_paged_during_writes_show_the_quiet_tasks_newest_first(
    backend_name: str, tmp_path: Path
) -> None:
    """Tasks written one after another, then left alone but for touches and appends (which
    keep a task's place), listed page by page, by context and state, from both store objects
    while other tasks are created and updated: each walk shows every one of them that
    matches, exactly once, newest-written first, and only tasks that match."""
    rng = seeded_rng()
    async with make_backend(backend_name, tmp_path) as backend:
        replicas = 1 if backend.name == "memory" else 2
        async with open_stores(backend.url, replicas) as stores:
            quiet: list[StoredTask] = []  # by their last write, oldest first
            hot: list[str] = []
            for number in range(30):
                task = m.new_task(
                    m.text_message(f"quiet {number}"), context_id=CONTEXTS[number % 2]
                )
                stored = await rng.choice(stores).create_task(ANONYMOUS, task)
                state = rng.choice(QUIET_STATES)
                if state is not S.SUBMITTED:
                    update = TaskUpdate(state=state)
                    stored = await rng.choice(stores).update_task(ANONYMOUS, task.id, update)
                quiet.append(stored)
                if number % 5 == 0:
                    hot.append(task.id)  # written again during the walks, no longer quiet
            quiet = [stored for stored in quiet if stored.task.id not in hot]
            quiet_ids = {stored.task.id for stored in quiet}
            lease = [TaskAtVersion(ANONYMOUS, stored.task.id, stored.version) for stored in quiet]
            walked = Counter[str]()

            async def write_others() -> None:
                for number in itertools.count():
                    store = rng.choice(stores)
                    kind = rng.randrange(4)
                    if kind == 0 and len(hot) < 100:
                        context_id = rng.choice(CONTEXTS)
                        task = m.new_task(m.text_message(f"new {number}"), context_id=context_id)
                        await store.create_task(ANONYMOUS, task)
                        hot.append(task.id)
                    elif kind <= 1:
                        state = rng.choice((None, S.WORKING, S.INPUT_REQUIRED))
                        said = m.text_message(f"said {number}", role=m.Role.AGENT)
                        update = TaskUpdate(state=state, messages=(said,))
                        with contextlib.suppress(TaskTerminalStateError):
                            await store.update_task(ANONYMOUS, rng.choice(hot), update)
                    elif kind == 2:
                        task_id = rng.choice(quiet).task.id
                        last = await store.last_event_seq(ANONYMOUS, task_id)
                        events = [(last + 1, m.text_message(f"logged {number}"))]
                        with contextlib.suppress(ConcurrencyError):  # the other writer's
                            await store.append_events(ANONYMOUS, task_id, events)
                    else:
                        assert await store.touch_tasks(lease) == set(lease)
                    await trio.lowlevel.checkpoint()

            async def walks() -> None:
                for _ in range(WALKS):
                    query = TaskQuery(
                        context_id=rng.choice(("", *CONTEXTS)),
                        status=rng.choice((S.UNSPECIFIED, *QUIET_STATES)),
                        page_size=rng.randrange(1, 8),
                    )
                    shown = await walk(rng.choice(stores), query, ANONYMOUS, rng)
                    seen = [task.id for task in shown]
                    assert len(seen) == len(set(seen)), f"{query} repeated tasks: {seen}"
                    for task in shown:
                        assert listed_by(query, task), f"{query} listed {task.id}"
                    expected = [
                        stored.task.id
                        for stored in reversed(quiet)
                        if listed_by(query, stored.task)
                    ]
                    assert [task_id for task_id in seen if task_id in quiet_ids] == expected, (
                        f"{query}: the quiet tasks shown, in order, are not {expected}: {seen}"
                    )
                    walked["walks"] += 1
                    walked["quiet tasks shown"] += len(expected)
                    walked["others shown"] += len(seen) - len(expected)

            async with trio.open_nursery() as nursery:
                for _ in range(3):
                    nursery.start_soon(write_others)
                await walks()
                nursery.cancel_scope.cancel()
            print(", ".join(f"{k} {v}" for k, v in sorted(walked.items())))
