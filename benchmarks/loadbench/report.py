"""Render the run as markdown: machine details, then one section per scenario."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from loadbench.scenario import Section

PACKAGES = (
    "a2a-trio",
    "a2a-sdk",
    "trio",
    "hypercorn",
    "quart-trio",
    "quart",
    "uvicorn",
    "starlette",
    "sse-starlette",
    "orjson",
)


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _commit() -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).parent,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return done.stdout.strip()


def machine(*, quick: bool, pinned: bool, a2a_trio_from: str = "") -> list[str]:
    """Markdown lines describing the machine, the interpreter and the package versions."""
    versions = ", ".join(f"{name} {_version(name)}" for name in PACKAGES)
    pinning = (
        "servers on CPU 0, load generator on CPU 1" if pinned else "no pinning (fewer than 2 CPUs)"
    )
    return [
        f"- CPU: {_cpu_model()}, {os.cpu_count()} cores; {pinning}",
        f"- Python {platform.python_version()} ({sys.executable}) on Linux {platform.release()}",
        f"- Packages: {versions}",
        f"- a2a_trio imported from {a2a_trio_from or 'the checkout'}; checkout at {_commit()}",
        "- Load generator: one trio process, raw HTTP/1.1 over trio sockets (loadbench.client)",
        f"- Mode: {'quick (short windows, small N: for development only)' if quick else 'full'}",
    ]


def section_lines(section: Section) -> list[str]:
    """One scenario as markdown."""
    lines = [f"## {section.title}", ""]
    if section.rows:
        lines.append("| " + " | ".join(section.columns) + " |")
        lines.append("|" + "|".join("---" for _ in section.columns) + "|")
        lines.extend("| " + " | ".join(row) + " |" for row in section.rows)
        lines.append("")
    lines.extend(f"- {note}" for note in section.notes)
    for goal in section.goals:
        mark = {True: "met", False: "MISSED", None: "not measured"}[goal.met]
        lines.append(f"- Goal: {goal.text}: **{mark}** ({goal.measured})")
    lines.append("")
    return lines


def render(title: str, header: list[str], sections: list[Section]) -> str:
    """The whole report."""
    lines = [f"# {title}", "", *header, ""]
    for section in sections:
        lines.extend(section_lines(section))
    return "\n".join(lines)
