"""Scenario 4: fan-out. One task, many subscribers, a burst of events.

Per server: start one ``fanout`` task, open the subscribers, and once all are connected
create its trigger file; the agent then emits the events ``interval`` s apart, each stamped
with its emission time. Delivery latency is receive time minus emission time, over every
(subscriber, event) pair; it includes the load generator's own queueing.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import trio

from loadbench import payloads
from loadbench.held import StreamPool
from loadbench.scenario import OURS, SDK, Goal, Section, Settings, open_servers
from loadbench.stats import Latency
from loadbench.tasks import create_tasks


async def run(settings: Settings) -> Section:
    subscribers = int(settings.pick(200, 1000))
    events = int(settings.pick(20, 100))
    interval = 0.05
    section = Section(
        f"4. Fan-out ({subscribers:,} subscribers, {events} events {interval * 1000:g} ms apart)",
        ["server", "subscribed", "delivered", "expected", "p50 ms", "p99 ms", "max ms", "errors"],
    )
    found: dict[str, Latency] = {}
    for name in (OURS, SDK):
        with tempfile.TemporaryDirectory(prefix="a2a-bench-") as tmp:
            trigger = Path(tmp) / "go"
            async with open_servers((name,), settings) as servers:
                for server in servers.values():
                    meta = {
                        "bench": "fanout",
                        "file": str(trigger),
                        "events": events,
                        "interval": interval,
                    }
                    (task_id,) = await create_tasks(server.port, 1, meta)
                    pool = StreamPool(server.port, [payloads.subscribe(task_id)] * subscribers)
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(pool.run)
                        with trio.move_on_after(settings.pick(30.0, 90.0)):
                            await pool.settled.wait()
                        await trio.Path(trigger).touch()
                        with trio.move_on_after(events * interval + settings.pick(20.0, 60.0)):
                            await pool.finished.wait()
                        nursery.cancel_scope.cancel()
                    delays = [d for stream in pool.streams for d in stream.delays]
                    lat = Latency.of(delays)
                    found[name] = lat
                    worst = max(delays, default=float("nan")) * 1000
                    errors = "; ".join(pool.errors())[:200] or "none"
                    section.add(
                        name,
                        pool.connected,
                        lat.count,
                        subscribers * events,
                        lat.p50_ms,
                        lat.p99_ms,
                        worst,
                        errors,
                    )
                    print(f"  {name}: p99 {lat.p99_ms:.1f} ms", flush=True)
    ours = found.get(OURS)
    p99 = ours.p99_ms if ours else float("nan")
    section.goals.append(
        Goal("a2a_trio p99 delivery < 50 ms", p99 == p99 and p99 < 50, f"{p99:.1f} ms")
    )
    return section
