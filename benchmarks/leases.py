"""One lease tick at a replica parking many running tasks: its time and its store writes.

    .venv/bin/python benchmarks/leases.py                    # 100, 1,000 and 5,000 jobs
    .venv/bin/python benchmarks/leases.py --jobs 100 --ticks 3

One runtime (a replica with a recovery lease, so long that no tick of its own comes) on a
SQLite file in a temporary directory, and on PostgreSQL when ``A2A_TRIO_TEST_PG_URL`` (or
``--pg-url``) names a server (a fresh schema, dropped afterwards), runs ``--jobs`` tasks whose
handlers wait for good, WORKING.  Then the tick's store work (what ``TaskRuntime`` does every
third of the lease) runs ``--ticks`` times, each timed, with the store's write transactions
counted (the driver's ``write`` calls: SQLite's writer commits those that queue up together,
each in its own savepoint).  Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import attrs
import trio
from watched_writes import watch_writes

from a2a_trio import Agent, TaskContext
from a2a_trio import model as m
from a2a_trio.runtime import RuntimeConfig, TaskRuntime
from a2a_trio.runtime._lease import keep_leases
from a2a_trio.store import ANONYMOUS, open_store
from a2a_trio.store._sql import SqlTaskStore

SIZES = (100, 1_000, 5_000)


def parked(jobs: int, working: trio.Event) -> Agent:
    """An agent whose handlers write WORKING, then wait for good; ``working`` is set once
    ``jobs`` of them have written."""
    agent = Agent("parked", "Handlers that wait for good, WORKING", version="0")
    count = 0

    @agent.skill(default=True, resumable=True)  # resumable: no FAILED write at the end
    async def wait(ctx: TaskContext) -> str:
        nonlocal count
        await ctx.update("working")
        count += 1
        if count == jobs:
            working.set()
        await trio.sleep_forever()
        return "never"

    return agent


@attrs.frozen
class Row:
    backend: str
    jobs: int
    tick_ms: float
    writes: float


async def measure(backend: str, url: str, jobs: int, ticks: int) -> Row:
    """The mean time and writes of ``ticks`` ticks of a replica running ``jobs`` tasks."""
    config = RuntimeConfig(recovery_lease=3600.0, recover_unfinished=False)
    async with open_store(url) as store, trio.open_nursery() as nursery:
        assert isinstance(store, SqlTaskStore)
        working = trio.Event()
        runtime = TaskRuntime(parked(jobs, working), store, config)
        await nursery.start(runtime.run)
        go = m.SendMessageConfiguration(return_immediately=True)
        for number in range(jobs):
            await runtime.send(ANONYMOUS, m.SendMessageRequest(m.text_message(f"{number}"), go))
        await working.wait()
        running = list(runtime._jobs.values())
        counted = watch_writes(store)
        times: list[float] = []
        for _ in range(ticks):
            start = time.perf_counter()
            assert await keep_leases(store, running)
            times.append((time.perf_counter() - start) * 1000)
        writes = counted.writes / ticks
        nursery.cancel_scope.cancel()
    return Row(backend, jobs, statistics.mean(times), writes)


async def run(sizes: Sequence[int], ticks: int, pg_url: str, workdir: Path) -> list[Row]:
    rows = []
    for jobs in sizes:
        db = workdir / f"leases-{jobs}.db"
        rows.append(await measure("sqlite", f"sqlite:///{db}", jobs, ticks))
        if pg_url:
            # benchmarks/store.py's, imported only here: the tests' ``store`` package shadows
            # it where the smoke test imports this script.
            from store import pg_schema

            async with pg_schema(pg_url) as url:
                rows.append(await measure("postgresql", url, jobs, ticks))
    return rows


def table(rows: list[Row]) -> str:
    lines = [
        "| backend | running jobs | one tick (ms) | write transactions per tick |",
        "|---|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(f"| {row.backend} | {row.jobs:,} | {row.tick_ms:,.1f} | {row.writes:,.0f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--ticks", type=int, default=3)
    parser.add_argument("--pg-url", default=os.environ.get("A2A_TRIO_TEST_PG_URL", ""))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        rows = trio.run(run, args.jobs, args.ticks, args.pg_url, Path(workdir))
    print(table(rows))
    if not args.pg_url:
        print("\n(PostgreSQL not measured: set A2A_TRIO_TEST_PG_URL or pass --pg-url)")


if __name__ == "__main__":
    main()
