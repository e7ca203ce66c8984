"""A retention purge of a large backlog: its total time and how long other writers wait.

    .venv/bin/python benchmarks/purge.py                        # 200,000 tasks, 3 events each
    .venv/bin/python benchmarks/purge.py --tasks 20000 --batch 500 2000

A SQLite file in a temporary directory, and PostgreSQL when ``A2A_TRIO_TEST_PG_URL`` (or
``--pg-url``) names a server (a fresh schema, dropped afterwards), are filled with ``--tasks``
finished tasks (a ~2 KB document, ``--events`` events each) written straight in SQL, then purged
with each ``--batch`` size (none given: ``Retention``'s default).  Meanwhile a probe writes
(an empty lease tick) in a loop.  Prints a markdown table: the purge's total time, its longest
write (one transaction: what a statement timeout bounds; the probe's writes are not the
purge's), and the probe's longest wait once the purge began (how long other writers were held).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import tempfile
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import attrs
import psycopg
import trio
from watched_writes import watch_writes

from a2a_trio import model as m
from a2a_trio.store import Retention, open_postgres_store, open_sqlite_store
from a2a_trio.store._sql import SqlTaskStore
from a2a_trio.wire import V1, dumps

DOCUMENT = dumps(V1.encode(m.new_task(m.text_message("x" * 1800)))).decode()
EVENT = dumps(V1.encode_stream_response(m.new_task(m.text_message("e" * 200)))).decode()


@attrs.frozen
class Row:
    backend: str
    tasks: int
    batch: int
    total_s: float
    longest_write_ms: float
    probe_wait_ms: float


def task_rows(tasks: int) -> list[tuple[object, ...]]:
    """Finished (COMPLETED) tasks, written a day ago."""
    day_ago = int((time.time() - 86_400) * 1_000_000)
    completed = int(m.TaskState.COMPLETED)
    return [
        (f"t{n}", "", "", f"c{n % 10}", completed, day_ago, day_ago, n + 1, 2, None, DOCUMENT)
        for n in range(tasks)
    ]


def event_rows(tasks: int, events: int) -> list[tuple[object, ...]]:
    return [(f"t{n}", seq, EVENT) for n in range(tasks) for seq in range(1, events + 1)]


TASK_INSERT = "INSERT INTO a2a_tasks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
EVENT_INSERT = "INSERT INTO a2a_task_events VALUES (?, ?, ?)"


def fill_sqlite(path: str, tasks: int, events: int) -> None:
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:  # closed, after its commit
        conn.executemany(TASK_INSERT, task_rows(tasks))
        conn.executemany(EVENT_INSERT, event_rows(tasks, events))


def fill_postgres(url: str, tasks: int, events: int) -> None:
    with psycopg.connect(url) as conn, conn.cursor() as cursor:
        with cursor.copy("COPY a2a_tasks FROM STDIN") as copy:
            for row in task_rows(tasks):
                copy.write_row(row)
        with cursor.copy("COPY a2a_task_events FROM STDIN") as copy:
            for row in event_rows(tasks, events):
                copy.write_row(row)
        conn.execute("SELECT setval('a2a_task_order', %s)", (tasks + 1,))
        conn.execute("ANALYZE")


async def purge_with_probe(store: SqlTaskStore, tasks: int) -> tuple[float, float, float]:
    """The purge's total and longest write, and the probe's longest wait, in seconds.

    Only the purge's own writes are timed, so each lies inside its total: the probe writes
    through the same driver, and a write of its queued before the total's clock started may
    take longer than the whole purge.  The probe's waits count from the purge's start on,
    one it was already in included: those over before then were not the purge's doing."""
    timed = watch_writes(store, callers_only=True)
    probe_wait = 0.0
    async with trio.open_nursery() as nursery:

        async def probe() -> None:
            nonlocal probe_wait
            while True:
                start = time.perf_counter()
                await store.touch_tasks([])
                probe_wait = max(probe_wait, time.perf_counter() - start)
                await trio.sleep(0.002)

        nursery.start_soon(probe)
        await trio.sleep(0.05)
        probe_wait = 0.0
        start = time.perf_counter()
        purged = await store.purge_expired()
        total = time.perf_counter() - start
        nursery.cancel_scope.cancel()
    assert purged == tasks, (purged, tasks)
    return total, timed.longest, probe_wait


RETENTION = Retention(terminal_ttl=timedelta(hours=1))


async def measure(backend: str, where: str, tasks: int, events: int, batch: int | None) -> Row:
    retention = RETENTION if batch is None else attrs.evolve(RETENTION, purge_batch=batch)
    if backend == "sqlite":
        opener = open_sqlite_store(where, retention=retention)
        fill = fill_sqlite
    else:
        opener = open_postgres_store(where, retention=retention)
        fill = fill_postgres
    async with opener as store:
        await trio.to_thread.run_sync(fill, where, tasks, events)
        total, longest, probe = await purge_with_probe(store, tasks)
    return Row(backend, tasks, retention.purge_batch, total, longest * 1000, probe * 1000)


async def run(
    tasks: int, events: int, batches: Sequence[int | None], pg_url: str, workdir: Path
) -> list[Row]:
    rows = []
    for number, batch in enumerate(batches):
        db = str(workdir / f"purge-{number}.db")
        rows.append(await measure("sqlite", db, tasks, events, batch))
        if pg_url:
            from store import pg_schema  # benchmarks/store.py's (see leases.py)

            async with pg_schema(pg_url) as url:
                rows.append(await measure("postgresql", url, tasks, events, batch))
    return rows


def table(rows: list[Row]) -> str:
    lines = [
        "| backend | tasks | batch | purge total (s) | longest purge write (ms)"
        " | longest wait of another writer (ms) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row.backend} | {row.tasks:,} | {row.batch:,} | {row.total_s:,.2f}"
            f" | {row.longest_write_ms:,.1f} | {row.probe_wait_ms:,.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200_000)
    parser.add_argument("--events", type=int, default=3)
    parser.add_argument("--batch", type=int, nargs="*", default=[None])
    parser.add_argument("--pg-url", default=os.environ.get("A2A_TRIO_TEST_PG_URL", ""))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        rows = trio.run(run, args.tasks, args.events, args.batch, args.pg_url, Path(workdir))
    print(table(rows))


if __name__ == "__main__":
    main()
