"""Profile the a2a_trio benchmark server under one load with py-spy, and summarise it.

    .venv/bin/pip install py-spy
    .venv/bin/python benchmarks/profile.py --load send --seconds 10
    .venv/bin/python benchmarks/profile.py --load stream
    .venv/bin/python benchmarks/profile.py --load fanout
    .venv/bin/python benchmarks/profile.py --load subscribe   # recorded once 5,000 are open

Starts the server pinned like ``run.py`` does, records it with ``py-spy record --format raw``
while the load runs, writes the collapsed stacks to ``benchmarks/results/`` (feed them to any
flame-graph tool) and prints the functions with the most self time and the a2a_trio / quart /
hypercorn frames with the most inclusive time.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio
from loadbench import payloads
from loadbench.held import StreamPool
from loadbench.load import closed_loop
from loadbench.scenario import OURS, Settings, open_servers
from loadbench.servers import Server, pin_loadgen
from loadbench.tasks import create_tasks, hold_metadata

RESULTS = Path(__file__).resolve().parent / "results"
HELD_BEFORE_RECORDING = 5000
PACKAGES = ("a2a_trio/", "quart/", "quart_trio/", "hypercorn/", "trio/", "cattrs/", "h11/")


async def _send(server: Server, seconds: float, begin: Callable[[], Awaitable[None]]) -> str:
    await begin()
    result = await closed_loop(
        server.port, payloads.send_message, concurrency=16, warmup=0.0, duration=seconds
    )
    return f"{result.rate:,.0f} req/s, p50 {result.latency.p50_ms:.1f} ms"


async def _stream(server: Server, seconds: float, begin: Callable[[], Awaitable[None]]) -> str:
    await begin()
    result = await closed_loop(
        server.port,
        payloads.send_streaming_message,
        concurrency=16,
        warmup=0.0,
        duration=seconds,
        streaming=True,
    )
    return f"{result.rate:,.0f} streams/s, TTFE p50 {result.ttfe.p50_ms:.1f} ms"


async def _fanout(server: Server, seconds: float, begin: Callable[[], Awaitable[None]]) -> str:
    with tempfile.TemporaryDirectory(prefix="a2a-bench-") as tmp:
        trigger = Path(tmp) / "go"
        events = int(seconds / 0.05)
        meta = {"bench": "fanout", "file": str(trigger), "events": events, "interval": 0.05}
        (task_id,) = await create_tasks(server.port, 1, meta)
        pool = StreamPool(server.port, [payloads.subscribe(task_id)] * 1000)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(pool.run)
            with trio.move_on_after(120):
                await pool.settled.wait()
            await begin()
            await trio.Path(trigger).touch()
            with trio.move_on_after(seconds + 60):
                await pool.finished.wait()
            nursery.cancel_scope.cancel()
    delays = sorted(d for s in pool.streams for d in s.delays)
    p99 = delays[int(len(delays) * 0.99)] * 1000 if delays else float("nan")
    return f"{len(delays):,} deliveries to {pool.connected:,} subscribers, p99 {p99:.1f} ms"


async def _subscribe(server: Server, seconds: float, begin: Callable[[], Awaitable[None]]) -> str:
    with tempfile.TemporaryDirectory(prefix="a2a-bench-") as tmp:
        release = Path(tmp) / "release"
        ids = await create_tasks(server.port, 20, hold_metadata(release))
        pool = StreamPool(server.port, [payloads.subscribe(ids[i % 20]) for i in range(20_000)])
        async with trio.open_nursery() as nursery:
            nursery.start_soon(pool.run)
            with trio.move_on_after(600):
                for _poll in range(6000):
                    if pool.connected >= HELD_BEFORE_RECORDING:
                        break
                    await trio.sleep(0.1)
            already = pool.connected
            await begin()
            await trio.sleep(seconds)
            added = pool.connected - already
            await trio.Path(release).touch()
            nursery.cancel_scope.cancel()
    return f"{added:,} subscriptions opened in {seconds:g} s with {already:,} already open"


LOADS = {"send": _send, "stream": _stream, "fanout": _fanout, "subscribe": _subscribe}


def summarise(raw: Path, top: int) -> list[str]:
    """Self time per function and inclusive time per framework frame, from collapsed stacks."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        total += count
        frames = stack.split(";")
        own[frames[-1]] += count
        for frame in set(frames):
            if any(package in frame for package in PACKAGES):
                inclusive[frame] += count
    packages: Counter[str] = Counter()
    for frame, n in own.items():
        path = frame.rpartition("(")[2]
        packages[next((p for p in PACKAGES if p in path), "other")] += n
    lines = [f"{total} samples", "", "self time by package:"]
    lines += [f"  {n / total:6.1%}  {package}" for package, n in packages.most_common()]
    lines += ["", "self time:"]
    lines += [f"  {n / total:6.1%}  {frame}" for frame, n in own.most_common(top)]
    lines += ["", "inclusive time (framework frames):"]
    lines += [f"  {n / total:6.1%}  {frame}" for frame, n in inclusive.most_common(top)]
    return lines


async def profile(load: str, seconds: float, rate: int, raw: Path, source: str) -> str:
    pinned = pin_loadgen()
    settings = Settings(quick=True, pinned=pinned, servers=(OURS,), a2a_trio_path=source)
    async with open_servers((OURS,), settings) as servers:
        server = servers[OURS]
        spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        argv = [spy, "record", "--pid", str(server.pid), "--format", "raw", "--rate", str(rate)]
        argv += ["--duration", str(int(seconds)), "--output", str(raw), "--nonblocking"]
        async with trio.open_nursery() as nursery:

            async def begin() -> None:
                nursery.start_soon(_record, argv)
                await trio.sleep(0.5)

            summary = await LOADS[load](server, seconds, begin)
    return summary


async def _record(argv: list[str]) -> None:
    await trio.run_process(argv, stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--load", choices=sorted(LOADS), default="send")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--a2a-trio-from", default="", metavar="DIR", help="as in run.py")
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H%M%SZ", time.gmtime())
    raw = RESULTS / f"profile-{args.load}-{stamp}.txt"
    summary = trio.run(profile, args.load, args.seconds, args.rate, raw, args.a2a_trio_from)
    print(f"load: {args.load}, {summary}")
    print("\n".join(summarise(raw, args.top)))
    print(f"(collapsed stacks in {raw})")


if __name__ == "__main__":
    main()
