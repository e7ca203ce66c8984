"""The task store both SQL backends share: one set of queries, two drivers.

SQLite and PostgreSQL differ only in how a transaction is run (a driver: one writer thread and
reader connections, or a connection pool) and in a few SQL fragments (a ``Dialect``).  The queries
here are plain DB-API calls with ``?`` placeholders, run in a worker thread inside
``driver.write`` (one transaction) or ``driver.read`` (reads only, never blocking the writer).
On PostgreSQL, where every statement is a round trip to the server, a running task's writes
from the process running it are one statement each (see ``SqlTaskStore.update_task``).

Columns beside the JSON document (``task``, the ``V1`` ProtoJSON of the whole task) make every
filter SQL: scope (tenant, owner), context, state, status timestamp (microseconds since the epoch),
the listing time ``listed_us`` (the status timestamp, or ``NO_STATUS_TIME``: a generated
column) and the write order ``ord`` (unique, increasing with every create and update), which
list tasks (``_cursor``), the OCC ``version`` and the idempotency key (unique per scope and
context, so a racing create cannot insert twice).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import partial
from typing import Any, Protocol

import attrs
import trio

from .. import model as m
from ..errors import (
    ConcurrencyError,
    InvalidTransitionError,
    StoreUnavailableError,
    TaskNotFoundError,
    TaskTerminalStateError,
)
from ..model._detach import plain_task
from ..wire import V1, dumps, loads
from ._base import (
    DEFAULT_RETENTION,
    CallerScope,
    PushBacklog,
    PushTarget,
    Retention,
    ScopedTask,
    SequencedEvent,
    StoredTask,
    TaskAtVersion,
    TaskPage,
    TaskQuery,
    TaskUpdate,
    apply_update,
    below_kept_events,
    check_events,
    check_history_length,
    check_new_task,
    check_query,
    detached_update,
    prepare_push_config,
    storable,
    stored_status_time,
    trim_task,
)
from ._cursor import NO_STATUS_TIME, decode_cursor, encode_cursor, to_micros
from ._written import Written, WrittenTasks, encode_task

_TERMINAL = tuple(sorted(int(state) for state in m.TERMINAL_STATES))
_UNFINISHED = tuple(
    sorted(
        int(state)
        for state in m.TaskState
        if state not in m.TERMINAL_STATES and state is not m.TaskState.UNSPECIFIED
    )
)
_TASK_COLUMNS = "version, updated_us, task"
IDS_PER_QUERY = 500
"""Task ids looked up by one ``IN`` list (SQLite before 3.32 takes at most 999 parameters)."""


class Cursor(Protocol):
    """The part of a DB-API cursor the queries use."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> Any: ...


class Tx(Protocol):
    """One open transaction: run a statement with ``?`` placeholders."""

    def run(self, sql: str, params: Sequence[object] = ()) -> Cursor: ...


@attrs.frozen
class Dialect:
    """The SQL that differs between backends.

    ``next_order``: an expression giving a new, store-wide increasing write-order number.
    ``lock_row``: appended to the SELECT that reads a task before changing it.
    ``claim_rows``: appended to the SELECT choosing a batch of rows to delete: locks the rows
    chosen, passing over those another transaction holds, so replicas purging together share
    the work instead of waiting on each other's batches.
    ``integrity_error``: what the driver raises on a unique-constraint violation, and on a
    foreign-key one, which ``missing_task`` tells apart: an event inserted for a task deleted
    meanwhile (a retention purge, ``delete_task``).
    ``operational_error``: what it raises when the database cannot do the work now (locked,
    unreachable, failing over); ``name`` is the backend's, for messages.
    ``modifying_with``: whether ``WITH`` may hold ``UPDATE``, ``INSERT`` and ``DELETE``
    (PostgreSQL), so a task's row, its events and the log's trim can be written by one statement.
    """

    name: str
    next_order: str
    lock_row: str
    claim_rows: str
    integrity_error: type[Exception]
    missing_task: Callable[[Exception], bool]
    operational_error: type[Exception]
    modifying_with: bool

    @contextmanager
    def unavailable_on_operational_error(self) -> Iterator[None]:
        """The driver's operational errors as ``StoreUnavailableError`` (nothing was written)."""
        try:
            yield
        except self.operational_error as exc:
            raise StoreUnavailableError(f"the {self.name} store is unavailable: {exc}") from exc


class Driver(Protocol):
    """Runs a function on a connection, in a worker thread, under a capacity limit.

    ``write`` runs it in one transaction; ``read`` for queries only.  Cancellation waits for the
    thread: a transaction is committed or rolled back, never torn.  ``one_statement=True`` says
    that ``fn`` runs a single statement, which is atomic by itself: a driver may then leave out
    ``BEGIN`` and ``COMMIT``.
    """

    @property
    def dialect(self) -> Dialect: ...

    async def write[T](self, fn: Callable[[Tx], T], *, one_statement: bool = False) -> T: ...

    async def read[T](self, fn: Callable[[Tx], T]) -> T: ...

    async def aclose(self) -> None: ...


def listing_by_status_time(column_type: str, storage: str) -> tuple[str, ...]:
    """The migration that lists tasks by status time, then write order (``_cursor``): a
    ``listed_us`` column generated from ``status_us`` (``column_type``, ``VIRTUAL`` or
    ``STORED``: what the backend can add), and the listing indexes on it in place of those on
    the write order alone."""
    return (
        f"ALTER TABLE a2a_tasks ADD COLUMN listed_us {column_type} NOT NULL GENERATED ALWAYS AS"
        f" (coalesce(status_us, {NO_STATUS_TIME})) {storage}",
        "DROP INDEX a2a_tasks_scope",
        "DROP INDEX a2a_tasks_context",
        "DROP INDEX a2a_tasks_scope_state",
        "CREATE INDEX a2a_tasks_scope ON a2a_tasks (tenant, owner, listed_us, ord)",
        "CREATE INDEX a2a_tasks_context ON a2a_tasks (tenant, owner, context_id, listed_us, ord)",
        "CREATE INDEX a2a_tasks_scope_state ON a2a_tasks (tenant, owner, state, listed_us, ord)",
    )


def push_delivery_marks(column_type: str) -> tuple[str, ...]:
    """The migration that gives each push config the number of the last event its webhook was
    sent (``mark_push_delivered``), starting every existing config at its task's last event:
    what earlier versions sent is not sent again."""
    return (
        f"ALTER TABLE a2a_push_configs ADD COLUMN delivered_seq {column_type} NOT NULL DEFAULT 0",
        "UPDATE a2a_push_configs SET delivered_seq = (SELECT coalesce(max(e.seq), 0)"
        " FROM a2a_task_events e WHERE e.task_id = a2a_push_configs.task_id)",
    )


def push_claims(column_type: str) -> tuple[str, ...]:
    """The migration that records which sender delivers a task's push notifications, until
    when (``claim_push_deliveries``), so replicas take over each other's deliveries."""
    return (
        f"""CREATE TABLE a2a_push_claims (
            task_id TEXT PRIMARY KEY REFERENCES a2a_tasks (id) ON DELETE CASCADE,
            claimant TEXT NOT NULL,
            until_us {column_type} NOT NULL
        )""",
    )


_CLAIM = (
    " ON CONFLICT (task_id) DO UPDATE SET claimant = excluded.claimant,"
    " until_us = excluded.until_us WHERE a2a_push_claims.claimant = excluded.claimant"
    " OR a2a_push_claims.until_us <= ? OR ?"
)
"""How a push claim is taken: unless another claimant's lasts past now (the first parameter),
or the second parameter (``steal``) says to take it anyway."""


def from_micros(micros: int) -> datetime:
    return datetime.fromtimestamp(micros // 1_000_000, UTC).replace(microsecond=micros % 1_000_000)


def _decode_task(text: str) -> m.Task:
    return V1.decode(loads(text), m.Task)


def _stored(row: Sequence[Any]) -> StoredTask:
    version, updated_us, text = row
    return StoredTask(_decode_task(text), version, from_micros(updated_us))


@attrs.frozen
class _Change:
    """An update as the store keeps it (sharing no dict or list with the caller's), and
    whether it holds none (then a task that held none still holds none after it)."""

    update: TaskUpdate
    plain: bool


type _EventRow = tuple[str, int, str]
"""A row of ``a2a_task_events``: task id, sequence number, the event's wire text."""


def _event_rows(task_id: str, events: Sequence[SequencedEvent]) -> list[_EventRow]:
    """``events`` checked and encoded here, before the transaction's worker thread."""
    check_events(events)
    return [(task_id, seq, dumps(V1.encode_stream_response(e)).decode()) for seq, e in events]


def _in(values: Sequence[int]) -> str:
    return "(" + ", ".join(str(value) for value in values) + ")"


def _id_chunks(ids: Sequence[str]) -> Iterator[Sequence[str]]:
    """``ids`` in runs of at most ``IDS_PER_QUERY``, one ``IN`` list each."""
    for start in range(0, len(ids), IDS_PER_QUERY):
        yield ids[start : start + IDS_PER_QUERY]


def _placeholders(count: int) -> str:
    """An ``IN`` list of ``count`` parameters: ``(?, ?, ?)``."""
    return f"({', '.join('?' * count)})"


def _status_micros(task: m.Task) -> int | None:
    stamp = task.status.timestamp
    return None if stamp is None else to_micros(stamp)


def _trim_sql(task: str, newest: str) -> str:
    """A DELETE that keeps a log's newest events: those above the (``OFFSET`` + 1)th newest.

    ``task`` and ``newest`` are SQL for the task id and the highest sequence number the log
    holds once the write's events are in.  Before walking down the log it compares its lowest
    number with ``newest``: when they are less than the bound apart, the log cannot hold more
    events than that (numbers are distinct), and the walk (a thousand index entries at the
    default bound) is skipped, as it is while a task has not logged that many events.
    Parameters: ``task``'s, the task id, ``newest``'s, the bound, the task id, the offset.
    """
    return (
        f"DELETE FROM a2a_task_events WHERE task_id = {task} AND seq <= CASE"
        f" WHEN (SELECT min(seq) FROM a2a_task_events WHERE task_id = ?) <= {newest} - ?"
        " THEN (SELECT seq FROM a2a_task_events WHERE task_id = ? ORDER BY seq DESC"
        " LIMIT 1 OFFSET ?) END"
    )


_NEWER_LOGGED = (
    "SELECT count(*) FROM (SELECT 1 FROM a2a_task_events WHERE task_id = ? AND seq > ?"
    " LIMIT ?) AS newer"
)
"""How many events the log holds above a number, counted up to the bound: at the bound, the
number is below what the log keeps (parameters: the task id, the number, the bound)."""

_TRIM_LOGGED = _trim_sql("?", "(SELECT max(seq) FROM a2a_task_events WHERE task_id = ?)")
"""Trims a log after the write's events went in."""


DECODE_SLICE = 128
"""Events decoded between two checkpoints by ``load_events``."""


async def _decoded_events(rows: Sequence[tuple[int, str]]) -> tuple[SequencedEvent, ...]:
    """Stored events decoded a slice at a time, with a checkpoint between slices: a resume
    replaying a long log (thousands of events at ~20 us each) leaves the replica's other
    streams a turn every few milliseconds instead of holding the event loop for all of it."""
    events: list[SequencedEvent] = []
    for start in range(0, len(rows), DECODE_SLICE):
        if start:
            await trio.lowlevel.checkpoint()
        part = rows[start : start + DECODE_SLICE]
        events.extend((seq, V1.decode_stream_response(loads(text))) for seq, text in part)
    return tuple(events)


class SqlTaskStore:
    """A :class:`~a2a_trio.store.TaskStore` over a SQL :class:`Driver`."""

    def __init__(self, driver: Driver, *, retention: Retention = DEFAULT_RETENTION) -> None:
        self._driver = driver
        self._dialect = driver.dialect
        self._retention = retention
        self._written = WrittenTasks()
        self._set_task = (
            "state = ?, status_us = ?, updated_us = ?,"
            f" ord = {self._dialect.next_order}, version = ?, task = ?"
        )

    async def create_task(
        self,
        scope: CallerScope,
        task: m.Task,
        *,
        idempotency_key: str | None = None,
        events: Sequence[SequencedEvent] = (),
    ) -> StoredTask:
        check_new_task(scope, task, idempotency_key)
        task = stored_status_time(task)
        rows = _event_rows(task.id, events)
        key = idempotency_key or None
        now = m.utcnow()
        kept = m.detached_task(task)  # what this store remembers of it is its own
        document = encode_task(kept, None)
        params = (
            task.id,
            scope.tenant,
            scope.owner,
            task.context_id,
            int(task.status.state),
            _status_micros(task),
            to_micros(now),
            key,
            dumps(document).decode(),
        )
        insert = (
            "INSERT INTO a2a_tasks (id, tenant, owner, context_id, state, status_us,"
            " updated_us, ord, version, idem_key, task) VALUES (?, ?, ?, ?, ?, ?, ?,"
            f" {self._dialect.next_order}, 1, ?, ?)"
            " ON CONFLICT (tenant, owner, context_id, idem_key) WHERE idem_key IS NOT NULL"
            " DO NOTHING"
        )

        def create(tx: Tx) -> StoredTask:
            if tx.run(insert, params).rowcount == 1:
                self._log_events(tx, task.id, rows)
                return StoredTask(kept, 1, now)
            row = tx.run(
                f"SELECT {_TASK_COLUMNS} FROM a2a_tasks"
                " WHERE tenant = ? AND owner = ? AND context_id = ? AND idem_key = ?",
                (scope.tenant, scope.owner, task.context_id, key),
            ).fetchone()
            return _stored(row)

        before = self._written.get(task.id)  # an earlier task's under this id, if any
        try:
            stored = await self._driver.write(create)
        except self._dialect.integrity_error:
            raise ConcurrencyError(f"task {task.id} already exists") from None
        if stored.task is kept:  # inserted, not an earlier task under the same key
            written = Written(1, to_micros(now), kept, document, kept is task)
            self._written.remember(written, based_on=before)
            return attrs.evolve(stored, task=task)  # the caller's own
        return stored

    async def load_task(
        self,
        scope: CallerScope,
        task_id: str,
        *,
        history_length: int | None = None,
        include_artifacts: bool = True,
    ) -> StoredTask | None:
        check_history_length(history_length)
        if not storable(task_id, scope.tenant, scope.owner):
            return None

        def load(tx: Tx) -> Any:
            return tx.run(
                f"SELECT {_TASK_COLUMNS} FROM a2a_tasks WHERE id = ? AND tenant = ? AND owner = ?",
                (task_id, scope.tenant, scope.owner),
            ).fetchone()

        row = await self._driver.read(load)
        if row is None:
            return None
        stored = _stored(row)
        task = trim_task(
            stored.task, history_length=history_length, include_artifacts=include_artifacts
        )
        return attrs.evolve(stored, task=task)

    async def update_task(
        self,
        scope: CallerScope,
        task_id: str,
        update: TaskUpdate,
        *,
        expected_version: int | None = None,
        events: Sequence[SequencedEvent] = (),
    ) -> StoredTask:
        rows = _event_rows(task_id, events)
        _require_storable(scope, task_id)
        kept = detached_update(update)  # what this store remembers of it is its own
        change = _Change(kept, plain=kept is update)
        known = self._written.get(task_id)
        written = None
        if (
            self._dialect.modifying_with
            and known is not None
            and expected_version in (None, known.version)
            and len(rows) <= self._retention.max_events_per_task
        ):
            fast = partial(self._update_known, scope, known, change, rows)
            written = await self._driver.write(fast, one_statement=True)
        if written is None:
            slow = partial(self._update_row, scope, task_id, change, expected_version, known, rows)
            written = await self._driver.write(slow)
        self._written.remember(written, based_on=known)
        return StoredTask(written.handed_out(), written.version, from_micros(written.updated_us))

    def _update_known(
        self,
        scope: CallerScope,
        known: Written,
        change: _Change,
        rows: Sequence[_EventRow],
        tx: Tx,
    ) -> Written | None:
        """``update`` on the remembered task as one statement: the row is written, the events
        logged and the log trimmed only if the row is still at the remembered version and write
        time, and every event follows on after the log's last.  ``None``, with nothing written,
        when it is not so, or when the update is refused on the remembered task: the full write
        (:meth:`_update_row`) finds out why against the row itself.

        Nothing is read first and no transaction is opened: one round trip to PostgreSQL where
        the full write takes six (``BEGIN``, ``SELECT``, ``UPDATE``, ``INSERT``, ``DELETE``,
        ``COMMIT``).  The log is read as the statement's snapshot had it, also after waiting
        for another write's lock on the row; only the row itself is checked again then.  So
        every write adding to the log changes the row (an append moves its write time).
        """
        task_id = known.task.id
        now = m.utcnow()
        try:
            task = apply_update(known.task, change.update, now=now)
        except (TaskTerminalStateError, InvalidTransitionError):
            return None
        document = encode_task(task, known)
        plain = known.plain and change.plain
        written = Written(known.version + 1, to_micros(now), task, document, plain)
        update_row = (
            f"UPDATE a2a_tasks SET {self._set_task} WHERE id = ? AND tenant = ? AND owner = ?"
            " AND version = ? AND updated_us = ?"
        )
        params: list[object] = [
            *self._task_params(written),
            task_id,
            scope.tenant,
            scope.owner,
            known.version,
            known.updated_us,
        ]
        if not rows:
            sql = update_row + " RETURNING id"
        else:
            seqs = [seq for _task_id, seq, _event in rows]
            bound = self._retention.max_events_per_task
            new_rows = ", ".join(["(CAST(? AS BIGINT), CAST(? AS JSON))"] * len(rows))
            # The DELETE sees the log as it was, without this write's events: these are the
            # newest, so it keeps the bound less their number.
            sql = (
                f"WITH written AS ({update_row} AND NOT EXISTS (SELECT 1 FROM a2a_task_events"
                " WHERE task_id = ? AND seq >= ?) RETURNING id),"
                " logged AS (INSERT INTO a2a_task_events (task_id, seq, event)"
                f" SELECT id, seq, event FROM written, (VALUES {new_rows}) AS new (seq, event)),"
                f" trimmed AS ({_trim_sql('(SELECT id FROM written)', '?')})"
                " SELECT id FROM written"
            )
            params += [task_id, min(seqs)]
            params += [value for _task_id, seq, event in rows for value in (seq, event)]
            params += [task_id, max(seqs), bound, task_id, bound - len(rows)]
        try:
            row = tx.run(sql, params).fetchone()
        except self._dialect.integrity_error:  # an event number taken meanwhile
            return None
        return None if row is None else written

    def _update_row(
        self,
        scope: CallerScope,
        task_id: str,
        change: _Change,
        expected_version: int | None,
        known: Written | None,
        rows: Sequence[_EventRow],
        tx: Tx,
    ) -> Written:
        """``update`` on the row as it stands, read and locked first; its document is read
        only when ``known`` is not the row's current state."""
        known_at = (-1, -1) if known is None else (known.version, known.updated_us)
        row = tx.run(
            "SELECT version, updated_us, CASE WHEN version = ? AND updated_us = ? THEN NULL"
            " ELSE task END FROM a2a_tasks WHERE id = ? AND tenant = ? AND owner = ?"
            + self._dialect.lock_row,
            (*known_at, task_id, scope.tenant, scope.owner),
        ).fetchone()
        if row is None:
            raise TaskNotFoundError(f"Task {task_id} not found")
        version, _updated_us, text = row
        if expected_version is not None and expected_version != version:
            raise ConcurrencyError(
                f"task {task_id} is at version {version}, not {expected_version}"
            )
        previous = known if text is None else None
        if previous is None:
            current = _decode_task(text)
            plain = plain_task(current)
        else:
            current, plain = previous.task, previous.plain
        now = m.utcnow()
        task = apply_update(current, change.update, now=now)
        document = encode_task(task, previous)
        written = Written(version + 1, to_micros(now), task, document, plain and change.plain)
        changed = tx.run(
            f"UPDATE a2a_tasks SET {self._set_task} WHERE id = ? AND version = ?",
            (*self._task_params(written), task_id, version),
        )
        if changed.rowcount != 1:
            raise ConcurrencyError(f"task {task_id} changed while it was being updated")
        self._log_events(tx, task_id, rows)
        return written

    @staticmethod
    def _task_params(written: Written) -> tuple[object, ...]:
        """The values of ``_set_task`` for the row ``written`` describes."""
        task = written.task
        return (
            int(task.status.state),
            _status_micros(task),
            written.updated_us,
            written.version,
            dumps(written.document).decode(),
        )

    async def touch_task(self, scope: CallerScope, task_id: str, *, expected_version: int) -> bool:
        task = TaskAtVersion(scope, task_id, expected_version)
        return task in await self.touch_tasks([task])

    async def touch_tasks(self, tasks: Collection[TaskAtVersion]) -> set[TaskAtVersion]:
        asked = {
            task for task in tasks if storable(task.task_id, task.scope.tenant, task.scope.owner)
        }
        # Rows locked in one order, so two replicas' batches never deadlock.
        ids = sorted({task.task_id for task in asked})
        now_us = to_micros(m.utcnow())

        def touch(tx: Tx) -> list[tuple[TaskAtVersion, int]]:
            """The tasks touched, each with its row's write time before the touch."""
            touched: list[tuple[TaskAtVersion, int]] = []
            for chunk in _id_chunks(ids):
                rows = tx.run(
                    "SELECT id, tenant, owner, version, updated_us FROM a2a_tasks"
                    f" WHERE id IN {_placeholders(len(chunk))} ORDER BY id"
                    + self._dialect.lock_row,
                    chunk,
                ).fetchall()
                found = (
                    (TaskAtVersion(CallerScope(tenant, owner), task_id, version), before_us)
                    for task_id, tenant, owner, version, before_us in rows
                )
                at = [(task, int(before_us)) for task, before_us in found if task in asked]
                if at:
                    tx.run(
                        f"UPDATE a2a_tasks SET updated_us = ? WHERE id IN {_placeholders(len(at))}",
                        (now_us, *(task.task_id for task, _before_us in at)),
                    )
                touched += at
            return touched

        touched = await self._driver.write(touch)
        for task, before_us in touched:
            self._written.touched(task.task_id, task.version, before_us, now_us)
        return {task for task, _before_us in touched}

    async def task_version(self, scope: CallerScope, task_id: str) -> int | None:
        if not storable(task_id, scope.tenant, scope.owner):
            return None

        def version(tx: Tx) -> Any:
            return tx.run(
                "SELECT version FROM a2a_tasks WHERE id = ? AND tenant = ? AND owner = ?",
                (task_id, scope.tenant, scope.owner),
            ).fetchone()

        row = await self._driver.read(version)
        return None if row is None else int(row[0])

    async def task_versions(self, scope: CallerScope, task_ids: Collection[str]) -> dict[str, int]:
        ids = [task_id for task_id in dict.fromkeys(task_ids) if storable(task_id)]
        if not ids or not storable(scope.tenant, scope.owner):
            return {}

        def versions(tx: Tx) -> dict[str, int]:
            found: dict[str, int] = {}
            for chunk in _id_chunks(ids):
                found.update(
                    tx.run(
                        "SELECT id, version FROM a2a_tasks WHERE tenant = ? AND owner = ?"
                        f" AND id IN {_placeholders(len(chunk))}",
                        (scope.tenant, scope.owner, *chunk),
                    ).fetchall()
                )
            return found

        return await self._driver.read(versions)

    async def list_tasks(self, scope: CallerScope, query: TaskQuery) -> TaskPage:
        check_query(query)
        after = decode_cursor(query.page_token) if query.page_token else None
        if not storable(scope.tenant, scope.owner, query.context_id):
            return TaskPage(tasks=(), next_page_token="", page_size=query.page_size, total_size=0)
        where = "tenant = ? AND owner = ?"
        params: list[object] = [scope.tenant, scope.owner]
        if query.context_id:
            where += " AND context_id = ?"
            params.append(query.context_id)
        if query.status is not m.TaskState.UNSPECIFIED:
            where += " AND state = ?"
            params.append(int(query.status))
        if query.status_timestamp_after is not None:
            where += " AND status_us >= ?"
            params.append(to_micros(query.status_timestamp_after))
        page_where, page_params = where, list(params)
        if after is not None:
            page_where += " AND (listed_us, ord) < (?, ?)"
            page_params += after

        def page(tx: Tx) -> tuple[int, Any]:
            (total,) = tx.run(f"SELECT count(*) FROM a2a_tasks WHERE {where}", params).fetchone()
            rows = tx.run(
                f"SELECT listed_us, ord, task FROM a2a_tasks WHERE {page_where}"
                " ORDER BY listed_us DESC, ord DESC LIMIT ?",
                [*page_params, query.page_size + 1],
            ).fetchall()
            return total, rows

        total, rows = await self._driver.read(page)
        shown = rows[: query.page_size]
        return TaskPage(
            tasks=tuple(
                trim_task(
                    _decode_task(text),
                    history_length=query.history_length,
                    include_artifacts=query.include_artifacts,
                )
                for _listed, _order, text in shown
            ),
            next_page_token=(
                encode_cursor((shown[-1][0], shown[-1][1])) if len(rows) > len(shown) else ""
            ),
            page_size=query.page_size,
            total_size=total,
        )

    async def delete_task(self, scope: CallerScope, task_id: str) -> bool:
        if not storable(task_id, scope.tenant, scope.owner):
            return False

        def delete(tx: Tx) -> bool:
            cursor = tx.run(
                "DELETE FROM a2a_tasks WHERE id = ? AND tenant = ? AND owner = ?",
                (task_id, scope.tenant, scope.owner),
            )
            return cursor.rowcount == 1

        deleted = await self._driver.write(delete)
        if deleted:
            self._written.forget(task_id)
        return deleted

    async def append_events(
        self, scope: CallerScope, task_id: str, events: Sequence[SequencedEvent]
    ) -> None:
        rows = _event_rows(task_id, events)
        _require_storable(scope, task_id)
        now_us = to_micros(m.utcnow())

        def append(tx: Tx) -> tuple[int, int] | None:
            """The row's version and write time before the append (``None``: no events)."""
            if not rows:
                _require_task(tx, scope, task_id)
                return None
            # The task's row is locked first (PostgreSQL), as every other write of its log
            # does: holding only the key-share lock of the inserts' foreign-key checks, an
            # append and a running task's update (which takes the row first, then inserts)
            # could each wait on the other, the update for a number the append took.
            was = _require_task(tx, scope, task_id, lock=self._dialect.lock_row)
            self._log_events(tx, task_id, rows)
            # The write time moves on, as a touch's does (never back, never to the same
            # value): a one-statement update (``_update_known``) that waited for this row
            # finds it changed and takes the full way.  Its check that no event is logged
            # from its first number on reads the log as its statement's snapshot had it,
            # before these events: it would log events a full log no longer keeps.
            tx.run(
                "UPDATE a2a_tasks SET updated_us = CASE WHEN updated_us < ? THEN ?"
                " ELSE updated_us + 1 END WHERE id = ?",
                (now_us, now_us, task_id),
            )
            return was

        before = await self._driver.write(append)
        if before is not None:
            version, before_us = before
            self._written.touched(task_id, version, before_us, max(now_us, before_us + 1))

    def _log_events(self, tx: Tx, task_id: str, rows: Sequence[_EventRow]) -> None:
        """Insert the rows in ``tx``, then trim the log to the retention bound.

        A taken sequence number raises ``ConcurrencyError``, which rolls the whole transaction
        back: the write the events belong to is refused with them; so does one below what the
        full log keeps (checked first: one indexed probe, which finds nothing for events that
        follow on after the log).  A task deleted since it was read (PostgreSQL's reads lock
        nothing) raises ``TaskNotFoundError``: it is gone.
        """
        if not rows:
            return
        seqs = [seq for _task_id, seq, _event in rows]
        bound = self._retention.max_events_per_task
        if tx.run(_NEWER_LOGGED, (task_id, min(seqs), bound)).fetchone()[0] >= bound:
            raise below_kept_events(task_id, seqs, bound)
        try:
            for row in rows:
                tx.run("INSERT INTO a2a_task_events (task_id, seq, event) VALUES (?, ?, ?)", row)
        except self._dialect.integrity_error as exc:
            if self._dialect.missing_task(exc):
                raise TaskNotFoundError(f"Task {task_id} not found") from None
            raise ConcurrencyError(f"task {task_id} already has some of events {seqs}") from None
        tx.run(_TRIM_LOGGED, (task_id, task_id, task_id, bound, task_id, bound))

    async def load_events(
        self, scope: CallerScope, task_id: str, *, after_seq: int = 0
    ) -> tuple[SequencedEvent, ...]:
        _require_storable(scope, task_id)

        def load(tx: Tx) -> Any:
            _require_task(tx, scope, task_id)
            return tx.run(
                "SELECT seq, event FROM a2a_task_events WHERE task_id = ? AND seq > ? ORDER BY seq",
                (task_id, after_seq),
            ).fetchall()

        return await _decoded_events(await self._driver.read(load))

    async def last_event_seq(self, scope: CallerScope, task_id: str) -> int:
        _require_storable(scope, task_id)

        def last(tx: Tx) -> Any:
            return tx.run(
                "SELECT (SELECT max(seq) FROM a2a_task_events WHERE task_id = a2a_tasks.id)"
                " FROM a2a_tasks WHERE id = ? AND tenant = ? AND owner = ?",
                (task_id, scope.tenant, scope.owner),
            ).fetchone()

        row = await self._driver.read(last)
        if row is None:
            raise TaskNotFoundError(f"Task {task_id} not found")
        return 0 if row[0] is None else int(row[0])

    async def load_task_with_seq(
        self, scope: CallerScope, task_id: str
    ) -> tuple[StoredTask, int] | None:
        if not storable(task_id, scope.tenant, scope.owner):
            return None

        def load(tx: Tx) -> Any:
            # One statement: one snapshot of both tables, on PostgreSQL too.
            return tx.run(
                f"SELECT {_TASK_COLUMNS},"
                " (SELECT max(seq) FROM a2a_task_events WHERE task_id = a2a_tasks.id)"
                " FROM a2a_tasks WHERE id = ? AND tenant = ? AND owner = ?",
                (task_id, scope.tenant, scope.owner),
            ).fetchone()

        row = await self._driver.read(load)
        if row is None:
            return None
        return _stored(row[:3]), 0 if row[3] is None else int(row[3])

    async def set_push_config(
        self,
        scope: CallerScope,
        config: m.TaskPushNotificationConfig,
        *,
        delivered_through: int | None = None,
    ) -> m.TaskPushNotificationConfig:
        config = prepare_push_config(config)
        _require_storable(scope, config.task_id)
        now_us = to_micros(m.utcnow())
        params = (
            config.task_id,
            config.id,
            now_us,
            config.task_id,
            now_us,
            dumps(V1.encode(config)).decode(),
            delivered_through,
            config.task_id,
        )

        def put(tx: Tx) -> None:
            # The task's row is locked (PostgreSQL), so two configs set at once for one task
            # are not both timed from a snapshot without the other: the second waits, and its
            # INSERT, a statement of its own, sees the first.
            _require_task(tx, scope, config.task_id, lock=self._dialect.lock_row)
            # A new config's time is after the task's newest config's, even within one
            # millisecond of the clock (the listing is oldest first); a replaced one keeps its.
            # A replaced config keeps its delivery mark too.
            tx.run(
                "INSERT INTO a2a_push_configs (task_id, config_id, created_us, config,"
                " delivered_seq) VALUES (?, ?, (SELECT coalesce(max(created_us) + 1, ?)"
                " FROM a2a_push_configs WHERE task_id = ? AND created_us >= ?), ?,"
                " coalesce(?, (SELECT coalesce(max(seq), 0) FROM a2a_task_events"
                " WHERE task_id = ?))) ON CONFLICT (task_id, config_id)"
                " DO UPDATE SET config = excluded.config",
                params,
            )

        await self._driver.write(put)
        return config

    async def get_push_config(
        self, scope: CallerScope, task_id: str, config_id: str
    ) -> m.TaskPushNotificationConfig | None:
        if not storable(task_id, config_id, scope.tenant, scope.owner):
            return None

        def get(tx: Tx) -> Any:
            return tx.run(
                "SELECT c.config FROM a2a_push_configs c JOIN a2a_tasks t ON t.id = c.task_id"
                " WHERE c.task_id = ? AND c.config_id = ? AND t.tenant = ? AND t.owner = ?",
                (task_id, config_id, scope.tenant, scope.owner),
            ).fetchone()

        row = await self._driver.read(get)
        return None if row is None else V1.decode(loads(row[0]), m.TaskPushNotificationConfig)

    async def list_push_configs(
        self, scope: CallerScope, task_id: str
    ) -> tuple[m.TaskPushNotificationConfig, ...]:
        return tuple(target.config for target in await self.list_push_targets(scope, task_id))

    async def list_push_targets(self, scope: CallerScope, task_id: str) -> tuple[PushTarget, ...]:
        _require_storable(scope, task_id)

        def get_all(tx: Tx) -> Any:
            _require_task(tx, scope, task_id)
            return tx.run(
                "SELECT config, delivered_seq FROM a2a_push_configs WHERE task_id = ?"
                " ORDER BY created_us, config_id",
                (task_id,),
            ).fetchall()

        rows = await self._driver.read(get_all)
        return tuple(
            PushTarget(V1.decode(loads(text), m.TaskPushNotificationConfig), int(mark))
            for text, mark in rows
        )

    async def delete_push_config(self, scope: CallerScope, task_id: str, config_id: str) -> bool:
        if not storable(task_id, config_id, scope.tenant, scope.owner):
            return False

        def delete(tx: Tx) -> bool:
            cursor = tx.run(
                "DELETE FROM a2a_push_configs WHERE task_id = ? AND config_id = ? AND task_id IN"
                " (SELECT id FROM a2a_tasks WHERE id = ? AND tenant = ? AND owner = ?)",
                (task_id, config_id, task_id, scope.tenant, scope.owner),
            )
            return cursor.rowcount == 1

        return await self._driver.write(delete)

    async def mark_push_delivered(self, scope: CallerScope, task_id: str, seq: int) -> None:
        if not storable(task_id, scope.tenant, scope.owner):
            return

        def mark(tx: Tx) -> None:
            tx.run(
                "UPDATE a2a_push_configs SET delivered_seq = ? WHERE task_id = ?"
                " AND delivered_seq < ? AND task_id IN"
                " (SELECT id FROM a2a_tasks WHERE id = ? AND tenant = ? AND owner = ?)",
                (seq, task_id, seq, task_id, scope.tenant, scope.owner),
            )

        await self._driver.write(mark)

    async def claim_push_deliveries(
        self,
        claimant: str,
        tasks: Collection[tuple[CallerScope, str]],
        *,
        until: datetime,
        steal: bool = False,
    ) -> set[tuple[CallerScope, str]]:
        until_us, now_us = to_micros(until), to_micros(m.utcnow())
        # In task id order, as claim_push_backlog takes them: two replicas claiming the same
        # tasks at once (PostgreSQL) lock their rows in one order, so neither waits on the other.
        wanted = sorted(
            (key for key in tasks if storable(key[1], key[0].tenant, key[0].owner)),
            key=lambda key: key[1],
        )

        def claim(tx: Tx) -> set[tuple[CallerScope, str]]:
            held = set()
            for scope, task_id in wanted:
                cursor = tx.run(
                    "INSERT INTO a2a_push_claims (task_id, claimant, until_us) SELECT id, ?, ?"
                    " FROM a2a_tasks WHERE id = ? AND tenant = ? AND owner = ?" + _CLAIM,
                    (claimant, until_us, task_id, scope.tenant, scope.owner, now_us, steal),
                )
                if cursor.rowcount == 1:
                    held.add((scope, task_id))
            return held

        return await self._write_claims(claim)

    async def claim_push_backlog(
        self, claimant: str, *, until: datetime, steal: bool = False
    ) -> tuple[PushBacklog, ...]:
        until_us, now_us = to_micros(until), to_micros(m.utcnow())

        def free_lagging(tx: Tx) -> Any:
            return tx.run(
                "SELECT t.tenant, t.owner, t.id, c.delivered FROM a2a_tasks t JOIN"
                " (SELECT task_id, min(delivered_seq) AS delivered FROM a2a_push_configs"
                " GROUP BY task_id) c ON c.task_id = t.id"
                " LEFT JOIN a2a_push_claims k ON k.task_id = t.id"
                " WHERE c.delivered < (SELECT coalesce(max(e.seq), 0) FROM a2a_task_events e"
                " WHERE e.task_id = t.id) AND (k.task_id IS NULL OR k.claimant = ?"
                " OR k.until_us <= ? OR ?) ORDER BY t.id",
                (claimant, now_us, steal),
            ).fetchall()

        def claim_lagging(tx: Tx) -> tuple[PushBacklog, ...]:
            held = []
            for tenant, owner, task_id, delivered in free_lagging(tx):
                cursor = tx.run(
                    "INSERT INTO a2a_push_claims (task_id, claimant, until_us) VALUES (?, ?, ?)"
                    + _CLAIM,
                    (task_id, claimant, until_us, now_us, steal),
                )
                if cursor.rowcount == 1:  # (PostgreSQL: unless a replica took it meanwhile)
                    held.append(PushBacklog(CallerScope(tenant, owner), task_id, int(delivered)))
            return tuple(held)

        if not await self._driver.read(free_lagging):  # each replica's tick: usually nothing
            return ()
        return await self._write_claims(claim_lagging)

    async def _write_claims[T](self, claim: Callable[[Tx], T]) -> T:
        """``claim`` written, and written again when a task it claims was deleted meanwhile:
        on PostgreSQL, a claim inserted as another transaction deletes its task fails its
        foreign key once the delete commits.  The next try no longer finds the task."""
        while True:
            try:
                return await self._driver.write(claim)
            except self._dialect.integrity_error as exc:
                if not self._dialect.missing_task(exc):
                    raise

    async def release_push_claims(
        self, claimant: str, tasks: Collection[tuple[CallerScope, str]]
    ) -> None:
        task_ids = [task_id for _scope, task_id in tasks if storable(task_id)]

        def release(tx: Tx) -> None:
            for task_id in task_ids:
                tx.run(
                    "DELETE FROM a2a_push_claims WHERE task_id = ? AND claimant = ?",
                    (task_id, claimant),
                )

        await self._driver.write(release)

    async def list_unfinished(self) -> tuple[ScopedTask, ...]:
        def unfinished(tx: Tx) -> Any:
            return tx.run(
                f"SELECT tenant, owner, {_TASK_COLUMNS} FROM a2a_tasks"
                f" WHERE state IN {_in(_UNFINISHED)} ORDER BY ord"
            ).fetchall()

        rows = await self._driver.read(unfinished)
        return tuple(ScopedTask(CallerScope(row[0], row[1]), _stored(row[2:])) for row in rows)

    async def purge_expired(self, *, now: datetime | None = None) -> int:
        ttl = self._retention.terminal_ttl
        if ttl is None:
            return 0
        cutoff = to_micros((now or m.utcnow()) - ttl)
        batch = self._retention.purge_batch
        # Up to ``batch`` expired tasks, found on the (state, updated_us) index, each deleted
        # by its id with its events and push configs (cascades).  PostgreSQL locks the rows
        # chosen, checking them again (a row changed meanwhile is deleted only if it is still
        # expired), and passes over rows another transaction holds (``claim_rows``): another
        # replica's purge, which deletes them, or a write, after which a row is no longer
        # expired or waits for the next tick.
        sql = (
            "DELETE FROM a2a_tasks WHERE id IN (SELECT id FROM a2a_tasks"
            f" WHERE state IN {_in(_TERMINAL)} AND updated_us <= ? LIMIT ?"
            f"{self._dialect.claim_rows})"
        )

        def purge_batch(tx: Tx) -> int:
            return tx.run(sql, (cutoff, batch)).rowcount

        purged = 0
        while True:
            # Each batch its own write (one statement, its cascades included): a cancel
            # between batches leaves whole tasks, and other writes go in between.
            deleted = await self._driver.write(purge_batch, one_statement=True)
            purged += deleted
            # The limit counts the rows locked, not those passed over (PostgreSQL applies it
            # above the locking), so a short batch means fewer than ``batch`` expired rows
            # were free: any others are held as said above, and another batch now would only
            # pass over them again.
            if deleted < batch:
                return purged
            await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        await self._driver.aclose()


def _require_storable(scope: CallerScope, task_id: str) -> None:
    """A key with a NUL cannot be stored (creates refuse it), so such a task does not exist."""
    if not storable(task_id, scope.tenant, scope.owner):
        raise TaskNotFoundError(f"Task {task_id!r} not found")


def _require_task(tx: Tx, scope: CallerScope, task_id: str, *, lock: str = "") -> tuple[int, int]:
    """The row's version and write time; ``TaskNotFoundError`` unless the task exists in
    this scope.  ``lock``: the dialect's ``lock_row``, to hold its row until the transaction
    ends."""
    found = tx.run(
        "SELECT version, updated_us FROM a2a_tasks WHERE id = ? AND tenant = ? AND owner = ?"
        + lock,
        (task_id, scope.tenant, scope.owner),
    ).fetchone()
    if found is None:
        raise TaskNotFoundError(f"Task {task_id} not found")
    return int(found[0]), int(found[1])
