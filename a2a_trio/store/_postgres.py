"""The PostgreSQL task store: for several server replicas sharing one database.

psycopg 3's sync API (its async API needs asyncio) with a ``psycopg_pool.ConnectionPool``, each
transaction run through ``trio.to_thread.run_sync`` under a ``CapacityLimiter`` as large as the
pool, so a trio task waits for a connection without holding a thread.  The write order comes
from a sequence, shared by the replicas; idempotent create is a partial UNIQUE
index with ``INSERT ... ON CONFLICT DO NOTHING``; updates lock the row and write
``UPDATE ... WHERE version = ?``, or, for a running task this process wrote last, are one
``WITH`` statement in autocommit (row, events and trim, on the condition that the row is as
remembered).  Documents are ``JSON``, not ``JSONB``: nothing queries inside
them, and ``JSONB`` refuses the escaped NUL character a client may send in a message.
Migrations run under an advisory lock, so replicas starting together apply them once.  Every
wait a call can meet is bounded (``_pg_timeouts``, and ``_pg_watchdog`` for a server that
cannot answer at all): the worker threads cannot be cancelled.
"""

from __future__ import annotations

import functools
import select
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Final

import psycopg
import trio
from psycopg.types.string import TextLoader
from psycopg_pool import ConnectionPool

from ._base import DEFAULT_RETENTION, Retention, StoreSchemaError
from ._pg_timeouts import DEFAULT_POSTGRES_TIMEOUTS, PostgresTimeouts, conninfo
from ._pg_watchdog import CallWatch, Watchdog
from ._sql import (
    Cursor,
    Dialect,
    SqlTaskStore,
    Tx,
    listing_by_status_time,
    push_claims,
    push_delivery_marks,
)

MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (
    (
        "CREATE SEQUENCE a2a_task_order",
        """CREATE TABLE a2a_tasks (
            id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            owner TEXT NOT NULL,
            context_id TEXT NOT NULL,
            state SMALLINT NOT NULL,
            status_us BIGINT,
            updated_us BIGINT NOT NULL,
            ord BIGINT NOT NULL UNIQUE,
            version INTEGER NOT NULL,
            idem_key TEXT,
            task JSON NOT NULL
        )""",
        "CREATE UNIQUE INDEX a2a_tasks_idem ON a2a_tasks (tenant, owner, context_id, idem_key)"
        " WHERE idem_key IS NOT NULL",
        "CREATE INDEX a2a_tasks_scope ON a2a_tasks (tenant, owner, ord)",
        "CREATE INDEX a2a_tasks_context ON a2a_tasks (tenant, owner, context_id, ord)",
        "CREATE INDEX a2a_tasks_state ON a2a_tasks (state, updated_us)",
        """CREATE TABLE a2a_task_events (
            task_id TEXT NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
            seq BIGINT NOT NULL,
            event JSON NOT NULL,
            PRIMARY KEY (task_id, seq)
        )""",
        """CREATE TABLE a2a_push_configs (
            task_id TEXT NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
            config_id TEXT NOT NULL,
            created_us BIGINT NOT NULL,
            config JSON NOT NULL,
            PRIMARY KEY (task_id, config_id)
        )""",
    ),
    # 2: ListTasks filtered by state walks only that state's tasks, newest first.
    ("CREATE INDEX a2a_tasks_scope_state ON a2a_tasks (tenant, owner, state, ord)",),
    # 3: ListTasks lists by status time (A2A v1.0 §3.1.4), then write order, not by the latter
    # alone.
    listing_by_status_time("BIGINT", "STORED"),
    # 4: each push config's delivery mark, so a restart sends what was stored but not sent.
    push_delivery_marks("BIGINT"),
    # 5: who delivers a task's push notifications, until when, so replicas take over each
    # other's deliveries.
    push_claims("BIGINT"),
)
"""Schema migrations in order; table ``a2a_schema_version`` records how many were applied."""

DIALECT: Final = Dialect(
    name="PostgreSQL",
    next_order="nextval('a2a_task_order')",
    lock_row=" FOR UPDATE",
    claim_rows=" FOR UPDATE SKIP LOCKED",
    integrity_error=psycopg.IntegrityError,
    missing_task=lambda exc: isinstance(exc, psycopg.errors.ForeignKeyViolation),
    operational_error=psycopg.OperationalError,
    modifying_with=True,
)


@functools.lru_cache(maxsize=256)
def _pg_sql(sql: str) -> str:
    """The shared ``?`` placeholders in psycopg's ``%s`` style (the queries hold no ``%``)."""
    return sql.replace("?", "%s")


class _PgTx:
    def __init__(self, conn: psycopg.Connection[tuple[object, ...]], watch: CallWatch) -> None:
        self._conn = conn
        self._watch = watch

    def run(self, sql: str, params: Sequence[object] = ()) -> Cursor:
        self._watch.statement_begins()
        return self._conn.execute(_pg_sql(sql), params)


def _configure(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    # JSON comes back as text: the codec parses it (faster with orjson than psycopg's json).
    conn.adapters.register_loader("json", TextLoader)
    conn.execute(LZ4_IF_AVAILABLE)


def _refuse_if_ended(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """The pool's check at checkout, without a round trip: an idle session is sent nothing
    unless the server ended it (a restart, a failover, ``pg_terminate_backend``: its farewell
    and end of stream wait on the socket), so a readable socket means a connection to close, and
    the pool replaces it.
    """
    poller = select.poll()
    poller.register(conn.pgconn.socket, select.POLLIN)
    if poller.poll(0):
        conn.close()
        raise psycopg.OperationalError("the server ended this idle connection")


LZ4_IF_AVAILABLE: Final = (
    "SELECT set_config('default_toast_compression', 'lz4', false) FROM pg_settings"
    " WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)"
)
"""Compress the documents this session writes with lz4 where the server has it (PostgreSQL 14+
built with lz4; columns given a method of their own keep it).  A task's document is rewritten
whole by every write: lz4 compresses it several times faster than the default pglz, which is
most of what a long task's writes grow by."""


def migrate(conn: psycopg.Connection[tuple[object, ...]]) -> int:
    """Apply the migrations this database lacks; returns the schema version now in place."""
    # unwatched: a migration may outlast any statement bound
    tx = _PgTx(conn, CallWatch(watched=False))
    with conn.transaction():
        tx.run("SELECT pg_advisory_xact_lock(hashtext('a2a_trio schema ' || current_schema()))")
        tx.run("CREATE TABLE IF NOT EXISTS a2a_schema_version (version INTEGER NOT NULL)")
        row = tx.run("SELECT max(version) FROM a2a_schema_version").fetchone()
        version = row[0] or 0
        if version > len(MIGRATIONS):
            raise StoreSchemaError(
                f"the database schema is version {version}; this a2a_trio knows up to"
                f" {len(MIGRATIONS)}: upgrade a2a_trio"
            )
        for number, statements in enumerate(MIGRATIONS[version:], start=version + 1):
            for statement in statements:
                tx.run(statement)
            tx.run("DELETE FROM a2a_schema_version")
            tx.run("INSERT INTO a2a_schema_version (version) VALUES (?)", (number,))
    return len(MIGRATIONS)


def _connect_and_migrate(migration_conninfo: str) -> None:
    with psycopg.connect(migration_conninfo) as conn:
        migrate(conn)


def _statement_bound(tx: Tx) -> float | None:
    """The session's ``statement_timeout`` in seconds, as the server has it (``None``: none):
    the store's, or the one the URL or ``PGOPTIONS`` set instead."""
    row = tx.run("SELECT setting::float8 FROM pg_settings WHERE name = 'statement_timeout'")
    milliseconds: float = row.fetchone()[0]
    return milliseconds / 1000 or None


class PostgresDriver:
    """Runs transactions on pooled connections, at most ``pool_size`` at a time, each wait
    bounded by ``timeouts`` (a call that times out rolls back and raises
    ``StoreUnavailableError``; its connection goes back to the pool rolled back, or, cut,
    is replaced).  A call whose server stops answering is cut off by the watchdog once the
    statement bound plus ``timeouts.late_answer`` has passed since its latest statement began."""

    dialect: Final = DIALECT

    def __init__(self, url: str, *, pool_size: int, timeouts: PostgresTimeouts) -> None:
        self._late_answer = timeouts.late_answer
        self._watchdog = Watchdog()
        self._migration_conninfo = conninfo(url, timeouts, bound_statements=False)
        self._limiter = trio.CapacityLimiter(pool_size)
        self._pool = ConnectionPool(
            conninfo(url, timeouts, bound_statements=True),
            min_size=1,
            max_size=pool_size,
            open=False,
            configure=_configure,
            check=_refuse_if_ended,  # a connection cut since (failover) is replaced
            kwargs={"autocommit": True},
            name="a2a_trio",
            timeout=timeouts.pool,
        )

    async def start(self) -> None:
        """Bring the schema up to date (failing fast on a bad URL), open the pool, and set the
        watchdog's bound from the statement bound the server applies."""
        await trio.to_thread.run_sync(_connect_and_migrate, self._migration_conninfo)
        await trio.to_thread.run_sync(functools.partial(self._pool.open, wait=True, timeout=30))
        statement = await self.read(_statement_bound)
        if statement is not None and self._late_answer is not None:
            self._watchdog.bound = statement + self._late_answer

    def _run[T](self, fn: Callable[[Tx], T], transaction: bool, watch: CallWatch) -> T:
        with self._pool.connection() as conn, watch.holding(conn):
            if not transaction:
                return fn(_PgTx(conn, watch))
            with conn.transaction():
                return fn(_PgTx(conn, watch))

    async def watch(self) -> None:
        """Run the watchdog over this driver's calls until cancelled (at once without a
        statement bound or ``late_answer``: nothing to tell a long statement from a stopped
        server by)."""
        await self._watchdog.run()

    async def _call[T](self, fn: Callable[[Tx], T], transaction: bool) -> T:
        with DIALECT.unavailable_on_operational_error(), self._watchdog.watching() as watch:
            try:
                return await trio.to_thread.run_sync(
                    self._run, fn, transaction, watch, limiter=self._limiter
                )
            except psycopg.OperationalError as exc:
                if not watch.cut:
                    raise
                raise psycopg.OperationalError(
                    f"no answer from the server for {self._watchdog.bound:g} s since the call's"
                    " latest statement began: its connection was shut down"
                ) from exc

    async def write[T](self, fn: Callable[[Tx], T], *, one_statement: bool = False) -> T:
        """Run ``fn`` in a transaction; with ``one_statement``, in autocommit: its statement
        commits by itself, without the round trips of ``BEGIN`` and ``COMMIT``."""
        return await self._call(fn, not one_statement)

    async def read[T](self, fn: Callable[[Tx], T]) -> T:
        """Run ``fn`` in autocommit, without ``BEGIN``/``COMMIT`` round trips: under READ
        COMMITTED each statement takes its own snapshot inside a transaction too, so a read
        transaction would add nothing."""
        return await self._call(fn, False)

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(self._pool.close)


@asynccontextmanager
async def open_postgres_store(
    url: str,
    *,
    retention: Retention = DEFAULT_RETENTION,
    pool_size: int = 8,
    timeouts: PostgresTimeouts = DEFAULT_POSTGRES_TIMEOUTS,
) -> AsyncIterator[SqlTaskStore]:
    """A task store in the PostgreSQL database at ``url`` (``postgresql://user:pw@host/db``).

    Creates or migrates the schema (in the connection's ``search_path`` schema).  Raises
    ``psycopg.OperationalError`` when the server cannot be reached.  The watchdog
    (``_pg_watchdog``) runs in the context's own nursery.  ``timeouts`` bound every
    call's waits; a libpq parameter ``url`` sets itself wins over them.
    """
    driver = PostgresDriver(url, pool_size=pool_size, timeouts=timeouts)
    try:
        await driver.start()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(driver.watch)
            yield SqlTaskStore(driver, retention=retention)
            nursery.cancel_scope.cancel()
    finally:
        await driver.aclose()
