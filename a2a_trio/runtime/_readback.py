"""Finding out whether the store holds a write it answered with ``StoreUnavailableError``.

Such an error may come after the commit went through (the connection dropped before its
answer), so only the store can tell what the write left.  A job's write logs its events
under numbers it chose, and its status event carries the write's own timestamp and message,
so no other write logs the same events there: the stored log says whether the write is in.
"""

from __future__ import annotations

import trio

from ..errors import StoreUnavailableError, TaskNotFoundError
from ..store import CallerScope, SequencedEvent, StoredTask, TaskStore

READ_BACK_TRIES = 3
"""How often a task is read back before the store counts as still down."""
READ_BACK_BACKOFF = 0.05
"""Seconds before the second read-back, doubled before each further one."""


async def find_write(
    store: TaskStore,
    scope: CallerScope,
    task_id: str,
    events: list[SequencedEvent],
    *,
    after_seq: int,
) -> StoredTask | None:
    """The stored task if the store logged ``events`` (one write's, numbered on from
    ``after_seq``) under their numbers; ``None`` if it did not, or the task is gone.

    Up to ``READ_BACK_TRIES`` reads, with a short backoff between, as the store may still be
    down; then the last read's ``StoreUnavailableError`` propagates.  The caller's scope
    limits them too.
    """
    delay, tries = READ_BACK_BACKOFF, 1
    while True:
        try:
            logged = await store.load_events(scope, task_id, after_seq=after_seq)
            stored = await store.load_task(scope, task_id)
        except StoreUnavailableError:
            if tries == READ_BACK_TRIES:
                raise
            await trio.sleep(delay)
            delay, tries = delay * 2, tries + 1
            continue
        except TaskNotFoundError:  # deleted meanwhile
            return None
        if stored is None or list(logged[: len(events)]) != events:
            return None
        return stored
