"""The SQL store's memory of what it last wrote: same documents, fewer reads, never stale."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import attrs
import pytest

from a2a_trio import model as m
from a2a_trio.errors import ConcurrencyError, InvalidTransitionError
from a2a_trio.store import (
    ANONYMOUS,
    ArtifactWrite,
    Retention,
    TaskAtVersion,
    TaskUpdate,
    _postgres,
    _sql,
    open_store,
)
from a2a_trio.store._base import apply_update
from a2a_trio.store._written import Written, WrittenTasks, encode_task
from a2a_trio.wire import V1

from .conftest import Backend, make_backend
from .test_contract import a_task, agent_says

S = m.TaskState
NOW = datetime(2026, 11, 26, tzinfo=UTC)


def random_update(rng: random.Random, task: m.Task) -> TaskUpdate:
    """Appends, replacements, new artifacts, messages, metadata and WORKING states, mixed."""
    writes = []
    for _ in range(rng.randrange(3)):
        known = [artifact.artifact_id for artifact in task.artifacts]
        artifact_id = rng.choice([*known, m.new_id()]) if known else m.new_id()
        parts = tuple(m.TextPart(f"chunk {rng.randrange(1000)}") for _ in range(rng.randrange(3)))
        part_or_data = (
            (*parts, m.DataPart({"n": rng.randrange(9)})) if rng.random() < 0.2 else parts
        )
        artifact = m.Artifact(
            artifact_id=artifact_id, parts=part_or_data, name=rng.choice(["", "a"])
        )
        writes.append(ArtifactWrite(artifact, append=rng.random() < 0.7))
    return TaskUpdate(
        state=rng.choice([None, S.WORKING]),
        artifacts=tuple(writes),
        messages=(agent_says(f"m{rng.randrange(99)}"),) if rng.random() < 0.3 else (),
        metadata={"k": rng.randrange(5)} if rng.random() < 0.2 else None,
    )


@pytest.mark.parametrize("seed", range(20))
def test_a_reused_encoding_is_the_full_encoding(seed: int) -> None:
    rng = random.Random(seed)
    task = a_task()
    previous = Written(1, 0, task, V1.encode(task))
    for step in range(60):
        task = apply_update(task, random_update(rng, task), now=NOW)
        document = encode_task(task, previous)
        assert document == V1.encode(task), f"step {step}"
        assert V1.decode(document, m.Task) == task
        previous = Written(previous.version + 1, step, task, document)


def test_appended_parts_keep_their_earlier_encoding() -> None:
    artifact = m.new_artifact([m.TextPart("one")])
    task = attrs.evolve(a_task(), artifacts=(artifact,))
    first = V1.encode(task)
    update = TaskUpdate(
        artifacts=(ArtifactWrite(attrs.evolve(artifact, parts=(m.TextPart("two"),)), append=True),)
    )
    later = apply_update(task, update, now=NOW)
    document = encode_task(later, Written(1, 0, task, first))
    assert document["artifacts"][0]["parts"][0] is first["artifacts"][0]["parts"][0]
    assert document["history"][0] is first["history"][0]
    assert document == V1.encode(later)


def test_only_running_tasks_are_remembered_and_never_an_older_version() -> None:
    written = WrittenTasks(limit=2)
    task = a_task()
    written.remember(Written(2, 0, task, {}), based_on=None)
    written.remember(Written(1, 0, task, {}), based_on=None)
    assert written.get(task.id) == Written(2, 0, task, {})
    for state in (S.INPUT_REQUIRED, S.COMPLETED):
        written.remember(Written(2, 0, task, {}), based_on=None)
        settled = attrs.evolve(task, status=m.TaskStatus(state))
        written.remember(Written(3, 0, settled, {}), based_on=None)
        assert written.get(task.id) is None
    others = [a_task() for _ in range(3)]
    for other in others:
        written.remember(Written(1, 0, other, {}), based_on=None)
    assert [written.get(other.id) is not None for other in others] == [False, True, True]


async def test_interleaved_writers_never_write_over_each_other(sql_backend: Backend) -> None:
    """Two replicas append to one artifact in turn: each must see the other's chunks."""
    async with open_store(sql_backend.url) as one, open_store(sql_backend.url) as two:
        task = (await one.create_task(ANONYMOUS, a_task())).task
        artifact_id = m.new_id()
        sent = []
        for number in range(12):
            store = (one, two)[number % 3 == 2]  # two runs of "one", then "two"
            chunk = m.Artifact(artifact_id=artifact_id, parts=(m.TextPart(f"c{number}"),))
            await store.update_task(
                ANONYMOUS,
                task.id,
                TaskUpdate(state=S.WORKING, artifacts=(ArtifactWrite(chunk, append=number > 0),)),
            )
            sent.append(m.TextPart(f"c{number}"))
        for store in (one, two):
            stored = await store.load_task(ANONYMOUS, task.id)
            assert stored is not None
            assert stored.task.artifacts[0].parts == tuple(sent)
            assert stored.version == 13


async def test_a_task_recreated_under_its_id_is_read_afresh(sql_backend: Backend) -> None:
    """A legacy client may reuse a task id once the task is gone: the memory of the old one
    must not stand in for the new one, even at the same version."""
    async with open_store(sql_backend.url) as one, open_store(sql_backend.url) as two:
        task = (await one.create_task(ANONYMOUS, a_task("first"))).task
        await one.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING))
        assert await two.delete_task(ANONYMOUS, task.id)
        again = attrs.evolve(a_task("second"), id=task.id)
        await two.create_task(ANONYMOUS, again)
        await two.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING))
        stored = await one.update_task(ANONYMOUS, task.id, TaskUpdate(messages=(agent_says("x"),)))
        assert [
            part.text
            for msg in stored.task.history
            for part in msg.parts
            if isinstance(part, m.TextPart)
        ] == ["second", "x"]


async def test_a_remembered_write_is_refused_once_another_instance_wrote(
    sql_backend: Backend,
) -> None:
    """The memory is current no longer: a write at the version it knows is refused, and one
    at the version another replica left sees that replica's change."""
    async with open_store(sql_backend.url) as one, open_store(sql_backend.url) as two:
        task = (await one.create_task(ANONYMOUS, a_task())).task
        await one.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING), events=[(1, task)])
        await two.update_task(
            ANONYMOUS, task.id, TaskUpdate(messages=(agent_says("two"),)), events=[(2, task)]
        )
        with pytest.raises(ConcurrencyError):
            await one.update_task(
                ANONYMOUS,
                task.id,
                TaskUpdate(messages=(agent_says("lost"),)),
                expected_version=2,
                events=[(3, task)],
            )
        assert [seq for seq, _event in await two.load_events(ANONYMOUS, task.id)] == [1, 2]
        stored = await one.update_task(
            ANONYMOUS,
            task.id,
            TaskUpdate(messages=(agent_says("one"),)),
            expected_version=3,
            events=[(3, task)],
        )
        assert [msg.parts for msg in stored.task.history[1:]] == [
            (m.TextPart("two"),),
            (m.TextPart("one"),),
        ]
        assert stored.version == 4


async def test_a_change_the_remembered_task_refuses_is_judged_on_the_row(
    sql_backend: Backend,
) -> None:
    """WORKING may not go back to SUBMITTED, but the task waits for input now (another replica
    wrote it): the row, not the memory, decides."""
    async with open_store(sql_backend.url) as one, open_store(sql_backend.url) as two:
        task = (await one.create_task(ANONYMOUS, a_task())).task
        await one.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING))
        await two.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.INPUT_REQUIRED))
        stored = await one.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.SUBMITTED))
        assert (stored.task.status.state, stored.version) == (S.SUBMITTED, 4)
        with pytest.raises(InvalidTransitionError):
            await one.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.UNSPECIFIED))


@pytest.mark.postgres
async def test_a_running_tasks_write_is_one_statement_on_postgresql(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each chunk of a streamed answer costs PostgreSQL one statement, with no transaction
    around it: the row, its event and the log's trim (over the bound here) together."""
    statements: list[str] = []
    run = _postgres._PgTx.run

    def recording(tx: _postgres._PgTx, sql: str, params: Sequence[object] = ()) -> _sql.Cursor:
        statements.append(sql)
        return run(tx, sql, params)

    async with make_backend("postgres", tmp_path) as backend:
        retention = Retention(max_events_per_task=3)
        async with open_store(backend.url, retention=retention) as store:
            task = (await store.create_task(ANONYMOUS, a_task(), events=[(1, a_task())])).task
            monkeypatch.setattr(_postgres._PgTx, "run", recording)
            artifact_id = m.new_id()
            for number in range(6):
                chunk = m.Artifact(artifact_id=artifact_id, parts=(m.TextPart(f"c{number}"),))
                await store.update_task(
                    ANONYMOUS,
                    task.id,
                    TaskUpdate(artifacts=(ArtifactWrite(chunk, append=number > 0),)),
                    expected_version=number + 1,
                    events=[(number + 2, agent_says(f"c{number}"))],
                )
            assert len(statements) == 6
            assert all(sql.startswith("WITH written AS (UPDATE") for sql in statements)
            kept = await store.load_events(ANONYMOUS, task.id)
            assert [seq for seq, _event in kept] == [5, 6, 7]


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The stored documents the SQL store decodes, as it decodes them."""
    seen: list[str] = []
    decode = _sql._decode_task

    def counting(text: str) -> m.Task:
        seen.append(text)
        return decode(text)

    monkeypatch.setattr(_sql, "_decode_task", counting)
    return seen


async def test_a_running_task_is_written_without_reading_its_document(
    sql_backend: Backend, decoded: list[str]
) -> None:
    """What makes a streamed answer of N chunks cost O(N), not O(N²): no decode per chunk."""
    async with open_store(sql_backend.url) as store:
        task = (await store.create_task(ANONYMOUS, a_task())).task
        artifact_id = m.new_id()
        for number in range(20):
            chunk = m.Artifact(artifact_id=artifact_id, parts=(m.TextPart(f"c{number}"),))
            write = ArtifactWrite(chunk, append=number > 0)
            await store.update_task(
                ANONYMOUS, task.id, TaskUpdate(state=S.WORKING, artifacts=(write,))
            )
        assert decoded == []
        stored = await store.load_task(ANONYMOUS, task.id)
        assert stored is not None
        assert len(stored.task.artifacts[0].parts) == 20
        assert len(decoded) == 1


async def test_a_touch_keeps_a_running_tasks_memory_current(
    sql_backend: Backend, decoded: list[str]
) -> None:
    """A lease refresh moves the row's write time: the memory moves with it, so the handler's
    next write still skips reading the document."""
    async with open_store(sql_backend.url) as store:
        task = (await store.create_task(ANONYMOUS, a_task())).task
        await store.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING))
        assert await store.touch_task(ANONYMOUS, task.id, expected_version=2)
        stored = await store.update_task(
            ANONYMOUS, task.id, TaskUpdate(messages=(agent_says("x"),)), expected_version=2
        )
        assert decoded == []
        assert stored.version == 3


async def test_touching_tasks_together_keeps_each_ones_memory_current(
    sql_backend: Backend, decoded: list[str]
) -> None:
    """As a lone touch: a lease tick's batch leaves every touched task's next write free of
    reading the document."""
    async with open_store(sql_backend.url) as store:
        tasks = [(await store.create_task(ANONYMOUS, a_task())).task for _ in range(3)]
        for task in tasks:
            await store.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING))
        asked = {TaskAtVersion(ANONYMOUS, task.id, 2) for task in tasks}
        assert await store.touch_tasks(asked) == asked
        for task in tasks:
            stored = await store.update_task(
                ANONYMOUS, task.id, TaskUpdate(messages=(agent_says("x"),)), expected_version=2
            )
            assert stored.version == 3
        assert decoded == []


async def test_a_touch_of_a_recreated_task_leaves_the_old_memory_stale(
    sql_backend: Backend,
) -> None:
    """The new task reached the version this process remembers of the old one: the touch
    matches it, but the memory of the old document must not pass for current."""
    async with open_store(sql_backend.url) as one, open_store(sql_backend.url) as two:
        task = (await one.create_task(ANONYMOUS, a_task("first"))).task
        await one.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING))
        assert await two.delete_task(ANONYMOUS, task.id)
        await two.create_task(ANONYMOUS, attrs.evolve(a_task("second"), id=task.id))
        await two.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING))
        assert await one.touch_task(ANONYMOUS, task.id, expected_version=2)
        stored = await one.update_task(ANONYMOUS, task.id, TaskUpdate(messages=(agent_says("x"),)))
        texts = [
            p.text for msg in stored.task.history for p in msg.parts if isinstance(p, m.TextPart)
        ]
        assert texts == ["second", "x"]


async def test_a_recreated_task_is_remembered_again_at_once(
    sql_backend: Backend, decoded: list[str]
) -> None:
    """The memory of a deleted task at version 4 stood until the task created again under its
    id passed version 4: each of its writes until then read and decoded the row."""
    async with open_store(sql_backend.url) as one, open_store(sql_backend.url) as two:
        task = (await one.create_task(ANONYMOUS, a_task("first"))).task
        for _ in range(3):
            await one.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING))
        # Deleted and created again by this store: the new task is remembered as created.
        assert await one.delete_task(ANONYMOUS, task.id)
        await one.create_task(ANONYMOUS, attrs.evolve(a_task("second"), id=task.id))
        for _ in range(3):
            await one.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING))
        assert decoded == []
        # By another store: the first write reads the new row, the next ones need not.
        assert await two.delete_task(ANONYMOUS, task.id)
        await two.create_task(ANONYMOUS, attrs.evolve(a_task("third"), id=task.id))
        for _ in range(3):
            stored = await one.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING))
        assert len(decoded) == 1
        texts = [
            p.text for msg in stored.task.history for p in msg.parts if isinstance(p, m.TextPart)
        ]
        assert (texts, stored.version) == (["third"], 4)
