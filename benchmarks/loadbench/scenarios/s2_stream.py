"""Scenario 2: ``SendStreamingMessage`` to the echo agent at concurrency 16.

Each stream runs from the request until the server ends the response after the terminal
event; time to first event is measured from the request's first byte sent.
"""

from __future__ import annotations

from loadbench import payloads
from loadbench.load import LoadResult, closed_loop
from loadbench.scenario import OURS, SDK, Goal, Section, Settings, open_servers
from loadbench.stats import ratio

CONCURRENCY = 16


async def run(settings: Settings) -> Section:
    section = Section(
        f"2. SendStreamingMessage (echo agent, concurrency {CONCURRENCY})",
        [
            "server",
            "streams/s",
            "TTFE p50 ms",
            "TTFE p99 ms",
            "stream p50 ms",
            "stream p99 ms",
            "server CPU ms/stream",
            "streams per server CPU s",
            "errors",
        ],
    )
    results: dict[str, LoadResult] = {}
    rounds = int(settings.pick(1, 2))
    async with open_servers((OURS, SDK), settings) as servers:
        for _round in range(rounds):
            for name, server in servers.items():
                result = await closed_loop(
                    server.port,
                    payloads.send_streaming_message,
                    concurrency=CONCURRENCY,
                    warmup=settings.pick(0.3, 1.0),
                    duration=settings.pick(1.5, 6.0),
                    streaming=True,
                    cpu=server.cpu_seconds,
                )
                results[name] = result
                ttfe, whole = result.ttfe, result.latency
                section.add(
                    name,
                    result.rate,
                    ttfe.p50_ms,
                    ttfe.p99_ms,
                    whole.p50_ms,
                    whole.p99_ms,
                    result.cpu_ms,
                    result.capacity,
                    result.errors,
                )
                print(f"  {name}: {result.rate:,.0f} streams/s", flush=True)
                if result.errors:
                    section.notes.append(f"{name} errors: {result.error_sample}")
    if rounds > 1:
        section.notes.append(f"{rounds} interleaved rounds per server; each row is one round")
    ours, sdk = results.get(OURS), results.get(SDK)
    x = ratio(ours.rate, sdk.rate) if ours and sdk else float("nan")
    per_cpu = ratio(ours.capacity, sdk.capacity) if ours and sdk else float("nan")
    section.notes.append(
        f"a2a_trio / a2a-sdk = {x:.2f}x streams/s, {per_cpu:.2f}x streams per server CPU second "
        "(last round)"
    )
    section.goals.append(
        Goal(
            "a2a_trio >= 2.5x SDK streams/s",
            x == x and x >= 2.5,
            f"{x:.2f}x wall clock; {per_cpu:.2f}x per server CPU second",
        )
    )
    p50 = ours.ttfe.p50_ms if ours else float("nan")
    section.goals.append(
        Goal("a2a_trio TTFE p50 <= 10 ms", p50 == p50 and p50 <= 10, f"{p50:.2f} ms")
    )
    return section
