"""What every scenario shares: its settings, its output section and the servers it compares."""

from __future__ import annotations

import math
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager

import attrs

from loadbench.servers import Server, ServerOptions, open_server

OURS = "a2a_trio"
SDK = "a2a-sdk"
FLOOR = "asgi floor"
"""The raw ASGI app on hypercorn's trio worker: what the HTTP server alone costs."""


@attrs.frozen
class Settings:
    """Run-wide settings: ``quick`` shrinks every scenario to a few seconds."""

    quick: bool
    pinned: bool
    servers: tuple[str, ...] = (OURS, SDK)
    a2a_trio_path: str = ""
    """Where the a2a_trio server imports the package from (empty: the installed one)."""

    def pick(self, quick: float, full: float) -> float:
        """The quick or the full value of a knob."""
        return quick if self.quick else full


@attrs.frozen
class Goal:
    """One goal from the issue, checked against a figure of this run (None: not measurable)."""

    text: str
    met: bool | None
    measured: str


@attrs.define
class Section:
    """A scenario's markdown output: a table, notes and goal checks."""

    title: str
    columns: Sequence[str]
    rows: list[list[str]] = attrs.Factory(list)
    notes: list[str] = attrs.Factory(list)
    goals: list[Goal] = attrs.Factory(list)

    def add(self, *cells: object) -> None:
        """Append a row, formatting numbers compactly."""
        self.rows.append([fmt(cell) for cell in cells])


def fmt(value: object) -> str:
    """Format a table cell: NaN as an em dash, floats with sensible precision."""
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        return f"{value:.2f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


@asynccontextmanager
async def open_servers(
    names: Sequence[str], settings: Settings, options: ServerOptions | None = None
) -> AsyncIterator[dict[str, Server]]:
    """Start the named servers side by side; those that fail to start are left out."""
    opts = options or ServerOptions()
    running: dict[str, Server] = {}
    async with AsyncExitStack() as stack:
        for name in names:
            if name not in settings.servers:
                continue
            try:
                own = opts
                if name == OURS and settings.a2a_trio_path:
                    paths = filter(None, (settings.a2a_trio_path, opts.pythonpath))
                    own = attrs.evolve(opts, pythonpath=os.pathsep.join(paths))
                running[name] = await stack.enter_async_context(
                    open_server(name, own, pinned=settings.pinned)
                )
            except RuntimeError as exc:
                print(f"  ! {name} did not start: {exc}", flush=True)
        yield running
