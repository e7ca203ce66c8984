"""Scenario 1: blocking ``SendMessage`` to the echo agent at concurrency 1, 16 and 64."""

from __future__ import annotations

from loadbench import payloads
from loadbench.load import LoadResult, closed_loop
from loadbench.scenario import OURS, SDK, Goal, Section, Settings, open_servers
from loadbench.stats import ratio

CONCURRENCY = (1, 16, 64)
COLUMNS = (
    "server",
    "concurrency",
    "req/s",
    "p50 ms",
    "p99 ms",
    "server CPU ms/req",
    "req per server CPU s",
    "errors",
)
CPU_NOTE = (
    "server CPU ms/req is the server's user+system CPU time (/proc/<pid>/stat) over the window "
    "divided by the requests in it; req per server CPU s is its inverse: the rate the server "
    "would reach with a whole core, the figure least disturbed by other work on the machine"
)


async def measure_send(
    names: tuple[str, ...], settings: Settings, section: Section
) -> dict[tuple[str, int], LoadResult]:
    """Run the send load against each server, interleaved per concurrency level."""
    results: dict[tuple[str, int], LoadResult] = {}
    async with open_servers(names, settings) as servers:
        for concurrency in CONCURRENCY:
            for name, server in servers.items():
                result = await closed_loop(
                    server.port,
                    payloads.send_message,
                    concurrency=concurrency,
                    warmup=settings.pick(0.3, 1.0),
                    duration=settings.pick(1.5, 8.0),
                    cpu=server.cpu_seconds,
                )
                results[name, concurrency] = result
                lat = result.latency
                section.add(
                    name,
                    concurrency,
                    result.rate,
                    lat.p50_ms,
                    lat.p99_ms,
                    result.cpu_ms,
                    result.capacity,
                    result.errors,
                )
                print(f"  {name} c={concurrency}: {result.rate:,.0f} req/s", flush=True)
                if result.errors:
                    section.notes.append(f"{name} c={concurrency} errors: {result.error_sample}")
    return results


async def run(settings: Settings) -> Section:
    section = Section(
        "1. SendMessage (blocking, echo agent)",
        COLUMNS,
    )
    results = await measure_send((OURS, SDK), settings, section)
    section.notes.append(CPU_NOTE)
    for concurrency in CONCURRENCY:
        ours, sdk = results.get((OURS, concurrency)), results.get((SDK, concurrency))
        if ours and sdk:
            section.notes.append(
                f"c={concurrency}: a2a_trio / a2a-sdk = {ratio(ours.rate, sdk.rate):.2f}x req/s, "
                f"{ratio(ours.capacity, sdk.capacity):.2f}x req per server CPU second"
            )
    for concurrency in (16, 64):
        ours, sdk = results.get((OURS, concurrency)), results.get((SDK, concurrency))
        x = ratio(ours.rate, sdk.rate) if ours and sdk else float("nan")
        per_cpu = ratio(ours.capacity, sdk.capacity) if ours and sdk else float("nan")
        section.goals.append(
            Goal(
                f"c={concurrency}: a2a_trio >= 2.5x SDK req/s",
                x == x and x >= 2.5,
                f"{x:.2f}x wall clock; {per_cpu:.2f}x per server CPU second",
            )
        )
    c1 = results.get((OURS, 1))
    p99 = c1.latency.p99_ms if c1 else float("nan")
    section.goals.append(
        Goal("c=1: a2a_trio p99 <= 3 ms", p99 == p99 and p99 <= 3.0, f"{p99:.2f} ms")
    )
    return section
