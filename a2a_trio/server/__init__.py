"""Serving agents over HTTP: the request handler, JSON-RPC binding, SSE, app factory, serve()."""

from ._app import A2AServer, StoreFactory, create_app
from ._config import PushSettings, ServerConfig
from ._gc import tune_gc_for_streams
from ._handler import RequestHandler
from ._open_files import raise_open_file_limit
from ._serve import hypercorn_config, serve

__all__ = [
    "A2AServer",
    "PushSettings",
    "RequestHandler",
    "ServerConfig",
    "StoreFactory",
    "create_app",
    "hypercorn_config",
    "raise_open_file_limit",
    "serve",
    "tune_gc_for_streams",
]
