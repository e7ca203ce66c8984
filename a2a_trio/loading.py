"""Turning configuration strings into objects: ``module:attribute`` agents and store URLs.

Used at the edges (``a2a_trio.app``, the CLI); errors say what to fix, never a traceback.
"""

from __future__ import annotations

import importlib
import os
import sqlite3
import sys
import sysconfig
import traceback
from datetime import timedelta
from pathlib import Path
from types import ModuleType

from ._one_server import StoreInUseError
from .errors import StoreError
from .runtime import Agent
from .server import PushSettings, StoreFactory
from .store import DEFAULT_RETENTION, Retention, StoreSchemaError


class StoreOpenError(Exception):
    """The task store could not be opened; the message is the reason, on one line, without
    the store's URL (which may hold a password), and what to change when the reason does not
    say it."""


async def check_store(store: StoreFactory) -> None:
    """Open and close ``store`` once, so a store that cannot work stops start-up with one line
    instead of failing inside the server's lifespan.

    Raises:
        ValueError: the URL names no store (the message lists the accepted forms).
        StoreOpenError: the file, the server or the schema is not usable.
    """
    import psycopg  # here, not at the top: only serving needs it and it is slow to import

    try:
        async with store():
            pass
    except (
        sqlite3.Error,
        psycopg.Error,
        OSError,
        StoreError,
        StoreSchemaError,
        StoreInUseError,
    ) as exc:
        reason = " ".join(str(exc).split())
        hint = next((hint for cause, hint in STORE_HINTS if cause in reason), "")
        raise StoreOpenError(f"{reason} ({hint})" if hint else reason) from None


STORE_HINTS = (
    ("unable to open database file", "does its directory exist, and may you write there?"),
    ("password authentication failed", "check the user name and password in the store URL"),
    ('FATAL: database "', "create that database, or fix its name at the end of the store URL"),
    (
        "file is not a database",
        "it is some other kind of file: name a new file or an a2a_trio store",
    ),
    (
        "database disk image is malformed",
        "the file is damaged: restore it from a backup, or name a new file",
    ),
    (
        "attempt to write a readonly database",
        "this user may only read the file: make it writable, or name another file",
    ),
    (
        "[Errno 13] Permission denied",
        "may this user write in that directory? the store keeps its files there",
    ),
)
"""What to change when the reason a store gave (SQLite's, libpq's) does not say it."""


class ConfigError(Exception):
    """A setting names something that cannot be loaded; the message says what to fix."""


_MISSING = object()


def load_agent(spec: str) -> Agent:
    """The :class:`Agent` named by ``module:attribute`` (e.g. ``myproject.agents:agent``).

    The current directory is put first on ``sys.path`` (unless it is there already), as
    ``python -m`` and hypercorn do, so the installed ``a2a-trio`` script finds ``./mymodule.py``
    too.

    Raises:
        ConfigError: the spec is malformed, the module is missing or fails while importing
            (the message names the exception and the user's line; the original exception is
            the ``__cause__``), or the attribute is missing or not an ``Agent``.
    """
    module_name, _, attribute = spec.partition(":")
    if _is_file_name(module_name) or (module_name and not attribute):
        raise ConfigError(_spelling_hint(spec, module_name, attribute))
    if not module_name or module_name.startswith("."):
        raise ConfigError(f"agent {spec!r} must look like 'package.module:attribute'")
    module = _import(module_name, spec)
    found = getattr(module, attribute, _MISSING)
    if isinstance(found, Agent):
        return found  # one without skills is warned about where it is served (create_app)
    if found is _MISSING:
        problem = f"module {module_name!r} has no attribute {attribute!r}"
    else:
        problem = f"{spec!r} is {type(found).__name__}, not an a2a_trio Agent"
    listed = ", ".join(_agents_in(module, module_name))
    raise ConfigError(f"{problem} ({f'its agents: {listed}' if listed else 'it has no Agent'})")


def _agents_in(module: ModuleType, module_name: str) -> list[str]:
    """The ``module:attribute`` spec of every :class:`Agent` the module holds."""
    names = sorted(name for name, value in vars(module).items() if isinstance(value, Agent))
    return [f"{module_name}:{name}" for name in names]


def _is_file_name(module_name: str) -> bool:
    return module_name.endswith(".py") or "/" in module_name or "\\" in module_name


def _spelling_hint(spec: str, module_name: str, attribute: str) -> str:
    """What to write instead of a file name (``mymodule.py:agent``, ``./mymodule.py``) or a
    module without the Agent's name (``mymodule``): the spec that works, from where it works."""
    if _is_file_name(module_name):
        path = Path(module_name.replace("\\", "/"))
        try:
            relative = path.resolve().relative_to(Path.cwd().resolve())
        except ValueError:  # outside the current directory: its module name depends on where
            return (
                f"agent {spec!r} is a file name: run from the directory holding"
                f" {path.name} and give its module, '{path.stem}:{attribute or 'ATTRIBUTE'}'"
            )
        module_name = ".".join(relative.with_suffix("").parts)
        problem = f"agent {spec!r} is a file name: give its module"
    else:
        problem = f"agent {spec!r} names no attribute: give the module and the Agent's name"
    if attribute:
        return f"{problem}, '{module_name}:{attribute}'"
    try:
        agents = _agents_in(_import(module_name, spec), module_name)
    except ConfigError:  # a module that does not load: its own error comes with the fixed spec
        agents = []
    if not agents:
        return f"{problem}, '{module_name}:ATTRIBUTE' (e.g. '{module_name}:agent')"
    return f"{problem}, {' or '.join(repr(a) for a in agents)}"


def _import(module_name: str, spec: str) -> ModuleType:
    """Import the user's module from the current directory or the path; failures in one line."""
    _search_current_directory()
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if module_name == missing or module_name.startswith(missing + "."):
            raise ConfigError(
                f"cannot import {module_name!r} for agent {spec!r}: {exc}"
                f" (searched the current directory {os.getcwd()} and the Python path)"
            ) from None
        raise ConfigError(f"importing {module_name!r} failed: {_describe(exc)}") from exc
    except Exception as exc:  # whatever the user's code raises: one line saying what and where
        raise ConfigError(f"importing {module_name!r} failed: {_describe(exc)}") from exc


def _search_current_directory() -> None:
    """Put the current directory first on ``sys.path`` unless it is there already.

    ``python -m`` and hypercorn do so; a console script only has its own ``bin`` directory.
    """
    cwd = Path.cwd()
    for entry in sys.path:
        try:
            if Path(entry or ".").resolve() == cwd.resolve():
                return
        except OSError:  # a path entry that cannot be resolved is not the current directory
            continue
    sys.path.insert(0, str(cwd))


def _describe(exc: BaseException) -> str:
    """``Type: message (file, line N)``: the exception and the line of user code it came from.

    The line is the innermost frame outside the standard library and importlib (for a
    ``SyntaxError``, the offending line), with the file relative to the current directory.
    """
    if isinstance(exc, SyntaxError):
        where: tuple[str, int | None] | None = (exc.filename or "?", exc.lineno)
        text = f"{type(exc).__name__}: {exc.msg}"
    else:
        where = _user_frame(exc)
        text = f"{type(exc).__name__}: {exc}".removesuffix(": ")
    if where is None:
        return text
    filename, line = where
    try:
        shown = str(Path(filename).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:  # outside the current directory: the full path says where
        shown = filename
    return f"{text} ({shown}, line {line})"


def _user_frame(exc: BaseException) -> tuple[str, int | None] | None:
    """The innermost frame of ``exc`` in user code: not importlib's, ours, or the stdlib's."""
    paths = sysconfig.get_paths()
    stdlib = {Path(paths[k]).resolve() for k in ("stdlib", "platstdlib")}
    installed = {Path(paths[k]).resolve() for k in ("purelib", "platlib")}
    ours = Path(__file__).resolve().parent  # a2a_trio refusing a declaration: the user's call
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith("<") and ours not in Path(f.filename).resolve().parents
    ]
    for frame in reversed(frames):
        parents = set(Path(frame.filename).resolve().parents)
        if not parents & stdlib or parents & installed:
            return frame.filename, frame.lineno
    return (frames[-1].filename, frames[-1].lineno) if frames else None


def retention_from(seconds: str | None) -> Retention:
    """``Retention`` purging terminal tasks after ``seconds`` (unset or empty: keep them)."""
    if not seconds:
        return DEFAULT_RETENTION
    try:
        ttl = float(seconds)
    except ValueError:
        ttl = -1
    if ttl <= 0:
        raise ConfigError(f"the retention must be a positive number of seconds, not {seconds!r}")
    return Retention(terminal_ttl=timedelta(seconds=ttl))


PUSH_MODES = {
    "off": None,
    "on": PushSettings(),
    "private": PushSettings(allow_private_networks=True),
}
"""The words ``A2A_TRIO_PUSH`` and ``a2a-trio serve --push`` take: push notifications off, on
(webhooks at public addresses), or on with webhooks on private networks allowed too."""


def push_from(mode: str | None) -> PushSettings | None:
    """The push settings ``mode`` names (unset or empty: off)."""
    try:
        return PUSH_MODES[(mode or "off").strip().lower()]
    except KeyError:
        raise ConfigError(f"{mode!r} is not one of {', '.join(PUSH_MODES)}") from None
