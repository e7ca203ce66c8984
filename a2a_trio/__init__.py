"""a2a_trio: serve and call A2A agents on trio structured concurrency.

The agent author's API: declare an :class:`Agent`, write skills as async functions taking a
:class:`TaskContext`, and :func:`serve` it (or run ``hypercorn -k trio a2a_trio.app:app``).
"""

from importlib import import_module

TYPE_CHECKING = False  # as typing's, which mypy reads alike, without loading typing (60 ms)
if TYPE_CHECKING:
    from .errors import A2AError, AgentMisuseError, TrustStoreError
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
    from .server import PushSettings, ServerConfig, create_app, serve

    __version__: str

_HOMES = {
    **dict.fromkeys(("A2AError", "AgentMisuseError", "TrustStoreError"), "errors"),
    **dict.fromkeys(
        (
            "Artifact",
            "DataPart",
            "Message",
            "Part",
            "RawPart",
            "Role",
            "Task",
            "TaskState",
            "TextPart",
            "UrlPart",
            "data_part",
            "new_artifact",
            "text_message",
        ),
        "model",
    ),
    **dict.fromkeys(
        (
            "Agent",
            "JobHandle",
            "JobStatus",
            "RuntimeConfig",
            "Skill",
            "TaskContext",
            "TaskFailed",
            "TaskRejected",
        ),
        "runtime",
    ),
    **dict.fromkeys(("PushSettings", "ServerConfig", "create_app", "serve"), "server"),
}
"""The subpackage each public name comes from."""

_SUBPACKAGES = frozenset({"errors", "model", "runtime", "store", "wire"})
"""The subpackages ``a2a_trio.NAME`` reaches without importing them first."""


def __getattr__(name: str) -> object:
    """The public names, the subpackages and the version, each loaded on first use.

    Importing the package loads nothing more, so the ``a2a-trio`` command can catch a Ctrl-C
    while it loads what it needs (about 0.7 s), and its client commands start without
    loading Quart, hypercorn and the package metadata.
    """
    if name in _HOMES:
        value = getattr(import_module(f".{_HOMES[name]}", __name__), name)
        globals()[name] = value
        return value
    if name in _SUBPACKAGES:
        return import_module(f".{name}", __name__)
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
    "PushSettings",
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
    "TrustStoreError",
    "UrlPart",
    "__version__",
    "create_app",
    "data_part",
    "new_artifact",
    "serve",
    "text_message",
]
