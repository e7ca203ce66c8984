"""The SQLite task store: the embedded default, one file, survives restarts.

stdlib ``sqlite3`` in worker threads (``trio.to_thread``): one writer connection taking
``BEGIN IMMEDIATE`` transactions, which commits the writes queued meanwhile together (see
``_sqlite_writer``), and a few reader connections that WAL lets run beside it.
``synchronous=FULL`` (the default) makes a commit durable across power loss; ``NORMAL`` is
faster and still loses nothing when only the process dies.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from typing import Final, Literal

import trio

from ..errors import StoreDamagedError
from ._base import DEFAULT_RETENTION, Retention, StoreSchemaError
from ._sql import (
    Dialect,
    SqlTaskStore,
    Tx,
    listing_by_status_time,
    push_claims,
    push_delivery_marks,
)
from ._sqlite_writer import GroupWriter, transaction

type Synchronous = Literal["FULL", "NORMAL"]

MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (
    (
        """CREATE TABLE a2a_tasks (
            id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            owner TEXT NOT NULL,
            context_id TEXT NOT NULL,
            state INTEGER NOT NULL,
            status_us INTEGER,
            updated_us INTEGER NOT NULL,
            ord INTEGER NOT NULL,
            version INTEGER NOT NULL,
            idem_key TEXT,
            task TEXT NOT NULL
        )""",
        "CREATE UNIQUE INDEX a2a_tasks_idem ON a2a_tasks (tenant, owner, context_id, idem_key)"
        " WHERE idem_key IS NOT NULL",
        "CREATE UNIQUE INDEX a2a_tasks_ord ON a2a_tasks (ord)",
        "CREATE INDEX a2a_tasks_scope ON a2a_tasks (tenant, owner, ord)",
        "CREATE INDEX a2a_tasks_context ON a2a_tasks (tenant, owner, context_id, ord)",
        "CREATE INDEX a2a_tasks_state ON a2a_tasks (state, updated_us)",
        """CREATE TABLE a2a_task_events (
            task_id TEXT NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            event TEXT NOT NULL,
            PRIMARY KEY (task_id, seq)
        ) WITHOUT ROWID""",
        """CREATE TABLE a2a_push_configs (
            task_id TEXT NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
            config_id TEXT NOT NULL,
            created_us INTEGER NOT NULL,
            config TEXT NOT NULL,
            PRIMARY KEY (task_id, config_id)
        )""",
    ),
    # 2: ListTasks filtered by state walks only that state's tasks, newest first.
    ("CREATE INDEX a2a_tasks_scope_state ON a2a_tasks (tenant, owner, state, ord)",),
    # 3: the highest listing order a deleted task held, so a new one never takes it again
    # (a page token below it would show a task written after the listing began).
    (
        "CREATE TABLE a2a_order_mark (n INTEGER NOT NULL)",
        "INSERT INTO a2a_order_mark (n) SELECT coalesce(max(ord), 0) FROM a2a_tasks",
        "CREATE TRIGGER a2a_tasks_order_mark AFTER DELETE ON a2a_tasks"
        " WHEN OLD.ord > (SELECT n FROM a2a_order_mark)"
        " BEGIN UPDATE a2a_order_mark SET n = OLD.ord; END",
    ),
    # 4: ListTasks lists by status time (A2A v1.0 §3.1.4), then write order, not by the latter
    # alone.
    listing_by_status_time("INTEGER", "VIRTUAL"),
    # 5: each push config's delivery mark, so a restart sends what was stored but not sent.
    push_delivery_marks("INTEGER"),
    # 6: who delivers a task's push notifications, until when, so replicas take over each
    # other's deliveries.
    push_claims("INTEGER"),
)
"""Schema migrations in order; ``PRAGMA user_version`` records how many were applied."""

DIALECT: Final = Dialect(
    name="SQLite",
    # One writer at a time, so the next number is simply one above the largest ever given:
    # the largest held, or a deleted task's (``a2a_order_mark``).
    next_order="(SELECT max(coalesce(max(ord), 0), (SELECT n FROM a2a_order_mark)) + 1"
    " FROM a2a_tasks)",
    lock_row="",  # BEGIN IMMEDIATE already holds the write lock
    claim_rows="",  # and no other writer holds any row meanwhile
    integrity_error=sqlite3.IntegrityError,
    missing_task=lambda exc: getattr(exc, "sqlite_errorname", "") == "SQLITE_CONSTRAINT_FOREIGNKEY",
    operational_error=sqlite3.OperationalError,
    modifying_with=False,
)


def migrate(conn: sqlite3.Connection) -> int:
    """Apply the migrations this database lacks; returns the schema version now in place.
    With none to apply, the file is left as it was, byte for byte."""
    conn.execute("BEGIN IMMEDIATE")
    with conn:  # committed at the end, rolled back if it raises
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version > len(MIGRATIONS):
            raise StoreSchemaError(
                f"the database schema is version {version}; this a2a_trio knows up to"
                f" {len(MIGRATIONS)}: upgrade a2a_trio"
            )
        for number, statements in enumerate(MIGRATIONS[version:], start=version + 1):
            for statement in statements:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
        if version == len(MIGRATIONS):
            # Nothing to migrate: write the version as it is all the same, so a file this
            # process may only read (its permissions, a read-only mount) is refused here
            # ("attempt to write a readonly database"), not at the first task's write as a
            # store unavailable for now, which every write would then be.  SQLite tells only
            # at a write (BEGIN IMMEDIATE succeeds on such a file), and that write is rolled
            # back: committed, it rewrote the first page's change counters at every start.
            conn.execute(f"PRAGMA user_version = {version}")
            conn.rollback()
    return len(MIGRATIONS)


WAL_ATTEMPTS = 100


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch the file to WAL (it stays so).  Several processes creating the same new file at
    once can find it locked: SQLite does not wait for the journal-mode switch the way it waits
    for transactions, so retry briefly (this runs in a worker thread)."""
    for attempt in range(WAL_ATTEMPTS):
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                return
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == WAL_ATTEMPTS - 1:
                raise
            time.sleep(0.01)


DAMAGED: Final = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
"""SQLite's primary result codes for a file it cannot read as a database."""


class SqliteDriver:
    """Runs transactions on one SQLite file: a single writer, several readers."""

    dialect: Final = DIALECT

    def __init__(self, path: str, *, synchronous: Synchronous, readers: int) -> None:
        self._path = path
        self._synchronous = synchronous
        self._writer: GroupWriter | None = None
        self._read_limiter = trio.CapacityLimiter(readers)
        self._idle_readers: list[sqlite3.Connection] = []
        self._damage = ""  # what SQLite said when it found the file damaged, and what to do

    def connect(self, *, wal: bool = True) -> sqlite3.Connection:
        """A new connection with the store's settings (blocking: call it in a thread)."""
        conn = sqlite3.connect(
            self._path, isolation_level=None, check_same_thread=False, timeout=30
        )
        try:
            if wal:
                _use_wal(conn)
            conn.execute(f"PRAGMA synchronous = {self._synchronous}")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error:
            conn.close()
            raise
        return conn

    async def start(self) -> None:
        """Open the writer connection and bring the schema up to date."""
        # The schema check comes before the switch to WAL, so a file of a newer a2a_trio is
        # refused untouched (the switch rewrites a rollback-journal file's header).
        conn = await trio.to_thread.run_sync(partial(self.connect, wal=False))
        self._writer = GroupWriter(conn)
        await trio.to_thread.run_sync(migrate, conn)
        await trio.to_thread.run_sync(_use_wal, conn)

    @contextmanager
    def _damage_found(self) -> Iterator[None]:
        """SQLite's word that the file is damaged as ``StoreDamagedError``, saying what to do;
        from then on every write is refused before it reaches the file."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if getattr(exc, "sqlite_errorcode", 0) & 0xFF not in DAMAGED:
                raise
            self._damage = (
                f"the SQLite store's file {self._path} is damaged ({exc}): stop the server,"
                " then restore the file from a backup or name a new file; the server writes"
                " nothing more to it"
            )
            raise StoreDamagedError(self._damage) from exc

    async def write[T](self, fn: Callable[[Tx], T], *, one_statement: bool = False) -> T:
        """Run ``fn`` in the writer's next group transaction (also with ``one_statement``:
        a transaction costs SQLite no round trip).  Once a call found the file damaged,
        ``StoreDamagedError`` at once: a write could spread the damage."""
        if self._writer is None:
            raise RuntimeError("the SQLite store is not open")
        if self._damage:
            raise StoreDamagedError(self._damage)
        with DIALECT.unavailable_on_operational_error(), self._damage_found():
            return await self._writer.write(fn)

    async def read[T](self, fn: Callable[[Tx], T]) -> T:
        async with self._read_limiter:
            with DIALECT.unavailable_on_operational_error():
                if self._idle_readers:
                    conn = self._idle_readers.pop()
                else:
                    conn = await trio.to_thread.run_sync(self.connect)
            try:
                with DIALECT.unavailable_on_operational_error(), self._damage_found():
                    return await trio.to_thread.run_sync(transaction, conn, "BEGIN", fn)
            finally:
                self._idle_readers.append(conn)

    async def aclose(self) -> None:
        conns = [*self._idle_readers, *([self._writer.conn] if self._writer else [])]
        self._idle_readers.clear()
        self._writer = None
        with trio.CancelScope(shield=True):
            for conn in conns:
                await trio.to_thread.run_sync(conn.close)


@asynccontextmanager
async def open_sqlite_store(
    path: str,
    *,
    retention: Retention = DEFAULT_RETENTION,
    synchronous: Synchronous = "FULL",
    readers: int = 4,
) -> AsyncIterator[SqlTaskStore]:
    """A task store in the SQLite file at ``path`` (created, and migrated, as needed).

    Raises ``StoreSchemaError`` when the file was written by a newer a2a_trio, and
    ``IsADirectoryError`` when ``path`` is a directory (SQLite's own word for it, "unable to
    open database file", reads as a missing directory).
    """
    if await trio.Path(path).is_dir():
        raise IsADirectoryError(
            f"{path} is a directory, not a SQLite file: name a file in it,"
            f" such as sqlite:///{path.rstrip('/')}/a2a_trio.db"
        )
    driver = SqliteDriver(path, synchronous=synchronous, readers=readers)
    try:
        await driver.start()
        yield SqlTaskStore(driver, retention=retention)
    finally:
        await driver.aclose()
