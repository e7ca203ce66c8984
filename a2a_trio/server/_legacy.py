"""The legacy producer dialect's binding logic, sans-IO: its task ids and its event translation.

Legacy clients choose task ids (``params.id``) and expect a reused id to be refused while the
task is in flight and for a grace window after it ends (§4.3, §4.8), then forgotten.  Those ids
live here, in a :class:`LegacyIds` table per surface mapping them to runtime task ids, so the
runtime and store keep their own id space and tenancy; the sweep is lazy, on every access.
Each caller scope (authenticated owner) has its own legacy ids: one caller can neither reach
another's task by its id nor learn, from "already in use", that the id exists.

:class:`LegacyEvents` turns the runtime's v1.0 event stream into the dialect's frames: no
``submitted`` snapshot, ``working`` updates only when the message or progress changed, artifact
chunks collected into the one ``result`` artifact sent just before ``completed``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from .. import model as m
from ..errors import InvalidParamsError
from ..wire import _legacy as wire

if TYPE_CHECKING:
    from ..store import CallerScope


@attrs.define
class LegacyTask:
    """One legacy id: the runtime task behind it and when it was first seen terminal."""

    key: tuple[CallerScope, str]
    session_id: str
    task_id: str = ""
    terminal_at: float | None = None


AUDIT_BOUNDS = (1.0, 60.0)
"""Least and most seconds between looks for tasks that ended with nobody watching: the grace
window, within these (see :class:`LegacyIds`)."""


class LegacyIds:
    """Legacy task ids of one surface, per caller scope; ``now`` is a monotonic reading in s.

    The sweep costs only what it evicts: ids are queued in the order they were first seen
    terminal, which is the order their grace windows end (a scan of every id on every access
    made each request cost about 0.3 us per id held, 27 ms at the 90,000 ids of 300 req/s).
    A task that ended unseen (its stream dropped, its client gone) would never be seen
    terminal, so every grace window (1 to 60 s) the ids whose task no longer has a job here
    (``has_job``) start their grace window then.
    """

    def __init__(self, grace: float, *, has_job: Callable[[CallerScope, str], bool]) -> None:
        self._grace = grace
        self._has_job = has_job
        self._tasks: dict[tuple[CallerScope, str], LegacyTask] = {}
        self._ended: deque[tuple[float, LegacyTask]] = deque()  # by when first seen terminal
        self._audit_every = min(max(grace, AUDIT_BOUNDS[0]), AUDIT_BOUNDS[1])
        self._next_audit = 0.0

    def _sweep(self, now: float) -> None:
        while self._ended and now - self._ended[0][0] >= self._grace:
            _, entry = self._ended.popleft()
            if self._tasks.get(entry.key) is entry:
                del self._tasks[entry.key]
        if now >= self._next_audit:
            self._next_audit = now + self._audit_every
            for entry in self._tasks.values():
                started = entry.task_id and entry.terminal_at is None
                if started and not self._has_job(entry.key[0], entry.task_id):
                    self._end(entry, now)

    def _end(self, entry: LegacyTask, now: float) -> None:
        entry.terminal_at = now
        self._ended.append((now, entry))

    def reserve(
        self, scope: CallerScope, legacy_id: str, session_id: str, now: float
    ) -> LegacyTask:
        """Claim ``legacy_id`` for a new task (its runtime id is filled in once it starts)."""
        self._sweep(now)
        key = (scope, legacy_id)
        if key in self._tasks:
            raise InvalidParamsError(f"A2A task id {legacy_id[:100]!r} is already in use")
        entry = self._tasks[key] = LegacyTask(key, session_id)
        return entry

    def release(self, scope: CallerScope, legacy_id: str) -> None:
        """Give up a reservation whose task never started."""
        self._tasks.pop((scope, legacy_id), None)

    def lookup(self, scope: CallerScope, legacy_id: str, now: float) -> LegacyTask:
        """The caller's task ``legacy_id``; raises ``InvalidParamsError`` (-32602) if unknown."""
        self._sweep(now)
        entry = self._tasks.get((scope, legacy_id))
        if entry is None or not entry.task_id:
            raise InvalidParamsError(f"Unknown task id: {legacy_id[:100]}")
        return entry

    def observe(self, entry: LegacyTask, state: m.TaskState, now: float) -> None:
        """Start the eviction clock the first time the task is seen terminal."""
        if entry.terminal_at is None and m.is_terminal(state):
            self._end(entry, now)


def bearer_refusal(authorization: str | None, check: Callable[[str], bool] | None) -> str:
    """Why the dialect's bearer gate (§6.2) refuses this ``Authorization`` value ("" = pass)."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer":
        return "Authentication required: missing Authorization: Bearer <token> header"
    if not token.strip():
        return "Authentication required: empty bearer token in Authorization header"
    if check is not None and not check(token.strip()):
        return "Authentication required: the bearer token was not accepted"
    return ""


def result_text(task: m.Task) -> str | None:
    """The ``result`` artifact text of a completed task (its artifacts, else its reply)."""
    if task.status.state is not m.TaskState.COMPLETED:
        return None
    if task.artifacts:
        return "".join(wire.parts_text(a.parts) for a in task.artifacts)
    message = task.status.message
    return wire.parts_text(message.parts) if message is not None else ""


class LegacyEvents:
    """Translates one stream's v1.0 events into the dialect's ``result`` objects.

    ``resubscribed``: the stream's first snapshot is announced as ``working`` (the dialect's
    "subscription is live" event) instead of being skipped.  ``on_state`` sees every state.
    """

    def __init__(
        self, legacy_id: str, *, resubscribed: bool, on_state: Callable[[m.TaskState], None]
    ) -> None:
        self._id = legacy_id
        self._announce = resubscribed
        self._on_state = on_state
        self._artifacts: dict[str, tuple[m.Part, ...]] = {}
        self._last: tuple[str, float | None] | None = None

    def translate(self, event: m.StreamEvent) -> list[dict[str, Any]]:
        if isinstance(event, m.Message):  # a message-only skill's reply
            status = m.TaskStatus(m.TaskState.COMPLETED, message=event, timestamp=m.utcnow())
            return self._finish(status)
        if isinstance(event, m.TaskArtifactUpdateEvent):
            artifact = event.artifact
            before = self._artifacts.get(artifact.artifact_id, ()) if event.append else ()
            self._artifacts[artifact.artifact_id] = before + artifact.parts
            return []
        if isinstance(event, m.Task):
            for artifact in event.artifacts:
                self._artifacts[artifact.artifact_id] = artifact.parts
            if not (self._announce or m.is_terminal(event.status.state)):
                return []  # the dialect never shows "submitted"
            self._announce = False
        return self._status(event.status)

    def _status(self, status: m.TaskStatus) -> list[dict[str, Any]]:
        self._on_state(status.state)
        if m.is_terminal(status.state):
            return self._finish(status)
        text = wire.parts_text(status.message.parts) if status.message is not None else ""
        current = (text, wire.progress_of(status.message))
        if current == self._last:
            return []  # redundant progress is not repeated (§5.3)
        self._last = current
        working = attrs.evolve(status, state=m.TaskState.WORKING)
        return [wire.encode_status_event(self._id, working, final=False)]

    def _finish(self, status: m.TaskStatus) -> list[dict[str, Any]]:
        frames = []
        if status.state is m.TaskState.COMPLETED:
            if self._artifacts:
                text = "".join(wire.parts_text(parts) for parts in self._artifacts.values())
            else:
                text = wire.parts_text(status.message.parts) if status.message else ""
            frames.append(wire.encode_artifact_event(self._id, text))
        frames.append(wire.encode_status_event(self._id, status, final=True))
        return frames
