"""What the SQL store last wrote of each running task, so the next write costs what changed.

A SQL task row holds the whole task as one JSON document.  Read, decoded, updated and encoded
again on every write, a task that streams its answer as N artifact chunks costs O(N) Python
work per chunk and O(N²) in all: 2,000 chunks took 30 s on SQLite.  Remembering the last
written task and its JSON form makes a write from the same process skip the read and the
decode (the row's version and write time prove the memory current) and re-encode only the
messages, artifacts and parts that are new objects: frozen model values that were encoded
before encode the same again.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import attrs

from .. import model as m
from ..wire import V1

WRITTEN_LIMIT = 4096
"""Tasks remembered at most.  Only running tasks are kept (a terminal or interrupted task's
next write, if any, reads the row), so this bounds only unusual patterns."""


@attrs.frozen
class Written:
    """A task as one write left it: the row's ``version`` and ``updated_us``, the task and
    its JSON form (shared with later documents, so never mutated).

    The task is the store's own, sharing no dict or list with a caller (``model/_detach.py``):
    the next write encodes its metadata and status again, so a caller's change to a dict it
    wrote or was handed would be stored with that write.  ``plain``: it holds no dict or list,
    so it is handed out as it is (by default it is copied).
    """

    version: int
    updated_us: int
    task: m.Task
    document: dict[str, Any]
    plain: bool = False

    def handed_out(self) -> m.Task:
        """The task as a caller gets it: sharing no dict or list with this memory."""
        return self.task if self.plain else m.detached_task(self.task)


class WrittenTasks:
    """The last :class:`Written` of each running task, by task id.  Used from the event loop
    thread only; a write proves an entry current against its row before using it."""

    def __init__(self, limit: int = WRITTEN_LIMIT) -> None:
        self._limit = limit
        self._by_id: dict[str, Written] = {}

    def get(self, task_id: str) -> Written | None:
        return self._by_id.get(task_id)

    def remember(self, written: Written, *, based_on: Written | None) -> None:
        """Keep ``written`` if its task may be written again soon.

        ``based_on``: the entry this store held when the write began.  A later version stays
        (another write of this process finished first), unless it is that very entry: the
        write found a row below the version remembered, so the task was deleted and created
        again under its id, and the memory of the old one must give way (else every write
        would re-read the row until the new task passed the old one's version).
        """
        task_id = written.task.id
        known = self._by_id.get(task_id)
        if known is not None and known is not based_on and known.version > written.version:
            return
        if m.is_settled(written.task.status.state):
            self._by_id.pop(task_id, None)
            return
        self._by_id.pop(task_id, None)  # re-inserted last: the oldest entry goes first
        if len(self._by_id) >= self._limit:
            del self._by_id[next(iter(self._by_id))]
        self._by_id[task_id] = written

    def forget(self, task_id: str) -> None:
        """The task is gone (deleted by this store)."""
        self._by_id.pop(task_id, None)

    def touched(self, task_id: str, version: int, before_us: int, now_us: int) -> None:
        """A touch moved the row at ``version`` from write time ``before_us`` to ``now_us``: an
        entry that was current then is current still (any other stays stale, and is re-read)."""
        known = self._by_id.get(task_id)
        if known is not None and (known.version, known.updated_us) == (version, before_us):
            self._by_id[task_id] = attrs.evolve(known, updated_us=now_us)


def encode_task(task: m.Task, previous: Written | None) -> dict[str, Any]:
    """``V1.encode(task)``, reusing ``previous``'s JSON for every message, artifact and part
    that is the very object encoded there."""
    if previous is None:
        return V1.encode(task)
    document = V1.encode(attrs.evolve(task, history=(), artifacts=()))
    before = previous.document
    if task.history:
        document["history"] = _reuse(task.history, previous.task.history, before.get("history", []))
    if task.artifacts:
        old = {
            artifact.artifact_id: (artifact, encoded)
            for artifact, encoded in zip(
                previous.task.artifacts, before.get("artifacts", []), strict=True
            )
        }
        document["artifacts"] = [_artifact(artifact, old) for artifact in task.artifacts]
    return document


def _artifact(
    artifact: m.Artifact, old: dict[str, tuple[m.Artifact, dict[str, Any]]]
) -> dict[str, Any]:
    """One artifact's JSON; an appended-to artifact re-encodes only its new parts."""
    known = old.get(artifact.artifact_id)
    if known is None:
        return V1.encode(artifact)
    old_artifact, old_encoded = known
    if artifact is old_artifact:
        return old_encoded
    encoded = V1.encode(attrs.evolve(artifact, parts=()))
    if artifact.parts:
        encoded["parts"] = _reuse(artifact.parts, old_artifact.parts, old_encoded.get("parts", []))
    return encoded


def _reuse(
    items: Sequence[Any], old_items: Sequence[Any], old_encoded: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``items`` encoded; when they start with exactly the objects of ``old_items``, those
    keep their ``old_encoded`` form."""
    kept = len(old_items)
    if kept > len(items) or not all(map(operator.is_, items[:kept], old_items)):
        kept = 0
    return old_encoded[:kept] + [V1.encode(item) for item in items[kept:]]
