"""Scenario 4: fan-out. One task, many subscribers, a stream of events.

Per server: start one ``fanout`` task, open the subscribers, and once all are connected
create its trigger file; the agent then emits the events ``INTERVAL`` s apart, each stamped
with its emission time. Delivery latency is arrival time minus emission time, over every
(subscriber, event) pair, where arrival is the kernel's receive timestamp at the subscriber's
socket (``Connection.arrived``). The load generator reads the thousand frames of a burst one
after another on one core, and its read time follows its own CPU per frame (finding 16), so
the time each was read is shown too, with that CPU. A stream that ends
without the terminal event was cut short by the server (a2a_trio closes a subscriber whose
buffer overflows, so the job is never held up by a slow reader). The raw ASGI floor runs the
same load with a fan-out that does no A2A work (one shared frame list, a parking lot, one send
per wake-up): its CPU per frame is what hypercorn itself costs.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import attrs
import trio

from loadbench import payloads
from loadbench.client import KERNEL_STAMPS
from loadbench.held import StreamPool
from loadbench.load import collector_paused
from loadbench.scenario import FLOOR, OURS, SDK, Goal, Section, Settings, open_servers
from loadbench.servers import Server
from loadbench.stats import Latency
from loadbench.tasks import create_tasks

INTERVAL = 0.1
COLUMNS = (
    "server",
    "subscribed",
    "delivered",
    "expected",
    "streams cut short",
    "p50 ms",
    "p99 ms",
    "max ms",
    "p99 ms as read",
    "server CPU us/frame",
    "errors",
)


@attrs.frozen
class Delivery:
    """One server's fan-out figures and its table row."""

    latency: Latency
    as_read: Latency
    cpu_us_per_frame: float
    loadgen_us_per_frame: float
    row: list[object]


async def _fan_out(
    server: Server, subscribers: int, events: int, trigger: Path, settings: Settings
) -> Delivery:
    meta = {"bench": "fanout", "file": str(trigger), "events": events, "interval": INTERVAL}
    (task_id,) = await create_tasks(server.port, 1, meta)
    pool = StreamPool(server.port, [payloads.subscribe(task_id)] * subscribers)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(pool.run)
        with trio.move_on_after(settings.pick(30.0, 120.0)):
            await pool.settled.wait()
        with collector_paused():
            cpu0, own0 = server.cpu_seconds(), time.process_time()
            await trio.Path(trigger).touch()
            with trio.move_on_after(events * INTERVAL + settings.pick(20.0, 60.0)):
                await pool.finished.wait()
            cpu, own = server.cpu_seconds() - cpu0, time.process_time() - own0
        nursery.cancel_scope.cancel()
    delays = [d for stream in pool.streams for d in stream.delays]
    lat = Latency.of(delays)
    as_read = Latency.of([d for stream in pool.streams for d in stream.read_delays])
    worst = max(delays, default=float("nan")) * 1000
    cut = sum(s.connected and not s.terminal for s in pool.streams)
    errors = "; ".join(pool.errors())[:200] or "none"
    row: list[object] = [server.name, pool.connected, lat.count, subscribers * events, cut]
    per_frame = cpu * 1e6 / lat.count if lat.count else float("nan")
    loadgen = own * 1e6 / lat.count if lat.count else float("nan")
    row += [lat.p50_ms, lat.p99_ms, worst, as_read.p99_ms, per_frame, errors]
    return Delivery(lat, as_read, per_frame, loadgen, row)


async def run(settings: Settings) -> Section:
    subscribers = int(settings.pick(200, 1000))
    events = int(settings.pick(20, 100))
    section = Section(
        f"4. Fan-out ({subscribers:,} subscribers, {events} events {INTERVAL * 1000:g} ms apart)",
        COLUMNS,
    )
    found: dict[str, Delivery] = {}
    wide = attrs.evolve(settings, servers=(*settings.servers, FLOOR))
    for name in (OURS, SDK, FLOOR):
        with tempfile.TemporaryDirectory(prefix="a2a-bench-") as tmp:
            async with open_servers((name,), wide) as servers:
                for server in servers.values():
                    found[name] = await _fan_out(
                        server, subscribers, events, Path(tmp) / "go", settings
                    )
                    section.add(*found[name].row)
                    print(f"  {name}: p99 {found[name].latency.p99_ms:.1f} ms", flush=True)
    section.notes.append(
        f"offered load: {subscribers / INTERVAL:,.0f} frames/s from the server "
        f"({subscribers:,} subscribers x {1 / INTERVAL:g} events/s)"
    )
    section.notes.append(_arrival_note(found))
    if OURS in found and FLOOR in found:
        section.notes.append(_against_floor(found[OURS], found[FLOOR]))
    if OURS in found:
        lat, as_read = found[OURS].latency, found[OURS].as_read
        whole = lat.count == subscribers * events
        met = whole and lat.p99_ms < 50
        measured = (
            f"{lat.p99_ms:.1f} ms at arrival ({as_read.p99_ms:.1f} ms as read), "
            f"{lat.count:,} of {subscribers * events:,} delivered"
        )
        section.goals.append(Goal("a2a_trio p99 delivery < 50 ms, every event", met, measured))
    return section


def _arrival_note(found: dict[str, Delivery]) -> str:
    """What the delivery columns measure, and the load generator's CPU per frame."""
    stamped = "the kernel's receive timestamp" if KERNEL_STAMPS else "the read (no kernel stamps)"
    spent = ", ".join(f"{name} {d.loadgen_us_per_frame:.0f}" for name, d in found.items())
    return (
        f"delivery: emission to arrival at the subscriber's socket ({stamped}); 'as read' is "
        f"when the load generator, one process on one core, read it. Load generator CPU per "
        f"frame, us: {spent}"
    )


def _against_floor(ours: Delivery, floor: Delivery) -> str:
    """A note putting a2a_trio's p99 and CPU per frame next to the floor's."""
    return (
        f"against the {FLOOR} (hypercorn, no A2A work): p99 delivery a2a_trio "
        f"{ours.latency.p99_ms:.1f} ms, floor {floor.latency.p99_ms:.1f} ms; server CPU per "
        f"frame a2a_trio {ours.cpu_us_per_frame:.0f} us, floor {floor.cpu_us_per_frame:.0f} us"
    )
