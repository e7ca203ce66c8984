"""``hypercorn -k trio a2a_trio.app:app``: an A2A server configured from the environment.

- ``A2A_TRIO_AGENT``: the agent as ``module:attribute`` (default: the built-in demo agent)
- ``A2A_TRIO_STORE``: task store URL (default ``sqlite:///a2a_trio.db`` in the working
  directory; ``memory``, ``postgresql://...``: see docs/stores.md)
- ``A2A_TRIO_PUBLIC_URL``: base URL for the agent card (default: each request's Host)
- ``A2A_TRIO_KEEPALIVE``: seconds between keepalive comments on idle streams (default 15)
- ``A2A_TRIO_RETENTION``: seconds after which finished tasks are purged (default: kept)
"""

from __future__ import annotations

import os

from ._asgi import TrioOnly
from .loading import ConfigError, load_agent, retention_from, store_factory
from .server import ServerConfig, create_app, tune_gc_for_streams

DEFAULT_STORE = "sqlite:///a2a_trio.db"


def _config_from_env() -> ServerConfig:
    keepalive = os.environ.get("A2A_TRIO_KEEPALIVE", "15")
    try:
        seconds = float(keepalive)
    except ValueError:
        raise ConfigError(
            f"A2A_TRIO_KEEPALIVE must be a number of seconds, not {keepalive!r}"
        ) from None
    return ServerConfig(public_url=os.environ.get("A2A_TRIO_PUBLIC_URL") or None, keepalive=seconds)


app = TrioOnly(
    create_app(
        load_agent(os.environ.get("A2A_TRIO_AGENT", "a2a_trio.demo:agent")),
        store=store_factory(
            os.environ.get("A2A_TRIO_STORE", DEFAULT_STORE),
            retention=retention_from(os.environ.get("A2A_TRIO_RETENTION")),
        ),
        config=_config_from_env(),
    )
)
tune_gc_for_streams()  # this module is the process's entry point (see server/_gc.py)
