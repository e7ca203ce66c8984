"""Turning configuration strings into objects: ``module:attribute`` agents and store URLs.

Used at the edges (``a2a_trio.app``, the CLI); errors say what to fix, never a traceback.
"""

from __future__ import annotations

import importlib
from functools import partial

from .runtime import Agent
from .server import StoreFactory
from .store import open_store


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


def store_factory(url: str) -> StoreFactory:
    """A store factory for the server from a store URL (``memory``, ``sqlite:///...``, ...)."""
    return partial(open_store, url)
