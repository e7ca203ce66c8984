"""``hypercorn -k trio a2a_trio.app:app``: an A2A server configured from the environment.

- ``A2A_TRIO_AGENT``: the agent as ``module:attribute`` (default: the built-in demo agent)
- ``A2A_TRIO_STORE``: task store URL (default ``sqlite:///a2a_trio.db`` in the working
  directory; ``memory``, ``postgresql://...``: see docs/stores.md)
- ``A2A_TRIO_PUBLIC_URL``: absolute http(s) base URL for the agent card (default: each
  request's Host)
- ``A2A_TRIO_KEEPALIVE``: seconds between keepalive comments on idle streams (default 15)
- ``A2A_TRIO_RETENTION``: seconds after which finished tasks are purged (default: kept)
- ``A2A_TRIO_RECOVERY_LEASE``: with several replicas on one store, seconds after which a task
  no replica has written counts as left by a crashed one (default: unset, one server)
- ``A2A_TRIO_FOLLOW_INTERVAL``: seconds between the looks at the store for a task that runs on
  another replica and has streams here (default 0.5; one look per task, shared by its streams)
- ``A2A_TRIO_STALL_WARNING``: seconds the event loop may be held (a skill calling blocking
  code) before a warning names what held it (default 1; 0: never)
- ``A2A_TRIO_PUSH``: push notifications ``off`` (the default), ``on`` (webhooks at public
  addresses), or ``private`` (webhooks on loopback and private networks too; docs/push.md)

An empty variable counts as unset.  This module is the process's entry point: importing it
checks every setting and opens the store once (as ``a2a-trio serve`` does), before hypercorn
starts serving, and a setting that cannot work stops the process with one line naming the
variable (``error: A2A_TRIO_...: ...``) and exit status 1, never a traceback.  hypercorn 0.18's
supervisor process reports status 0 whatever its worker's status (pgjones/hypercorn#269); with
``--workers 0`` the worker is the main process and the status reaches the caller (but SIGTERM
then kills it without a graceful drain), and ``a2a-trio serve`` reports it too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import attrs
import trio

from ._asgi import TrioOnly
from ._one_server import DEFAULT_STORE, served_store
from ._trust import trusted_context
from .errors import TrustStoreError
from .loading import (
    ConfigError,
    StoreOpenError,
    check_store,
    load_agent,
    push_from,
    retention_from,
)
from .server import (
    ServerConfig,
    StoreFactory,
    create_app,
    raise_open_file_limit,
    tune_gc_for_streams,
)

DEFAULT_AGENT = "a2a_trio.demo:agent"


def app_from_env(env: Mapping[str, str]) -> TrioOnly:
    """The ASGI app the settings in ``env`` describe, its store opened once to check it.

    Raises:
        ConfigError: a setting cannot work; the message names the variable and the problem.
    """
    agent = _setting("A2A_TRIO_AGENT", load_agent, env.get("A2A_TRIO_AGENT") or DEFAULT_AGENT)
    config = _server_config(env)
    retention = _setting("A2A_TRIO_RETENTION", retention_from, env.get("A2A_TRIO_RETENTION"))
    url = env.get("A2A_TRIO_STORE") or DEFAULT_STORE
    store = served_store(url, retention=retention, alone=config.runtime.recovery_lease is None)
    _check_store(url, store)
    if config.push is not None:
        _check_trust()
    return TrioOnly(create_app(agent, store=store, config=config))


def _setting[V, T](variable: str, parse: Callable[[V], T], value: V) -> T:
    """``parse(value)``, its ConfigError prefixed with the variable to fix."""
    try:
        return parse(value)
    except ConfigError as exc:
        raise ConfigError(f"{variable}: {exc}") from None


def _server_config(env: Mapping[str, str]) -> ServerConfig:
    """ServerConfig's own validators judge the values, so the rules live in one place."""
    push = _setting("A2A_TRIO_PUSH", push_from, env.get("A2A_TRIO_PUSH"))
    config = ServerConfig(push=push)
    if keepalive := env.get("A2A_TRIO_KEEPALIVE"):
        seconds = _seconds("A2A_TRIO_KEEPALIVE", keepalive)
        config = _evolve(config, "A2A_TRIO_KEEPALIVE", keepalive=seconds)
    if public_url := env.get("A2A_TRIO_PUBLIC_URL"):
        config = _evolve(config, "A2A_TRIO_PUBLIC_URL", public_url=public_url)
    runtime_seconds = {
        "A2A_TRIO_RECOVERY_LEASE": "recovery_lease",
        "A2A_TRIO_FOLLOW_INTERVAL": "follow_interval",
        "A2A_TRIO_STALL_WARNING": "stall_warning",
    }
    for variable, field in runtime_seconds.items():
        if value := env.get(variable):
            given: float | None = _seconds(variable, value)
            if field in OFF_AT_ZERO and given == 0:
                given = None
            change: dict[str, Any] = {field: given}
            try:
                runtime = attrs.evolve(config.runtime, **change)
            except ValueError as exc:
                raise ConfigError(f"{variable}: {exc}") from None
            config = attrs.evolve(config, runtime=runtime)
    return config


OFF_AT_ZERO = frozenset({"stall_warning"})
"""Runtime settings that 0 turns off (``None`` in ``RuntimeConfig``)."""


def _seconds(variable: str, value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ConfigError(f"{variable} must be a number of seconds, not {value!r}") from None


def _evolve(config: ServerConfig, variable: str, **change: Any) -> ServerConfig:
    try:
        return attrs.evolve(config, **change)
    except ValueError as exc:
        raise ConfigError(f"{variable}: {exc}") from None


def _check_store(url: str, store: StoreFactory) -> None:
    """Open and close the store, so an unusable one stops start-up here, not in the lifespan
    (where hypercorn would print tracebacks and keep going)."""

    try:
        trio.run(check_store, store)
    except ValueError as exc:  # the URL names no store; the message lists the forms
        raise ConfigError(f"A2A_TRIO_STORE: {exc}") from None
    except StoreOpenError as exc:
        raise ConfigError(
            f"A2A_TRIO_STORE={_without_password(url)!r}: cannot open the task store: {exc}"
        ) from None


def _check_trust() -> None:
    """Load the CAs that HTTPS webhooks are verified with, so a bad ``SSL_CERT_FILE`` stops
    start-up here (its message names the variable), not in the lifespan."""
    try:
        trio.run(trusted_context)
    except TrustStoreError as exc:
        raise ConfigError(str(exc)) from None


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user_info, _, host = parts.netloc.rpartition("@")
    return parts._replace(netloc=f"{user_info.partition(':')[0]}:***@{host}").geturl()


try:
    app = app_from_env(os.environ)
except ConfigError as exc:
    raise SystemExit("error: " + " ".join(str(exc).split())) from None  # one line, status 1
# this module is the process's entry point (see server/_gc.py, server/_open_files.py)
tune_gc_for_streams()
raise_open_file_limit()
