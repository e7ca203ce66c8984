"""The connections push notifications are POSTed over: to public addresses only, pinned.

Checking a webhook host's addresses and then letting an HTTP client look the name up again to
connect leaves a window: a DNS server a client controls can answer the check with a public
address and the connection with 127.0.0.1 (DNS rebinding), and the POST reaches the server's
own network after all.  So, unless private networks are allowed, each connection resolves the
name once, refuses it when any address is not public (:class:`RefusedAddress`), and connects
to the addresses it checked.  A connection kept alive stays on its checked address.

That needs a hook where connections are made.  httpcore, the engine under httpx, has one (a
network backend); httpx does not expose it.  So the sender drives an httpcore connection pool
(:func:`webhook_pool`) and uses httpx only to read a URL (IDNA host names, user info): the two
are one project, and httpx already depends on this httpcore.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable
from typing import Final

import httpcore
import httpx
import trio

from ._webhooks import first_non_public, resolved, webhook_of

MAX_CONNECTIONS: Final = 100
"""Connections open at once across all webhooks (httpx's default for a client)."""
KEPT_ALIVE: Final = 20
"""Idle connections kept for the next event (httpx's default), each for ``KEEPALIVE_EXPIRY``."""
KEEPALIVE_EXPIRY: Final = 5.0


class RefusedAddress(Exception):
    """The webhook's host resolved to an address the server may not reach: which, and why."""


class PublicOnlyBackend(httpcore.AsyncNetworkBackend):
    """trio's connections, to the checked public addresses of a host only."""

    def __init__(self) -> None:
        self._trio = httpcore.TrioBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """A connection to the first of ``host``'s addresses that answers, once all of them
        are known to be public (else :class:`RefusedAddress`).  The lookup counts against
        the connect ``timeout``; each address tried has the whole of it."""
        try:
            with trio.fail_after(math.inf if timeout is None else timeout):
                addresses = await resolved(host, port)
        except trio.TooSlowError:
            raise httpcore.ConnectTimeout(f"looking {host} up took over {timeout} s") from None
        except OSError as exc:
            raise httpcore.ConnectError(f"{host} does not resolve: {exc}") from exc
        refused = first_non_public(addresses)
        if refused is not None:
            raise RefusedAddress(refused)
        failure: Exception = httpcore.ConnectError(f"{host} has no address")
        for address in addresses:
            try:
                return await self._trio.connect_tcp(
                    address,
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc  # the next address may answer
        raise failure

    async def sleep(self, seconds: float) -> None:
        await self._trio.sleep(seconds)


def webhook_pool(*, allow_private_networks: bool) -> httpcore.AsyncConnectionPool:
    """The connections a server's push notifications share (see the module docstring); a
    pool that may reach private networks connects as any client does."""
    return httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(),
        max_connections=MAX_CONNECTIONS,
        max_keepalive_connections=KEPT_ALIVE,
        keepalive_expiry=KEEPALIVE_EXPIRY,
        network_backend=None if allow_private_networks else PublicOnlyBackend(),
    )


def webhook_request(
    url: str, headers: dict[str, str]
) -> tuple[httpcore.URL, list[tuple[bytes, bytes]]]:
    """Where a POST to ``url`` goes, and its headers: ``headers``, the ``Host`` the URL names,
    and, when ``headers`` has no ``Authorization``, the user info in the URL as Basic
    credentials, as an HTTP client would send them.

    Raises:
        InvalidParamsError: not an absolute http(s) URL (a config stored by other means).
        httpx.InvalidURL: not a URL at all.
        UnicodeEncodeError: a header that cannot be sent (idem).
    """
    webhook_of(url, path="$.url")
    parsed = httpx.URL(url)
    sent = {"Host": parsed.netloc.decode("ascii"), **headers}
    if parsed.userinfo and "Authorization" not in headers:
        pair = f"{parsed.username}:{parsed.password}".encode()
        sent["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    target = httpcore.URL(
        scheme=parsed.raw_scheme, host=parsed.raw_host, port=parsed.port, target=parsed.raw_path
    )
    return target, [(name.encode("ascii"), value.encode("ascii")) for name, value in sent.items()]
