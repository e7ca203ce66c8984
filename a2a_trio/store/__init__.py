"""Task stores: the contract (``TaskStore``) and its backends (see ``docs/stores.md``)."""

from typing import TYPE_CHECKING

from ._base import (
    ANONYMOUS,
    DEFAULT_MAX_EVENTS,
    DEFAULT_PAGE_SIZE,
    DEFAULT_RETENTION,
    MAX_PAGE_SIZE,
    ArtifactWrite,
    CallerScope,
    PushBacklog,
    PushTarget,
    Retention,
    ScopedTask,
    SequencedEvent,
    StoredTask,
    StoreSchemaError,
    TaskAtVersion,
    TaskPage,
    TaskQuery,
    TaskStore,
    TaskUpdate,
    apply_update,
    check_history_length,
    check_query,
    detached_update,
    trim_task,
)
from ._memory import MemoryTaskStore
from ._open import check_store_url, open_store
from ._sql import SqlTaskStore
from ._sqlite import open_sqlite_store

if TYPE_CHECKING:
    from ._pg_timeouts import PostgresTimeouts
    from ._postgres import open_postgres_store

__all__ = [
    "ANONYMOUS",
    "DEFAULT_MAX_EVENTS",
    "DEFAULT_PAGE_SIZE",
    "DEFAULT_RETENTION",
    "MAX_PAGE_SIZE",
    "ArtifactWrite",
    "CallerScope",
    "MemoryTaskStore",
    "PostgresTimeouts",
    "PushBacklog",
    "PushTarget",
    "Retention",
    "ScopedTask",
    "SequencedEvent",
    "SqlTaskStore",
    "StoreSchemaError",
    "StoredTask",
    "TaskAtVersion",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "TaskUpdate",
    "apply_update",
    "check_history_length",
    "check_query",
    "check_store_url",
    "detached_update",
    "open_postgres_store",
    "open_sqlite_store",
    "open_store",
    "trim_task",
]


def __getattr__(name: str) -> object:
    """``open_postgres_store`` and ``PostgresTimeouts`` are imported on first use: psycopg is
    slow to load and most processes (the client, the CLI, SQLite deployments) never need it."""
    if name == "open_postgres_store":
        from ._postgres import open_postgres_store

        return open_postgres_store
    if name == "PostgresTimeouts":
        from ._pg_timeouts import PostgresTimeouts

        return PostgresTimeouts
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
