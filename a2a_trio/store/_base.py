"""The task-store contract every backend meets (see ``docs/stores.md``).

- Every task belongs to a ``CallerScope`` (tenant + authenticated owner); every read, list and
  write is filtered by it, so one caller never sees or touches another's tasks.
- ``update_task`` applies a ``TaskUpdate`` atomically and returns the new version; with
  ``expected_version`` it raises ``ConcurrencyError`` on a mismatch.  A state change on a terminal
  task raises ``TaskTerminalStateError``; a change the lifecycle forbids raises
  ``InvalidTransitionError``; pure appends (``state=None``) are always allowed.
- ``create_task`` with an idempotency key returns the existing task for (scope, context, key).
- Reads see the caller's own preceding writes (read-your-writes).
- ``list_tasks`` is newest-updated first with an opaque cursor that neither skips nor repeats.

The change itself is computed by :func:`apply_update`, a pure function all backends share, so the
stores differ only in how they persist and lock.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Protocol

import attrs

from .. import model as m
from ..errors import InvalidTransitionError, TaskTerminalStateError
from ..model._fields import to_tuple

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100


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
class StoredTask:
    """A task as stored, with its optimistic-concurrency version and last update time."""

    task: m.Task
    version: int
    updated_at: datetime


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
        self, scope: CallerScope, task: m.Task, *, idempotency_key: str | None = None
    ) -> StoredTask:
        """Store a new task (version 1), or return the one already created with this key."""
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
    ) -> StoredTask:
        """Apply ``update`` atomically; raises ``TaskNotFoundError`` when absent in this scope."""
        ...

    async def list_tasks(self, scope: CallerScope, query: TaskQuery) -> TaskPage:
        """Tasks in this scope matching ``query``, newest-updated first."""
        ...

    async def delete_task(self, scope: CallerScope, task_id: str) -> bool:
        """Remove a task; ``True`` when it existed."""
        ...

    async def aclose(self) -> None:
        """Release connections and files."""
        ...


def apply_update(task: m.Task, update: TaskUpdate, *, now: datetime) -> m.Task:
    """The task after ``update``; raises and changes nothing when the lifecycle forbids it."""
    status = task.status
    if update.state is not None:
        why = m.transition_error(status.state, update.state)
        if why is not None:
            if m.is_terminal(status.state):
                raise TaskTerminalStateError(why)
            raise InvalidTransitionError(why)
        status = m.TaskStatus(update.state, update.status_message, update.timestamp or now)
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
