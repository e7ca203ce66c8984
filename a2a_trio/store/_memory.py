"""The in-memory task store: for tests, demos and single-process deployments that need no restart.

Writes are synchronous dict operations, so each one is atomic under trio's cooperative scheduling
without locks.  Listing sorts on demand: fine for development, not a template for large tables.
"""

from __future__ import annotations

import base64
from datetime import datetime

import attrs

from .. import model as m
from ..errors import ConcurrencyError, InvalidParamsError, TaskNotFoundError
from ._base import (
    CallerScope,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskUpdate,
    apply_update,
    trim_task,
)


@attrs.define
class _Row:
    scope: CallerScope
    stored: StoredTask
    order: int  # a store-wide write counter: the listing order, newest first


BAD_TOKEN = "not a page token this server issued"


def encode_cursor(order: int) -> str:
    return base64.urlsafe_b64encode(f"m{order}".encode()).decode().rstrip("=")


def decode_cursor(token: str) -> int:
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        if not text.startswith("m"):
            raise ValueError(text)
        return int(text[1:])
    except ValueError:
        raise InvalidParamsError(BAD_TOKEN, path="$.pageToken") from None


class MemoryTaskStore:
    """A :class:`~a2a_trio.store.TaskStore` in a dict."""

    def __init__(self) -> None:
        self._rows: dict[str, _Row] = {}
        self._idempotency: dict[tuple[CallerScope, str, str], str] = {}
        self._writes = 0

    def _next_order(self) -> int:
        self._writes += 1
        return self._writes

    async def create_task(
        self, scope: CallerScope, task: m.Task, *, idempotency_key: str | None = None
    ) -> StoredTask:
        key = (scope, task.context_id, idempotency_key) if idempotency_key else None
        if key is not None and key in self._idempotency:
            return self._rows[self._idempotency[key]].stored
        if task.id in self._rows:
            raise ConcurrencyError(f"task {task.id} already exists")
        stored = StoredTask(task, 1, m.utcnow())
        self._rows[task.id] = _Row(scope, stored, self._next_order())
        if key is not None:
            self._idempotency[key] = task.id
        return stored

    def _row(self, scope: CallerScope, task_id: str) -> _Row | None:
        row = self._rows.get(task_id)
        return row if row is not None and row.scope == scope else None

    async def load_task(
        self,
        scope: CallerScope,
        task_id: str,
        *,
        history_length: int | None = None,
        include_artifacts: bool = True,
    ) -> StoredTask | None:
        row = self._row(scope, task_id)
        if row is None:
            return None
        task = trim_task(
            row.stored.task, history_length=history_length, include_artifacts=include_artifacts
        )
        return attrs.evolve(row.stored, task=task)

    async def update_task(
        self,
        scope: CallerScope,
        task_id: str,
        update: TaskUpdate,
        *,
        expected_version: int | None = None,
    ) -> StoredTask:
        row = self._row(scope, task_id)
        if row is None:
            raise TaskNotFoundError(f"Task {task_id} not found")
        if expected_version is not None and expected_version != row.stored.version:
            raise ConcurrencyError(
                f"task {task_id} is at version {row.stored.version}, not {expected_version}"
            )
        now = m.utcnow()
        task = apply_update(row.stored.task, update, now=now)
        row.stored = StoredTask(task, row.stored.version + 1, now)
        row.order = self._next_order()
        return row.stored

    async def list_tasks(self, scope: CallerScope, query: TaskQuery) -> TaskPage:
        after = decode_cursor(query.page_token) if query.page_token else None
        matches = [
            row
            for row in self._rows.values()
            if row.scope == scope and _matches(row.stored.task, query)
        ]
        matches.sort(key=lambda row: row.order, reverse=True)
        rest = [row for row in matches if after is None or row.order < after]
        page = rest[: query.page_size]
        more = len(rest) > len(page)
        return TaskPage(
            tasks=tuple(
                trim_task(
                    row.stored.task,
                    history_length=query.history_length,
                    include_artifacts=query.include_artifacts,
                )
                for row in page
            ),
            next_page_token=encode_cursor(page[-1].order) if more else "",
            page_size=query.page_size,
            total_size=len(matches),
        )

    async def delete_task(self, scope: CallerScope, task_id: str) -> bool:
        if self._row(scope, task_id) is None:
            return False
        del self._rows[task_id]
        self._idempotency = {k: v for k, v in self._idempotency.items() if v != task_id}
        return True

    async def aclose(self) -> None:
        self._rows.clear()


def _matches(task: m.Task, query: TaskQuery) -> bool:
    if query.context_id and task.context_id != query.context_id:
        return False
    if query.status is not m.TaskState.UNSPECIFIED and task.status.state is not query.status:
        return False
    after: datetime | None = query.status_timestamp_after
    stamp = task.status.timestamp
    return after is None or (stamp is not None and stamp >= after)
