"""Every backend, open for one Hypothesis example, driven from Hypothesis's (synchronous) thread.

The stateful test runs Hypothesis in a ``trio.to_thread`` worker; each example opens a memory,
a SQLite and a PostgreSQL store (fresh file, fresh schema) in a task of the test's nursery,
which holds them open until the example's teardown closes them.  Each step runs on the event
loop through ``trio.from_thread``: the same call on every store in turn, each outcome kept.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import trio

from a2a_trio.errors import A2AError, StoreError
from a2a_trio.store import Retention, TaskStore, open_store

from .conftest import pg_schema_url

BACKENDS = ("memory", "sqlite", "postgres")


@attrs.frozen
class Outcome:
    """What one store call returned, or the type of what it raised."""

    value: Any = None
    error: type[Exception] | None = None


def outcome_of(call: Callable[[], Any]) -> Outcome:
    """``call``'s outcome, as for a store (the model's calls are synchronous)."""
    try:
        return Outcome(call())
    except (A2AError, StoreError, ValueError) as exc:
        return Outcome(error=type(exc))


@asynccontextmanager
async def _urls(folder: Path, number: int) -> AsyncIterator[dict[str, str]]:
    async with pg_schema_url() as pg_url:
        yield {
            "memory": "memory",
            "sqlite": f"sqlite:///{folder / f'{number}.db'}",
            "postgres": pg_url,
        }


class Stores:
    """The stores of one example, opened and closed from the Hypothesis thread."""

    def __init__(self, nursery: trio.Nursery, folder: Path) -> None:
        self._nursery = nursery
        self._folder = folder
        self._opened = 0
        self._open: dict[str, TaskStore] = {}
        self._close: trio.Event | None = None
        self._closed: trio.Event | None = None

    def open(self, retention: Retention) -> None:
        self._opened += 1
        trio.from_thread.run(self._nursery.start, self._hold, retention, self._opened)

    async def _hold(
        self,
        retention: Retention,
        number: int,
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        close, closed = trio.Event(), trio.Event()
        try:
            async with AsyncExitStack() as stack:
                urls = await stack.enter_async_context(_urls(self._folder, number))
                for name in BACKENDS:
                    opened = open_store(urls[name], retention=retention)
                    self._open[name] = await stack.enter_async_context(opened)
                self._close, self._closed = close, closed
                task_status.started()
                await close.wait()
        finally:
            self._open = {}
            closed.set()

    def close(self) -> None:
        """Close the example's stores (and drop its database) before the next opens any."""
        if self._close is not None and self._closed is not None:
            trio.from_thread.run_sync(self._close.set)
            trio.from_thread.run(self._closed.wait)
            self._close = self._closed = None

    def each(
        self, call: Callable[[str, TaskStore], Awaitable[Any]], *, writes: bool = False
    ) -> dict[str, Outcome]:
        """``call`` on every store in turn, by backend name.  ``writes``: it may change a task's
        write time, so wait for the stores' millisecond clock to move on after it (the next
        write is then later, on every store, and write times order as the model's ticks)."""
        return trio.from_thread.run(self._each, call, writes)

    async def _each(
        self, call: Callable[[str, TaskStore], Awaitable[Any]], writes: bool
    ) -> dict[str, Outcome]:
        outcomes: dict[str, Outcome] = {}
        for name, store in self._open.items():
            try:
                outcomes[name] = Outcome(await call(name, store))
            except (A2AError, StoreError, ValueError) as exc:
                outcomes[name] = Outcome(error=type(exc))
        if writes:  # sleep past the end of this millisecond
            await trio.sleep((1000 - datetime.now(UTC).microsecond % 1000 + 50) / 1e6)
        return outcomes
