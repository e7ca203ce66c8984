"""Server configuration as one frozen value (environment variables are read only in app.py)."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import SplitResult, urlsplit

import attrs

from .. import model as m
from ..runtime import RuntimeConfig


def _seconds(field: attrs.Attribute[float], value: Any) -> float:
    """``value``, which must be a number (not a bool), else ``TypeError`` naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{field.name} must be a number of seconds, not {type(value).__name__}")
    return value


def _positive_seconds(_config: object, field: attrs.Attribute[float], value: Any) -> None:
    """Zero or less would send keepalive comments in a busy loop; NaN would never send one."""
    value = _seconds(field, value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{field.name} must be a positive number of seconds, not {value!r}")


def _seconds_or_none(_config: object, field: attrs.Attribute[float], value: Any) -> None:
    """A wait of zero is none at all; a negative or NaN one has no meaning."""
    value = _seconds(field, value)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(
            f"{field.name} must be zero or a positive number of seconds, not {value!r}"
        )


def absolute_http_url(value: str) -> SplitResult | None:
    """``value``'s parts when it is an absolute ``http(s)`` URL with a host (and a port, if
    any, that is a number in range), else ``None``."""
    try:
        parts = urlsplit(value)
        _ = parts.port  # raises ValueError when the port is not a number in range
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return parts


def _absolute_http_url(_config: object, field: attrs.Attribute[str | None], value: Any) -> None:
    """Clients call the card's URLs as written, so a relative or non-HTTP base is unusable."""
    if value is None:
        return
    if not isinstance(value, str):
        raise TypeError(f"{field.name} must be a string, not {type(value).__name__}")
    parts = absolute_http_url(value)
    if parts is None or parts.query or parts.fragment:
        raise ValueError(
            f"{field.name} must be an absolute http(s) URL without query or fragment,"
            f" such as 'https://agents.example.com', not {value!r}"
        )


def _attempts(_settings: object, field: attrs.Attribute[int], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{field.name} must be a whole number of at least 1, not {value!r}")


@attrs.frozen
class PushSettings:
    """How a server delivers push notifications (A2A v1.0 §4.3); giving
    ``ServerConfig(push=PushSettings())`` turns them on, and the card then says
    ``pushNotifications: true``.

    Each event is POSTed to each of its task's webhooks with a ``timeout`` (seconds) per try,
    and tried ``attempts`` times in all while the webhook answers with a network error, a
    timeout, 408, 429 or a 5xx status, waiting ``retry_wait`` seconds before the second try and
    twice as long before each one after; any other answer but a 2xx refuses the event at once.
    Webhooks must resolve to public addresses unless ``allow_private_networks`` (see
    docs/push.md: a client could otherwise make the server reach its own network)."""

    timeout: float = attrs.field(default=10.0, validator=_positive_seconds)
    attempts: int = attrs.field(default=3, validator=_attempts)
    retry_wait: float = attrs.field(default=1.0, validator=_seconds_or_none)
    allow_private_networks: bool = False


@attrs.frozen
class ServerConfig:
    """How an a2a_trio server is exposed.

    ``public_url`` is the base URL the agent card advertises (an absolute ``http(s)://`` URL,
    optionally with a path prefix); without it, each card request's own scheme and Host are
    used.  ``keepalive`` is the idle time (positive seconds) after which an event stream sends a
    comment frame.  Both are checked here, so every way of setting them (code, environment, CLI)
    refuses a bad value with the same ``ValueError`` (``TypeError`` for a non-number or
    non-string) before anything is served.

    ``max_body_bytes`` bounds request bodies (counted while reading, so a chunked body is refused
    without being buffered whole), and ``body_timeout`` the seconds a client has to send one: a
    body still incomplete then is answered 408, so a client trickling bodies cannot pin
    connections (hypercorn's read timeout is off, for long-lived streams).

    ``tenants`` limits the ``tenant`` values (``/{tenant}/...`` REST prefixes) the server accepts:
    ``None`` accepts any tenant, a set accepts only those (the default, empty tenant always).
    Legacy-dialect surfaces (docs/bindings.md) are mounted per skill: ``legacy_prefixes`` maps a
    skill id to a path prefix, ``legacy_mount_all`` mounts every skill at ``/{skill_id}``.
    ``legacy_bearer`` puts the dialect's bearer gate on them (the card stays public);
    ``legacy_token_check``, when set, also judges the token value.  ``legacy_eviction`` is the
    grace window after which a terminal legacy task id is forgotten and may be reused.

    ``authenticate`` turns a request's headers (lower-case names) into the caller's owner id,
    or raises ``AuthenticationRequiredError`` (HTTP 401), on every binding, the legacy surfaces
    included (after their bearer gate); every task then belongs to that owner and no other
    caller can see or touch it.  It must return a ``str`` without NUL characters: any other
    owner id, or an exception other than an ``A2AError``, fails the request with an internal
    error (HTTP 500, -32603) and is logged.  ``security_schemes`` and
    ``security_requirements`` are advertised on the agent card so clients know what to send.

    ``push`` turns push notifications on (:class:`PushSettings`); without it the card says
    ``pushNotifications: false`` and every push-config call is refused.
    """

    jsonrpc_path: str = "/"
    public_url: str | None = attrs.field(default=None, validator=_absolute_http_url)
    keepalive: float = attrs.field(default=15.0, validator=_positive_seconds)
    max_body_bytes: int = 10 * 1024 * 1024
    body_timeout: float = attrs.field(default=30.0, validator=_positive_seconds)
    card_max_age: int = 300
    shutdown_grace: float = attrs.field(default=10.0, validator=_seconds_or_none)
    runtime: RuntimeConfig = attrs.field(factory=RuntimeConfig)
    tenants: frozenset[str] | None = None
    legacy_prefixes: Mapping[str, str] = attrs.field(factory=dict)
    legacy_mount_all: bool = False
    legacy_bearer: bool = False
    legacy_token_check: Callable[[str], bool] | None = None
    legacy_eviction: float = 300.0
    authenticate: Authenticator | None = None
    security_schemes: Mapping[str, m.SecurityScheme] = attrs.field(factory=dict)
    security_requirements: tuple[m.SecurityRequirement, ...] = ()
    push: PushSettings | None = None


type Authenticator = Callable[[Mapping[str, str]], Awaitable[str]]
"""Headers (lower-case names) -> the authenticated owner id; raise to refuse."""
