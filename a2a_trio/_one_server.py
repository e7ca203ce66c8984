"""One server per SQLite store file.

A server starting on a store takes the tasks it finds running for those of a crashed server
and records them FAILED (or runs them again), so a second server on the file of a running one
(``a2a-trio serve`` and ``hypercorn a2a_trio.app:app`` both default to ``./a2a_trio.db``) would
end the first one's tasks under it.  Each holds an exclusive lock on ``FILE.lock`` while it
serves; the operating system drops it when the process ends, however it ends.  Servers given
a ``recovery_lease`` are replicas that tell a crashed peer's tasks from a live one's by their
leases, so they share a file without it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from functools import partial

from .store import DEFAULT_RETENTION, Retention, TaskStore, open_store
from .store._open import sqlite_path

DEFAULT_STORE = "sqlite:///a2a_trio.db"
"""Where a served agent keeps its tasks unless told otherwise (the hosted app and the CLI):
a SQLite file in the working directory, so tasks survive a restart."""


class StoreInUseError(Exception):
    """Another server holds the store; the message says which lock and what to do."""


@contextmanager
def hold_store_alone(url: str) -> Iterator[None]:
    """Hold the SQLite store at ``url`` for this server alone (other stores: nothing to hold).

    Raises:
        StoreInUseError: another process holds it.
        OSError: the lock file cannot be created (no permission to write there).
    """
    path = sqlite_path(url)
    if path is None or not os.path.isdir(os.path.dirname(path) or ".") or sys.platform == "win32":
        # no file to share; in a missing directory, opening the store says so itself; Windows
        # has no flock, so there one server per file is up to the operator
        yield
        return
    import fcntl  # POSIX only: importing it above would break the package on Windows

    lock = f"{path}.lock"
    with open(lock, "a") as held:
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreInUseError(
                f"another a2a_trio server is serving from it (it holds {lock}): stop that"
                " one, or give this one another store"
            ) from None
        yield


def served_store(
    url: str, *, alone: bool, retention: Retention = DEFAULT_RETENTION
) -> Callable[[], AbstractAsyncContextManager[TaskStore]]:
    """The factory opening the store ``url`` for a server; ``alone`` (a server without a
    recovery lease) holds its SQLite file for this server alone while it is open."""
    if alone:
        return partial(_open_store_alone, url, retention)
    return partial(open_store, url, retention=retention)


@asynccontextmanager
async def _open_store_alone(url: str, retention: Retention) -> AsyncIterator[TaskStore]:
    with hold_store_alone(url):
        async with open_store(url, retention=retention) as store:
            yield store
