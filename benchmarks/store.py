"""Task-store benchmark: GetTask/ListTasks latency, write rates, bytes per task; per backend.

    .venv/bin/python benchmarks/store.py            # 10,000 and 100,000 tasks (a few minutes)
    .venv/bin/python benchmarks/store.py --quick    # 1,000 and 10,000 tasks (seconds)

PostgreSQL is measured when ``A2A_TRIO_TEST_PG_URL`` (or ``--pg-url``) names a server; the run
uses a fresh schema and drops it afterwards.  SQLite files go to a temporary directory.  The fill
runs through the public store API with 16 concurrent writers (SQLite with ``synchronous=normal``
to keep the fill short, PostgreSQL followed by the ``VACUUM ANALYZE`` autovacuum would soon run);
the update rates are measured separately on the default settings.  Then one task streams an
answer as artifact chunks (one ``update_task`` per chunk, logging the chunk's stream event, as a
handler's ``emit_artifact`` does): a store whose write cost grows with the task shows it as the
last chunks' time over the first's.
The official SDK's ``DatabaseTaskStore`` on SQLite (``a2a-sdk[sqlite]``: SQLAlchemy and
aiosqlite, run on asyncio in a worker thread) streams the same answer in the same run, as its
``TaskManager`` does: the task kept in memory, each chunk appended, then ``save``.
Prints markdown tables.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import random
import sqlite3
import statistics
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, closing
from pathlib import Path

import attrs
import psycopg
import trio

from a2a_trio import model as m
from a2a_trio.store import ANONYMOUS, ArtifactWrite, TaskQuery, TaskStore, TaskUpdate, open_store

CONTEXTS = 10
WRITERS = 16


@attrs.frozen
class Plan:
    sizes: tuple[int, ...]
    get_samples: int
    list_samples: int
    write_samples: int
    chunks: int
    time_limit: float


FULL = Plan(
    (10_000, 100_000),
    get_samples=1_000,
    list_samples=200,
    write_samples=2_000,
    chunks=4_000,
    time_limit=1_800,
)
QUICK = Plan(
    (1_000, 10_000),
    get_samples=200,
    list_samples=50,
    write_samples=300,
    chunks=1_000,
    time_limit=300,
)
WINDOW = 100
"""Chunks timed at each end of the streamed answer."""


@attrs.frozen
class Row:
    backend: str
    tasks: int
    get_p50: float
    get_p99: float
    list_p50: float
    list_p99: float
    list_ctx_p50: float
    creates_per_s: float
    updates_per_s: float
    bytes_per_task: float


@attrs.frozen
class Stream:
    backend: str
    chunks: int
    first_ms: float
    last_ms: float
    total_s: float

    @classmethod
    def of(cls, backend: str, samples: list[float]) -> Stream:
        """The figures of one streamed answer from its chunks' write times (ms, in order)."""
        return cls(
            backend,
            len(samples),
            statistics.mean(samples[:WINDOW]),
            statistics.mean(samples[-WINDOW:]),
            sum(samples) / 1000,
        )


def sample_task(number: int) -> m.Task:
    """A typical finished exchange: two messages, a status message, a 500-byte artifact."""
    context_id = f"context-{number % CONTEXTS}"
    task = m.new_task(
        m.text_message(f"request {number}: summarise the report"), context_id=context_id
    )
    reply = m.text_message("here is the summary", role=m.Role.AGENT, task_id=task.id)
    artifact = m.new_artifact([m.TextPart("x" * 500)], name="summary")
    return attrs.evolve(
        task,
        status=m.TaskStatus(m.TaskState.COMPLETED, reply, m.utcnow()),
        history=(*task.history, reply),
        artifacts=(artifact,),
    )


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def timed(fn: Callable[[], Awaitable[object]], count: int) -> list[float]:
    """Latencies in milliseconds of ``count`` sequential calls."""
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        await fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


async def rate(fn: Callable[[int], Awaitable[object]], count: int) -> float:
    """Calls per second of ``count`` calls spread over ``WRITERS`` concurrent trio tasks."""
    start = time.perf_counter()

    async def writer(first: int) -> None:
        for number in range(first, count, WRITERS):
            await fn(number)

    async with trio.open_nursery() as nursery:
        for first in range(WRITERS):
            nursery.start_soon(writer, first)
    return count / (time.perf_counter() - start)


async def fill(store: TaskStore, ids: list[str], upto: int) -> float:
    start = len(ids)
    added: list[str] = []

    async def create(number: int) -> None:
        added.append((await store.create_task(ANONYMOUS, sample_task(start + number))).task.id)

    per_second = await rate(create, upto - start)
    ids += added
    return per_second


def memory_bytes_per_task() -> float:
    """Python heap the memory store keeps per task (tracemalloc, 1,000 tasks built inside)."""
    count = 1_000
    sizes: list[float] = []

    async def store_them() -> None:
        async with open_store("memory") as store:
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            for number in range(count):
                await store.create_task(ANONYMOUS, sample_task(number))
            sizes.append((tracemalloc.get_traced_memory()[0] - before) / count)
            tracemalloc.stop()

    trio.run(store_them)
    return sizes[0]


def sqlite_bytes(path: Path) -> int:
    with closing(sqlite3.connect(path)) as conn:
        (pages,) = conn.execute("PRAGMA page_count").fetchone()
        (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    return int(pages * page_size)


def pg_bytes(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'S')"
        ).fetchone()
    return int(row[0]) if row else 0


@asynccontextmanager
async def pg_schema(base: str) -> AsyncIterator[str]:
    schema = f"bench_{uuid.uuid4().hex[:10]}"

    def run(sql: str) -> None:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(sql)  # benchmark-built DDL

    await trio.to_thread.run_sync(run, f"CREATE SCHEMA {schema}")
    try:
        separator = "&" if "?" in base else "?"
        yield f"{base}{separator}options=-csearch_path%3D{schema}"
    finally:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(run, f"DROP SCHEMA {schema} CASCADE")


async def measure_size(store: TaskStore, ids: list[str], plan: Plan) -> tuple[float, ...]:
    """GetTask and ListTasks latencies, then the update rate, on a filled store."""
    picks = random.Random(len(ids))

    async def get() -> None:
        await store.load_task(ANONYMOUS, picks.choice(ids))

    async def list_first() -> None:
        await store.list_tasks(ANONYMOUS, TaskQuery())

    async def list_context() -> None:
        context = f"context-{picks.randrange(CONTEXTS)}"
        await store.list_tasks(ANONYMOUS, TaskQuery(context_id=context))

    async def update(_number: int) -> None:
        note = m.text_message("noted", role=m.Role.AGENT)
        await store.update_task(ANONYMOUS, picks.choice(ids), TaskUpdate(messages=(note,)))

    gets = await timed(get, plan.get_samples)
    lists = await timed(list_first, plan.list_samples)
    lists_ctx = await timed(list_context, plan.list_samples)
    updates = await rate(update, plan.write_samples)
    return (
        statistics.median(gets),
        percentile(gets, 0.99),
        statistics.median(lists),
        percentile(lists, 0.99),
        statistics.median(lists_ctx),
        updates,
    )


def nothing() -> None:
    """No settling needed after a fill."""


def pg_vacuum(url: str) -> None:
    """What autovacuum does soon after a bulk fill (count(*) needs a current visibility map)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE a2a_tasks")


async def measure(
    backend: str,
    fill_url: str,
    url: str,
    plan: Plan,
    bytes_per_task: Callable[[int], float],
    settle: Callable[[], None] = nothing,
) -> list[Row]:
    """Fill to each size in turn (through ``fill_url``) and measure through ``url``."""
    rows = []
    ids: list[str] = []
    async with open_store(url) as store:
        for size in plan.sizes:
            if fill_url == url:
                creates = await fill(store, ids, size)
            else:
                async with open_store(fill_url) as filler:
                    creates = await fill(filler, ids, size)
            await trio.to_thread.run_sync(settle)
            get_p50, get_p99, list_p50, list_p99, ctx_p50, updates = await measure_size(
                store, ids, plan
            )
            size_bytes = await trio.to_thread.run_sync(bytes_per_task, size)
            rows.append(
                Row(
                    backend,
                    size,
                    get_p50,
                    get_p99,
                    list_p50,
                    list_p99,
                    ctx_p50,
                    creates,
                    updates,
                    size_bytes,
                )
            )
    return rows


async def stream_answer(backend: str, url: str, chunks: int) -> Stream:
    """One WORKING task gets ``chunks`` appended chunks of one artifact, a write each, as a
    handler's ``emit_artifact`` writes them: at the version it knows, with the chunk's stream
    event logged in the same write."""
    async with open_store(url) as store:
        asked = m.new_task(m.text_message("write the report"))
        stored = await store.create_task(ANONYMOUS, asked, events=[(1, asked)])
        working = TaskUpdate(state=m.TaskState.WORKING)
        stored = await store.update_task(
            ANONYMOUS, asked.id, working, expected_version=1, events=[(2, asked)]
        )
        artifact_id = m.new_id()
        numbers = itertools.count()

        async def append() -> None:
            nonlocal stored
            number = next(numbers)
            chunk = m.Artifact(artifact_id=artifact_id, parts=(m.TextPart(f"token{number} "),))
            event = m.TaskArtifactUpdateEvent(
                task_id=asked.id, context_id=asked.context_id, artifact=chunk, append=number > 0
            )
            stored = await store.update_task(
                ANONYMOUS,
                asked.id,
                TaskUpdate(artifacts=(ArtifactWrite(chunk, append=number > 0),)),
                expected_version=stored.version,
                events=[(number + 3, event)],
            )

        return Stream.of(backend, await timed(append, chunks))


def sdk_stream_answer(path: Path, chunks: int) -> Stream:
    """The same streamed answer through the SDK's ``DatabaseTaskStore`` on SQLite."""
    from a2a.server.context import ServerCallContext
    from a2a.server.tasks.database_task_store import DatabaseTaskStore
    from a2a.types import a2a_pb2
    from sqlalchemy.ext.asyncio import create_async_engine

    async def stream() -> Stream:
        engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
        store = DatabaseTaskStore(engine)
        await store.initialize()
        context = ServerCallContext()
        working = a2a_pb2.TaskStatus(state=a2a_pb2.TASK_STATE_WORKING)
        task = a2a_pb2.Task(id=m.new_id(), context_id=m.new_id(), status=working)
        await store.save(task, context)
        artifact = task.artifacts.add(artifact_id=m.new_id())
        numbers = itertools.count()

        async def append() -> None:
            artifact.parts.add(text=f"token{next(numbers)} ")
            await store.save(task, context)

        samples = await timed(append, chunks)  # plain awaits: runs on asyncio as well
        await engine.dispose()
        return Stream.of("a2a-sdk sqlite", samples)

    return asyncio.run(stream())


async def run(plan: Plan, pg_url: str, workdir: Path) -> tuple[list[Row], list[Stream]]:
    rows: list[Row] = []
    streams: list[Stream] = []
    with trio.fail_after(plan.time_limit):
        per_task = await trio.to_thread.run_sync(memory_bytes_per_task)
        rows += await measure("memory", "memory", "memory", plan, lambda _count: per_task)
        db = workdir / "bench.db"
        rows += await measure(
            "sqlite",
            f"sqlite:///{db}?synchronous=normal",
            f"sqlite:///{db}",
            plan,
            lambda count: sqlite_bytes(db) / count,
        )
        if pg_url:
            async with pg_schema(pg_url) as url:
                rows += await measure(
                    "postgresql",
                    url,
                    url,
                    plan,
                    lambda count: pg_bytes(url) / count,
                    lambda: pg_vacuum(url),
                )
        streams.append(await stream_answer("memory", "memory", plan.chunks))
        streamed_db = workdir / "streamed.db"
        streams.append(await stream_answer("sqlite", f"sqlite:///{streamed_db}", plan.chunks))
        sdk_db = workdir / "sdk-streamed.db"
        streams.append(await trio.to_thread.run_sync(sdk_stream_answer, sdk_db, plan.chunks))
        if pg_url:
            async with pg_schema(pg_url) as url:
                streams.append(await stream_answer("postgresql", url, plan.chunks))
    return rows, streams


def table(rows: list[Row]) -> str:
    lines = [
        "| backend | tasks | GetTask p50 / p99 (ms) | ListTasks p50 / p99 (ms) |"
        " ListTasks by context p50 (ms) | creates/s | updates/s | bytes/task |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row.backend} | {row.tasks:,} | {row.get_p50:.2f} / {row.get_p99:.2f} |"
            f" {row.list_p50:.2f} / {row.list_p99:.2f} | {row.list_ctx_p50:.2f} |"
            f" {row.creates_per_s:,.0f} | {row.updates_per_s:,.0f} | {row.bytes_per_task:,.0f} |"
        )
    return "\n".join(lines)


def stream_table(streams: list[Stream]) -> str:
    lines = [
        f"| backend | chunks | ms per chunk, first {WINDOW} | ms per chunk, last {WINDOW} |"
        " last / first | total s |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in streams:
        lines.append(
            f"| {row.backend} | {row.chunks:,} | {row.first_ms:.2f} | {row.last_ms:.2f} |"
            f" {row.last_ms / row.first_ms:.1f} | {row.total_s:.1f} |"
        )
    by_backend = {row.backend: row for row in streams}
    ours, sdk = by_backend["sqlite"], by_backend["a2a-sdk sqlite"]
    lines.append(
        f"\nSQLite, the same answer: a2a-sdk / a2a_trio = {sdk.total_s / ours.total_s:.1f}x"
        f" the time in all, {sdk.last_ms / ours.last_ms:.1f}x per chunk at the end"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 and 10,000 tasks")
    parser.add_argument("--pg-url", default=os.environ.get("A2A_TRIO_TEST_PG_URL", ""))
    args = parser.parse_args()
    plan = QUICK if args.quick else FULL
    with tempfile.TemporaryDirectory() as workdir:
        rows, streams = trio.run(run, plan, args.pg_url, Path(workdir))
    print(table(rows))
    print()
    print(stream_table(streams))
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"\n({os.cpu_count()} CPUs, load average {load} at the end)")
    if not args.pg_url:
        print("\n(PostgreSQL not measured: set A2A_TRIO_TEST_PG_URL or pass --pg-url)")


if __name__ == "__main__":
    main()
