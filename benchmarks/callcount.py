"""Count the Python calls a whole server makes per request (or per fanned-out frame):
a2a_trio next to the raw ASGI floor.

    .venv/bin/python benchmarks/callcount.py                  # send, stream and fanout
    .venv/bin/python benchmarks/callcount.py --load stream --requests 5000 --top 30
    .venv/bin/python benchmarks/callcount.py --load fanout    # calls per delivered frame
    .venv/bin/python benchmarks/callcount.py --a2a-trio-from /tmp/snap

Why a count: every server here is bound by the interpreter (``perf`` put 87 % of a2a_trio's and
of the raw ASGI floor's CPU in libpython), and CPU time per request moves 10-20 % between
windows on a shared machine (docs/benchmarks.md, finding 9).  How many Python functions a
request starts and resumes does not move with the machine's load, and it covers the whole
server, hypercorn, h11 and trio included, where ``sendcost.py --callgrind`` covers a2a_trio's
ASGI app alone.  It is a count, not a cost: a call into C (orjson, the socket) is not counted,
and one Python call can cost ten times another.

Each server runs under ``servers/counted.py`` (``sys.monitoring``), pinned as in ``run.py``.
Sixteen keep-alive connections warm up, then counting starts, exactly ``--requests`` blocking
``SendMessage`` requests (or ``SendStreamingMessage`` streams; rounded down to a multiple of
16) of the echo agent go out over them, sixteen at a time, and counting stops once every
answer is in; the counts are divided by the requests.  The a2a_trio server's only background
work meanwhile, its stall watch, wakes four times a second.

``fanout`` counts scenario 4's work per delivered frame instead (:class:`FanOut`): 500 streams
subscribe to one ``fanout`` task, and counting runs from the moment every one of them has the
first event to the moment every one has the 21st, so it covers exactly 20 deliveries to each
(the job's own work per event included, shared by them all), and neither the streams' opening
nor their end.  The events are 0.25 s apart, long enough for each to reach every subscriber
alone even while counting slows the server, so every delivery is one frame in one send, as in
scenario 4.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from pathlib import Path

import attrs
import trio
from loadbench import payloads
from loadbench.client import A2A_HEADERS, Connection
from loadbench.held import StreamPool
from loadbench.load import answered, read_stream
from loadbench.scenario import FLOOR, OURS, Settings, open_servers
from loadbench.servers import Server, ServerOptions, pin_loadgen
from loadbench.tasks import create_tasks

CONCURRENCY = 16
WARMUP_PER_CONNECTION = 20
COUNTS_TIMEOUT = 30.0
LOADS = ("send", "stream", "fanout")
FANOUT_WATCH = 0.002
"""How often the load generator looks whether every subscriber has the next event."""
COLUMNS = ("a2a_trio", "trio", "hypercorn", "h11", "stdlib")
"""The packages with a column of their own; the rest are summed as "other"."""


@attrs.frozen
class FanOut:
    """The ``fanout`` load's size: ``counted`` events delivered to each of ``subscribers``
    streams are counted, ``interval`` seconds apart."""

    subscribers: int = 500
    counted: int = 20
    interval: float = 0.25


@attrs.frozen
class Counted:
    """What one server ran for one load, per request: starts and resumptions by function."""

    server: str
    load: str
    requests: int
    starts: dict[tuple[str, str], float]
    """(package, function) -> starts per request."""
    resumes: float
    """Resumptions of suspended coroutines and generators per request (all functions)."""

    @property
    def total(self) -> float:
        return sum(self.starts.values())

    def by_package(self) -> dict[str, float]:
        packages: defaultdict[str, float] = defaultdict(float)
        for (package, _function), n in self.starts.items():
            packages[package] += n
        return packages


def package_of(filename: str) -> str:
    """The package a code object belongs to.  Code that attrs and cattrs generate for a class
    (``<attrs generated methods trio._core._run.CancelScope>``) counts as the class's
    package: a trio cancel scope's ``__init__`` is trio's cost, not attrs'."""
    if filename.startswith("<"):
        generated_for = _generated_for(filename)
        if generated_for is not None:
            return generated_for.partition(".")[0]
        return "stdlib" if filename.startswith("<frozen ") else "other"
    parts = Path(filename).parts
    if "site-packages" in parts:
        return parts[parts.index("site-packages") + 1].removesuffix(".py")
    if "a2a_trio" in parts:
        return "a2a_trio"
    if "benchmarks" in parts:
        return "benchmark app"
    return "stdlib"


def _generated_for(filename: str) -> str | None:
    """The class (its dotted path) that attrs or cattrs generated the code named
    ``filename`` for: ``<attrs generated methods trio._core._run.CancelScope>``."""
    words = filename.strip("<>").split()
    return words[-1] if filename.startswith("<") and "generated" in words else None


def per_request(
    rows: Iterable[dict[str, object]], requests: int
) -> tuple[dict[tuple[str, str], float], float]:
    """Starts per request by (package, function), and resumptions per request."""
    starts: Counter[tuple[str, str]] = Counter()
    resumes = 0
    for row in rows:
        file, function = str(row["file"]), str(row["function"])
        if (generated_for := _generated_for(file)) is not None:  # named by its class
            function = f"{generated_for.rpartition('.')[2]}.{function}"
        starts[(package_of(file), function)] += int(str(row["starts"]))
        resumes += int(str(row["resumes"]))
    return {key: n / requests for key, n in starts.items() if n}, resumes / requests


async def _send_one(conn: Connection) -> None:
    head, body = await conn.post("/", payloads.send_message(), A2A_HEADERS)
    if not answered(head, body):
        raise RuntimeError(f"a send failed: {head.status} {body[:200]!r}")


async def _stream_one(conn: Connection) -> None:
    head, _first, finished = await read_stream(conn, payloads.send_streaming_message())
    if head.status != 200 or not finished:
        raise RuntimeError(f"a stream failed: status {head.status}, ended={finished}")


type Request = Callable[[Connection], Awaitable[None]]


async def _run(conns: list[Connection], one: Request, each: int) -> None:
    async def worker(conn: Connection) -> None:
        for _ in range(each):
            await one(conn)

    async with trio.open_nursery() as nursery:
        for conn in conns:
            nursery.start_soon(worker, conn)


async def count(
    server: Server, load: str, requests: int, counts_file: Path, fanout: FanOut = FanOut()
) -> Counted:
    """Warm up, then count ``requests`` requests of ``load`` on ``server``, exactly (rounded
    down to a multiple of the ``CONCURRENCY`` connections, each making as many); for
    ``fanout``, the deliveries ``fanout`` says."""
    if load == "fanout":
        trigger = counts_file.with_name(f"go-{server.pid}")
        counted = await _count_fanout(server, trigger, fanout)
    else:
        counted = await _count_requests(server, load, requests)
    return await _read_counts(server.name, load, counted, counts_file)


async def _count_requests(server: Server, load: str, requests: int) -> int:
    one: Request = _send_one if load == "send" else _stream_one
    each = max(1, requests // CONCURRENCY)
    conns = [Connection(server.port) for _ in range(CONCURRENCY)]
    try:
        await _run(conns, one, WARMUP_PER_CONNECTION)
        _start_counting(server)
        await trio.sleep(0.2)  # the handler runs at the server's next bytecode
        await _run(conns, one, each)
        _stop_counting(server)
    finally:
        for conn in conns:
            await conn.aclose()
    return each * CONCURRENCY


async def _count_fanout(server: Server, trigger: Path, fanout: FanOut) -> int:
    events = fanout.counted + 2  # one before counting starts, one after it stops
    meta = {"bench": "fanout", "file": str(trigger), "events": events, "interval": fanout.interval}
    (task_id,) = await create_tasks(server.port, 1, meta)
    pool = StreamPool(server.port, [payloads.subscribe(task_id)] * fanout.subscribers)

    async def all_have(n: int) -> None:
        while min(len(stream.delays) for stream in pool.streams) < n:
            if pool.finished.is_set():
                raise RuntimeError(f"the fan-out ended early: {pool.errors()}")
            await trio.sleep(FANOUT_WATCH)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(pool.run)
        with trio.fail_after(COUNTS_TIMEOUT):
            await pool.settled.wait()
            if pool.connected != fanout.subscribers:
                raise RuntimeError(f"subscribers did not connect: {pool.errors()}")
            await trio.Path(trigger).touch()
            await all_have(1)
            _start_counting(server)
            await all_have(fanout.counted + 1)
            _stop_counting(server)
            await pool.finished.wait()
    return fanout.counted * fanout.subscribers


def _start_counting(server: Server) -> None:
    os.kill(server.pid, signal.SIGUSR1)


def _stop_counting(server: Server) -> None:
    os.kill(server.pid, signal.SIGUSR2)


async def _read_counts(name: str, load: str, counted: int, counts_file: Path) -> Counted:
    """The server's counts, once it has written them, per counted request (or frame)."""
    written = trio.Path(counts_file)
    with trio.fail_after(COUNTS_TIMEOUT):  # the server writes it from its signal handler
        while not await written.exists():  # noqa: ASYNC110 (another process: no event to wait on)
            await trio.sleep(0.05)
    rows = json.loads(await written.read_text(encoding="utf-8"))
    await written.unlink()
    starts, resumes = per_request(rows, counted)
    return Counted(name, load, counted, starts, resumes)


async def measure(
    loads: Iterable[str],
    requests: int,
    *,
    source: str = "",
    pinned: bool = False,
    fanout: FanOut = FanOut(),
) -> list[Counted]:
    """Count ``requests`` requests of each load (``fanout``: its deliveries) on a2a_trio
    (imported from ``source`` if given), then on the raw ASGI floor; ``pinned`` puts the
    servers on their own CPU."""
    settings = Settings(quick=True, pinned=pinned, servers=(OURS, FLOOR), a2a_trio_path=source)
    results = []
    with tempfile.TemporaryDirectory(prefix="a2a-bench-") as tmp:
        release = Path(tmp) / "release"
        release.touch()  # the floor's streams end at once, as in scenario 2
        counts_file = Path(tmp) / "counts.json"
        options = ServerOptions(
            release_file=str(release),
            wrapper="counted.py",
            env=(("A2A_BENCH_COUNTS", str(counts_file)),),
        )
        for name in (OURS, FLOOR):
            async with open_servers((name,), settings, options) as servers:
                if name not in servers:
                    raise RuntimeError(f"the {name} server did not start")
                for load in loads:
                    counted = await count(servers[name], load, requests, counts_file, fanout)
                    results.append(counted)
    return results


def report(results: list[Counted], top: int) -> list[str]:
    head = ["server", "load", "counted", "calls each", *COLUMNS, "other", "resumptions"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        packages = r.by_package()
        shown = [packages.pop(column, 0.0) for column in COLUMNS]
        cells = [r.server, r.load, f"{r.requests:,}", f"{r.total:,.0f}"]
        cells += [f"{n:,.0f}" for n in (*shown, sum(packages.values()), r.resumes)]
        lines.append("| " + " | ".join(cells) + " |")
    for load in sorted({r.load for r in results}):
        ours = next((r for r in results if r.server == OURS and r.load == load), None)
        floor = next((r for r in results if r.server == FLOOR and r.load == load), None)
        if ours is None or floor is None:
            continue
        lines += ["", f"{load}: a2a_trio makes {ours.total / floor.total:.2f}x the floor's calls"]
        lines += ["", f"{load}: functions whose calls per request differ most from the floor's:"]
        keys = ours.starts.keys() | floor.starts.keys()
        diff = {k: ours.starts.get(k, 0.0) - floor.starts.get(k, 0.0) for k in keys}
        outside = sorted((k for k in keys if k[0] != "a2a_trio"), key=lambda k: -abs(diff[k]))
        for key in outside[:top]:
            lines.append(f"  {diff[key]:+7.1f}  {key[0]}: {key[1]}")
        lines += ["", f"{load}: a2a_trio's own functions, by calls per request:"]
        own = sorted((k for k in ours.starts if k[0] == "a2a_trio"), key=lambda k: -ours.starts[k])
        lines += [f"  {ours.starts[k]:7.1f}  {k[1]}" for k in own[:top]]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--load", choices=LOADS, action="append", help="default: both")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--a2a-trio-from", default="", help="import a2a_trio from this directory")
    args = parser.parse_args()
    source = os.path.abspath(args.a2a_trio_from) if args.a2a_trio_from else ""
    pinned = pin_loadgen()
    results = trio.run(
        partial(measure, args.load or LOADS, args.requests, source=source, pinned=pinned)
    )
    print("\n".join(report(results, args.top)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
