"""A SQL store's driver with its write transactions watched: how many, and the longest.

The store scripts (``leases.py``, ``purge.py``) put it in place of a store's driver to report
what a piece of store work cost in writes, without any hook in the store itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import trio

from a2a_trio.store._sql import Driver, SqlTaskStore, Tx


class WatchedWrites:
    """``driver``'s writes counted (``writes``) and the longest timed (``longest``, seconds);
    with ``task``, only the writes that trio task makes."""

    def __init__(self, driver: Driver, task: trio.lowlevel.Task | None = None) -> None:
        self.driver = driver
        self.dialect = driver.dialect
        self.task = task
        self.writes = 0
        self.longest = 0.0

    async def write[T](self, fn: Callable[[Tx], T], *, one_statement: bool = False) -> T:
        if self.task is not None and trio.lowlevel.current_task() is not self.task:
            return await self.driver.write(fn, one_statement=one_statement)
        self.writes += 1
        start = time.perf_counter()
        try:
            return await self.driver.write(fn, one_statement=one_statement)
        finally:
            self.longest = max(self.longest, time.perf_counter() - start)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.driver, name)


def watch_writes(store: SqlTaskStore, *, callers_only: bool = False) -> WatchedWrites:
    """Watch ``store``'s writes from now on; with ``callers_only``, only those the calling
    trio task makes, not those of a probe writing beside it."""
    task = trio.lowlevel.current_task() if callers_only else None
    watched = WatchedWrites(store._driver, task)
    store._driver = watched
    return watched
