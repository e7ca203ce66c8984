"""Store reads a second at a replica whose streams follow one task running on another replica.

    .venv/bin/python benchmarks/followers.py                 # 1,000 streams, 5 s
    .venv/bin/python benchmarks/followers.py --streams 100 --seconds 10

Two runtimes (replicas) on one SQLite file in a temporary directory: the task runs at ``a``
and writes an update every 0.25 s; ``--streams`` SubscribeToTask streams at ``b`` read it
through the store (the default ``follow_interval``, 0.5 s).  The streams subscribe before the
task starts writing; then ``b``'s store reads are counted for ``--seconds``.  Prints one line.
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import trio

from a2a_trio import Agent, TaskContext
from a2a_trio import model as m
from a2a_trio.runtime import RuntimeConfig, TaskRuntime, TaskStream
from a2a_trio.store import ANONYMOUS, TaskStore, open_store

COUNTED = ("last_event_seq", "load_events", "load_task", "load_task_with_seq")
TICK = 0.25

ticker = Agent("ticker", f"Writes an update every {TICK} s once the run starts", version="0")
writing = trio.Event()


@ticker.skill(default=True)
async def tick(ctx: TaskContext) -> str:
    await writing.wait()
    for n in range(1_000_000):
        await ctx.update(f"tick {n}")
        await trio.sleep(TICK)
    return "done"


class CountedReads:
    """A real store, its follower reads counted."""

    def __init__(self, store: TaskStore) -> None:
        self.store = store
        self.calls = Counter[str]()

    def __getattr__(self, name: str) -> Any:
        read = getattr(self.store, name)
        if name not in COUNTED:
            return read

        async def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return await read(*args, **kwargs)

        return counted


async def drain(stream: TaskStream) -> None:
    while True:
        await stream.receive()


async def measure(streams: int, seconds: float) -> str:
    config = RuntimeConfig(recovery_lease=3600.0)
    url = f"sqlite:///{Path(tempfile.mkdtemp()) / 'tasks.db'}"
    async with open_store(url) as store_a, open_store(url) as store_b, trio.open_nursery() as n:
        counted = CountedReads(store_b)
        a = TaskRuntime(ticker, store_a, config)
        b = TaskRuntime(ticker, counted, config)  # type: ignore[arg-type]
        await n.start(a.run)
        await n.start(b.run)
        go = m.SendMessageConfiguration(return_immediately=True)
        task = await a.send(ANONYMOUS, m.SendMessageRequest(m.text_message("go"), go))
        assert isinstance(task, m.Task)
        for _ in range(streams):
            n.start_soon(drain, await b.subscribe(ANONYMOUS, task.id))
        writing.set()
        await trio.sleep(1.0)
        counted.calls.clear()
        start = trio.current_time()
        await trio.sleep(seconds)
        took = trio.current_time() - start
        calls = {name: round(counted.calls[name] / took, 1) for name in COUNTED}
        n.cancel_scope.cancel()
    total = sum(calls.values())
    return f"{streams} streams of one task: {total:.0f} store reads a second {calls}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    print(trio.run(measure, args.streams, args.seconds))


if __name__ == "__main__":
    main()
