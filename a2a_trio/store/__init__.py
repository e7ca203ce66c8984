"""Task stores: the contract (``TaskStore``) and its backends."""

from ._base import (
    ANONYMOUS,
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    ArtifactWrite,
    CallerScope,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
    TaskUpdate,
    apply_update,
    trim_task,
)
from ._memory import MemoryTaskStore

__all__ = [
    "ANONYMOUS",
    "DEFAULT_PAGE_SIZE",
    "MAX_PAGE_SIZE",
    "ArtifactWrite",
    "CallerScope",
    "MemoryTaskStore",
    "StoredTask",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "TaskUpdate",
    "apply_update",
    "trim_task",
]
