"""Choose and open a task store from one URL (the ``A2A_TRIO_STORE`` setting).

The store lives inside ``async with open_store(url)``; when a retention TTL is set, a purge of
expired terminal tasks runs in the context's own nursery every ``Retention.purge_every()``.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, cast
from urllib.parse import parse_qs, urlsplit

import trio

from .._throttle import ThrottledLog
from ..errors import StoreUnavailableError
from ._base import DEFAULT_RETENTION, Retention, TaskStore
from ._memory import MemoryTaskStore
from ._sqlite import Synchronous, open_sqlite_store

if TYPE_CHECKING:
    from ._pg_timeouts import PostgresTimeouts

logger = logging.getLogger("a2a_trio.store")

ACCEPTED = (
    '"memory", "sqlite:///relative/path.db", "sqlite:////absolute/path.db" (optionally'
    ' "?synchronous=normal"), a plain file path, or "postgresql://user:password@host:port/db"'
)


@asynccontextmanager
async def open_store(
    url: str,
    *,
    retention: Retention = DEFAULT_RETENTION,
    postgres_timeouts: PostgresTimeouts | None = None,
) -> AsyncIterator[TaskStore]:
    """Open the task store ``url`` names; closes it (and stops its purge) on exit.

    ``postgres_timeouts`` bounds a PostgreSQL store's calls (default ``PostgresTimeouts()``);
    a server given ``store=partial(open_store, url, postgres_timeouts=...)`` takes them in code
    where the URL would otherwise have to carry libpq parameters.

    Raises ``ValueError`` naming the accepted forms when ``url`` is none of them, or when
    ``postgres_timeouts`` is given for a store that is not PostgreSQL.
    """
    async with (
        _backend(url, retention, postgres_timeouts) as store,
        trio.open_nursery() as nursery,
    ):
        if retention.terminal_ttl is not None:
            nursery.start_soon(_purge_forever, store, retention)
        yield store
        nursery.cancel_scope.cancel()


def check_store_url(url: str) -> None:
    """Raise ``ValueError`` naming the accepted forms when ``url`` names no store.

    Opens nothing, so a caller can refuse a bad URL before it starts serving.
    """
    _backend(url, DEFAULT_RETENTION, None)  # builds the backend's context manager, never enters it


def _backend(
    url: str, retention: Retention, postgres_timeouts: PostgresTimeouts | None
) -> AbstractAsyncContextManager[TaskStore]:
    scheme = _scheme(url)
    if scheme in POSTGRES_SCHEMES:
        # psycopg loads only when it is used
        from ._pg_timeouts import DEFAULT_POSTGRES_TIMEOUTS
        from ._postgres import open_postgres_store

        timeouts = DEFAULT_POSTGRES_TIMEOUTS if postgres_timeouts is None else postgres_timeouts
        return open_postgres_store(url, retention=retention, timeouts=timeouts)
    backend = _local_backend(url, scheme, retention)
    if postgres_timeouts is not None:
        raise ValueError(
            f"postgres_timeouts bound a PostgreSQL store, and {url!r} is not one: leave them"
            " out, or use a postgresql:// URL"
        )
    return backend


POSTGRES_SCHEMES = ("postgresql", "postgres")


def _scheme(url: str) -> str:
    return url.partition("://")[0] if "://" in url else ""


def _local_backend(
    url: str, scheme: str, retention: Retention
) -> AbstractAsyncContextManager[TaskStore]:
    """The memory or SQLite store ``url`` names."""
    if url == "memory":
        return _memory(retention)
    path, synchronous = _sqlite_file(url, scheme)
    return open_sqlite_store(path, retention=retention, synchronous=synchronous)


def _sqlite_file(url: str, scheme: str) -> tuple[str, Synchronous]:
    """The SQLite file ``url`` (not ``"memory"``) names, and how it commits; ``ValueError``
    naming the accepted forms when it names none."""
    if scheme == "sqlite":
        return _sqlite_url(url)
    if not scheme and url.strip() and url != ":memory:":
        if _SCHEME_LIKE.match(url):
            raise ValueError(
                f"unknown task store {url!r}: it starts like a URL, not a file path (for a file"
                f" of that name, write ./{url}); use {ACCEPTED}"
            )
        if _LIBPQ_KEYWORDS.match(url):
            raise ValueError(
                f"unknown task store {url!r}: it reads like a libpq key=value connection string,"
                " not a file path; write it as a postgresql://user:password@host:port/db URL"
                f" (for a file of that name, write ./{url})"
            )
        _refuse_misspelled_memory(url)
        return url, "FULL"
    raise ValueError(f"unknown task store {url!r}: use {ACCEPTED}")


def _refuse_misspelled_memory(url: str) -> None:
    """A bare word close to ``memory`` (``memroy``, ``Memory``) is a typo, not a SQLite file to
    create under that name; a path with a directory or an extension is meant as one."""
    if "/" in url or "\\" in url or "." in url:
        return
    if difflib.get_close_matches(url.strip().lower(), ["memory"], n=1, cutoff=0.75):
        raise ValueError(
            f'unknown task store {url!r}: did you mean "memory"? For a SQLite file, give a path'
            f" such as ./{url}.db"
        )


_SCHEME_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")
"""A plain path starting this way is a mistyped URL (``sqlite:tasks.db``, ``sqlte:/x.db``,
``postgres:/host/db``), not a file to create under that odd name."""
_LIBPQ_KEYWORDS = re.compile(r"\s*(host|hostaddr|port|dbname|user|password|service|sslmode)\s*=")
"""A plain path starting this way is a PostgreSQL connection string in libpq's keyword form
(``host=db dbname=tasks``), which a store URL cannot be."""


def sqlite_path(url: str) -> str | None:
    """The file of the SQLite store ``url`` names; None for another store or a bad URL."""
    scheme = _scheme(url)
    if url == "memory" or scheme in POSTGRES_SCHEMES:
        return None
    try:
        return _sqlite_file(url, scheme)[0]
    except ValueError:
        return None


def _sqlite_url(url: str) -> tuple[str, Synchronous]:
    parts = urlsplit(url)
    query = parse_qs(parts.query, keep_blank_values=True)
    mode = query.pop("synchronous", ["full"])[-1].upper()
    path = parts.path.removeprefix("/")
    if parts.netloc or not path or query or mode not in ("FULL", "NORMAL"):
        raise ValueError(f"bad SQLite store URL {url!r}: use {ACCEPTED}")
    if path == ":memory:":  # each pooled connection would get a database of its own
        raise ValueError(f'bad SQLite store URL {url!r}: for tasks in memory, use "memory"')
    return path, cast(Synchronous, mode)


@asynccontextmanager
async def _memory(retention: Retention) -> AsyncIterator[TaskStore]:
    store = MemoryTaskStore(retention=retention)
    try:
        yield store
    finally:
        await store.aclose()


async def _purge_forever(store: TaskStore, retention: Retention) -> None:
    """Purge, then wait; a purge the database cannot do now (locked, failing over) is retried
    at the next tick instead of taking the store, and the server with it, down.  The same
    problem at every tick is logged at most once a minute, with the number left out."""
    every = retention.purge_every().total_seconds()
    skipped = ThrottledLog(logger)
    while True:
        try:
            await store.purge_expired()
        except StoreUnavailableError as exc:
            skipped.log(logging.WARNING, "retention purge skipped, retried in %g s: %s", every, exc)
        await trio.sleep(every)
