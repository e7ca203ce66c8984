"""How often the machine itself takes a busy CPU away: the noise under every latency tail.

A busy loop pinned to one CPU reads the clock back to back; a gap between two reads longer
than ``MIN_STALL`` is time the CPU ran something else (the hypervisor, an interrupt, another
process).  Measured with no server running, it says how many requests per second a p99 can
lose to the machine alone: on a VM that stops a CPU for over a millisecond a few times a
second, a 3 ms p99 at c=1 depends on the machine as much as on the server.

Each CPU is measured by its own child process (``python stalls.py CPU SECONDS`` prints the
gaps as JSON), so the probe never shares a core with the load generator's trio loop.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence

import attrs
import trio

MIN_STALL = 0.0002
"""Gaps shorter than this (200 us) are the loop's own jitter and are not counted."""
THRESHOLDS_MS = (0.5, 1.0, 2.0, 5.0)


@attrs.frozen
class Stalls:
    """The stalls one CPU showed over ``seconds`` of busy looping."""

    cpu: int
    seconds: float
    gaps: tuple[float, ...]
    """Each stall's length in seconds."""

    def per_second(self, longer_than_ms: float) -> float:
        """Stalls per second longer than ``longer_than_ms``."""
        limit = longer_than_ms / 1000
        return sum(gap > limit for gap in self.gaps) / self.seconds

    @property
    def lost_share(self) -> float:
        """The share of the window the CPU was taken away."""
        return sum(self.gaps) / self.seconds

    @property
    def longest_ms(self) -> float:
        return max(self.gaps, default=0.0) * 1000

    def describe(self) -> str:
        """One line: stalls per second over each threshold, time lost, the longest."""
        counts = ", ".join(f"{self.per_second(ms):.1f}/s > {ms:g} ms" for ms in THRESHOLDS_MS)
        return (
            f"CPU {self.cpu}: {counts}; {self.lost_share:.1%} of the time lost, "
            f"longest {self.longest_ms:.1f} ms"
        )


def busy_loop(seconds: float) -> list[float]:
    """Spin for ``seconds`` and return every gap between clock reads over ``MIN_STALL``."""
    clock = time.perf_counter
    gaps = []
    last = clock()
    end = last + seconds
    while (now := clock()) < end:
        if now - last > MIN_STALL:
            gaps.append(now - last)
        last = now
    return gaps


async def measure_stalls(cpus: Sequence[int], seconds: float) -> list[Stalls]:
    """Busy-loop on each of ``cpus`` at the same time for ``seconds``; their stalls."""
    found: dict[int, Stalls] = {}

    async def probe(cpu: int) -> None:
        done = await trio.run_process(
            [sys.executable, __file__, str(cpu), str(seconds)], capture_stdout=True
        )
        found[cpu] = Stalls(cpu, seconds, tuple(json.loads(done.stdout)))

    async with trio.open_nursery() as nursery:
        for cpu in cpus:
            nursery.start_soon(probe, cpu)
    return [found[cpu] for cpu in cpus]


def stalls_over(stalls: Sequence[Stalls], longer_than_ms: float) -> float:
    """Stalls per second longer than ``longer_than_ms``, summed over the CPUs."""
    return sum(s.per_second(longer_than_ms) for s in stalls)


if __name__ == "__main__":
    cpu, window = int(sys.argv[1]), float(sys.argv[2])
    os.sched_setaffinity(0, {cpu})  # a child inherits the load generator's pinning: undo it
    print(json.dumps(busy_loop(window)))
