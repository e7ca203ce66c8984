"""An obviously-correct task store in plain Python: what ``tests/store/test_model.py`` checks
every backend against, step by step.

It follows docs/stores.md (and the ``TaskStore`` protocol) with the simplest data structures:
no copies, no cursors, no clocks.  Time is a step counter (``tick``): the machine waits for the
stores' millisecond clock to move on after every write, so the order of the stores' write
times is the order of the ticks, and a purge's cutoff can be said as "at or before the tick of
this write".  Errors are the exception types the stores raise.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import UTC, datetime, timedelta

import attrs

from a2a_trio import model as m
from a2a_trio.errors import (
    ConcurrencyError,
    InvalidParamsError,
    InvalidTransitionError,
    TaskNotFoundError,
    TaskTerminalStateError,
)
from a2a_trio.store import ArtifactWrite, CallerScope, TaskAtVersion, TaskQuery, TaskUpdate


@attrs.define
class Row:
    """One stored task and everything that goes with it."""

    scope: CallerScope
    task: m.Task
    version: int
    order: int  # the write order: raised by creates and updates, not by touches
    tick: int  # the last write, touch or append: what a purge's cutoff compares
    key: str | None
    events: dict[int, m.StreamEvent] = attrs.Factory(dict)
    configs: dict[str, m.TaskPushNotificationConfig] = attrs.Factory(dict)
    store_stamped: bool = False
    """The status timestamp is the store's clock at some write (an update with a state and no
    timestamp), which the model does not know: comparisons leave it out."""


type Listed = tuple[bool, int, int]
"""Where a task lists, greatest first: whether it has a status time, that time in whole
milliseconds (as the stores keep it), the order of its last create or update."""

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def listed(row: Row) -> Listed:
    stamp = row.task.status.timestamp
    if stamp is None:
        return (False, 0, row.order)
    return (True, (stamp - EPOCH) // timedelta(milliseconds=1), row.order)


@attrs.frozen
class Page:
    tasks: tuple[m.Task, ...]
    total: int
    cursor: Listed | None  # where the next page continues below; None: the last page


def has_nul(*keys: str) -> bool:
    return any("\x00" in key for key in keys)


def check_events(events: Sequence[tuple[int, m.StreamEvent]]) -> None:
    seqs = [seq for seq, _event in events]
    if any(seq < 1 for seq in seqs) or len(set(seqs)) != len(seqs):
        raise ValueError(seqs)


def write_artifacts(
    artifacts: tuple[m.Artifact, ...], writes: Sequence[ArtifactWrite]
) -> tuple[m.Artifact, ...]:
    """Replace or add each artifact by id; an append adds its parts (and merges its metadata)
    to the artifact of that id, or adds it when there is none."""
    result = list(artifacts)
    for write in writes:
        ids = [artifact.artifact_id for artifact in result]
        new = write.artifact
        if new.artifact_id not in ids:
            result.append(new)
            continue
        at = ids.index(new.artifact_id)
        if write.append:
            old = result[at]
            merged = {**(old.metadata or {}), **(new.metadata or {})}
            new = attrs.evolve(old, parts=old.parts + new.parts, metadata=merged or None)
        result[at] = new
    return tuple(result)


class ReferenceStore:
    """The model: one dict of rows, by task id."""

    def __init__(self, *, max_events: int) -> None:
        self.max_events = max_events
        self.rows: dict[str, Row] = {}
        self.clock = 0

    def _tick(self) -> int:
        self.clock += 1
        return self.clock

    def row(self, scope: CallerScope, task_id: str) -> Row | None:
        row = self.rows.get(task_id)
        return row if row is not None and row.scope == scope else None

    def existing(self, scope: CallerScope, task_id: str) -> Row:
        row = self.row(scope, task_id)
        if row is None:
            raise TaskNotFoundError(task_id)
        return row

    def _refuse_logged(self, row: Row, events: Sequence[tuple[int, m.StreamEvent]]) -> None:
        """A number in the log, or one with the bound's worth of newer numbers logged (trimmed
        away, or it would be dropped at once), is taken as already logged."""
        seqs = [seq for seq, _event in events]
        if any(seq in row.events for seq in seqs):
            raise ConcurrencyError(seqs)
        if seqs and len([seq for seq in row.events if seq > min(seqs)]) >= self.max_events:
            raise ConcurrencyError(seqs)

    def _log(self, row: Row, events: Sequence[tuple[int, m.StreamEvent]]) -> None:
        row.events.update(events)
        for seq in sorted(row.events)[: -self.max_events]:
            del row.events[seq]

    def create(
        self,
        scope: CallerScope,
        task: m.Task,
        key: str | None,
        events: Sequence[tuple[int, m.StreamEvent]],
    ) -> Row:
        if has_nul(task.id, task.context_id, scope.tenant, scope.owner, key or ""):
            raise InvalidParamsError("a key holds a NUL")
        if task.status.state is m.TaskState.UNSPECIFIED:
            raise InvalidTransitionError(task.id)
        check_events(events)
        if key:
            for row in self.rows.values():
                if (row.scope, row.task.context_id, row.key) == (scope, task.context_id, key):
                    return row
        if task.id in self.rows:
            raise ConcurrencyError(task.id)
        tick = self._tick()
        row = Row(scope, task, 1, tick, tick, key or None)
        self._log(row, events)
        self.rows[task.id] = row
        return row

    def update(
        self,
        scope: CallerScope,
        task_id: str,
        update: TaskUpdate,
        expected_version: int | None,
        events: Sequence[tuple[int, m.StreamEvent]],
        *,
        now: datetime,
    ) -> Row:
        check_events(events)
        row = self.existing(scope, task_id)
        if expected_version is not None and expected_version != row.version:
            raise ConcurrencyError(task_id)
        task = row.task
        status = task.status
        stamped = row.store_stamped
        if update.state is not None:
            if m.is_terminal(status.state):
                raise TaskTerminalStateError(task_id)
            if update.state not in m.ALLOWED_TRANSITIONS[status.state]:
                raise InvalidTransitionError(task_id)
            status = m.TaskStatus(update.state, update.status_message, update.timestamp or now)
            stamped = update.timestamp is None
        self._refuse_logged(row, events)
        metadata = task.metadata
        if update.metadata:
            metadata = {**(metadata or {}), **update.metadata}
        row.task = attrs.evolve(
            task,
            status=status,
            artifacts=write_artifacts(task.artifacts, update.artifacts),
            history=task.history + update.messages,
            metadata=metadata,
        )
        row.store_stamped = stamped
        row.version += 1
        row.order = row.tick = self._tick()
        self._log(row, events)
        return row

    def touch(self, tasks: Collection[TaskAtVersion]) -> set[TaskAtVersion]:
        touched = {
            task
            for task in tasks
            if (row := self.row(task.scope, task.task_id)) is not None
            and row.version == task.version
        }
        if touched:
            tick = self._tick()
            for task in touched:
                self.rows[task.task_id].tick = tick
        return touched

    def versions(self, scope: CallerScope, task_ids: Collection[str]) -> dict[str, int]:
        rows = {task_id: self.row(scope, task_id) for task_id in task_ids}
        return {task_id: row.version for task_id, row in rows.items() if row is not None}

    def list_tasks(self, scope: CallerScope, query: TaskQuery, after: Listed | None) -> Page:
        if not 1 <= query.page_size <= 100 or (query.history_length or 0) < 0:
            raise InvalidParamsError("bad query")
        matches = sorted(
            (row for row in self.rows.values() if row.scope == scope and _matches(row, query)),
            key=listed,
            reverse=True,
        )
        below = [row for row in matches if after is None or listed(row) < after]
        shown = below[: query.page_size]
        more = len(below) > len(shown)
        return Page(
            tuple(
                trimmed(row.task, query.history_length, query.include_artifacts) for row in shown
            ),
            len(matches),
            listed(shown[-1]) if more else None,
        )

    def delete(self, scope: CallerScope, task_id: str) -> bool:
        if self.row(scope, task_id) is None:
            return False
        del self.rows[task_id]
        return True

    def append(
        self, scope: CallerScope, task_id: str, events: Sequence[tuple[int, m.StreamEvent]]
    ) -> None:
        check_events(events)
        row = self.existing(scope, task_id)
        self._refuse_logged(row, events)
        self._log(row, events)
        if events:  # its write time moves on, as a touch's does
            row.tick = self._tick()

    def set_config(
        self, scope: CallerScope, config: m.TaskPushNotificationConfig
    ) -> m.TaskPushNotificationConfig:
        if not config.task_id or has_nul(config.id):
            raise InvalidParamsError("bad config")
        self.existing(scope, config.task_id).configs[config.id] = config
        return config

    def unfinished(self) -> list[Row]:
        live = [row for row in self.rows.values() if not m.is_terminal(row.task.status.state)]
        return sorted(live, key=lambda row: row.order)

    def purge(self, cutoff_tick: int | None) -> int:
        """Drop the terminal tasks last written or touched at or before ``cutoff_tick``."""
        if cutoff_tick is None:
            return 0
        gone = [
            task_id
            for task_id, row in self.rows.items()
            if m.is_terminal(row.task.status.state) and row.tick <= cutoff_tick
        ]
        for task_id in gone:
            del self.rows[task_id]
        return len(gone)


def trimmed(task: m.Task, history_length: int | None, include_artifacts: bool) -> m.Task:
    history = task.history
    if history_length is not None:
        history = history[len(history) - history_length :] if history_length else ()
    return attrs.evolve(
        task, history=history, artifacts=task.artifacts if include_artifacts else ()
    )


def _matches(row: Row, query: TaskQuery) -> bool:
    task = row.task
    if query.context_id and task.context_id != query.context_id:
        return False
    if query.status is not m.TaskState.UNSPECIFIED and task.status.state is not query.status:
        return False
    after = query.status_timestamp_after
    stamp = task.status.timestamp
    return after is None or (stamp is not None and stamp >= after)
