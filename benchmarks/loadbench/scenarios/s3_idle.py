"""Scenario 3: idle streams. N subscriptions to WORKING tasks, held with keepalives.

Per server: start ``TASKS`` held tasks, read the server's RSS, open N ``SubscribeToTask``
streams spread over them, read RSS again once all are connected (the difference over N is
the cost of one idle stream), hold them for the hold time, count those still open and the
keepalives each saw, then release the tasks and check every stream got its terminal event.
The raw ASGI floor holds the same streams with no A2A work, for scale.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import attrs
import trio

from loadbench import payloads
from loadbench.held import StreamPool
from loadbench.scenario import FLOOR, OURS, SDK, Goal, Section, Settings, open_servers
from loadbench.servers import Server, ServerOptions
from loadbench.tasks import held_tasks

TASKS = 20


@attrs.frozen
class Idle:
    """One server's idle-stream figures."""

    server: str
    n: int
    connected: int
    ramp: float
    cpu_per_subscribe: float
    rss_before_kb: int
    rss_after_kb: int
    still_open: int
    min_keepalives: int
    completed: int
    errors: str

    @property
    def kb_per_stream(self) -> float:
        """RSS growth over the connected streams."""
        if not self.connected:
            return float("nan")
        return (self.rss_after_kb - self.rss_before_kb) / self.connected

    def cells(self) -> list[object]:
        """The table row."""
        return [
            self.server,
            self.n,
            self.connected,
            self.ramp,
            self.cpu_per_subscribe,
            self.rss_before_kb / 1024,
            self.rss_after_kb / 1024,
            self.kb_per_stream,
            self.still_open,
            self.min_keepalives,
            self.completed,
            self.errors,
        ]


async def _hold(server: Server, n: int, settings: Settings, release: Path) -> Idle:
    ids = await held_tasks(server, TASKS, release)
    await trio.sleep(0.5)
    rss0 = server.rss_kb()
    pool = StreamPool(server.port, [payloads.subscribe(ids[i % len(ids)]) for i in range(n)])
    hold = settings.pick(3.0, 60.0)
    cpu0 = server.cpu_seconds()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(pool.run)
        began = trio.current_time()
        with trio.move_on_after(settings.pick(30.0, 400.0)):
            await pool.settled.wait()
        ramp = trio.current_time() - began
        connected = pool.connected
        cpu_per_subscribe = (server.cpu_seconds() - cpu0) * 1000 / max(connected, 1)
        await trio.sleep(1.0)
        rss1 = server.rss_kb()
        print(f"  {server.name} N={n}: {connected} connected in {ramp:.1f} s", flush=True)
        await trio.sleep(hold)
        still_open = pool.open
        min_keepalives = min((s.comments for s in pool.streams if s.connected), default=0)
        await trio.Path(release).touch()
        with trio.move_on_after(settings.pick(20.0, 120.0)):
            await pool.finished.wait()
        nursery.cancel_scope.cancel()
    return Idle(
        server=server.name,
        n=n,
        connected=connected,
        ramp=ramp,
        cpu_per_subscribe=cpu_per_subscribe,
        rss_before_kb=rss0,
        rss_after_kb=rss1,
        still_open=still_open,
        min_keepalives=min_keepalives,
        completed=sum(s.terminal and s.ended for s in pool.streams),
        errors="; ".join(pool.errors())[:200] or "none",
    )


async def run(settings: Settings) -> Section:
    section = Section(
        "3. Idle streams (SubscribeToTask to WORKING tasks, held with keepalives)",
        [
            "server",
            "N",
            "connected",
            "ramp s",
            "server CPU ms/subscribe",
            "RSS before MB",
            "RSS after MB",
            "KB/stream",
            "open after hold",
            "min keepalives/stream",
            "completed at release",
            "errors",
        ],
    )
    keepalive = settings.pick(1.0, 15.0)
    hold = settings.pick(3.0, 60.0)
    sizes = (200, 1000) if settings.quick else (1000, 10000)
    wide = attrs.evolve(settings, servers=(*settings.servers, FLOOR))
    rows: dict[tuple[str, int], Idle] = {}
    for n in sizes:
        for name in (OURS, SDK, FLOOR):
            with tempfile.TemporaryDirectory(prefix="a2a-bench-") as tmp:
                release = Path(tmp) / "release"
                options = ServerOptions(keepalive=keepalive, release_file=str(release))
                async with open_servers((name,), wide, options) as servers:
                    for server in servers.values():
                        row = await _hold(server, n, settings, release)
                        rows[name, n] = row
                        section.add(*row.cells())
    section.notes.append(
        f"{TASKS} held tasks per A2A server; keepalive interval {keepalive:g} s on every server; "
        f"hold {hold:g} s; streams opened at most 64 at a time"
    )
    big = rows.get((OURS, sizes[-1]))
    if big:
        held_all = big.still_open == big.n and big.completed == big.n and big.min_keepalives > 0
        section.goals.append(
            Goal(
                f"{big.n:,} streams held with keepalives, none dropped",
                held_all,
                f"{big.still_open:,} open after the hold, at least {big.min_keepalives} "
                f"keepalives each, {big.completed:,} completed at release",
            )
        )
        per_stream = big.kb_per_stream
        section.goals.append(
            Goal("under 40 KB server RSS per stream", per_stream < 40, f"{per_stream:.1f} KB")
        )
    return section
