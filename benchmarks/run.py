"""Run the a2a_trio benchmarks side by side with the official a2a-sdk.

    .venv/bin/python benchmarks/run.py            # every scenario, full size (~20 min)
    .venv/bin/python benchmarks/run.py --quick    # every scenario, small and short
    .venv/bin/python benchmarks/run.py --only 1 --only 6

Prints a markdown report and writes it to ``benchmarks/results/``. Only 127.0.0.1 is used;
every scenario is bounded in time and stops by itself.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio
from loadbench.report import machine, render
from loadbench.scenario import OURS, SDK, Section, Settings
from loadbench.scenarios import (
    s1_send,
    s2_stream,
    s3_idle,
    s4_fanout,
    s5_storm,
    s6_floor,
    s7_retention,
)
from loadbench.servers import LOADGEN_CPU, SERVER_CPU, pin_loadgen
from loadbench.stalls import measure_stalls

SCENARIOS: dict[int, Callable[[Settings], Awaitable[Section]]] = {
    1: s1_send.run,
    2: s2_stream.run,
    3: s3_idle.run,
    4: s4_fanout.run,
    5: s5_storm.run,
    6: s6_floor.run,
    7: s7_retention.run,
}
RESULTS = Path(__file__).resolve().parent / "results"


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small and short, for development")
    parser.add_argument("--only", type=int, action="append", choices=sorted(SCENARIOS))
    parser.add_argument(
        "--server",
        action="append",
        choices=(OURS, SDK),
        help="compare only these servers (default: both)",
    )
    parser.add_argument(
        "--a2a-trio-from",
        default="",
        metavar="DIR",
        help="import a2a_trio from DIR (e.g. a `git archive` snapshot) instead of the checkout",
    )
    parser.add_argument("--no-save", action="store_true", help="print only; write no file")
    return parser.parse_args()


def _raise_fd_limit() -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def _machine_stalls(settings: Settings) -> list[str]:
    """Header lines: how often the machine took each CPU away before the scenarios ran."""
    if not settings.pinned:
        return []
    window = settings.pick(1.0, 3.0)
    found = await measure_stalls((SERVER_CPU, LOADGEN_CPU), window)
    described = "; ".join(s.describe() for s in found)
    return [f"- Machine stalls (a busy loop on each CPU for {window:g} s, no server): {described}"]


async def _run_all(numbers: list[int], settings: Settings) -> tuple[list[str], list[Section]]:
    stalls = await _machine_stalls(settings)
    sections = []
    for number in numbers:
        print(f"# scenario {number}", flush=True)
        began = time.monotonic()
        section = await SCENARIOS[number](settings)
        elapsed = time.monotonic() - began
        load = os.getloadavg()[0]
        section.notes.append(
            f"took {elapsed:.0f} s; machine load average (1 min) at the end: {load:.1f} "
            f"on {os.cpu_count()} CPUs (other work on the machine shows up here)"
        )
        sections.append(section)
        print(f"  ({elapsed:.0f} s, load average {load:.1f})", flush=True)
    return stalls, sections


def main() -> None:
    args = _arguments()
    _raise_fd_limit()
    pinned = pin_loadgen()
    settings = Settings(
        quick=args.quick,
        pinned=pinned,
        servers=tuple(args.server or (OURS, SDK)),
        a2a_trio_path=args.a2a_trio_from,
    )
    numbers = sorted(set(args.only or SCENARIOS))
    started = time.strftime("%Y-%m-%dT%H%M%SZ", time.gmtime())
    stalls, sections = trio.run(_run_all, numbers, settings)
    header = [f"- Run: {started}, scenarios {', '.join(map(str, numbers))}"]
    header += machine(quick=args.quick, pinned=pinned, a2a_trio_from=args.a2a_trio_from)
    header += stalls
    report = render("a2a_trio benchmarks", header, sections)
    print(report)
    if not args.no_save:
        RESULTS.mkdir(exist_ok=True)
        suffix = "-quick" if args.quick else ""
        path = RESULTS / f"{started}{suffix}.md"
        path.write_text(report)
        print(f"(written to {path})")


if __name__ == "__main__":
    main()
