"""What only the durable backends promise: data outlives the process, replicas share it."""

from __future__ import annotations

import sqlite3
import uuid
from contextlib import closing
from datetime import timedelta
from pathlib import Path

import attrs
import psycopg
import pytest
import trio
from push_backlog import lagging

from a2a_trio import model as m
from a2a_trio.errors import ConcurrencyError
from a2a_trio.store import (
    ANONYMOUS,
    ArtifactWrite,
    CallerScope,
    PushBacklog,
    StoreSchemaError,
    TaskQuery,
    TaskStore,
    TaskUpdate,
    open_store,
)
from a2a_trio.store._postgres import MIGRATIONS as PG_MIGRATIONS
from a2a_trio.store._sql import DECODE_SLICE
from a2a_trio.store._sqlite import MIGRATIONS as SQLITE_MIGRATIONS

from .conftest import Backend, make_backend, pg_base_url, pg_schema_url
from .test_contract import a_task, agent_says, all_pages, create_many

S = m.TaskState


async def test_everything_survives_a_reopen(sql_backend: Backend) -> None:
    event = agent_says("e1")
    async with open_store(sql_backend.url) as store:
        ids = await create_many(store, 5)
        artifact = m.new_artifact([m.TextPart("result")])
        await store.update_task(
            ANONYMOUS,
            ids[0],
            TaskUpdate(state=S.COMPLETED, artifacts=(ArtifactWrite(artifact),)),
        )
        await store.append_events(ANONYMOUS, ids[0], [(1, event)])
        config = await store.set_push_config(
            ANONYMOUS, m.TaskPushNotificationConfig("https://hook", task_id=ids[1])
        )
        before = [await store.load_task(ANONYMOUS, task_id) for task_id in ids]
    async with open_store(sql_backend.url) as store:
        assert [await store.load_task(ANONYMOUS, task_id) for task_id in ids] == before
        assert await store.load_events(ANONYMOUS, ids[0]) == ((1, event),)
        assert await store.list_push_configs(ANONYMOUS, ids[1]) == (config,)
        newest = (await store.create_task(ANONYMOUS, a_task())).task.id
        listed = await all_pages(store, TaskQuery(page_size=2))
        assert listed == [newest, ids[0], *ids[:0:-1]]
        unfinished = [item.stored.task.id for item in await store.list_unfinished()]
        assert unfinished == [*ids[1:], newest]


async def test_a_second_instance_reads_the_first_ones_writes(sql_backend: Backend) -> None:
    async with open_store(sql_backend.url) as one, open_store(sql_backend.url) as two:
        task = (await one.create_task(ANONYMOUS, a_task())).task
        updated = await one.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING))
        seen = await two.load_task(ANONYMOUS, task.id)
        assert seen == updated
        again = await two.update_task(
            ANONYMOUS, task.id, TaskUpdate(state=S.COMPLETED), expected_version=2
        )
        assert await one.load_task(ANONYMOUS, task.id) == again


async def test_paging_across_instances_with_inserts_on_the_other(sql_backend: Backend) -> None:
    async with open_store(sql_backend.url) as one, open_store(sql_backend.url) as two:
        before = await create_many(one, 12)
        seen: list[str] = []
        query = TaskQuery(page_size=5)
        readers = (one, two)
        inserted: list[str] = []
        for page_number in range(10):
            page = await readers[page_number % 2].list_tasks(ANONYMOUS, query)
            seen += [task.id for task in page.tasks]
            inserted += await create_many(readers[(page_number + 1) % 2], 2)
            if not page.next_page_token:
                break
            query = attrs.evolve(query, page_token=page.next_page_token)
        assert seen == before[::-1]
        assert await all_pages(two, TaskQuery(page_size=100)) == inserted[::-1] + before[::-1]


async def test_races_across_instances_keep_the_contract(sql_backend: Backend) -> None:
    async with open_store(sql_backend.url) as one, open_store(sql_backend.url) as two:
        stores: tuple[TaskStore, ...] = (one, two)
        created: list[str] = []
        task = (await one.create_task(ANONYMOUS, a_task())).task
        wins: list[int] = []

        async def create(number: int) -> None:
            stored = await stores[number % 2].create_task(
                ANONYMOUS, a_task(context_id="c"), idempotency_key="k"
            )
            created.append(stored.task.id)

        async def update(number: int) -> None:
            try:
                await stores[number % 2].update_task(
                    ANONYMOUS, task.id, TaskUpdate(state=S.WORKING), expected_version=1
                )
            except ConcurrencyError:
                return
            wins.append(number)

        async with trio.open_nursery() as nursery:
            for number in range(16):
                nursery.start_soon(create, number)
                nursery.start_soon(update, number)
        assert len(created) == 16
        assert len(set(created)) == 1
        assert len(wins) == 1
        stored = await two.load_task(ANONYMOUS, task.id)
        assert stored is not None
        assert stored.version == 2


async def test_instances_opening_together_migrate_once(sql_backend: Backend) -> None:
    opened: list[int] = []

    async def open_and_use() -> None:
        async with open_store(sql_backend.url) as store:
            await store.create_task(ANONYMOUS, a_task())
            opened.append(1)

    async with trio.open_nursery() as nursery:
        for _ in range(4):
            nursery.start_soon(open_and_use)
    async with open_store(sql_backend.url) as store:
        assert (await store.list_tasks(ANONYMOUS, TaskQuery())).total_size == len(opened) == 4


def _mark_schema_newer(backend: Backend, path: str) -> None:
    if backend.name == "sqlite":
        with closing(sqlite3.connect(path)) as conn:
            conn.execute("PRAGMA user_version = 99")
    else:
        with psycopg.connect(backend.url, autocommit=True) as conn:
            conn.execute("UPDATE a2a_schema_version SET version = 99")


def _back_to_version_1(backend: Backend, path: str) -> None:
    """Undo the later migrations by hand: the database a release with only migration 1 left
    behind."""
    listed_by_order = (
        "DROP INDEX a2a_tasks_scope",
        "DROP INDEX a2a_tasks_context",
        "DROP INDEX a2a_tasks_scope_state",
        "ALTER TABLE a2a_tasks DROP COLUMN listed_us",
        "CREATE INDEX a2a_tasks_scope ON a2a_tasks (tenant, owner, ord)",
        "CREATE INDEX a2a_tasks_context ON a2a_tasks (tenant, owner, context_id, ord)",
        "ALTER TABLE a2a_push_configs DROP COLUMN delivered_seq",
        "DROP TABLE a2a_push_claims",
    )
    if backend.name == "sqlite":
        with closing(sqlite3.connect(path)) as conn:
            for statement in listed_by_order:
                conn.execute(statement)
            conn.execute("DROP TRIGGER a2a_tasks_order_mark")
            conn.execute("DROP TABLE a2a_order_mark")
            conn.execute("PRAGMA user_version = 1")
    else:
        with psycopg.connect(backend.url, autocommit=True) as conn:
            for statement in listed_by_order:
                conn.execute(statement)
            conn.execute("UPDATE a2a_schema_version SET version = 1")


def _schema_state(backend: Backend, path: str) -> tuple[int, bool]:
    """(schema version, whether migration 2's index exists)."""
    if backend.name == "sqlite":
        with closing(sqlite3.connect(path)) as conn:
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            index = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'a2a_tasks_scope_state'"
            ).fetchone()
        return version, index is not None
    with psycopg.connect(backend.url, autocommit=True) as conn:
        row = conn.execute("SELECT version FROM a2a_schema_version").fetchone()
        found = conn.execute("SELECT to_regclass('a2a_tasks_scope_state')").fetchone()
    assert row is not None and found is not None
    return row[0], found[0] is not None


async def test_an_older_database_is_migrated_when_opened(sql_backend: Backend) -> None:
    assert (len(SQLITE_MIGRATIONS), len(PG_MIGRATIONS)) == (6, 5)
    latest = len(SQLITE_MIGRATIONS if sql_backend.name == "sqlite" else PG_MIGRATIONS)
    path = sql_backend.url.removeprefix("sqlite:///")
    an_hour_ago = m.utcnow() - timedelta(hours=1)
    older = attrs.evolve(a_task(), status=m.TaskStatus(S.SUBMITTED, timestamp=an_hour_ago))
    async with open_store(sql_backend.url) as store:
        await store.create_task(ANONYMOUS, older)
        task = (await store.create_task(ANONYMOUS, a_task())).task
        await store.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING))
        await store.update_task(ANONYMOUS, older.id, TaskUpdate(messages=(agent_says("more"),)))
        await store.append_events(ANONYMOUS, task.id, [(1, task), (2, agent_says("working"))])
        config = m.TaskPushNotificationConfig("https://a", task_id=task.id, id="c")
        await store.set_push_config(ANONYMOUS, config, delivered_through=0)
    await trio.to_thread.run_sync(_back_to_version_1, sql_backend, path)
    assert await trio.to_thread.run_sync(_schema_state, sql_backend, path) == (1, False)
    async with open_store(sql_backend.url) as store:
        working = await store.list_tasks(ANONYMOUS, TaskQuery(status=S.WORKING))
        assert [found.id for found in working.tasks] == [task.id]
        # the tasks stored before list by status time: the message moved nothing
        assert await all_pages(store, TaskQuery(page_size=1)) == [task.id, older.id]
        # a config from before the delivery marks counts as sent what was logged by then
        assert await lagging(store) == ()
        await store.append_events(ANONYMOUS, task.id, [(3, agent_says("more"))])
        assert await lagging(store) == (PushBacklog(ANONYMOUS, task.id, 2),)
    assert await trio.to_thread.run_sync(_schema_state, sql_backend, path) == (latest, True)


async def test_a_newer_rollback_journal_file_is_refused_byte_for_byte(tmp_path: Path) -> None:
    """The schema check comes before the switch to WAL, which would rewrite the header."""
    path = tmp_path / "newer.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute("CREATE TABLE kept (x)")
        conn.execute("PRAGMA user_version = 99")
    before = path.read_bytes()
    with pytest.raises(StoreSchemaError, match="version 99"):
        async with open_store(f"sqlite:///{path}"):
            pass
    assert path.read_bytes() == before


async def test_opening_a_current_sqlite_file_leaves_it_byte_for_byte(tmp_path: Path) -> None:
    """With nothing to migrate, the schema check's write (which finds a file this process may
    only read) is rolled back: before, it was committed, and every start rewrote the first
    page's change counters (its bytes 24-27 and 92-95)."""
    path = tmp_path / "tasks.db"
    async with open_store(f"sqlite:///{path}") as store:
        task = (await store.create_task(ANONYMOUS, a_task())).task
    before = path.read_bytes()
    for _ in range(2):
        async with open_store(f"sqlite:///{path}") as store:
            assert await store.load_task(ANONYMOUS, task.id) is not None
    assert path.read_bytes() == before


async def test_a_database_from_a_newer_release_is_refused(sql_backend: Backend) -> None:
    async with open_store(sql_backend.url) as store:
        task = (await store.create_task(ANONYMOUS, a_task())).task
    path = sql_backend.url.removeprefix("sqlite:///")
    await trio.to_thread.run_sync(_mark_schema_newer, sql_backend, path)
    with pytest.raises(StoreSchemaError, match="version 99"):
        async with open_store(sql_backend.url):
            pass
    if sql_backend.name == "sqlite":  # the data is untouched: put the version back and read it
        with closing(sqlite3.connect(path)) as conn:
            conn.execute(f"PRAGMA user_version = {len(SQLITE_MIGRATIONS)}")
        async with open_store(sql_backend.url) as store:
            assert await store.load_task(ANONYMOUS, task.id) is not None


async def test_sqlite_runs_in_wal_mode_with_the_schema_version_set(tmp_path: Path) -> None:
    async with open_store(f"sqlite:///{tmp_path / 'tasks.db'}"):
        pass
    with closing(sqlite3.connect(tmp_path / "tasks.db")) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("PRAGMA user_version").fetchone() == (len(SQLITE_MIGRATIONS),)


@pytest.mark.postgres
async def test_an_unreachable_postgres_fails_fast_and_clearly() -> None:
    with trio.fail_after(15), pytest.raises(psycopg.OperationalError):
        async with open_store("postgresql://nobody:x@127.0.0.1:1/nothing"):
            pass


@pytest.mark.postgres
async def test_postgres_schemas_are_separate_databases() -> None:
    async with (
        pg_schema_url() as first,
        pg_schema_url() as second,
        open_store(first) as one,
        open_store(second) as two,
    ):
        task = (await one.create_task(ANONYMOUS, a_task())).task
        assert await two.load_task(ANONYMOUS, task.id) is None


async def test_cancelled_writes_are_whole_or_absent(sql_backend: Backend) -> None:
    async with open_store(sql_backend.url) as store:
        task = (await store.create_task(ANONYMOUS, a_task())).task
        finished = 0
        for attempt in range(40):
            with trio.move_on_after(attempt * 0.0002):  # some cancelled before, some during
                note = agent_says(f"note {attempt}")
                await store.update_task(ANONYMOUS, task.id, TaskUpdate(messages=(note,)))
                finished += 1
        stored = await store.load_task(ANONYMOUS, task.id)
        assert stored is not None
        applied = stored.version - 1
        assert finished <= applied <= 40
        assert len(stored.task.history) == 1 + applied  # one message per applied update, no more


def _cut_connections(base_url: str, application: str) -> int:
    """End ``application``'s sessions, waiting (up to 5 s each) until their processes exit: the
    pool's checkout check, which sends nothing, sees the end once it reached the socket."""
    with psycopg.connect(base_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity"
            " WHERE application_name = %s",
            (application,),
        ).fetchall()
    return len(rows)


@pytest.mark.postgres
async def test_postgres_store_replaces_connections_the_server_cut() -> None:
    application = f"a2a_trio_test_{uuid.uuid4().hex[:8]}"
    async with (
        pg_schema_url() as url,
        open_store(f"{url}&application_name={application}") as store,
    ):
        task = (await store.create_task(ANONYMOUS, a_task())).task
        cut = await trio.to_thread.run_sync(_cut_connections, pg_base_url(), application)
        assert cut >= 1
        assert await store.load_task(ANONYMOUS, task.id) is not None
        await store.update_task(ANONYMOUS, task.id, TaskUpdate(state=S.WORKING))


@pytest.mark.postgres
async def test_a_claim_racing_a_tasks_delete_leaves_the_task_out(tmp_path: Path) -> None:
    """A task is deleted, in a transaction not yet committed, while a replica claims its push
    deliveries: the claim waits on the task's row, and the delete's commit fails the claim's
    foreign key.  The store claims again, without the task, rather than failing."""
    async with make_backend("postgres", tmp_path) as backend, open_store(backend.url) as store:
        gone = (await store.create_task(ANONYMOUS, a_task())).task
        kept = (await store.create_task(ANONYMOUS, a_task())).task
        keys = [(ANONYMOUS, gone.id), (ANONYMOUS, kept.id)]
        later = m.utcnow() + timedelta(minutes=1)
        held: set[tuple[CallerScope, str]] | None = None

        async def claim() -> None:
            nonlocal held
            held = await store.claim_push_deliveries("replica", keys, until=later)

        with closing(await trio.to_thread.run_sync(psycopg.connect, backend.url)) as conn:
            delete = "DELETE FROM a2a_tasks WHERE id = %s"
            await trio.to_thread.run_sync(conn.execute, delete, (gone.id,))
            async with trio.open_nursery() as nursery:
                nursery.start_soon(claim)
                await trio.sleep(0.3)
                assert held is None  # waiting for the delete
                await trio.to_thread.run_sync(conn.commit)
        assert held == {(ANONYMOUS, kept.id)}


class _Steps(trio.abc.Instrument):
    """Counts the scheduler steps of one task: each is a turn the others got before it."""

    def __init__(self, task: trio.lowlevel.Task) -> None:
        self.task = task
        self.count = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self.count += task is self.task


async def test_a_long_log_is_decoded_a_slice_at_a_time(sql_backend: Backend) -> None:
    """Reading 1,000 stored events gives the event loop back between slices of
    ``DECODE_SLICE``, so a resume replaying a long log does not hold the replica's other
    streams for all of it; one event costs no extra turn."""
    task = a_task()
    chunk = m.TaskArtifactUpdateEvent(
        task_id=task.id, context_id=task.context_id, artifact=m.new_artifact([m.TextPart("x")])
    )
    async with open_store(sql_backend.url) as store:
        await store.create_task(ANONYMOUS, task, events=[(1, task)])
        events = [(seq, chunk) for seq in range(2, 1001)]
        await store.update_task(ANONYMOUS, task.id, TaskUpdate(), events=events)

        async def steps_reading(after: int) -> tuple[int, int]:
            counter = _Steps(trio.lowlevel.current_task())
            trio.lowlevel.add_instrument(counter)
            try:
                read = await store.load_events(ANONYMOUS, task.id, after_seq=after)
            finally:
                trio.lowlevel.remove_instrument(counter)
            return len(read), counter.count

        await steps_reading(999)  # a reader connection is opened once, on the first read
        one, few_steps = await steps_reading(999)
        all_of_them, many_steps = await steps_reading(0)
    assert (one, all_of_them) == (1, 1000)
    assert many_steps - few_steps >= 1000 // DECODE_SLICE
