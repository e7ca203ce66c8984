"""Scenario 2: ``SendStreamingMessage`` to the echo agent at concurrency 16.

Each stream runs from the request until the server ends the response after the terminal
event; time to first event is measured from the request's first byte sent. The raw ASGI floor
runs in the same rounds, its release file present from the start, so each of its streams is
the least a stream can be on hypercorn: headers, a first event, a COMPLETED event, end.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import attrs

from loadbench import payloads
from loadbench.load import LoadResult, closed_loop, total_capacity, total_rate
from loadbench.scenario import FLOOR, OURS, SDK, Goal, Section, Settings, open_servers
from loadbench.servers import ServerOptions
from loadbench.stats import Latency, ratio

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
    every: dict[str, list[LoadResult]] = {}
    floor_notes: list[str] = []
    rounds = int(settings.pick(1, 2))
    wide = attrs.evolve(settings, servers=(*settings.servers, FLOOR))
    with tempfile.TemporaryDirectory(prefix="a2a-bench-") as tmp:
        release = Path(tmp) / "release"
        release.touch()
        options = ServerOptions(release_file=str(release))
        async with open_servers((OURS, SDK, FLOOR), wide, options) as servers:
            for round_no in range(1, rounds + 1):
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
                    every.setdefault(name, []).append(result)
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
                floor_notes.append(_against_floor(round_no, results))
    if rounds > 1:
        section.notes.append(f"{rounds} interleaved rounds per server; each row is one round")
    section.notes.extend(note for note in floor_notes if note)
    ours, sdk = every.get(OURS, []), every.get(SDK, [])
    x = ratio(total_rate(ours), total_rate(sdk)) if ours and sdk else float("nan")
    per_cpu = ratio(total_capacity(ours), total_capacity(sdk)) if ours and sdk else float("nan")
    section.notes.append(
        f"a2a_trio / a2a-sdk = {x:.2f}x streams/s, {per_cpu:.2f}x streams per server CPU second "
        "(every round; the TTFE goal reads every round's streams together)"
    )
    section.goals.append(
        Goal(
            "a2a_trio >= 2.5x SDK streams/s",
            x == x and x >= 2.5,
            f"{x:.2f}x wall clock; {per_cpu:.2f}x per server CPU second",
        )
    )
    p50, floor_p50 = pooled_ttfe_p50(ours), pooled_ttfe_p50(every.get(FLOOR, []))
    section.goals.append(
        Goal(
            "a2a_trio TTFE p50 <= 10 ms",
            p50 == p50 and p50 <= 10,
            f"{p50:.2f} ms over every round; the {FLOOR}'s: {floor_p50:.2f} ms",
        )
    )
    return section


def pooled_ttfe_p50(rounds: list[LoadResult]) -> float:
    """Time-to-first-event p50 over the streams of every round together, in ms."""
    return Latency.of([t for r in rounds for t in r.first_event]).p50_ms


def _against_floor(round_no: int, results: dict[str, LoadResult]) -> str:
    """A note putting a2a_trio's TTFE p50 next to the floor's, for one round ('' if either
    server is missing)."""
    ours, floor = results.get(OURS), results.get(FLOOR)
    if not (ours and floor):
        return ""
    mine, base = ours.ttfe.p50_ms, floor.ttfe.p50_ms
    return (
        f"round {round_no}: TTFE p50 a2a_trio {mine:.1f} ms against the {FLOOR}'s {base:.1f} ms "
        f"(the HTTP server's own floor at this load; a2a_trio adds {mine - base:.1f} ms); "
        f"streams/s {ratio(ours.rate, floor.rate):.0%} of the floor's"
    )
