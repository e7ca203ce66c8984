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


class StoreHold:
    """A SQLite store held for one server (``hold_store_alone``).  Leaving the hold before
    :meth:`opened` said the store is open removes the lock file if this hold created it, so
    a store that fails to open leaves nothing beside its file."""

    def __init__(self, created_lock: str | None) -> None:
        self.created_lock = created_lock
        """The lock file to remove if the store fails to open (None: nothing to remove)."""

    def opened(self) -> None:
        """The store is open: its lock file stays, as it does when the server stops."""
        self.created_lock = None


@contextmanager
def hold_store_alone(url: str) -> Iterator[StoreHold]:
    """Hold the SQLite store at ``url`` for this server alone (other stores: nothing to hold).

    Raises:
        StoreInUseError: another process holds it.
        OSError: the lock file cannot be created (no permission to write there).
    """
    path = sqlite_path(url)
    if path is None or not os.path.isdir(os.path.dirname(path) or ".") or sys.platform == "win32":
        # no file to share; in a missing directory, opening the store says so itself; Windows
        # has no flock, so there one server per file is up to the operator
        yield StoreHold(None)
        return
    lock = f"{path}.lock"
    held, created = _lock_file(lock)
    try:
        hold = StoreHold(lock if created else None)
        try:
            yield hold
        finally:
            if hold.created_lock is not None:  # the store did not open
                # still held, so no other server holds it; one that opened it before and
                # locks it after finds it gone from the path (``_lock_file``)
                os.unlink(hold.created_lock)
    finally:
        os.close(held)


def _lock_file(lock: str) -> tuple[int, bool]:
    """``lock`` opened (a file descriptor) and locked for this process, and whether this
    call created it.

    A lock file is removed only while held, by a server whose store failed to open; one who
    opened it before that and locked it after holds a file no longer at that path, so it
    opens the path again rather than serve beside a server holding the new file.
    """
    import fcntl  # POSIX only: importing it above would break the package on Windows

    while True:
        try:
            held, created = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), True
        except FileExistsError:
            held, created = os.open(lock, os.O_WRONLY | os.O_CREAT, 0o666), False
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(held)
            raise StoreInUseError(
                f"another a2a_trio server is serving from it (it holds {lock}): stop that"
                " one, or give this one another store"
            ) from None
        if _is_at(held, lock):
            return held, created
        os.close(held)


def _is_at(held: int, path: str) -> bool:
    """Whether the open file ``held`` is still the file at ``path``."""
    try:
        return os.path.samestat(os.fstat(held), os.stat(path))
    except FileNotFoundError:
        return False


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
    with hold_store_alone(url) as hold:
        async with open_store(url, retention=retention) as store:
            hold.opened()
            yield store
