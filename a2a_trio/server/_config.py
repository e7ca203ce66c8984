"""Server configuration as one frozen value (environment variables are read only in app.py)."""

from __future__ import annotations

import attrs

from ..runtime import RuntimeConfig


@attrs.frozen
class ServerConfig:
    """How an a2a_trio server is exposed.

    ``public_url`` is the base URL the agent card advertises; without it, each card request's
    own scheme and Host are used.  ``keepalive`` is the idle time after which an event stream
    sends a comment frame.  ``max_body_bytes`` bounds request bodies (counted while reading, so
    a chunked body is refused without being buffered whole).
    """

    jsonrpc_path: str = "/"
    public_url: str | None = None
    keepalive: float = 15.0
    max_body_bytes: int = 10 * 1024 * 1024
    card_max_age: int = 300
    shutdown_grace: float = 10.0
    runtime: RuntimeConfig = attrs.field(factory=RuntimeConfig)
