"""Turning configuration strings into objects: ``module:attribute`` agents and store URLs.

Used at the edges (``a2a_trio.app``, the CLI); errors say what to fix, never a traceback.
"""

from __future__ import annotations

import importlib
from datetime import timedelta
from functools import partial

from .runtime import Agent
from .server import StoreFactory
from .store import DEFAULT_RETENTION, Retention, open_store


class ConfigError(Exception):
    """A setting names something that cannot be loaded; the message says what to fix."""


def load_agent(spec: str) -> Agent:
    """The :class:`Agent` named by ``module:attribute`` (e.g. ``myproject.agents:agent``)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"agent {spec!r} must look like 'package.module:attribute'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"cannot import {module_name!r} for agent {spec!r}: {exc}") from None
    found = getattr(module, attribute, None)
    if not isinstance(found, Agent):
        kind = "nothing" if found is None else type(found).__name__
        raise ConfigError(f"{spec!r} is {kind}, not an a2a_trio Agent")
    return found


def store_factory(url: str, *, retention: Retention = DEFAULT_RETENTION) -> StoreFactory:
    """A store factory for the server from a store URL (``memory``, ``sqlite:///...``, ...)."""
    return partial(open_store, url, retention=retention)


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
