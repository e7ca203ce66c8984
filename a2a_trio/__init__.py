"""a2a_trio: serve and call A2A agents on trio structured concurrency.

The agent author's API: declare an :class:`Agent`, write skills as async functions taking a
:class:`TaskContext`, and :func:`serve` it (or run ``hypercorn -k trio a2a_trio.app:app``).
"""

from typing import TYPE_CHECKING

from .errors import A2AError, AgentMisuseError
from .model import (
    Artifact,
    DataPart,
    Message,
    Part,
    RawPart,
    Role,
    Task,
    TaskState,
    TextPart,
    UrlPart,
    data_part,
    new_artifact,
    text_message,
)
from .runtime import (
    Agent,
    JobHandle,
    JobStatus,
    RuntimeConfig,
    Skill,
    TaskContext,
    TaskFailed,
    TaskRejected,
)

if TYPE_CHECKING:
    from .server import ServerConfig, create_app, serve

    __version__: str


def __getattr__(name: str) -> object:
    """The server's names and the version, looked up on first use: the client and the CLI's
    client commands then start without loading Quart, hypercorn and the package metadata
    (about half of what ``a2a-trio send`` spent importing)."""
    if name in {"ServerConfig", "create_app", "serve"}:
        from . import server

        return getattr(server, name)
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("a2a-trio")
        except PackageNotFoundError:  # running from a source tree without installation
            return "0.0.0"
    raise AttributeError(f"module 'a2a_trio' has no attribute {name!r}")


__all__ = [
    "A2AError",
    "Agent",
    "AgentMisuseError",
    "Artifact",
    "DataPart",
    "JobHandle",
    "JobStatus",
    "Message",
    "Part",
    "RawPart",
    "Role",
    "RuntimeConfig",
    "ServerConfig",
    "Skill",
    "Task",
    "TaskContext",
    "TaskFailed",
    "TaskRejected",
    "TaskState",
    "TextPart",
    "UrlPart",
    "__version__",
    "create_app",
    "data_part",
    "new_artifact",
    "serve",
    "text_message",
]
