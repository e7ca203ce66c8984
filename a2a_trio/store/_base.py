"""The task-store contract every backend meets (see ``docs/stores.md``).

- Every task belongs to a ``CallerScope`` (tenant + authenticated owner); every read, list and
  write is filtered by it, so one caller never sees or touches another's tasks.
- ``update_task`` applies a ``TaskUpdate`` atomically and returns the new version; with
  ``expected_version`` it raises ``ConcurrencyError`` on a mismatch.  A state change on a terminal
  task raises ``TaskTerminalStateError``; a change the lifecycle forbids raises
  ``InvalidTransitionError``; pure appends (``state=None``) are always allowed.
- ``create_task`` with an idempotency key returns the existing task for (scope, context, key).
- Reads see the caller's own preceding writes (read-your-writes).
- ``list_tasks`` lists by status time, newest first, with an opaque cursor that neither skips
  nor repeats (``_cursor``).
- Each task keeps a bounded log of its stream events (``append_events``/``load_events``) and its
  push-notification configs; both go when the task goes.  Each config carries the number of the
  last event its webhook was sent (``mark_push_delivered``), so a restart sends what the last
  process did not (``claim_push_backlog``).  One sender at a time delivers a task's
  notifications: it holds the task's push claim until a time it renews
  (``claim_push_deliveries``), and a claim that ran out is anyone's to take, so another
  replica takes over the deliveries of one that stopped.  ``create_task`` and ``update_task``
  take the events a write produced (``events=``) and log them in the same transaction, so the
  task and its log never disagree; a refused event refuses the whole write.
- ``touch_task`` marks a task freshly written without changing it (a replica's lease on the
  tasks it runs), if it is still at the version the caller knows; ``touch_tasks`` does so for
  many tasks, of any scopes, in one write transaction (a replica's lease tick touches all its
  running tasks together), and makes that write even for none; ``task_version`` (and
  ``task_versions``, for many tasks in one read) and ``last_event_seq`` are the cheap reads that
  tell whether a task moved on, and where its log goes on.
- ``list_unfinished`` finds non-terminal tasks across all scopes (restart recovery);
  ``purge_expired`` removes terminal tasks older than ``Retention.terminal_ttl``.

The change itself is computed by :func:`apply_update`, a pure function all backends share, so the
stores differ only in how they persist and lock.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Protocol

import attrs

from .. import model as m
from ..errors import (
    FIELD,
    ConcurrencyError,
    InvalidParamsError,
    InvalidTransitionError,
    Phrase,
    TaskTerminalStateError,
)
from ..model._detach import detached_content, plain
from ..model._fields import to_tuple
from ..model._json import copy_json_object

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100
DEFAULT_MAX_EVENTS = 1000


MIN_PURGE_INTERVAL = timedelta(seconds=1)
MAX_PURGE_INTERVAL = timedelta(minutes=5)
DEFAULT_PURGE_BATCH = 500
"""Tasks per purge write: on SQLite, 500 finished tasks with their events take a few hundred
ms to delete, the longest other writes then wait (docs/stores.md, Figures)."""


@attrs.frozen
class Retention:
    """How long stored data lives.

    ``terminal_ttl``: terminal tasks idle for at least this long are purged (``None``: kept).
    ``max_events_per_task``: the event log keeps only this many newest events per task.
    ``purge_interval``: how often ``open_store`` runs the purge while it is open; by default
    half the TTL, between 1 second and 5 minutes, so a task outlives its TTL by at most half.
    ``purge_batch``: tasks the purge deletes per write; each batch is its own transaction, so
    other writes go in between and a huge backlog never makes one long statement.
    """

    terminal_ttl: timedelta | None = None
    max_events_per_task: int = attrs.field(default=DEFAULT_MAX_EVENTS)
    purge_interval: timedelta | None = None
    purge_batch: int = attrs.field(default=DEFAULT_PURGE_BATCH)

    def purge_every(self) -> timedelta:
        """The time between two purges."""
        if self.purge_interval is not None:
            return self.purge_interval
        if self.terminal_ttl is None:
            return MAX_PURGE_INTERVAL
        return min(MAX_PURGE_INTERVAL, max(MIN_PURGE_INTERVAL, self.terminal_ttl / 2))

    @max_events_per_task.validator
    def _check_max_events(self, _attribute: object, value: int) -> None:
        if value < 1:
            raise ValueError("max_events_per_task must be at least 1")

    @purge_batch.validator
    def _check_purge_batch(self, _attribute: object, value: int) -> None:
        if value < 1:
            raise ValueError("purge_batch must be at least 1")


DEFAULT_RETENTION = Retention()


class StoreSchemaError(Exception):
    """The database holds a schema this version of a2a_trio does not know (it is newer)."""


@attrs.frozen
class CallerScope:
    """Whose tasks these are: the tenant and the authenticated owner ("" = anonymous)."""

    tenant: str = ""
    owner: str = ""


ANONYMOUS = CallerScope()


@attrs.frozen
class ArtifactWrite:
    """One artifact write: replace (or add) the artifact by id, or append its parts."""

    artifact: m.Artifact
    append: bool = False


@attrs.frozen
class TaskUpdate:
    """A change to a task; ``state=None`` keeps the current status."""

    state: m.TaskState | None = None
    status_message: m.Message | None = None
    timestamp: datetime | None = None
    artifacts: tuple[ArtifactWrite, ...] = attrs.field(default=(), converter=to_tuple)
    messages: tuple[m.Message, ...] = attrs.field(default=(), converter=to_tuple)
    metadata: m.JsonObject | None = None


@attrs.frozen
class TaskAtVersion:
    """A task as a caller last wrote it: its scope, its id and its version (what
    ``touch_tasks`` touches, only if the task is still so)."""

    scope: CallerScope
    task_id: str
    version: int


@attrs.frozen
class StoredTask:
    """A task as stored, with its optimistic-concurrency version and last update time."""

    task: m.Task
    version: int
    updated_at: datetime


@attrs.frozen
class ScopedTask:
    """A stored task with the scope it belongs to (from the scope-crossing recovery queries)."""

    scope: CallerScope
    stored: StoredTask


@attrs.frozen
class PushBacklog:
    """A task whose push deliveries lag its event log: the events after ``delivered_through``
    (the least any of its configs was sent) are still to go to its webhooks."""

    scope: CallerScope
    task_id: str
    delivered_through: int


@attrs.frozen
class PushTarget:
    """A task's push config with the last event its webhook was sent (its delivery mark)."""

    config: m.TaskPushNotificationConfig
    delivered_through: int


type SequencedEvent = tuple[int, m.StreamEvent]
"""A stream event with its per-task sequence number (1, 2, ...), as the event log keeps it."""


@attrs.frozen
class TaskQuery:
    """ListTasks filters and paging, already validated (``page_size`` is 1..100)."""

    context_id: str = ""
    status: m.TaskState = m.TaskState.UNSPECIFIED
    page_size: int = DEFAULT_PAGE_SIZE
    page_token: str = ""
    history_length: int | None = None
    status_timestamp_after: datetime | None = None
    include_artifacts: bool = False


@attrs.frozen
class TaskPage:
    """One page of ``list_tasks``."""

    tasks: tuple[m.Task, ...]
    next_page_token: str
    page_size: int
    total_size: int


class TaskStore(Protocol):
    """Where tasks live; see the module docstring for the contract."""

    async def create_task(
        self,
        scope: CallerScope,
        task: m.Task,
        *,
        idempotency_key: str | None = None,
        events: Sequence[SequencedEvent] = (),
    ) -> StoredTask:
        """Store a new task (version 1) with ``events`` as the start of its log, or return the
        one already created with this key (its log unchanged)."""
        ...

    async def load_task(
        self,
        scope: CallerScope,
        task_id: str,
        *,
        history_length: int | None = None,
        include_artifacts: bool = True,
    ) -> StoredTask | None:
        """The task, or ``None`` when it does not exist in this scope."""
        ...

    async def update_task(
        self,
        scope: CallerScope,
        task_id: str,
        update: TaskUpdate,
        *,
        expected_version: int | None = None,
        events: Sequence[SequencedEvent] = (),
    ) -> StoredTask:
        """Apply ``update`` and log ``events`` in one transaction (as ``append_events`` would).

        Raises ``TaskNotFoundError`` when absent in this scope; a taken sequence number (or one
        below what a full log keeps) raises ``ConcurrencyError`` and neither the task nor its
        log changes.
        """
        ...

    async def touch_task(self, scope: CallerScope, task_id: str, *, expected_version: int) -> bool:
        """Set the task's last update time to now, leaving its version, document, events and
        place in listings as they are, when it is at ``expected_version``.

        Whether it was (``False``: it changed since, or is gone).  A replica holds its lease on
        a running task this way without bumping the version another replica's
        ``expected_version`` write (a cancel) was read against.
        """
        ...

    async def touch_tasks(self, tasks: Collection[TaskAtVersion]) -> set[TaskAtVersion]:
        """``touch_task`` for each of ``tasks`` that is at its version in its scope, all in
        one write transaction; the ones touched.

        The transaction is made even when ``tasks`` is empty (it takes the store's write lock
        and releases it): a replica's lease tick makes one whatever it runs, so a stalled store
        (a write lock held elsewhere, an unreachable server) times it out or fails it, and the
        replica does not take its peers' tasks, which they could not touch either, for left.
        """
        ...

    async def task_version(self, scope: CallerScope, task_id: str) -> int | None:
        """The task's version without its document, or ``None`` when it does not exist."""
        ...

    async def task_versions(self, scope: CallerScope, task_ids: Collection[str]) -> dict[str, int]:
        """The versions of those of ``task_ids`` that exist in this scope, by id, read together
        (a replica's lease tick checks all the tasks its jobs wait on at once)."""
        ...

    async def list_tasks(self, scope: CallerScope, query: TaskQuery) -> TaskPage:
        """Tasks in this scope matching ``query``, by status time, newest first (``_cursor``)."""
        ...

    async def delete_task(self, scope: CallerScope, task_id: str) -> bool:
        """Remove a task; ``True`` when it existed."""
        ...

    async def append_events(
        self, scope: CallerScope, task_id: str, events: Sequence[SequencedEvent]
    ) -> None:
        """Add events to the task's log, dropping the oldest beyond the retention bound; the
        task's last update time moves on (when there are events), as a touch's does.

        A sequence number already in the log raises ``ConcurrencyError`` and adds nothing; so
        does one below the numbers a full log keeps (the log already holds the bound's worth of
        newer events): it was logged and trimmed away, or could only be dropped at once.
        """
        ...

    async def load_events(
        self, scope: CallerScope, task_id: str, *, after_seq: int = 0
    ) -> tuple[SequencedEvent, ...]:
        """The task's logged events with a sequence number above ``after_seq``, in order, a
        status time they carry in whole milliseconds (``stored_event_time``)."""
        ...

    async def last_event_seq(self, scope: CallerScope, task_id: str) -> int:
        """The highest sequence number in the task's log (0 when empty), without reading the
        events: where the next event's number follows on.  ``TaskNotFoundError`` when absent."""
        ...

    async def load_task_with_seq(
        self, scope: CallerScope, task_id: str
    ) -> tuple[StoredTask, int] | None:
        """The task and the highest sequence number in its log, read together (``None``:
        absent).  A task and its events are written in one transaction, so the task is exactly
        the task after that event, however often another replica writes it meanwhile."""
        ...

    async def set_push_config(
        self,
        scope: CallerScope,
        config: m.TaskPushNotificationConfig,
        *,
        delivered_through: int | None = None,
    ) -> m.TaskPushNotificationConfig:
        """Store (or replace by id) a config for ``config.task_id``; an empty id gets a new one.

        A new config counts as sent every event up to ``delivered_through`` (by default the
        task's last logged event: it is for what comes next); a replaced one keeps its mark."""
        ...

    async def mark_push_delivered(self, scope: CallerScope, task_id: str, seq: int) -> None:
        """Every config the task has now was sent its events up to ``seq`` (or given up on);
        a config already marked further keeps its mark.  An absent task: nothing to mark."""
        ...

    async def claim_push_deliveries(
        self,
        claimant: str,
        tasks: Collection[tuple[CallerScope, str]],
        *,
        until: datetime,
        steal: bool = False,
    ) -> set[tuple[CallerScope, str]]:
        """Claim (or renew) for ``claimant``, until ``until``, the push deliveries of each of
        ``tasks`` not claimed by another claimant whose claim lasts past now (``steal``: those
        too, for a server alone on its store); the tasks ``claimant`` now holds.  An absent
        task is not held."""
        ...

    async def claim_push_backlog(
        self, claimant: str, *, until: datetime, steal: bool = False
    ) -> tuple[PushBacklog, ...]:
        """Claim, as :meth:`claim_push_deliveries` does, every task in every scope with a
        config not yet sent its last logged event, and return those ``claimant`` now holds:
        what a stopped process stored but did not deliver, and what nobody delivers now."""
        ...

    async def release_push_claims(
        self, claimant: str, tasks: Collection[tuple[CallerScope, str]]
    ) -> None:
        """Give up ``claimant``'s claims on ``tasks`` (those held by another stay held)."""
        ...

    async def get_push_config(
        self, scope: CallerScope, task_id: str, config_id: str
    ) -> m.TaskPushNotificationConfig | None:
        """One config of a task, or ``None``."""
        ...

    async def list_push_configs(
        self, scope: CallerScope, task_id: str
    ) -> tuple[m.TaskPushNotificationConfig, ...]:
        """All configs of a task, oldest first."""
        ...

    async def list_push_targets(self, scope: CallerScope, task_id: str) -> tuple[PushTarget, ...]:
        """All configs of a task, oldest first, each with its delivery mark: an event is for
        the configs marked below it (a config created later, or one a restart's resend finds
        further on, does not get it again).  ``TaskNotFoundError`` when absent."""
        ...

    async def delete_push_config(self, scope: CallerScope, task_id: str, config_id: str) -> bool:
        """Remove one config; ``True`` when it existed."""
        ...

    async def list_unfinished(self) -> tuple[ScopedTask, ...]:
        """Every non-terminal task in every scope, for recovery after a restart."""
        ...

    async def purge_expired(self, *, now: datetime | None = None) -> int:
        """Delete terminal tasks idle longer than the retention TTL; returns how many."""
        ...

    async def aclose(self) -> None:
        """Release connections and files."""
        ...


def check_query(query: TaskQuery) -> None:
    """Refuse ListTasks options outside the spec's bounds, the paths relative to the query.

    The one owner of these bounds: the runtime checks a client's query with it before any
    store sees the query (so every binding words the refusal alike, and a custom store need
    not), and the stores check again for callers that use them directly.
    """
    if not 1 <= query.page_size <= MAX_PAGE_SIZE:
        raise InvalidParamsError(
            Phrase.of(FIELD, f" must be between 1 and {MAX_PAGE_SIZE}, got {query.page_size}"),
            path="$.pageSize",
        )
    check_history_length(query.history_length)


def check_history_length(history_length: int | None) -> None:
    """Refuse a negative ``historyLength`` (path ``$.historyLength``: a caller whose field sits
    elsewhere, as a send's configuration, re-roots it)."""
    if history_length is not None and history_length < 0:
        raise InvalidParamsError(Phrase.of(FIELD, " must not be negative"), path="$.historyLength")


def check_events(events: Sequence[SequencedEvent]) -> None:
    """Sequence numbers must be positive and distinct (a programming error otherwise)."""
    seqs = [seq for seq, _event in events]
    if seqs and (min(seqs) < 1 or len(set(seqs)) != len(seqs)):
        raise ValueError(f"event sequence numbers must be positive and distinct: {seqs}")


def below_kept_events(task_id: str, seqs: Sequence[int], bound: int) -> ConcurrencyError:
    """The error for an event write numbered below what the task's full log keeps: its
    numbers were logged and trimmed away, or could only be dropped at once, so the write is
    refused as one of a taken number is (``seqs``: the write's numbers)."""
    return ConcurrencyError(
        f"task {task_id} already logged events past {min(seqs)}: its log keeps the newest"
        f" {bound} and holds that many above it, so events {sorted(seqs)} are refused as"
        " already logged"
    )


def prepare_push_config(config: m.TaskPushNotificationConfig) -> m.TaskPushNotificationConfig:
    """The config as stored: it must name its task, and gets a fresh id when it has none."""
    if not config.task_id:
        raise InvalidParamsError(
            Phrase.of("a push-notification config needs a ", FIELD), path="$.taskId"
        )
    check_keys({"$.id": config.id})
    return config if config.id else attrs.evolve(config, id=m.new_id())


def check_new_task(scope: CallerScope, task: m.Task, idempotency_key: str | None) -> None:
    """Refuse keys no backend can store (a NUL character: PostgreSQL text cannot hold one),
    and a task in no state (``UNSPECIFIED``): no update could move it on and no purge would
    end it, nor could recovery tell it running or finished."""
    check_keys(
        {
            "$.id": task.id,
            "$.contextId": task.context_id,
            "$.tenant": scope.tenant,
            "$.owner": scope.owner,
            "$.idempotencyKey": idempotency_key or "",
        }
    )
    if task.status.state is m.TaskState.UNSPECIFIED:
        raise InvalidTransitionError(
            f"a task cannot be stored in {m.proto_name(task.status.state)}"
        )


def check_keys(keys: dict[str, str]) -> None:
    """Refuse a key (by JSON path) that could not be stored."""
    if "\x00" not in "".join(keys.values()):
        return  # every create checks five keys: one scan instead of five generators
    for path, key in keys.items():
        if not storable(key):
            raise InvalidParamsError("must not contain a NUL character", path=path)


def storable(*keys: str) -> bool:
    """Whether a key could have been stored; lookups by an unstorable one find nothing."""
    return not any("\x00" in key for key in keys)


def detached_update(update: TaskUpdate) -> TaskUpdate:
    """``update`` sharing no dict or list with the caller's (``model/_detach.py``): what a store
    or an event log keeps of it cannot change after the write.  ``update`` itself when it holds
    none (text without metadata)."""
    status_message = update.status_message
    contents: list[m.Message | m.Artifact] = [write.artifact for write in update.artifacts]
    contents += update.messages
    if status_message is not None:
        contents.append(status_message)
    if update.metadata is None and plain(contents):
        return update
    return attrs.evolve(
        update,
        status_message=None if status_message is None else detached_content(status_message),
        artifacts=[
            ArtifactWrite(detached_content(write.artifact), write.append)
            for write in update.artifacts
        ],
        messages=tuple(map(detached_content, update.messages)),
        metadata=None if update.metadata is None else copy_json_object(update.metadata),
    )


def whole_milliseconds(stamp: datetime) -> datetime:
    """``stamp`` cut to the millisecond: a status time as the wire form (and so the SQL task
    document) holds it, which every store keeps, so all three read back alike.  ``stamp``
    itself when it is so already, as every time the runtime makes is."""
    micro = stamp.microsecond
    return stamp if micro % 1000 == 0 else stamp.replace(microsecond=micro // 1000 * 1000)


def _stored_status(status: m.TaskStatus) -> m.TaskStatus:
    """``status`` with its time in whole milliseconds; ``status`` itself when it is so already."""
    stamp = status.timestamp
    if stamp is None or stamp.microsecond % 1000 == 0:
        return status
    return attrs.evolve(status, timestamp=whole_milliseconds(stamp))


def stored_status_time(task: m.Task) -> m.Task:
    """``task`` with its status time in whole milliseconds (``whole_milliseconds``); ``task``
    itself when it is so already, as a task the runtime made always is."""
    status = _stored_status(task.status)
    return task if status is task.status else attrs.evolve(task, status=status)


def stored_event_time(event: m.StreamEvent) -> m.StreamEvent:
    """``event`` as a store logs it: the status time it carries (a task snapshot's or a status
    update's) in whole milliseconds, as the SQL stores' encoded events hold it; ``event``
    itself when it carries none finer, as every event the runtime makes."""
    if isinstance(event, m.Task):
        return stored_status_time(event)
    if isinstance(event, m.TaskStatusUpdateEvent):
        status = _stored_status(event.status)
        return event if status is event.status else attrs.evolve(event, status=status)
    return event


def apply_update(task: m.Task, update: TaskUpdate, *, now: datetime) -> m.Task:
    """The task after ``update``; raises and changes nothing when the lifecycle forbids it.
    A status time (``update.timestamp``, else ``now``) is kept in whole milliseconds."""
    status = task.status
    if update.state is not None:
        why = m.transition_error(status.state, update.state)
        if why is not None:
            if m.is_terminal(status.state):
                raise TaskTerminalStateError(why)
            raise InvalidTransitionError(why)
        stamp = whole_milliseconds(update.timestamp or now)
        status = m.TaskStatus(update.state, update.status_message, stamp)
    artifacts = _write_artifacts(task.artifacts, update.artifacts)
    metadata = task.metadata
    if update.metadata:
        metadata = {**(metadata or {}), **update.metadata}
    return attrs.evolve(
        task,
        status=status,
        artifacts=artifacts,
        history=task.history + update.messages,
        metadata=metadata,
    )


def _write_artifacts(
    current: tuple[m.Artifact, ...], writes: Iterable[ArtifactWrite]
) -> tuple[m.Artifact, ...]:
    by_id = {artifact.artifact_id: artifact for artifact in current}
    for write in writes:
        new = write.artifact
        old = by_id.get(new.artifact_id)
        if write.append and old is not None:
            new = attrs.evolve(
                old,
                parts=old.parts + new.parts,
                metadata={**(old.metadata or {}), **(new.metadata or {})} or None,
            )
        by_id[new.artifact_id] = new
    return tuple(by_id.values())


def trim_task(task: m.Task, *, history_length: int | None, include_artifacts: bool) -> m.Task:
    """Apply the read options: the last ``history_length`` messages, artifacts or not."""
    history = task.history
    if history_length is not None:
        history = history[len(history) - history_length :] if history_length > 0 else ()
    artifacts = task.artifacts if include_artifacts else ()
    if history is task.history and artifacts is task.artifacts:
        return task
    return attrs.evolve(task, history=history, artifacts=artifacts)
