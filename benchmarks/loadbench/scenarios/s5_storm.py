"""Scenario 5: disconnect storm. Many subscribers drop at once; the jobs must not notice.

Per server: start ``TASKS`` held tasks, note the server's open file descriptors, open the
streams, then cancel every client at once (each socket closes). The release time is how long
until the server's descriptor count is back to where it was before the streams (within
``SLACK``). Then the tasks are released and must all complete. The raw ASGI floor holds the
same streams with no A2A work (no tasks, no jobs), so its release time is hypercorn's own.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import attrs
import trio

from loadbench import payloads
from loadbench.held import StreamPool
from loadbench.scenario import FLOOR, OURS, SDK, Goal, Section, Settings, open_servers
from loadbench.servers import Server, ServerOptions
from loadbench.tasks import held_tasks, wait_completed

TASKS = 50
SLACK = 2
RELEASE_LIMIT = 10.0
POLL = 0.005


async def _storm(server: Server, clients: int, release: Path, settings: Settings) -> list[object]:
    ids = await held_tasks(server, TASKS, release)
    await trio.sleep(0.3)
    fds_before = server.fd_count()
    pool = StreamPool(server.port, [payloads.subscribe(ids[i % len(ids)]) for i in range(clients)])
    async with trio.open_nursery() as nursery:
        nursery.start_soon(pool.run)
        with trio.move_on_after(settings.pick(30.0, 90.0)):
            await pool.settled.wait()
        await trio.sleep(0.5)
        fds_during = server.fd_count()
        nursery.cancel_scope.cancel()
    dropped = time.perf_counter()
    released_after = float("nan")
    for _poll in range(int(RELEASE_LIMIT / POLL)):
        if server.fd_count() <= fds_before + SLACK:
            released_after = time.perf_counter() - dropped
            break
        await trio.sleep(POLL)
    fds_after = server.fd_count()
    await trio.Path(release).touch()
    jobs = "—"
    if server.name != FLOOR:
        final = await wait_completed(server.port, ids, within=15.0)
        jobs = f"{sum(state == 'TASK_STATE_COMPLETED' for state in final.values())}/{TASKS}"
    return [
        server.name,
        pool.connected,
        fds_before,
        fds_during,
        fds_after,
        released_after * 1000,
        jobs,
    ]


async def run(settings: Settings) -> Section:
    clients = int(settings.pick(200, 1000))
    section = Section(
        f"5. Disconnect storm ({clients:,} subscribers drop at once)",
        [
            "server",
            "streams",
            "fds before",
            "fds with streams",
            "fds after",
            "released in ms",
            "jobs completed",
        ],
    )
    rows: dict[str, list[object]] = {}
    wide = attrs.evolve(settings, servers=(*settings.servers, FLOOR))
    for name in (OURS, SDK, FLOOR):
        with tempfile.TemporaryDirectory(prefix="a2a-bench-") as tmp:
            release = Path(tmp) / "release"
            options = ServerOptions(release_file=str(release))
            async with open_servers((name,), wide, options) as servers:
                for server in servers.values():
                    rows[name] = await _storm(server, clients, release, settings)
                    section.add(*rows[name])
                    print(f"  {name}: released in {rows[name][5]} ms", flush=True)
    section.notes.append(
        "released = the server's open descriptors back within "
        f"{SLACK} of the count before the streams (polled every 5 ms, limit {RELEASE_LIMIT:g} s); "
        f"the {FLOOR} holds the same streams with no tasks, so it has no jobs to complete"
    )
    ours = rows.get(OURS)
    if ours:
        ms, jobs = ours[5], ours[6]
        assert isinstance(ms, float)
        section.goals.append(
            Goal("all released within 2 s", ms == ms and ms <= 2000, f"{ms:.0f} ms")
        )
        section.goals.append(
            Goal("no job disturbed", jobs == f"{TASKS}/{TASKS}", f"{jobs} completed")
        )
    return section
