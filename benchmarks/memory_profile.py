"""Where does an idle stream's memory go? tracemalloc snapshots of a server holding streams.

    .venv/bin/python benchmarks/memory_profile.py --server a2a_trio --streams 2000

Starts the server with ``PYTHONTRACEMALLOC`` set and a small ``sitecustomize`` that dumps a
tracemalloc snapshot on SIGUSR1, opens the streams (20 held tasks, like scenario 3), and prints
the allocation sites that grew most between the snapshot before and the one after, per stream.
Tracing slows the server and costs memory itself: use it for the breakdown, not for figures.
"""

from __future__ import annotations

import argparse
import os
import signal
import tempfile
import tracemalloc
from pathlib import Path

import trio
from loadbench import payloads
from loadbench.held import StreamPool
from loadbench.scenario import FLOOR, OURS, SDK, Settings, open_servers
from loadbench.servers import Server, ServerOptions, pin_loadgen
from loadbench.tasks import held_tasks

HOOK = """\
import os, signal, time, tracemalloc

def _dump(_signum, _frame):
    path = os.environ["A2A_BENCH_SNAPSHOT"] + "." + str(time.monotonic_ns())
    tracemalloc.take_snapshot().dump(path + ".tmp")
    os.replace(path + ".tmp", path)

signal.signal(signal.SIGUSR1, _dump)
"""


def _dumps(folder: Path) -> set[str]:
    return {name for name in os.listdir(folder) if name.startswith("snap.") and "tmp" not in name}


async def _snapshot(server: Server, folder: Path) -> tracemalloc.Snapshot:
    before = _dumps(folder)
    os.kill(server.pid, signal.SIGUSR1)
    for _poll in range(600):
        fresh = _dumps(folder) - before
        if fresh:
            return tracemalloc.Snapshot.load(str(folder / fresh.pop()))
        await trio.sleep(0.1)
    raise RuntimeError("the server wrote no tracemalloc snapshot within 60 s")


async def profile(server_name: str, streams: int, depth: int, top: int, source: str) -> None:
    settings = Settings(
        quick=True, pinned=pin_loadgen(), servers=(server_name,), a2a_trio_path=source
    )
    with tempfile.TemporaryDirectory(prefix="a2a-bench-") as tmp:
        folder = Path(tmp) / "snapshots"
        folder.mkdir()
        (folder / "sitecustomize.py").write_text(HOOK)
        release = Path(tmp) / "release"
        env = (("PYTHONTRACEMALLOC", str(depth)), ("A2A_BENCH_SNAPSHOT", str(folder / "snap")))
        options = ServerOptions(release_file=str(release), pythonpath=str(folder), env=env)
        async with open_servers((server_name,), settings, options) as servers:
            server = servers[server_name]
            ids = await held_tasks(server, 20, release)
            first = await _snapshot(server, folder)
            pool = StreamPool(
                server.port, [payloads.subscribe(ids[i % len(ids)]) for i in range(streams)]
            )
            async with trio.open_nursery() as nursery:
                nursery.start_soon(pool.run)
                with trio.move_on_after(300):
                    await pool.settled.wait()
                second = await _snapshot(server, folder)
                await trio.Path(release).touch()
                nursery.cancel_scope.cancel()
    connected = max(pool.connected, 1)
    diff = second.compare_to(first, "lineno")
    grown = sum(stat.size_diff for stat in diff)
    print(
        f"{server_name}: {pool.connected} streams, traced heap +{grown / connected:,.0f} B/stream"
    )
    for stat in diff[:top]:
        frame = stat.traceback[0]
        where = f"{frame.filename.rsplit('site-packages/', 1)[-1]}:{frame.lineno}"
        size, count = stat.size_diff / connected, stat.count_diff / connected
        print(f"  {size:8,.0f} B/stream  {count:6.1f} objects  {where}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--server", choices=(OURS, SDK, FLOOR), default=OURS)
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--depth", type=int, default=1, help="traceback frames kept per allocation")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--a2a-trio-from", default="", metavar="DIR", help="as in run.py")
    args = parser.parse_args()
    trio.run(profile, args.server, args.streams, args.depth, args.top, args.a2a_trio_from)


if __name__ == "__main__":
    main()
