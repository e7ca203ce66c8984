"""Scenario 6: the floor. Scenario 1's load against apps that do no A2A work at all.

A raw ASGI app and a one-route quart-trio app, both on hypercorn's trio worker, measured in
the same run as a2a_trio: the gap is what the framework itself costs.
"""

from __future__ import annotations

import attrs

from loadbench.load import total_capacity, total_rate
from loadbench.scenario import FLOOR, OURS, Section, Settings
from loadbench.scenarios.s1_send import (
    COLUMNS,
    CONCURRENCY,
    CPU_NOTE,
    ROUNDS_NOTE,
    measure_send,
    median_p99,
    stall_note,
    stalls_notes,
)
from loadbench.stats import ratio

FLOORS = (FLOOR, "quart floor")


async def run(settings: Settings) -> Section:
    section = Section(
        "6. The floor (same load as 1; fixed JSON body on hypercorn -k trio)",
        COLUMNS,
    )
    wide = attrs.evolve(settings, servers=(*settings.servers, *FLOORS))
    run = await measure_send((OURS, *FLOORS), wide, section)
    results = run.results
    section.notes.append(CPU_NOTE)
    section.notes.append(ROUNDS_NOTE)
    section.notes.extend(stalls_notes(run.stalls))
    for concurrency in CONCURRENCY:
        ours = results.get((OURS, concurrency), [])
        for floor in FLOORS:
            base = results.get((floor, concurrency), [])
            if ours and base:
                share = ratio(total_rate(ours), total_rate(base))
                per_cpu = ratio(total_capacity(ours), total_capacity(base))
                section.notes.append(
                    f"c={concurrency}: a2a_trio reaches {share:.0%} of the {floor}'s req/s "
                    f"({per_cpu:.0%} per server CPU second)"
                )
    for name in (OURS, *FLOORS):
        if rounds := results.get((name, 1), []):
            p99 = median_p99(rounds)
            section.notes.append(f"c=1: {name} p99, median of the rounds: {p99:.2f} ms")
            if run.stalls:
                section.notes.append(stall_note(name, rounds, run.stalls))
    return section
