"""Tenants: the ``tenant`` request field (or ``/{tenant}/`` REST prefix) scopes every task.

A task created under one tenant is invisible under another (``TaskNotFoundError``).  With
``ServerConfig.tenants`` set, a tenant outside it is refused the same way, so a client cannot
tell an unknown tenant from an empty one; the default (empty) tenant is always accepted.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import TaskNotFoundError
from ..store import CallerScope
from ._config import ServerConfig


class UnknownTenantError(TaskNotFoundError):
    """The request names a tenant this server does not serve (-32001 / HTTP 404)."""

    default_message = "Unknown tenant"


def caller_scope(config: ServerConfig, tenant: str, owner: str = "") -> CallerScope:
    """The scope a request with ``tenant`` acts in; raises ``UnknownTenantError`` if refused."""
    if tenant and config.tenants is not None and tenant not in config.tenants:
        raise UnknownTenantError(f"Unknown tenant {tenant[:100]!r}")
    return CallerScope(tenant=tenant, owner=owner)


async def authenticated_owner(config: ServerConfig, headers: Mapping[str, str]) -> str:
    """The caller's owner id ("" when the server does no authentication).

    Raises ``AuthenticationRequiredError`` when ``config.authenticate`` refuses the request.
    """
    if config.authenticate is None:
        return ""
    return await config.authenticate(headers)
