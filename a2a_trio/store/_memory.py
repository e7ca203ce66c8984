"""The in-memory task store: for tests, demos and single-process deployments that need no restart.

Writes are synchronous dict operations, so each one is atomic under trio's cooperative scheduling
without locks.  The dict is kept in write order (an update moves its task to the end): recovery's
least recently written first.  A listing visits every task, counting the matches and keeping the
page's worth with the greatest listing keys (status time, then write order: ``_cursor``), which
is fine for development and not a template for large tables.

The store keeps its own copies of the dicts and lists in what it is given (``metadata``,
``DataPart.data``) and hands out copies of its own, as the SQL stores do by serializing: a
caller changing such a dict changes nothing stored (``model/_detach.py``; a task holding none,
the usual text without metadata, is handed out as it is: each row knows whether it holds any).
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Sequence
from datetime import datetime

import attrs
import trio

from .. import model as m
from ..errors import ConcurrencyError, TaskNotFoundError
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
    stored_event_time,
    stored_status_time,
    trim_task,
)
from ._cursor import ListingKey, decode_cursor, encode_cursor, listing_key


@attrs.define
class _Row:
    scope: CallerScope
    stored: StoredTask
    listed: ListingKey  # where it lists: from its last create or update (``_listed``)
    idempotency: tuple[str, str] | None = None  # (context_id, key)
    events: dict[int, m.StreamEvent] = attrs.Factory(dict)
    push_configs: dict[str, m.TaskPushNotificationConfig] = attrs.Factory(dict)
    push_delivered: dict[str, int] = attrs.Factory(dict)
    """Per config id: the last event its webhook was sent (``mark_push_delivered``)."""
    push_claim: tuple[str, datetime] | None = None
    """Who delivers the task's notifications, until when (``claim_push_deliveries``)."""
    plain: bool = False
    """The task holds no dict or list, so callers may share it: it is handed out unwalked."""

    def handed_out(self) -> StoredTask:
        """The stored task as a caller gets it: sharing no dict or list with this row."""
        if self.plain:
            return self.stored
        return attrs.evolve(self.stored, task=m.detached_task(self.stored.task))

    def out(self, task: m.Task) -> m.Task:
        """``task`` (this row's, maybe trimmed) as a caller gets it."""
        return task if self.plain else m.detached_task(task)


class MemoryTaskStore:
    """A :class:`~a2a_trio.store.TaskStore` in a dict."""

    def __init__(self, *, retention: Retention = DEFAULT_RETENTION) -> None:
        self._retention = retention
        self._rows: dict[str, _Row] = {}
        self._idempotency: dict[tuple[CallerScope, str, str], str] = {}
        self._writes = 0

    def _listed(self, task: m.Task) -> ListingKey:
        """Where ``task``, written now, lists: its status time, then this write's order."""
        self._writes += 1
        return listing_key(task, self._writes)

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
        check_events(events)  # a programming error, whatever the store holds
        key = (scope, task.context_id, idempotency_key) if idempotency_key else None
        if key is not None and key in self._idempotency:
            return self._rows[self._idempotency[key]].handed_out()
        if task.id in self._rows:
            raise ConcurrencyError(f"task {task.id} already exists")
        kept = m.detached_task(task)
        stored = StoredTask(kept, 1, m.utcnow())
        row = _Row(scope, stored, self._listed(kept), plain=kept is task)
        self._log_events(task.id, row.events, events, kept={id(task): kept})
        self._rows[task.id] = row
        if key is not None and idempotency_key:
            self._idempotency[key] = task.id
            row.idempotency = (task.context_id, idempotency_key)
        return row.handed_out()

    def _row(self, scope: CallerScope, task_id: str) -> _Row | None:
        row = self._rows.get(task_id)
        return row if row is not None and row.scope == scope else None

    def _existing(self, scope: CallerScope, task_id: str) -> _Row:
        row = self._row(scope, task_id)
        if row is None:
            raise TaskNotFoundError(f"Task {task_id} not found")
        return row

    async def load_task(
        self,
        scope: CallerScope,
        task_id: str,
        *,
        history_length: int | None = None,
        include_artifacts: bool = True,
    ) -> StoredTask | None:
        check_history_length(history_length)
        row = self._row(scope, task_id)
        if row is None:
            return None
        task = trim_task(
            row.stored.task, history_length=history_length, include_artifacts=include_artifacts
        )
        return attrs.evolve(row.stored, task=row.out(task))

    async def update_task(
        self,
        scope: CallerScope,
        task_id: str,
        update: TaskUpdate,
        *,
        expected_version: int | None = None,
        events: Sequence[SequencedEvent] = (),
    ) -> StoredTask:
        check_events(events)
        row = self._existing(scope, task_id)
        if expected_version is not None and expected_version != row.stored.version:
            raise ConcurrencyError(
                f"task {task_id} is at version {row.stored.version}, not {expected_version}"
            )
        now = m.utcnow()
        kept = detached_update(update)
        task = apply_update(row.stored.task, kept, now=now)
        self._log_events(task_id, row.events, events)  # may refuse: the task is not changed yet
        row.stored = StoredTask(task, row.stored.version + 1, now)
        row.plain = row.plain and kept is update
        row.listed = self._listed(task)
        self._rows[task_id] = self._rows.pop(task_id)  # keep the dict in write order
        return row.handed_out()

    async def touch_task(self, scope: CallerScope, task_id: str, *, expected_version: int) -> bool:
        task = TaskAtVersion(scope, task_id, expected_version)
        return task in await self.touch_tasks([task])

    async def touch_tasks(self, tasks: Collection[TaskAtVersion]) -> set[TaskAtVersion]:
        now = m.utcnow()
        touched = set[TaskAtVersion]()
        for task in tasks:
            row = self._row(task.scope, task.task_id)
            if row is not None and row.stored.version == task.version:
                row.stored = attrs.evolve(row.stored, updated_at=now)  # its listing place stays
                touched.add(task)
        return touched

    async def task_version(self, scope: CallerScope, task_id: str) -> int | None:
        row = self._row(scope, task_id)
        return None if row is None else row.stored.version

    async def task_versions(self, scope: CallerScope, task_ids: Collection[str]) -> dict[str, int]:
        rows = (self._row(scope, task_id) for task_id in task_ids)
        return {row.stored.task.id: row.stored.version for row in rows if row is not None}

    async def list_tasks(self, scope: CallerScope, query: TaskQuery) -> TaskPage:
        check_query(query)
        after = decode_cursor(query.page_token) if query.page_token else None
        total, below = 0, list[tuple[ListingKey, _Row]]()
        # Newest write first: mostly the greatest keys too, which the heap then keeps.
        for row in reversed(self._rows.values()):
            if row.scope != scope or not _matches(row.stored.task, query):
                continue
            total += 1
            if after is None or row.listed < after:
                below.append((row.listed, row))  # keys are distinct: rows are never compared
        shown = heapq.nlargest(query.page_size + 1, below)
        more = len(shown) > query.page_size
        page = [row for _listed, row in shown[: query.page_size]]
        return TaskPage(
            tasks=tuple(
                row.out(
                    trim_task(
                        row.stored.task,
                        history_length=query.history_length,
                        include_artifacts=query.include_artifacts,
                    )
                )
                for row in page
            ),
            next_page_token=encode_cursor(page[-1].listed) if more else "",
            page_size=query.page_size,
            total_size=total,
        )

    async def delete_task(self, scope: CallerScope, task_id: str) -> bool:
        if self._row(scope, task_id) is None:
            return False
        self._drop(task_id)
        return True

    def _drop(self, task_id: str) -> None:
        row = self._rows.pop(task_id)
        if row.idempotency is not None:
            del self._idempotency[(row.scope, *row.idempotency)]

    async def append_events(
        self, scope: CallerScope, task_id: str, events: Sequence[SequencedEvent]
    ) -> None:
        check_events(events)
        row = self._existing(scope, task_id)
        self._log_events(task_id, row.events, events)
        if events:  # a write of the task, as a touch is: its version and listing place stay
            row.stored = attrs.evolve(row.stored, updated_at=m.utcnow())

    def _log_events(
        self,
        task_id: str,
        log: dict[int, m.StreamEvent],
        events: Sequence[SequencedEvent],
        *,
        kept: dict[int, m.StreamEvent] | None = None,
    ) -> None:
        """Add ``events`` (checked by the caller) to ``log``, all or none (raising first), then
        trim it to the bound.  A number taken, or below what the full log keeps, refuses them
        all.

        ``kept``: this store's copies of some of them, by ``id`` (a new task is usually its
        first event too), which need not be copied again.
        """
        if not events:
            return
        taken = [seq for seq, _event in events if seq in log]
        if taken:
            raise ConcurrencyError(f"task {task_id} already has events {taken}")
        bound = self._retention.max_events_per_task
        seqs = [seq for seq, _event in events]
        lowest = min(seqs)
        # A stream's next events are above the log's newest: only others are counted.
        if len(log) >= bound and lowest < max(log) and sum(seq > lowest for seq in log) >= bound:
            raise below_kept_events(task_id, seqs, bound)
        kept = kept or {}
        log.update(
            [
                (seq, kept.get(id(event)) or stored_event_time(m.detached_event(event)))
                for seq, event in events
            ]
        )
        if len(log) > bound:  # (a sort of the whole log on every write otherwise)
            for seq in sorted(log)[:-bound]:
                del log[seq]

    async def load_events(
        self, scope: CallerScope, task_id: str, *, after_seq: int = 0
    ) -> tuple[SequencedEvent, ...]:
        log = self._existing(scope, task_id).events
        return tuple((seq, m.detached_event(log[seq])) for seq in sorted(log) if seq > after_seq)

    async def last_event_seq(self, scope: CallerScope, task_id: str) -> int:
        return max(self._existing(scope, task_id).events, default=0)

    async def load_task_with_seq(
        self, scope: CallerScope, task_id: str
    ) -> tuple[StoredTask, int] | None:
        row = self._row(scope, task_id)
        if row is None:
            return None
        return row.handed_out(), max(row.events, default=0)

    async def set_push_config(
        self,
        scope: CallerScope,
        config: m.TaskPushNotificationConfig,
        *,
        delivered_through: int | None = None,
    ) -> m.TaskPushNotificationConfig:
        config = prepare_push_config(config)
        row = self._existing(scope, config.task_id)
        if config.id not in row.push_configs:
            mark = max(row.events, default=0) if delivered_through is None else delivered_through
            row.push_delivered[config.id] = mark
        row.push_configs[config.id] = config
        return config

    async def mark_push_delivered(self, scope: CallerScope, task_id: str, seq: int) -> None:
        row = self._row(scope, task_id)
        if row is not None:
            for config_id, mark in row.push_delivered.items():
                row.push_delivered[config_id] = max(mark, seq)

    async def claim_push_deliveries(
        self,
        claimant: str,
        tasks: Collection[tuple[CallerScope, str]],
        *,
        until: datetime,
        steal: bool = False,
    ) -> set[tuple[CallerScope, str]]:
        now = m.utcnow()
        held = set()
        for scope, task_id in tasks:
            row = self._row(scope, task_id)
            if row is not None and _claimed(row, claimant, until, now=now, steal=steal):
                held.add((scope, task_id))
        return held

    async def claim_push_backlog(
        self, claimant: str, *, until: datetime, steal: bool = False
    ) -> tuple[PushBacklog, ...]:
        now = m.utcnow()
        held = []
        for task_id, row in self._rows.items():
            least = min(row.push_delivered.values(), default=None)  # (None: no configs)
            if (
                least is not None
                and least < max(row.events, default=0)
                and _claimed(row, claimant, until, now=now, steal=steal)
            ):
                held.append(PushBacklog(row.scope, task_id, least))
        return tuple(held)

    async def release_push_claims(
        self, claimant: str, tasks: Collection[tuple[CallerScope, str]]
    ) -> None:
        for scope, task_id in tasks:
            row = self._row(scope, task_id)
            if row is not None and row.push_claim is not None and row.push_claim[0] == claimant:
                row.push_claim = None

    async def get_push_config(
        self, scope: CallerScope, task_id: str, config_id: str
    ) -> m.TaskPushNotificationConfig | None:
        row = self._row(scope, task_id)
        return None if row is None else row.push_configs.get(config_id)

    async def list_push_configs(
        self, scope: CallerScope, task_id: str
    ) -> tuple[m.TaskPushNotificationConfig, ...]:
        return tuple(self._existing(scope, task_id).push_configs.values())

    async def list_push_targets(self, scope: CallerScope, task_id: str) -> tuple[PushTarget, ...]:
        row = self._existing(scope, task_id)
        return tuple(
            PushTarget(config, row.push_delivered[config_id])
            for config_id, config in row.push_configs.items()
        )

    async def delete_push_config(self, scope: CallerScope, task_id: str, config_id: str) -> bool:
        row = self._row(scope, task_id)
        if row is None or row.push_configs.pop(config_id, None) is None:
            return False
        del row.push_delivered[config_id]
        return True

    async def list_unfinished(self) -> tuple[ScopedTask, ...]:
        return tuple(
            ScopedTask(row.scope, row.handed_out())
            for row in self._rows.values()
            if not m.is_terminal(row.stored.task.status.state)
        )

    async def purge_expired(self, *, now: datetime | None = None) -> int:
        ttl = self._retention.terminal_ttl
        if ttl is None:
            return 0
        cutoff = (now or m.utcnow()) - ttl

        def expired(row: _Row | None) -> bool:
            return (
                row is not None
                and m.is_terminal(row.stored.task.status.state)
                and row.stored.updated_at <= cutoff
            )

        found = [task_id for task_id, row in self._rows.items() if expired(row)]
        batch = self._retention.purge_batch
        purged = 0
        for start in range(0, len(found), batch):
            if start:  # as the SQL stores: other tasks run, and a cancel lands, between batches
                await trio.lowlevel.checkpoint()
            # Checked again: a task deleted or re-created during a checkpoint is left alone.
            gone = [
                task_id
                for task_id in found[start : start + batch]
                if expired(self._rows.get(task_id))
            ]
            for task_id in gone:
                self._drop(task_id)
            purged += len(gone)
        return purged

    async def aclose(self) -> None:
        self._rows.clear()
        self._idempotency.clear()


def _matches(task: m.Task, query: TaskQuery) -> bool:
    if query.context_id and task.context_id != query.context_id:
        return False
    if query.status is not m.TaskState.UNSPECIFIED and task.status.state is not query.status:
        return False
    after: datetime | None = query.status_timestamp_after
    stamp = task.status.timestamp
    return after is None or (stamp is not None and stamp >= after)


def _claimed(row: _Row, claimant: str, until: datetime, *, now: datetime, steal: bool) -> bool:
    """Claim ``row``'s push deliveries for ``claimant`` unless another's claim lasts past
    ``now`` (and ``steal`` is not set); whether ``claimant`` holds them now."""
    held = row.push_claim
    if held is not None and held[0] != claimant and held[1] > now and not steal:
        return False
    row.push_claim = (claimant, until)
    return True
