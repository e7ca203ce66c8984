"""a2a_trio: serve and call A2A agents on trio structured concurrency.

The agent author's API: declare an :class:`Agent`, write skills as async functions taking a
:class:`TaskContext`, and :func:`serve` it (or run ``hypercorn -k trio a2a_trio.app:app``).
"""

from importlib.metadata import PackageNotFoundError, version

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
from .server import ServerConfig, create_app, serve

try:
    __version__ = version("a2a-trio")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0"

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
