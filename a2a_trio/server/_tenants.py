"""Who is calling: the request's credentials, its authenticated owner and the tenant it names.

Every binding reads a request's headers with :func:`request_headers` and its owner with
:func:`authenticated_owner`, so a credential accepted (or refused) on one binding is accepted
(or refused) on all of them.

The ``tenant`` request field (or ``/{tenant}/`` REST prefix) scopes every task: a task created
under one tenant is invisible under another (``TaskNotFoundError``).  With
``ServerConfig.tenants`` set, a tenant outside it is refused the same way, so a client cannot
tell an unknown tenant from an empty one; the default (empty) tenant is always accepted.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from ..errors import A2AError, InternalError, TaskNotFoundError
from ..store import CallerScope
from ._config import ServerConfig

logger = logging.getLogger("a2a_trio.server")

CREDENTIALS = "authorization"
AUTHENTICATION_FAILED = "The server could not authenticate this request"


class UnknownTenantError(TaskNotFoundError):
    """The request names a tenant this server does not serve (-32001 / HTTP 404)."""

    default_message = "Unknown tenant"


def request_headers(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """A request's headers as every binding reads them: lower-case names, one value each.

    A repeated header keeps its last value, except ``Authorization``: credentials sent more than
    once are ambiguous (a proxy in front may have judged the other one), so such a request
    carries none, and is refused wherever credentials are required.
    """
    headers: dict[str, str] = {}
    repeated = False
    for name, value in pairs:
        key = name.lower()
        repeated = repeated or (key == CREDENTIALS and key in headers)
        headers[key] = value
    if repeated:
        del headers[CREDENTIALS]
    return headers


def caller_scope(config: ServerConfig, tenant: str, owner: str = "") -> CallerScope:
    """The scope a request with ``tenant`` acts in; raises ``UnknownTenantError`` if refused."""
    if tenant and config.tenants is not None and tenant not in config.tenants:
        raise UnknownTenantError(f"Unknown tenant {tenant[:100]!r}")
    return CallerScope(tenant=tenant, owner=owner)


async def authenticated_owner(config: ServerConfig, headers: Mapping[str, str]) -> str:
    """The caller's owner id ("" when the server does no authentication).

    ``headers`` come from :func:`request_headers`.  Raises ``AuthenticationRequiredError`` (or
    whatever ``A2AError``) ``config.authenticate`` refuses the request with.  A hook that fails
    otherwise, or returns an owner id no store can hold (not a ``str``, or with a NUL), is the
    server's fault, not the client's: ``InternalError`` with a plain message, and one log
    record telling the operator what to fix.
    """
    if config.authenticate is None:
        return ""
    try:
        owner = await config.authenticate(headers)
    except A2AError:
        raise
    except Exception:
        logger.exception("ServerConfig.authenticate raised; the request gets an internal error")
        raise InternalError(AUTHENTICATION_FAILED) from None
    if not isinstance(owner, str) or "\x00" in owner:
        problem = "a str with a NUL character" if isinstance(owner, str) else type(owner).__name__
        logger.error(
            "ServerConfig.authenticate returned %s as the owner id, which no task store can "
            "hold: it must return a str without NUL characters; the request gets an internal "
            "error",
            problem,
        )
        raise InternalError(AUTHENTICATION_FAILED)
    return owner
