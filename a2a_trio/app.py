"""``hypercorn -k trio a2a_trio.app:app``: an A2A server configured from the environment.

- ``A2A_TRIO_AGENT``: the agent as ``module:attribute`` (default: the built-in demo agent)
- ``A2A_TRIO_STORE``: task store URL (``memory``; durable stores: see docs/stores.md)
- ``A2A_TRIO_PUBLIC_URL``: base URL for the agent card (default: each request's Host)
- ``A2A_TRIO_KEEPALIVE``: seconds between keepalive comments on idle streams (default 15)
"""

from __future__ import annotations

import os

from ._asgi import TrioOnly
from .loading import load_agent, store_factory
from .server import ServerConfig, create_app


def _config_from_env() -> ServerConfig:
    return ServerConfig(
        public_url=os.environ.get("A2A_TRIO_PUBLIC_URL") or None,
        keepalive=float(os.environ.get("A2A_TRIO_KEEPALIVE", "15")),
    )


app = TrioOnly(
    create_app(
        load_agent(os.environ.get("A2A_TRIO_AGENT", "a2a_trio.demo:agent")),
        store=store_factory(os.environ.get("A2A_TRIO_STORE", "memory")),
        config=_config_from_env(),
    )
)
