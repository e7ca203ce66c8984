"""The task-store contract, run against every backend (memory, SQLite, PostgreSQL)."""

from __future__ import annotations

import contextlib
import random
from datetime import UTC, datetime, timedelta

import attrs
import pytest
import trio
import trio.lowlevel
from hypothesis import HealthCheck, given, settings
from push_backlog import LAPSED, lagging
from strategies import V1_STRATEGIES

from a2a_trio import model as m
from a2a_trio.errors import (
    ConcurrencyError,
    InvalidParamsError,
    InvalidTransitionError,
    TaskNotFoundError,
    TaskTerminalStateError,
)
from a2a_trio.store import (
    ANONYMOUS,
    ArtifactWrite,
    CallerScope,
    PushBacklog,
    PushTarget,
    Retention,
    TaskAtVersion,
    TaskQuery,
    TaskStore,
    TaskUpdate,
    open_store,
)
from a2a_trio.store._sql import IDS_PER_QUERY

from .conftest import Backend

S = m.TaskState
ALICE = CallerScope("acme", "alice")
MALLORY = CallerScope("acme", "mallory")
OTHER_TENANT = CallerScope("globex", "alice")


def a_task(text: str = "hi", *, context_id: str = "") -> m.Task:
    return m.new_task(m.text_message(text), context_id=context_id)


def agent_says(text: str) -> m.Message:
    return m.text_message(text, role=m.Role.AGENT)


async def create_many(store: TaskStore, count: int, **kwargs: str) -> list[str]:
    ids = []
    for number in range(count):
        stored = await store.create_task(ANONYMOUS, a_task(f"task {number}", **kwargs))
        ids.append(stored.task.id)
    return ids


async def all_pages(
    store: TaskStore, query: TaskQuery, *, scope: CallerScope = ANONYMOUS
) -> list[str]:
    """The ids of every page of the listing, a checkpoint between pages (others write)."""
    seen: list[str] = []
    while True:
        page = await store.list_tasks(scope, query)
        seen += [task.id for task in page.tasks]
        if not page.next_page_token:
            return seen
        query = attrs.evolve(query, page_token=page.next_page_token)
        await trio.lowlevel.checkpoint()


# -- create and load ---------------------------------------------------------------------------


async def test_create_then_load_round_trips_the_task(store: TaskStore) -> None:
    task = attrs.evolve(a_task(), metadata={"k": [1, "two", None]})
    created = await store.create_task(ALICE, task)
    assert created.version == 1
    assert created.task == task
    loaded = await store.load_task(ALICE, task.id)
    assert loaded is not None
    assert (loaded.task, loaded.version) == (task, 1)


async def test_load_of_an_unknown_task_is_none(store: TaskStore) -> None:
    assert await store.load_task(ALICE, "no-such-task") is None


async def test_load_trims_history_and_artifacts(store: TaskStore) -> None:
    task = (await store.create_task(ANONYMOUS, a_task("first"))).task
    artifact = m.new_artifact([m.TextPart("out")])
    update = TaskUpdate(
        messages=(agent_says("second"), agent_says("third")),
        artifacts=(ArtifactWrite(artifact),),
    )
    await store.update_task(ANONYMOUS, task.id, update)
    last_two = await store.load_task(ANONYMOUS, task.id, history_length=2)
    assert last_two is not None
    assert [msg.parts for msg in last_two.task.history] == [
        (m.TextPart("second"),),
        (m.TextPart("third"),),
    ]
    assert last_two.task.artifacts == (artifact,)
    bare = await store.load_task(ANONYMOUS, task.id, history_length=0, include_artifacts=False)
    assert bare is not None
    assert (bare.task.history, bare.task.artifacts) == ((), ())


async def test_a_duplicate_task_id_is_refused(store: TaskStore) -> None:
    task = a_task()
    await store.create_task(ANONYMOUS, task)
    with pytest.raises(ConcurrencyError):
        await store.create_task(ANONYMOUS, attrs.evolve(task, context_id="elsewhere"))
    loaded = await store.load_task(ANONYMOUS, task.id)
    assert loaded is not None
    assert loaded.task == task


# -- idempotent create -------------------------------------------------------------------------


async def test_create_with_a_used_key_returns_the_first_task(store: TaskStore) -> None:
    first = await store.create_task(ANONYMOUS, a_task(context_id="ctx"), idempotency_key="k1")
    again = await store.create_task(ANONYMOUS, a_task(context_id="ctx"), idempotency_key="k1")
    assert again.task.id == first.task.id
    other_context = await store.create_task(
        ANONYMOUS, a_task(context_id="ctx2"), idempotency_key="k1"
    )
    other_scope = await store.create_task(ALICE, a_task(context_id="ctx"), idempotency_key="k1")
    other_key = await store.create_task(ANONYMOUS, a_task(context_id="ctx"), idempotency_key="k2")
    ids = {first.task.id, other_context.task.id, other_scope.task.id, other_key.task.id}
    assert len(ids) == 4


async def test_racing_creates_with_one_key_store_one_task(store: TaskStore) -> None:
    results: list[str] = []

    async def create(number: int) -> None:
        task = a_task(f"attempt {number}", context_id="ctx")
        stored = await store.create_task(ANONYMOUS, task, idempotency_key="same")
        results.append(stored.task.id)

    async with trio.open_nursery() as nursery:
        for number in range(20):
            nursery.start_soon(create, number)
    assert len(results) == 20
    assert len(set(results)) == 1
    page = await store.list_tasks(ANONYMOUS, TaskQuery(context_id="ctx"))
    assert [task.id for task in page.tasks] == results[:1]


# -- update ------------------------------------------------------------------------------------


async def test_update_applies_everything_atomically_and_bumps_the_version(
    store: TaskStore,
) -> None:
    task = attrs.evolve(a_task(), metadata={"keep": 1, "change": 1})
    await store.create_task(ALICE, task)
    chunk_a, chunk_b = m.TextPart("a"), m.TextPart("b")
    art = m.Artifact("art-1", (chunk_a,), name="result")
    other = m.Artifact("art-2", (m.TextPart("old"),))
    await store.update_task(
        ALICE, task.id, TaskUpdate(artifacts=(ArtifactWrite(art), ArtifactWrite(other)))
    )
    note = agent_says("working on it")
    stamp = m.utcnow() - timedelta(seconds=5)
    updated = await store.update_task(
        ALICE,
        task.id,
        TaskUpdate(
            state=S.WORKING,
            status_message=note,
            timestamp=stamp,
            artifacts=(
                ArtifactWrite(m.Artifact("art-1", (chunk_b,)), append=True),
                ArtifactWrite(m.Artifact("art-2", (m.TextPart("new"),))),
            ),
            messages=(note,),
            metadata={"change": 2, "added": True},
        ),
    )
    assert updated.version == 3
    expected = attrs.evolve(
        task,
        status=m.TaskStatus(S.WORKING, note, stamp),
        artifacts=(
            m.Artifact("art-1", (chunk_a, chunk_b), name="result"),
            m.Artifact("art-2", (m.TextPart("new"),)),
        ),
        history=(*task.history, note),
        metadata={"keep": 1, "change": 2, "added": True},
    )
    assert updated.task == expected
    loaded = await store.load_task(ALICE, task.id)
    assert loaded is not None
    assert (loaded.task, loaded.version) == (expected, 3)


async def test_status_times_are_kept_to_the_millisecond_on_every_store(store: TaskStore) -> None:
    """The memory store kept a given status time's microseconds, the SQL stores kept them in
    their filter column but not in the task document: what a task read back as, and whether
    a listing from that instant showed it, depended on the store."""
    created_at = datetime(2026, 11, 26, 10, 0, 0, 123456, tzinfo=UTC)
    task = a_task()
    task = attrs.evolve(task, status=attrs.evolve(task.status, timestamp=created_at))
    created = await store.create_task(ANONYMOUS, task)
    assert created.task.status.timestamp == created_at.replace(microsecond=123000)
    loaded = await store.load_task(ANONYMOUS, task.id)
    assert loaded is not None
    assert loaded.task.status.timestamp == created_at.replace(microsecond=123000)
    stamp = datetime(2026, 11, 26, 11, 0, 0, 654321, tzinfo=UTC)
    update = TaskUpdate(state=S.WORKING, timestamp=stamp)
    updated = await store.update_task(ANONYMOUS, task.id, update)
    kept = stamp.replace(microsecond=654000)
    assert updated.task.status.timestamp == kept
    loaded = await store.load_task(ANONYMOUS, task.id)
    assert loaded is not None
    assert loaded.task.status.timestamp == kept
    assert await all_pages(store, TaskQuery(status_timestamp_after=kept)) == [task.id]
    assert await all_pages(store, TaskQuery(status_timestamp_after=stamp)) == []


async def test_update_with_a_stale_version_changes_nothing(store: TaskStore) -> None:
    task = (await store.create_task(ANONYMOUS, a_task())).task
    await store.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING), expected_version=1)
    with pytest.raises(ConcurrencyError):
        await store.update_task(
            ANONYMOUS, task.id, TaskUpdate(state=S.COMPLETED), expected_version=1
        )
    loaded = await store.load_task(ANONYMOUS, task.id)
    assert loaded is not None
    assert (loaded.task.status.state, loaded.version) == (S.WORKING, 2)


async def test_racing_versioned_updates_let_exactly_one_win(store: TaskStore) -> None:
    task = (await store.create_task(ANONYMOUS, a_task())).task
    winners: list[int] = []
    losers: list[int] = []

    async def update(number: int) -> None:
        change = TaskUpdate(state=S.WORKING, messages=(agent_says(f"writer {number}"),))
        try:
            await store.update_task(ANONYMOUS, task.id, change, expected_version=1)
        except ConcurrencyError:
            losers.append(number)
        else:
            winners.append(number)

    async with trio.open_nursery() as nursery:
        for number in range(20):
            nursery.start_soon(update, number)
    assert len(winners) == 1
    assert len(losers) == 19
    loaded = await store.load_task(ANONYMOUS, task.id)
    assert loaded is not None
    assert loaded.version == 2
    assert loaded.task.history[-1].parts == (m.TextPart(f"writer {winners[0]}"),)


async def test_racing_unversioned_updates_lose_nothing(store: TaskStore) -> None:
    task = (await store.create_task(ANONYMOUS, a_task())).task

    async def append(number: int) -> None:
        await store.update_task(
            ANONYMOUS, task.id, TaskUpdate(messages=(agent_says(f"note {number}"),))
        )

    async with trio.open_nursery() as nursery:
        for number in range(20):
            nursery.start_soon(append, number)
    loaded = await store.load_task(ANONYMOUS, task.id)
    assert loaded is not None
    assert loaded.version == 21
    notes = {msg.parts[0] for msg in loaded.task.history[1:]}
    assert notes == {m.TextPart(f"note {number}") for number in range(20)}


@pytest.mark.parametrize("terminal", sorted(m.TERMINAL_STATES))
async def test_a_terminal_task_refuses_state_changes_but_takes_appends(
    store: TaskStore, terminal: m.TaskState
) -> None:
    task = (await store.create_task(ANONYMOUS, a_task())).task
    await store.update_task(ANONYMOUS, task.id, TaskUpdate(state=terminal))
    with pytest.raises(TaskTerminalStateError):
        await store.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING))
    appended = await store.update_task(
        ANONYMOUS, task.id, TaskUpdate(messages=(agent_says("late"),))
    )
    assert appended.version == 3
    assert appended.task.status.state is terminal


async def test_a_forbidden_transition_changes_nothing(store: TaskStore) -> None:
    task = (await store.create_task(ANONYMOUS, a_task())).task
    with pytest.raises(InvalidTransitionError):
        await store.update_task(
            ANONYMOUS, task.id, TaskUpdate(state=S.UNSPECIFIED, messages=(agent_says("x"),))
        )
    loaded = await store.load_task(ANONYMOUS, task.id)
    assert loaded is not None
    assert (loaded.task, loaded.version) == (task, 1)


async def test_update_of_an_unknown_task_is_not_found(store: TaskStore) -> None:
    with pytest.raises(TaskNotFoundError):
        await store.update_task(ANONYMOUS, "no-such-task", TaskUpdate(state=S.WORKING))


# -- touch: a lease on a running task ----------------------------------------------------------


async def a_moment_after(stamp: datetime) -> datetime:
    """The clock, once it reads later than ``stamp`` (within a microsecond or so)."""
    while (now := m.utcnow()) <= stamp:
        await trio.lowlevel.checkpoint()
    return now


async def test_a_touch_freshens_the_write_time_and_changes_nothing_else(store: TaskStore) -> None:
    task = a_task()
    first = await store.create_task(ALICE, task, events=[(1, task)])
    working = await store.update_task(ALICE, task.id, TaskUpdate(state=S.WORKING))
    newer = (await store.create_task(ALICE, a_task())).task
    mark = await a_moment_after(working.updated_at)
    assert await store.touch_task(ALICE, task.id, expected_version=2) is True
    touched = await store.load_task(ALICE, task.id)
    assert touched is not None
    assert (touched.task, touched.version) == (working.task, 2)
    assert touched.updated_at >= mark > first.updated_at
    (unfinished,) = [i for i in await store.list_unfinished() if i.stored.task.id == task.id]
    assert unfinished.stored.updated_at == touched.updated_at
    listed = await store.list_tasks(ALICE, TaskQuery())
    assert [found.id for found in listed.tasks] == [newer.id, task.id]  # not moved to the front
    assert await store.load_events(ALICE, task.id) == ((1, task),)
    # The version a reader took before the touch still writes: a cancel is not refused.
    canceled = await store.update_task(
        ALICE, task.id, TaskUpdate(state=S.CANCELED), expected_version=2
    )
    assert canceled.version == 3


async def test_a_touch_at_another_version_changes_nothing(store: TaskStore) -> None:
    task = (await store.create_task(ALICE, a_task())).task
    moved = await store.update_task(ALICE, task.id, TaskUpdate(state=S.WORKING))
    assert await store.touch_task(ALICE, task.id, expected_version=1) is False
    assert await store.load_task(ALICE, task.id) == moved


async def test_a_touch_finds_no_task_of_another_caller_or_none_at_all(store: TaskStore) -> None:
    created = await store.create_task(ALICE, a_task())
    task_id = created.task.id
    await a_moment_after(created.updated_at)
    for scope, lookup in ((MALLORY, task_id), (OTHER_TENANT, task_id), (ALICE, "nope")):
        assert await store.touch_task(scope, lookup, expected_version=1) is False
        assert await store.task_version(scope, lookup) is None
    assert await store.load_task(ALICE, task_id) == created


async def test_touch_tasks_touches_those_at_their_version_in_one_call(store: TaskStore) -> None:
    """A lease tick's batch: more tasks than one query takes, of several callers; a task at
    another version, deleted, or asked for under another caller is left as it is."""
    created = [
        await store.create_task(ANONYMOUS, a_task(f"task {number}"))
        for number in range(IDS_PER_QUERY + 5)
    ]
    created.append(await store.create_task(ALICE, a_task()))
    moved, deleted, not_mine = (stored.task.id for stored in created[:3])
    written = await store.update_task(ANONYMOUS, moved, TaskUpdate(state=S.WORKING))
    assert await store.delete_task(ANONYMOUS, deleted)
    mark = await a_moment_after(written.updated_at)
    asked = [TaskAtVersion(ANONYMOUS, stored.task.id, 1) for stored in created]
    asked[2] = TaskAtVersion(MALLORY, not_mine, 1)
    asked[-1] = TaskAtVersion(ALICE, created[-1].task.id, 1)
    asked.append(TaskAtVersion(ALICE, "x\x00", 1))
    assert await store.touch_tasks(asked) == {*asked[3:-1]}
    for task, stored in zip(asked[3:-1], created[3:], strict=True):
        fresh = await store.load_task(task.scope, task.task_id)
        assert fresh is not None and fresh.updated_at >= mark
        assert (fresh.task, fresh.version) == (stored.task, 1)
    assert await store.load_task(ANONYMOUS, not_mine) == created[2]
    assert await store.load_task(ANONYMOUS, moved) == written
    assert await store.load_task(ANONYMOUS, deleted) is None


async def test_touch_tasks_of_none_touches_nothing(store: TaskStore) -> None:
    created = await store.create_task(ANONYMOUS, a_task())
    await a_moment_after(created.updated_at)
    assert await store.touch_tasks([]) == set()
    assert await store.load_task(ANONYMOUS, created.task.id) == created


async def test_task_version_follows_writes_and_not_touches(store: TaskStore) -> None:
    task = (await store.create_task(ALICE, a_task())).task
    assert await store.task_version(ALICE, task.id) == 1
    await store.update_task(ALICE, task.id, TaskUpdate(state=S.WORKING))
    assert await store.touch_task(ALICE, task.id, expected_version=2)
    assert await store.task_version(ALICE, task.id) == 2


async def test_task_versions_reads_many_tasks_of_one_caller_at_once(store: TaskStore) -> None:
    """What a lease tick reads for every task its jobs wait on: more ids than one query takes,
    repeats, and ids of no task, another caller's task or an unstorable key, left out."""
    ids = await create_many(store, 3)
    await store.update_task(ANONYMOUS, ids[1], TaskUpdate(state=S.WORKING))
    assert await store.touch_task(ANONYMOUS, ids[1], expected_version=2)
    theirs = (await store.create_task(ALICE, a_task())).task.id
    unknown = [f"nope-{number}" for number in range(IDS_PER_QUERY + 10)]
    asked = [ids[0], *unknown[:300], ids[1], theirs, "x\x00", *unknown[300:], ids[2], ids[0]]
    assert await store.task_versions(ANONYMOUS, asked) == {ids[0]: 1, ids[1]: 2, ids[2]: 1}
    assert await store.task_versions(ALICE, asked) == {theirs: 1}
    assert await store.task_versions(MALLORY, asked) == {}
    assert await store.task_versions(ANONYMOUS, []) == {}


# -- caller scope ------------------------------------------------------------------------------


async def test_another_caller_can_neither_see_nor_touch_a_task(store: TaskStore) -> None:
    task = (await store.create_task(ALICE, a_task(context_id="ctx"))).task
    config = await store.set_push_config(
        ALICE, m.TaskPushNotificationConfig("https://x", task_id=task.id)
    )
    await store.append_events(ALICE, task.id, [(1, task)])
    for intruder in (MALLORY, OTHER_TENANT, ANONYMOUS):
        assert await store.load_task(intruder, task.id) is None
        page = await store.list_tasks(intruder, TaskQuery())
        assert (page.tasks, page.total_size) == ((), 0)
        with pytest.raises(TaskNotFoundError):
            await store.update_task(intruder, task.id, TaskUpdate(state=S.CANCELED))
        assert await store.delete_task(intruder, task.id) is False
        with pytest.raises(TaskNotFoundError):
            await store.load_events(intruder, task.id)
        with pytest.raises(TaskNotFoundError):
            await store.append_events(intruder, task.id, [(2, task)])
        assert await store.get_push_config(intruder, task.id, config.id) is None
        with pytest.raises(TaskNotFoundError):
            await store.list_push_configs(intruder, task.id)
        assert await store.delete_push_config(intruder, task.id, config.id) is False
        with pytest.raises(TaskNotFoundError):
            await store.set_push_config(intruder, attrs.evolve(config, url="https://evil"))
    loaded = await store.load_task(ALICE, task.id)
    assert loaded is not None
    assert (loaded.task, loaded.version) == (task, 1)
    assert await store.list_push_configs(ALICE, task.id) == (config,)
    assert await store.load_events(ALICE, task.id) == ((1, task),)


# -- listing -----------------------------------------------------------------------------------


async def test_list_is_newest_updated_first_with_total_size(store: TaskStore) -> None:
    ids = await create_many(store, 5)
    await store.update_task(ANONYMOUS, ids[1], TaskUpdate(state=S.WORKING))
    page = await store.list_tasks(ANONYMOUS, TaskQuery(page_size=3))
    assert [task.id for task in page.tasks] == [ids[1], ids[4], ids[3]]
    assert (page.page_size, page.total_size) == (3, 5)
    assert page.next_page_token


async def test_list_is_by_status_time_then_last_write(store: TaskStore) -> None:
    """A2A v1.0 §3.1.4: "sorted by their status timestamp time in descending order".  A write
    that leaves the status alone (a message, an artifact) moves a task only among those whose
    status time is its own; a status time in the past moves it back; a task without one lists
    last.  Before, every create and update moved its task to the front."""
    start = m.utcnow().replace(microsecond=0) - timedelta(minutes=3)

    async def at(minutes: int | None) -> str:
        stamp = None if minutes is None else start + timedelta(minutes=minutes)
        task = attrs.evolve(a_task(), status=m.TaskStatus(S.SUBMITTED, timestamp=stamp))
        return (await store.create_task(ANONYMOUS, task)).task.id

    first, second = await at(1), await at(2)
    said = TaskUpdate(
        messages=(agent_says("more"),), artifacts=(ArtifactWrite(m.new_artifact([])),)
    )
    await store.update_task(ANONYMOUS, first, said)
    assert await all_pages(store, TaskQuery(page_size=1)) == [second, first]
    await store.update_task(ANONYMOUS, second, TaskUpdate(state=S.WORKING, timestamp=start))
    untimed, tied = await at(None), await at(1)
    assert await all_pages(store, TaskQuery(page_size=1)) == [tied, first, second, untimed]
    await store.update_task(ANONYMOUS, first, said)  # written last of the two at minute 1
    assert await all_pages(store, TaskQuery(page_size=2)) == [first, tied, second, untimed]


async def test_list_filters_by_context_status_and_timestamp(store: TaskStore) -> None:
    in_ctx = await create_many(store, 3, context_id="ctx")
    await create_many(store, 2, context_id="other")
    await store.update_task(ANONYMOUS, in_ctx[0], TaskUpdate(state=S.WORKING))
    page = await store.list_tasks(ANONYMOUS, TaskQuery(context_id="ctx"))
    assert [task.id for task in page.tasks] == [in_ctx[0], in_ctx[2], in_ctx[1]]
    working = await store.list_tasks(ANONYMOUS, TaskQuery(status=S.WORKING))
    assert ([task.id for task in working.tasks], working.total_size) == ([in_ctx[0]], 1)
    cutoff = m.utcnow() + timedelta(minutes=1)
    await store.update_task(ANONYMOUS, in_ctx[1], TaskUpdate(state=S.WORKING, timestamp=cutoff))
    recent = await store.list_tasks(ANONYMOUS, TaskQuery(status_timestamp_after=cutoff))
    assert [task.id for task in recent.tasks] == [in_ctx[1]]
    both = await store.list_tasks(ANONYMOUS, TaskQuery(context_id="ctx", status=S.SUBMITTED))
    assert [task.id for task in both.tasks] == [in_ctx[2]]


async def test_list_leaves_out_artifacts_unless_asked_and_trims_history(store: TaskStore) -> None:
    task = (await store.create_task(ANONYMOUS, a_task())).task
    artifact = m.new_artifact([m.TextPart("out")])
    await store.update_task(
        ANONYMOUS,
        task.id,
        TaskUpdate(artifacts=(ArtifactWrite(artifact),), messages=(agent_says("reply"),)),
    )
    plain = await store.list_tasks(ANONYMOUS, TaskQuery(history_length=1))
    assert plain.tasks[0].artifacts == ()
    assert [msg.parts for msg in plain.tasks[0].history] == [(m.TextPart("reply"),)]
    full = await store.list_tasks(ANONYMOUS, TaskQuery(include_artifacts=True))
    assert full.tasks[0].artifacts == (artifact,)
    assert len(full.tasks[0].history) == 2


async def test_paging_visits_every_task_once(store: TaskStore) -> None:
    ids = await create_many(store, 23)
    assert await all_pages(store, TaskQuery(page_size=5)) == ids[::-1]
    assert await all_pages(store, TaskQuery(page_size=23)) == ids[::-1]
    empty = await store.list_tasks(ANONYMOUS, TaskQuery(context_id="nothing-here"))
    assert (empty.tasks, empty.next_page_token, empty.total_size) == ((), "", 0)


async def test_paging_neither_skips_nor_repeats_under_concurrent_inserts(
    store: TaskStore,
) -> None:
    before = await create_many(store, 30)
    seen: list[str] = []
    query = TaskQuery(page_size=7)
    inserted: list[str] = []

    async def insert_while_paging() -> None:
        for number in range(15):
            inserted.append((await store.create_task(ANONYMOUS, a_task(f"new {number}"))).task.id)
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(insert_while_paging)
        while True:
            page = await store.list_tasks(ANONYMOUS, query)
            seen += [task.id for task in page.tasks]
            if not page.next_page_token:
                break
            query = attrs.evolve(query, page_token=page.next_page_token)
    assert len(seen) == len(set(seen))
    assert [task_id for task_id in seen if task_id in set(before)] == before[::-1]
    fresh = await all_pages(store, TaskQuery(page_size=100))
    assert fresh == inserted[::-1] + before[::-1]


async def test_a_task_written_while_paging_is_not_shown_after_the_newest_went(
    store: TaskStore,
) -> None:
    """A task created (or updated) after the listing began lands in front of it, even when
    the tasks above the page token were deleted meanwhile."""
    oldest, middle, newest = await create_many(store, 3)
    first = await store.list_tasks(ANONYMOUS, TaskQuery(page_size=1))
    assert [task.id for task in first.tasks] == [newest]
    for task_id in (newest, middle):
        assert await store.delete_task(ANONYMOUS, task_id)
    created = (await store.create_task(ANONYMOUS, a_task("created while paging"))).task
    rest = await store.list_tasks(
        ANONYMOUS, TaskQuery(page_size=1, page_token=first.next_page_token)
    )
    assert [task.id for task in rest.tasks] == [oldest]
    assert await all_pages(store, TaskQuery()) == [created.id, oldest]


@pytest.mark.parametrize(
    ("query", "path"),
    [
        (TaskQuery(page_token="garbage!"), "$.pageToken"),
        (TaskQuery(page_token="eDEy"), "$.pageToken"),  # "x12": not our prefix
        (TaskQuery(page_token="bTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5"), "$.pageToken"),  # beyond 64 bits
        (TaskQuery(page_size=0), "$.pageSize"),
        (TaskQuery(page_size=101), "$.pageSize"),
        (TaskQuery(page_size=-5), "$.pageSize"),
        (TaskQuery(history_length=-1), "$.historyLength"),
    ],
)
async def test_bad_list_options_are_invalid_params(
    store: TaskStore, query: TaskQuery, path: str
) -> None:
    with pytest.raises(InvalidParamsError) as caught:
        await store.list_tasks(ANONYMOUS, query)
    assert caught.value.path == path
    assert caught.value.code == -32602


async def test_a_negative_history_length_on_load_is_invalid_params(store: TaskStore) -> None:
    """As ``list_tasks`` refuses it; before, ``load_task`` answered with an empty history."""
    task = a_task()
    await store.create_task(ANONYMOUS, task)
    with pytest.raises(InvalidParamsError) as caught:
        await store.load_task(ANONYMOUS, task.id, history_length=-1)
    assert caught.value.path == "$.historyLength"
    stored = await store.load_task(ANONYMOUS, task.id, history_length=0)
    assert stored is not None and stored.task.history == ()


async def test_page_size_bounds_are_accepted(store: TaskStore) -> None:
    ids = await create_many(store, 3)
    smallest = await store.list_tasks(ANONYMOUS, TaskQuery(page_size=1))
    largest = await store.list_tasks(ANONYMOUS, TaskQuery(page_size=100))
    assert [task.id for task in smallest.tasks] == ids[-1:]
    assert [task.id for task in largest.tasks] == ids[::-1]
    assert largest.next_page_token == ""


# -- delete ------------------------------------------------------------------------------------


async def test_delete_removes_the_task_its_log_configs_and_key(store: TaskStore) -> None:
    task = (await store.create_task(ALICE, a_task(context_id="c"), idempotency_key="k")).task
    await store.append_events(ALICE, task.id, [(1, task)])
    config = m.TaskPushNotificationConfig("https://hook", task_id=task.id, id="cfg")
    await store.set_push_config(ALICE, config)
    assert await store.delete_task(ALICE, task.id) is True
    assert await store.delete_task(ALICE, task.id) is False
    assert await store.load_task(ALICE, task.id) is None
    assert await store.get_push_config(ALICE, task.id, "cfg") is None
    with pytest.raises(TaskNotFoundError):
        await store.load_events(ALICE, task.id)
    again = await store.create_task(ALICE, a_task(context_id="c"), idempotency_key="k")
    assert again.task.id != task.id


# -- event log ---------------------------------------------------------------------------------


def every_kind_of_event(task: m.Task) -> list[m.StreamEvent]:
    return [
        task,
        agent_says("a message"),
        m.TaskStatusUpdateEvent(task.id, task.context_id, m.TaskStatus(S.WORKING)),
        m.TaskArtifactUpdateEvent(
            task.id, task.context_id, m.new_artifact([m.TextPart("x")]), append=True
        ),
    ]


async def test_events_are_logged_in_sequence_and_replayed_after_a_point(
    store: TaskStore,
) -> None:
    task = (await store.create_task(ANONYMOUS, a_task())).task
    events = every_kind_of_event(task)
    await store.append_events(ANONYMOUS, task.id, [(1, events[0]), (2, events[1])])
    await store.append_events(ANONYMOUS, task.id, [(3, events[2]), (4, events[3])])
    assert await store.load_events(ANONYMOUS, task.id) == tuple(enumerate(events, start=1))
    assert await store.load_events(ANONYMOUS, task.id, after_seq=2) == (
        (3, events[2]),
        (4, events[3]),
    )
    assert await store.load_events(ANONYMOUS, task.id, after_seq=4) == ()


async def test_an_append_freshens_the_write_time_and_changes_nothing_else(
    store: TaskStore,
) -> None:
    """An append is a write of the task, as a touch is: its write time moves on (a
    PostgreSQL update of the task's row, waiting for the append's lock, then sees the row
    changed), its version, document and listing place stay.  An empty one writes nothing."""
    task = a_task()
    first = await store.create_task(ALICE, task, events=[(1, task)])
    newer = (await store.create_task(ALICE, a_task())).task
    mark = await a_moment_after(first.updated_at)
    await store.append_events(ALICE, task.id, [(2, agent_says("more"))])
    appended = await store.load_task(ALICE, task.id)
    assert appended is not None
    assert (appended.task, appended.version) == (task, 1)
    assert appended.updated_at >= mark
    listed = await store.list_tasks(ALICE, TaskQuery())
    assert [found.id for found in listed.tasks] == [newer.id, task.id]  # not moved to the front
    await a_moment_after(appended.updated_at)
    await store.append_events(ALICE, task.id, [])
    assert await store.load_task(ALICE, task.id) == appended
    written = await store.update_task(ALICE, task.id, TaskUpdate(state=S.WORKING))
    assert written.version == 2 and written.updated_at > appended.updated_at


async def test_a_taken_sequence_number_is_refused_whole(store: TaskStore) -> None:
    task = (await store.create_task(ANONYMOUS, a_task())).task
    await store.append_events(ANONYMOUS, task.id, [(1, task)])
    with pytest.raises(ConcurrencyError):
        await store.append_events(ANONYMOUS, task.id, [(2, task), (1, task)])
    assert await store.load_events(ANONYMOUS, task.id) == ((1, task),)


@pytest.mark.parametrize("seqs", [[0], [-1], [3, 3]])
async def test_bad_sequence_numbers_are_a_programming_error(
    store: TaskStore, seqs: list[int]
) -> None:
    task = (await store.create_task(ANONYMOUS, a_task())).task
    with pytest.raises(ValueError, match="sequence numbers"):
        await store.append_events(ANONYMOUS, task.id, [(seq, task) for seq in seqs])
    assert await store.load_events(ANONYMOUS, task.id) == ()


async def test_bad_sequence_numbers_are_refused_whatever_the_store_holds(
    store: TaskStore,
) -> None:
    """A programming error is one on every backend: not a "not found", a retry's answer or a
    conflict on one and a ``ValueError`` on another."""
    task = a_task(context_id="c")
    await store.create_task(ANONYMOUS, task, idempotency_key="k")
    bad = [(0, task)]
    with pytest.raises(ValueError, match="sequence numbers"):
        await store.create_task(ANONYMOUS, a_task(context_id="c"), idempotency_key="k", events=bad)
    with pytest.raises(ValueError, match="sequence numbers"):
        await store.create_task(ANONYMOUS, task, events=bad)
    for task_id in ("nope", "x\x00"):
        with pytest.raises(ValueError, match="sequence numbers"):
            await store.append_events(ANONYMOUS, task_id, bad)
        with pytest.raises(ValueError, match="sequence numbers"):
            await store.update_task(ANONYMOUS, task_id, TaskUpdate(), events=bad)
    assert await store.task_version(ANONYMOUS, task.id) == 1


async def test_create_logs_the_events_of_a_new_task_only(store: TaskStore) -> None:
    task = a_task(context_id="c")
    created = await store.create_task(ANONYMOUS, task, idempotency_key="k", events=[(1, task)])
    retry = a_task(context_id="c")
    again = await store.create_task(ANONYMOUS, retry, idempotency_key="k", events=[(1, retry)])
    assert again == created  # the existing task, its log unchanged
    assert await store.load_events(ANONYMOUS, task.id) == ((1, task),)


async def test_update_logs_its_events_with_the_change(store: TaskStore) -> None:
    task = a_task()
    await store.create_task(ANONYMOUS, task, events=[(1, task)])
    working = m.TaskStatusUpdateEvent(task.id, task.context_id, m.TaskStatus(S.WORKING))
    artifact = every_kind_of_event(task)[3]
    updated = await store.update_task(
        ANONYMOUS, task.id, TaskUpdate(state=S.WORKING), events=[(2, artifact), (3, working)]
    )
    assert updated.version == 2
    events = await store.load_events(ANONYMOUS, task.id, after_seq=1)
    assert events == ((2, artifact), (3, working))


async def test_a_taken_sequence_number_refuses_the_whole_update(store: TaskStore) -> None:
    task = a_task()
    await store.create_task(ANONYMOUS, task, events=[(1, task)])
    logged = await store.load_events(ANONYMOUS, task.id)
    change = TaskUpdate(state=S.WORKING, messages=(agent_says("x"),))
    with pytest.raises(ConcurrencyError):
        await store.update_task(ANONYMOUS, task.id, change, events=[(2, task), (1, task)])
    loaded = await store.load_task(ANONYMOUS, task.id)
    assert loaded is not None
    assert (loaded.task, loaded.version) == (task, 1)
    assert await store.load_events(ANONYMOUS, task.id) == logged


async def test_a_refused_update_logs_none_of_its_events(store: TaskStore) -> None:
    task = (await store.create_task(ANONYMOUS, a_task())).task
    await store.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.CANCELED))
    with pytest.raises(TaskTerminalStateError):
        await store.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING), events=[(1, task)])
    with pytest.raises(ConcurrencyError):
        await store.update_task(
            ANONYMOUS, task.id, TaskUpdate(), expected_version=1, events=[(1, task)]
        )
    assert await store.load_events(ANONYMOUS, task.id) == ()


async def test_event_status_times_are_kept_to_the_millisecond_on_every_store(
    store: TaskStore,
) -> None:
    """The memory store logged a task snapshot's or a status update's time with its
    microseconds, the SQL stores (which encode events in the wire form) without: an event read
    back depended on the store.  Logged by create, update or append, every store cuts it."""
    fine = datetime(2026, 11, 26, 10, 0, 0, 123456, tzinfo=UTC)
    cut = fine.replace(microsecond=123000)
    task = a_task()
    task = attrs.evolve(task, status=attrs.evolve(task.status, timestamp=fine))

    def status(state: m.TaskState) -> m.TaskStatusUpdateEvent:
        return m.TaskStatusUpdateEvent(task.id, task.context_id, m.TaskStatus(state, None, fine))

    await store.create_task(ANONYMOUS, task, events=[(1, task)])
    await store.update_task(
        ANONYMOUS, task.id, TaskUpdate(state=S.WORKING), events=[(2, status(S.WORKING))]
    )
    message = agent_says("no time")
    await store.append_events(ANONYMOUS, task.id, [(3, task), (4, message)])
    events = dict(await store.load_events(ANONYMOUS, task.id))
    cut_task = attrs.evolve(task, status=attrs.evolve(task.status, timestamp=cut))
    assert events[1] == events[3] == cut_task
    assert events[2] == m.TaskStatusUpdateEvent(
        task.id, task.context_id, m.TaskStatus(S.WORKING, None, cut)
    )
    assert events[4] == message


async def test_events_of_an_unknown_task_are_not_found(store: TaskStore) -> None:
    with pytest.raises(TaskNotFoundError):
        await store.append_events(ANONYMOUS, "nope", [(1, agent_says("x"))])


async def test_last_event_seq_is_the_newest_logged_number(store: TaskStore) -> None:
    task = (await store.create_task(ALICE, a_task())).task
    other = a_task()
    await store.create_task(ALICE, other, events=[(1, other), (2, other)])
    assert await store.last_event_seq(ALICE, task.id) == 0
    await store.append_events(ALICE, task.id, [(3, task), (1, task)])
    assert await store.last_event_seq(ALICE, task.id) == 3
    await store.update_task(ALICE, task.id, TaskUpdate(), events=[(4, task)])
    assert await store.last_event_seq(ALICE, task.id) == 4
    for scope, task_id in ((MALLORY, task.id), (ALICE, "nope"), (ALICE, "x\x00")):
        with pytest.raises(TaskNotFoundError):
            await store.last_event_seq(scope, task_id)


async def test_load_task_with_seq_reads_the_task_and_its_newest_number_together(
    store: TaskStore,
) -> None:
    task = (await store.create_task(ALICE, a_task())).task
    assert await store.load_task_with_seq(ALICE, task.id) == (
        await store.load_task(ALICE, task.id),
        0,
    )
    updated = await store.update_task(
        ALICE, task.id, TaskUpdate(state=S.WORKING), events=[(1, task), (2, task)]
    )
    assert await store.load_task_with_seq(ALICE, task.id) == (updated, 2)
    for scope, task_id in ((MALLORY, task.id), (ALICE, "nope"), (ALICE, "x\x00")):
        assert await store.load_task_with_seq(scope, task_id) is None


async def test_the_event_log_keeps_only_the_newest(backend: Backend) -> None:
    async with open_store(backend.url, retention=Retention(max_events_per_task=3)) as store:
        task = (await store.create_task(ANONYMOUS, a_task())).task
        other = (await store.create_task(ANONYMOUS, a_task())).task
        message = agent_says("e")
        await store.append_events(ANONYMOUS, other.id, [(1, message)])
        await store.append_events(ANONYMOUS, task.id, [(seq, message) for seq in range(1, 5)])
        await store.append_events(ANONYMOUS, task.id, [(5, message)])
        kept = await store.load_events(ANONYMOUS, task.id)
        assert [seq for seq, _event in kept] == [3, 4, 5]
        await store.update_task(ANONYMOUS, task.id, TaskUpdate(), events=[(6, message)])
        kept = await store.load_events(ANONYMOUS, task.id)
        assert [seq for seq, _event in kept] == [4, 5, 6]
        assert await store.last_event_seq(ANONYMOUS, task.id) == 6
        assert await store.load_events(ANONYMOUS, other.id) == ((1, message),)


async def test_an_event_below_what_a_full_log_keeps_is_refused_as_logged(
    backend: Backend,
) -> None:
    """A number with the bound's worth of newer events logged was logged and trimmed away (or
    could only be dropped at once): the stores took it and dropped it, the write acknowledged;
    it is refused as a taken number is, the whole write with it.  Below the lowest kept number
    of a log not yet full, or in a gap a full log keeps, a number is still taken in."""
    async with open_store(backend.url, retention=Retention(max_events_per_task=3)) as store:
        message = agent_says("e")
        stored = await store.create_task(ANONYMOUS, a_task())
        task_id = stored.task.id
        await store.append_events(ANONYMOUS, task_id, [(seq, message) for seq in (1, 3, 5, 7)])
        kept = await store.load_events(ANONYMOUS, task_id)
        assert [seq for seq, _event in kept] == [3, 5, 7]
        appended = await store.load_task(ANONYMOUS, task_id)  # its write time moved on
        for seqs in ([1], [2], [2, 8]):
            events = [(seq, agent_says(f"late {seq}")) for seq in seqs]
            with pytest.raises(ConcurrencyError, match="refused as already logged"):
                await store.append_events(ANONYMOUS, task_id, events)
            with pytest.raises(ConcurrencyError, match="refused as already logged"):
                await store.update_task(
                    ANONYMOUS,
                    task_id,
                    TaskUpdate(state=S.WORKING, messages=(agent_says("late"),)),
                    expected_version=stored.version,
                    events=events,
                )
        assert await store.load_events(ANONYMOUS, task_id) == kept
        assert await store.load_task(ANONYMOUS, task_id) == appended
        await store.append_events(ANONYMOUS, task_id, [(4, message)])  # a gap the log keeps
        kept = await store.load_events(ANONYMOUS, task_id)
        assert [seq for seq, _event in kept] == [4, 5, 7]
        with pytest.raises(ConcurrencyError, match="refused as already logged"):
            await store.append_events(ANONYMOUS, task_id, [(3, message)])  # trimmed just now
        young = (await store.create_task(ANONYMOUS, a_task(), events=[(5, message)])).task
        await store.update_task(ANONYMOUS, young.id, TaskUpdate(), events=[(2, message)])
        kept = await store.load_events(ANONYMOUS, young.id)
        assert [seq for seq, _event in kept] == [2, 5]


@pytest.mark.parametrize("seed", range(3))
async def test_the_event_log_keeps_exactly_the_newest_whatever_the_writes(
    backend: Backend, seed: int
) -> None:
    """After every write the log is the newest events of what it held and what was added: a
    running task's stream (from two store instances in turns, sometimes with gaps or several
    events), events in gaps, below the oldest and beyond (written with the task or appended),
    more events than the bound at once, and refused writes of a taken number or of one below
    what the full log keeps, which change nothing."""
    rng = random.Random(seed)
    bound = 4
    retention = Retention(max_events_per_task=bound)
    async with contextlib.AsyncExitStack() as stack:
        one = await stack.enter_async_context(open_store(backend.url, retention=retention))
        two = one
        if backend.name != "memory":  # a second instance on the same database
            two = await stack.enter_async_context(open_store(backend.url, retention=retention))
        stored = await one.create_task(ANONYMOUS, a_task(), events=[(1, agent_says("1"))])
        task_id = stored.task.id
        log = [1]
        for step in range(50):
            store = (one, two)[step % 4 == 3]  # runs of three writes from one, then one from two
            kind = rng.choice(["stream"] * 5 + ["gap", "below", "taken", "many"])
            top = max(log)
            if kind == "stream":
                first = top + 1 + rng.choice([0, 0, 0, 1, bound])
                seqs = list(range(first, first + rng.choice([1, 1, 2])))
            elif kind == "gap":  # a free number among or above the logged ones, appended
                seqs = [rng.choice([n for n in range(min(log), top + 3) if n not in log])]
            elif kind == "below":
                seqs = [min(log) - 1] if min(log) > 1 else [top + 1]
            elif kind == "taken":
                seqs = [rng.choice(log)]
            else:
                seqs = list(range(top + 1, top + bound + 2))
            events = [(seq, agent_says(str(seq))) for seq in seqs]
            update = TaskUpdate(messages=(agent_says(f"step {step}"),))
            newer = [n for n in log if n > min(seqs)]
            logged = any(seq in log for seq in seqs) or len(newer) >= bound
            try:
                if kind in ("gap", "below") and rng.random() < 0.5:
                    await store.append_events(ANONYMOUS, task_id, events)
                else:
                    stored = await store.update_task(
                        ANONYMOUS, task_id, update, expected_version=stored.version, events=events
                    )
            except ConcurrencyError:
                assert logged, f"step {step}: {kind} {seqs} refused"
                assert (await one.task_version(ANONYMOUS, task_id)) == stored.version
            else:
                assert not logged, f"step {step}: {kind} {seqs} taken in"
                log = sorted({*log, *seqs})[-bound:]
            kept = await one.load_events(ANONYMOUS, task_id)
            assert [seq for seq, _event in kept] == log, f"step {step}: {kind} {seqs}"


# -- push-notification configs -----------------------------------------------------------------


async def test_push_config_crud(store: TaskStore) -> None:
    task = (await store.create_task(ALICE, a_task())).task
    auth = m.AuthenticationInfo("Bearer", "secret")
    first = await store.set_push_config(
        ALICE, m.TaskPushNotificationConfig("https://a", task_id=task.id, authentication=auth)
    )
    assert first.id
    second = await store.set_push_config(
        ALICE, m.TaskPushNotificationConfig("https://b", task_id=task.id, id="mine", token="t")
    )
    assert await store.get_push_config(ALICE, task.id, first.id) == first
    assert await store.list_push_configs(ALICE, task.id) == (first, second)
    replaced = await store.set_push_config(ALICE, attrs.evolve(first, url="https://a2"))
    assert await store.list_push_configs(ALICE, task.id) == (replaced, second)
    assert await store.delete_push_config(ALICE, task.id, "mine") is True
    assert await store.delete_push_config(ALICE, task.id, "mine") is False
    assert await store.get_push_config(ALICE, task.id, "mine") is None
    assert await store.list_push_configs(ALICE, task.id) == (replaced,)


async def test_push_delivery_marks_say_what_a_restart_still_sends(store: TaskStore) -> None:
    """A new config is marked at the task's last event unless told otherwise; marks only move
    forward; the backlog lists, across scopes, each task whose least mark is behind its log."""
    task = (await store.create_task(ALICE, a_task())).task
    other = (await store.create_task(OTHER_TENANT, a_task())).task
    await store.append_events(ALICE, task.id, [(1, task), (2, agent_says("a"))])
    await store.append_events(OTHER_TENANT, other.id, [(1, other)])
    assert await lagging(store) == ()
    config = m.TaskPushNotificationConfig("https://a", task_id=task.id, id="a")
    await store.set_push_config(ALICE, config)  # for what comes next: nothing lags
    await store.set_push_config(OTHER_TENANT, attrs.evolve(config, task_id=other.id))
    assert await lagging(store) == ()
    late = attrs.evolve(config, id="b")
    await store.set_push_config(ALICE, late, delivered_through=0)  # from the first event on
    assert await lagging(store) == (PushBacklog(ALICE, task.id, 0),)
    assert await store.list_push_targets(ALICE, task.id) == (
        PushTarget(config, 2),
        PushTarget(late, 0),
    )
    await store.set_push_config(ALICE, attrs.evolve(late, url="https://b"))  # keeps its mark
    await store.mark_push_delivered(ALICE, task.id, 1)
    assert await lagging(store) == (PushBacklog(ALICE, task.id, 1),)
    await store.append_events(OTHER_TENANT, other.id, [(2, agent_says("b"))])
    await store.mark_push_delivered(MALLORY, task.id, 2)  # not the caller's task: no mark
    await store.mark_push_delivered(ALICE, "nope", 2)
    assert set(await lagging(store)) == {
        PushBacklog(ALICE, task.id, 1),
        PushBacklog(OTHER_TENANT, other.id, 1),
    }
    await store.mark_push_delivered(ALICE, task.id, 2)
    await store.mark_push_delivered(ALICE, task.id, 1)  # never back
    assert await store.delete_push_config(OTHER_TENANT, other.id, "a")
    assert await lagging(store) == ()
    await store.append_events(ALICE, task.id, [(3, agent_says("c"))])
    assert await lagging(store) == (PushBacklog(ALICE, task.id, 2),)
    await store.delete_task(ALICE, task.id)
    assert await lagging(store) == ()


async def test_push_claims_let_one_sender_at_a_time_deliver_a_task(store: TaskStore) -> None:
    """A claim holds a task's deliveries for its claimant until it lapses or is released
    (or is stolen, by a server alone on its store); renewing it is claiming it again."""
    task = (await store.create_task(ALICE, a_task())).task
    await store.append_events(ALICE, task.id, [(1, task), (2, agent_says("a"))])
    config = m.TaskPushNotificationConfig("https://a", task_id=task.id, id="a")
    await store.set_push_config(ALICE, config, delivered_through=1)
    key = (ALICE, task.id)
    later = m.utcnow() + timedelta(minutes=1)
    behind = (PushBacklog(ALICE, task.id, 1),)
    assert await store.claim_push_backlog("a", until=later) == behind
    assert await store.claim_push_backlog("b", until=later) == ()  # a's lasts
    assert await store.claim_push_backlog("a", until=later) == behind  # a's own, renewed
    assert await store.claim_push_deliveries("b", [key], until=later) == set()
    assert await store.claim_push_deliveries("a", [key], until=later) == {key}
    # another scope's task, and one that does not exist, are never held
    assert await store.claim_push_deliveries("a", [(MALLORY, task.id)], until=later) == set()
    assert await store.claim_push_deliveries("a", [(ALICE, "nope")], until=later) == set()
    assert await store.claim_push_deliveries("b", [key], until=later, steal=True) == {key}
    assert await store.claim_push_deliveries("a", [key], until=later) == set()  # a lost it
    await store.release_push_claims("a", [key])  # not a's to release
    assert await store.claim_push_backlog("a", until=later) == ()
    await store.release_push_claims("b", [key, (ALICE, "nope")])
    assert await store.claim_push_deliveries("a", [key], until=LAPSED) == {key}
    assert await store.claim_push_backlog("b", until=later) == behind  # a's had lapsed
    await store.mark_push_delivered(ALICE, task.id, 2)
    assert await store.claim_push_backlog("c", until=later, steal=True) == ()  # nothing lags
    assert await store.delete_task(ALICE, task.id)
    assert await store.claim_push_deliveries("b", [key], until=later) == set()


async def test_push_config_needs_an_existing_task(store: TaskStore) -> None:
    with pytest.raises(InvalidParamsError) as caught:
        await store.set_push_config(ANONYMOUS, m.TaskPushNotificationConfig("https://a"))
    assert caught.value.path == "$.taskId"
    with pytest.raises(TaskNotFoundError):
        await store.set_push_config(
            ANONYMOUS, m.TaskPushNotificationConfig("https://a", task_id="nope")
        )
    with pytest.raises(TaskNotFoundError):
        await store.list_push_configs(ANONYMOUS, "nope")


async def test_push_configs_set_within_one_millisecond_list_oldest_first(
    store: TaskStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SQL stores ordered configs by their creation time, to the millisecond, and then
    by id: configs set within one millisecond came out by id."""
    task = (await store.create_task(ANONYMOUS, a_task())).task
    instant = m.utcnow()
    monkeypatch.setattr(m, "utcnow", lambda: instant)
    for config_id in ("c", "a", "b"):
        config = m.TaskPushNotificationConfig("https://a", id=config_id, task_id=task.id)
        await store.set_push_config(ANONYMOUS, config)
    await store.set_push_config(  # replaced: keeps its place
        ANONYMOUS, m.TaskPushNotificationConfig("https://b", id="c", task_id=task.id)
    )
    listed = await store.list_push_configs(ANONYMOUS, task.id)
    assert [(config.id, config.url) for config in listed] == [
        ("c", "https://b"),
        ("a", "https://a"),
        ("b", "https://a"),
    ]


async def test_push_configs_set_at_once_list_in_the_order_they_were_set(
    sql_backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two PostgreSQL transactions setting configs of one task at once each timed theirs
    after the newest config it saw, without the other's: both took one time, listed by id,
    so a config could show up in front of one a listing had already shown."""
    instant = m.utcnow()
    monkeypatch.setattr(m, "utcnow", lambda: instant)
    async with open_store(sql_backend.url) as one, open_store(sql_backend.url) as two:
        task = (await one.create_task(ANONYMOUS, a_task())).task
        listings: list[list[str]] = []

        async def set_configs(store: TaskStore) -> None:
            for _ in range(10):
                config = m.TaskPushNotificationConfig("https://a", task_id=task.id)
                await store.set_push_config(ANONYMOUS, config)  # the store makes its id

        async def watch(done: trio.Event) -> None:
            while not done.is_set():
                listed = await two.list_push_configs(ANONYMOUS, task.id)
                listings.append([config.id for config in listed])

        done = trio.Event()
        async with trio.open_nursery() as watching:
            watching.start_soon(watch, done)
            async with trio.open_nursery() as setting:
                for store in (one, two, one, two, one, two):
                    setting.start_soon(set_configs, store)
            done.set()
        final = [config.id for config in await one.list_push_configs(ANONYMOUS, task.id)]
        assert len(set(final)) == 60
        for listing in listings:  # configs are only ever added after those listed before
            assert final[: len(listing)] == listing


# -- recovery and retention --------------------------------------------------------------------


async def test_a_task_in_no_state_is_refused(store: TaskStore) -> None:
    """An ``UNSPECIFIED`` task could never be updated to another state, purged or recovered
    (and the backends disagreed on whether it was unfinished): none is stored."""
    task = attrs.evolve(a_task(), status=m.TaskStatus(S.UNSPECIFIED))
    with pytest.raises(InvalidTransitionError, match="TASK_STATE_UNSPECIFIED"):
        await store.create_task(ANONYMOUS, task, events=[(1, task)])
    assert await store.load_task(ANONYMOUS, task.id) is None
    assert await store.list_unfinished() == ()


async def test_list_unfinished_finds_live_tasks_in_every_scope(store: TaskStore) -> None:
    waiting = (await store.create_task(ALICE, a_task())).task
    running = (await store.create_task(OTHER_TENANT, a_task())).task
    done = (await store.create_task(ANONYMOUS, a_task())).task
    await store.update_task(ALICE, waiting.id, TaskUpdate(state=S.INPUT_REQUIRED))
    await store.update_task(OTHER_TENANT, running.id, TaskUpdate(state=S.WORKING))
    await store.update_task(ANONYMOUS, done.id, TaskUpdate(state=S.COMPLETED))
    found = await store.list_unfinished()
    assert [(item.scope, item.stored.task.id, item.stored.version) for item in found] == [
        (ALICE, waiting.id, 2),
        (OTHER_TENANT, running.id, 2),
    ]
    assert found[0].stored.task.status.state is S.INPUT_REQUIRED


async def test_purge_removes_only_expired_terminal_tasks(backend: Backend) -> None:
    async with open_store(
        backend.url, retention=Retention(terminal_ttl=timedelta(hours=1))
    ) as store:
        finished = (await store.create_task(ANONYMOUS, a_task())).task
        live = (await store.create_task(ANONYMOUS, a_task())).task
        await store.update_task(ANONYMOUS, finished.id, TaskUpdate(state=S.FAILED))
        await store.append_events(ANONYMOUS, finished.id, [(1, finished)])
        assert await store.purge_expired() == 0
        later = m.utcnow() + timedelta(hours=2)
        assert await store.purge_expired(now=later) == 1
        assert await store.load_task(ANONYMOUS, finished.id) is None
        assert await store.load_task(ANONYMOUS, live.id) is not None


async def test_without_a_ttl_nothing_is_purged(store: TaskStore) -> None:
    task = (await store.create_task(ANONYMOUS, a_task())).task
    await store.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.COMPLETED))
    assert await store.purge_expired(now=m.utcnow() + timedelta(days=10_000)) == 0
    assert await store.load_task(ANONYMOUS, task.id) is not None


async def test_open_store_purges_periodically(autojump_clock: object) -> None:
    # The loop is the same for every backend; the memory store keeps virtual time deterministic
    # (a thread hop lets the autojump clock leap), and purge_expired is tested per backend above.
    retention = Retention(terminal_ttl=timedelta(0), purge_interval=timedelta(minutes=1))
    async with open_store("memory", retention=retention) as store:
        task = (await store.create_task(ANONYMOUS, a_task())).task
        live = (await store.create_task(ANONYMOUS, a_task())).task
        await store.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.COMPLETED))
        await trio.sleep(61)  # the first purge ran at open, before the task existed
        assert await store.load_task(ANONYMOUS, task.id) is None
        assert await store.load_task(ANONYMOUS, live.id) is not None


@pytest.mark.parametrize(
    ("ttl", "every"),
    [
        (timedelta(seconds=2), timedelta(seconds=1)),
        (timedelta(0), timedelta(seconds=1)),
        (timedelta(minutes=2), timedelta(minutes=1)),
        (timedelta(days=7), timedelta(minutes=5)),
        (None, timedelta(minutes=5)),
    ],
)
def test_the_purge_runs_every_half_ttl_within_bounds(
    ttl: timedelta | None, every: timedelta
) -> None:
    """A2A_TRIO_RETENTION=2 must purge within seconds, not at the next 5-minute tick."""
    assert Retention(terminal_ttl=ttl).purge_every() == every
    fixed = Retention(terminal_ttl=ttl, purge_interval=timedelta(hours=1))
    assert fixed.purge_every() == timedelta(hours=1)


async def test_a_short_ttl_purges_within_a_second() -> None:
    """Real time: the TTL is measured on the wall clock the stored timestamps use."""
    retention = Retention(terminal_ttl=timedelta(seconds=0.3))
    async with open_store("memory", retention=retention) as store:
        task = (await store.create_task(ANONYMOUS, a_task())).task
        await store.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.COMPLETED))
        assert await store.load_task(ANONYMOUS, task.id) is not None
        await trio.sleep(1.3)  # purges at open and 1 s later
        assert await store.load_task(ANONYMOUS, task.id) is None


# -- awkward input -----------------------------------------------------------------------------


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(task=V1_STRATEGIES.of(m.Task))
def test_any_task_round_trips(backend_url: str, task: m.Task) -> None:
    # Fresh ids (the database outlives examples); keys with NUL are refused, as tested below,
    # and so is a task in no state.
    task = attrs.evolve(task, id=m.new_id(), context_id=task.context_id.replace("\x00", ""))
    if task.status.state is S.UNSPECIFIED:
        task = attrs.evolve(task, status=attrs.evolve(task.status, state=S.SUBMITTED))

    async def round_trip() -> None:
        async with open_store(backend_url) as store:
            await store.create_task(ANONYMOUS, task)
            loaded = await store.load_task(ANONYMOUS, task.id)
            assert loaded is not None
            assert loaded.task == task
            await store.append_events(ANONYMOUS, task.id, [(1, task)])
            assert await store.load_events(ANONYMOUS, task.id) == ((1, task),)

    trio.run(round_trip)


async def test_any_text_round_trips_in_a_task(store: TaskStore) -> None:
    text = 'nul \x00, emoji \U0001f600, quote " backslash \\ and \u2028'
    task = attrs.evolve(a_task(text), metadata={"k\x00": text})
    await store.create_task(ANONYMOUS, task)
    loaded = await store.load_task(ANONYMOUS, task.id)
    assert loaded is not None
    assert loaded.task == task
    await store.append_events(ANONYMOUS, task.id, [(1, task)])
    assert await store.load_events(ANONYMOUS, task.id) == ((1, task),)


@pytest.mark.parametrize(
    ("scope", "task", "key", "path"),
    [
        (ANONYMOUS, attrs.evolve(a_task(), id="a\x00b"), None, "$.id"),
        (ANONYMOUS, a_task(context_id="c\x00"), None, "$.contextId"),
        (CallerScope("t\x00"), a_task(), None, "$.tenant"),
        (CallerScope("", "o\x00"), a_task(), None, "$.owner"),
        (ANONYMOUS, a_task(), "k\x00", "$.idempotencyKey"),
    ],
)
async def test_keys_with_a_nul_character_are_refused(
    store: TaskStore, scope: CallerScope, task: m.Task, key: str | None, path: str
) -> None:
    with pytest.raises(InvalidParamsError) as caught:
        await store.create_task(scope, task, idempotency_key=key)
    assert caught.value.path == path
    assert await store.list_unfinished() == ()


async def test_lookups_by_a_nul_key_find_nothing(store: TaskStore) -> None:
    task = (await store.create_task(ANONYMOUS, a_task())).task
    odd = CallerScope("\x00")
    for scope, task_id in ((ANONYMOUS, "x\x00"), (odd, task.id)):
        assert await store.load_task(scope, task_id) is None
        assert await store.delete_task(scope, task_id) is False
        with pytest.raises(TaskNotFoundError):
            await store.update_task(scope, task_id, TaskUpdate(state=S.WORKING))
        with pytest.raises(TaskNotFoundError):
            await store.load_events(scope, task_id)
        with pytest.raises(TaskNotFoundError):
            await store.append_events(scope, task_id, [(1, task)])
        with pytest.raises(TaskNotFoundError):
            await store.list_push_configs(scope, task_id)
        with pytest.raises(TaskNotFoundError):
            await store.set_push_config(
                scope, m.TaskPushNotificationConfig("https://a", task_id=task_id)
            )
        assert await store.get_push_config(scope, task_id, "c") is None
        assert await store.delete_push_config(scope, task_id, "c") is False
    assert await store.get_push_config(ANONYMOUS, task.id, "c\x00") is None
    assert await store.delete_push_config(ANONYMOUS, task.id, "c\x00") is False
    with pytest.raises(InvalidParamsError):
        await store.set_push_config(
            ANONYMOUS, m.TaskPushNotificationConfig("https://a", task_id=task.id, id="c\x00")
        )
    empty = await store.list_tasks(odd, TaskQuery())
    assert (empty.tasks, empty.total_size) == ((), 0)
    by_context = await store.list_tasks(ANONYMOUS, TaskQuery(context_id="\x00"))
    assert (by_context.tasks, by_context.total_size) == ((), 0)
    loaded = await store.load_task(ANONYMOUS, task.id)
    assert loaded is not None
    assert loaded.version == 1
