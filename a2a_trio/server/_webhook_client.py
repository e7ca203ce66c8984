"""Push notifications as HTTP: each event POSTed to a webhook, tried again as ``PushSettings``
says, over connections made to public addresses only, and pinned to them.

Checking a webhook host's addresses and then letting an HTTP client look the name up again to
connect leaves a window: a DNS server a client controls can answer the check with a public
address and the connection with 127.0.0.1 (DNS rebinding), and the POST reaches the server's
own network after all.  So, unless private networks are allowed, each connection resolves the
name once, refuses it when any address is not public (:class:`RefusedAddress`), and connects
to the addresses it checked.  A connection kept alive stays on its checked address.

That needs a hook where connections are made.  httpcore, the engine under httpx, has one (a
network backend); httpx does not expose it.  So :class:`WebhookClient` drives an httpcore
connection pool (:func:`webhook_pool`) and uses httpx only to read a URL (IDNA host names,
user info): the two are one project, and httpx already depends on this httpcore.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import math
import ssl
from collections.abc import AsyncGenerator, Iterable
from types import TracebackType
from typing import Final, Self, cast
from urllib.parse import urlsplit

import httpcore
import httpx
import trio

from .. import model as m
from .._throttle import ThrottledLog
from .._trust import tls_failure, tls_refusal
from ..errors import InvalidParamsError
from ._config import PushSettings
from ._webhooks import first_non_public, resolved, webhook_of

MAX_CONNECTIONS: Final = 100
"""Connections open at once across all webhooks (httpx's default for a client)."""
KEPT_ALIVE: Final = 20
"""Idle connections kept for the next event (httpx's default), each for ``KEEPALIVE_EXPIRY``."""
KEEPALIVE_EXPIRY: Final = 5.0
RETRIED_STATUSES: Final = frozenset({408, 429})
"""Statuses below 500 that say "not now" rather than "no": tried again, as 5xx are."""
USER_AGENT: Final = "a2a-trio push notifications"
KEEP_FOR_ANSWERS: Final = 64 * 1024
"""Bytes of a webhook's answer read (and dropped) to keep its connection for the next POST."""


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


def webhook_pool(
    tls: ssl.SSLContext, *, allow_private_networks: bool
) -> httpcore.AsyncConnectionPool:
    """The connections a server's push notifications share (see the module docstring),
    verifying HTTPS webhooks with ``tls``; a pool that may reach private networks connects as
    any client does."""
    return httpcore.AsyncConnectionPool(
        ssl_context=tls,
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


def _headers(config: m.TaskPushNotificationConfig) -> dict[str, str]:
    """The headers a webhook gets: the client's token, and the credentials its config names
    (a scheme without credentials sends none: the server has no way to make them up, and
    ``WebhookClient.post`` says so in the log)."""
    headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
    if config.token:
        headers["X-A2A-Notification-Token"] = config.token
    auth = config.authentication
    if auth is not None and auth.credentials:
        headers["Authorization"] = f"{auth.scheme} {auth.credentials}"
    return headers


async def _read_past(response: httpcore.Response) -> None:
    """Read a webhook's answer to its end and drop it, so its connection can carry the next
    event; one longer than ``KEEP_FOR_ANSWERS`` is left unread, and its connection closed (a
    webhook answering with a huge body must not hold the sender)."""
    read = 0
    body = cast(AsyncGenerator[bytes], response.aiter_stream())  # (typed as an iterator)
    async with contextlib.aclosing(body) as chunks:
        async for chunk in chunks:
            read += len(chunk)
            if read > KEEP_FOR_ANSWERS:
                return


def _shown(url: str) -> str:
    """The URL as logged: without its query or user info, where clients put secrets."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}{parts.path}" if parts.scheme and host else repr(url[:200])


class WebhookClient:
    """POSTs push notifications to webhooks over one pool of pinned connections (see the
    module docstring); a delivery that fails in the end is logged to ``failures``."""

    def __init__(self, settings: PushSettings, failures: ThrottledLog, tls: ssl.SSLContext) -> None:
        self.settings = settings
        self._failures = failures
        self._pool = webhook_pool(tls, allow_private_networks=settings.allow_private_networks)
        self._timeouts = {
            "timeout": dict.fromkeys(("connect", "read", "write", "pool"), settings.timeout)
        }

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._pool.aclose()

    async def post(self, config: m.TaskPushNotificationConfig, body: bytes) -> None:
        """One event to one webhook, tried as ``PushSettings`` says; a failure is logged."""
        auth = config.authentication
        if auth is not None and not auth.credentials:  # the likeliest cause of a 401 there
            self._failures.log(
                logging.WARNING,
                "push config %s of task %s names the %s scheme but no credentials: its"
                " webhook gets no Authorization header",
                config.id,
                config.task_id,
                auth.scheme,
            )
        try:
            target, headers = webhook_request(config.url, _headers(config))
        except (InvalidParamsError, httpx.InvalidURL, UnicodeEncodeError) as exc:
            problem = f"its config cannot be sent ({exc})"  # stored by other means
        else:
            problem = await self._try(target, headers, body)
            if not problem:
                return
        self._failures.log(
            logging.WARNING,
            "push notification for task %s not delivered to %s: %s",
            config.task_id,
            _shown(config.url),
            problem,
        )

    async def _try(
        self, target: httpcore.URL, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> str:
        """POST ``body`` to ``target`` as ``PushSettings`` says; what went wrong in the end
        (``""``: delivered)."""
        settings = self.settings
        problem = ""
        for attempt in range(settings.attempts):
            if attempt:
                await trio.sleep(settings.retry_wait * 2 ** (attempt - 1))
            try:
                request = self._pool.stream(
                    "POST", target, headers=headers, content=body, extensions=self._timeouts
                )
                async with request as response:
                    status = response.status
                    await _read_past(response)
            except RefusedAddress as exc:
                return f"it now reaches {exc}, and only public addresses are allowed"
            except (
                httpcore.TimeoutException,
                httpcore.NetworkError,
                httpcore.ProtocolError,
                OSError,
            ) as exc:
                refusal = tls_refusal(exc)
                if isinstance(refusal, ssl.SSLCertVerificationError):
                    return tls_failure(refusal)  # the next try would get the same certificate
                if refusal is None:
                    problem = f"{type(exc).__name__}: {exc}"
                else:
                    problem = tls_failure(refusal)
                continue
            if 200 <= status < 300:
                return ""
            problem = f"it answered HTTP {status}"
            if status < 500 and status not in RETRIED_STATUSES:
                break
        return problem
