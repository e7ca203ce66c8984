"""A SQL store's driver with its write transactions watched: how many, and the longest.

The store scripts (``leases.py``, ``purge.py``) put it in place of a store's driver to report
what a piece of store work cost in writes, without any hook in the store itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from a2a_trio.store._sql import Driver, SqlTaskStore, Tx


class WatchedWrites:
    """``driver``'s writes counted (``writes``) and the longest timed (``longest``, seconds)."""

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        self.dialect = driver.dialect
        self.writes = 0
        self.longest = 0.0

    async def write[T](self, fn: Callable[[Tx], T], *, one_statement: bool = False) -> T:
        self.writes += 1
        start = time.perf_counter()
        try:
            return await self.driver.write(fn, one_statement=one_statement)
        finally:
            self.longest = max(self.longest, time.perf_counter() - start)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.driver, name)


def watch_writes(store: SqlTaskStore) -> WatchedWrites:
    """Watch ``store``'s writes from now on."""
    watched = WatchedWrites(store._driver)
    store._driver = watched
    return watched
