"""A store wrapper for the runtime tests: writes whose answer the store loses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from a2a_trio import model as m
from a2a_trio.errors import StoreUnavailableError
from a2a_trio.store import CallerScope, StoredTask, TaskStore, TaskUpdate


def final_write(update: TaskUpdate) -> bool:
    """Whether ``update`` ends its task."""
    return update.state is not None and m.is_terminal(update.state)


class AnswerLost:
    """A store whose answer to some writes (``lose``: a task's final write, by default) is
    lost: the write is stored, then the call raises ``StoreUnavailableError``, as when the
    commit went through and the connection dropped before its answer came back.

    ``stored=False``: those writes fail before they are stored (the store was down).
    ``down_for``: how many reads fail after each lost answer (the store still down;
    ``math.inf``: from then on); ``reads`` counts them.
    """

    READS = frozenset({"load_task", "load_task_with_seq", "load_events", "last_event_seq"})

    def __init__(
        self,
        store: TaskStore,
        *,
        lose: Callable[[TaskUpdate], bool] = final_write,
        stored: bool = True,
        down_for: float = 0,
    ) -> None:
        self.store = store
        self.lose = lose
        self.stored = stored
        self.down_for = down_for
        self.refusing: float = 0
        self.reads = 0

    def __getattr__(self, name: str) -> Any:
        if self.refusing and name in self.READS:
            return self._refuse_read
        return getattr(self.store, name)

    async def _refuse_read(self, *args: object, **kwargs: object) -> NoReturn:
        self.reads += 1
        self.refusing -= 1
        raise StoreUnavailableError("the database is still unreachable")

    async def update_task(
        self, scope: CallerScope, task_id: str, update: TaskUpdate, **kwargs: Any
    ) -> StoredTask:
        if not self.lose(update):
            return await self.store.update_task(scope, task_id, update, **kwargs)
        if self.stored:
            await self.store.update_task(scope, task_id, update, **kwargs)
        self.refusing = self.down_for
        raise StoreUnavailableError("the connection dropped before the commit's answer")
