"""Which webhook URLs a server may POST push notifications to.

A push config's URL is chosen by the client, and the server POSTs to it from inside its own
network: left unchecked, any client could make it reach a cloud metadata address, a database
port or an admin page on the same host (server-side request forgery; A2A v1.0 §13.2).  So a
URL must be absolute ``http(s)``, and its host must resolve to public addresses only, unless
the operator allows private networks (``PushSettings.allow_private_networks``: a webhook on
the same machine or LAN, as in development).  The check runs when a config is created, and
again, by the push sender's connections (``_webhook_client``), at each connection to the
webhook, on the very addresses the connection then uses: a name that later resolves elsewhere
is caught too, even when it answers differently from one lookup to the next.
"""

from __future__ import annotations

import ipaddress
import re
import socket

import attrs
import trio

from .. import model as m
from ..errors import FIELD, InvalidParamsError, Phrase
from ._config import absolute_http_url

HEADER_TEXT = re.compile(r"[\t\x20-\x7e]*")
"""What an HTTP header value may hold as sent: visible ASCII, spaces and tabs (no line breaks)."""
AUTH_SCHEME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""An HTTP authentication scheme: a token (RFC 9110 §11.1)."""


@attrs.frozen
class Webhook:
    """A webhook URL's host and port, as a connection to it would use them."""

    host: str
    port: int


def webhook_of(url: str, *, path: str) -> Webhook:
    """``url``'s host and port; ``InvalidParamsError`` at ``path`` when it is not an absolute
    ``http(s)`` URL the server could POST to."""
    parts = absolute_http_url(url)
    if parts is None or parts.hostname is None:  # (the second, for the type checker)
        raise InvalidParamsError(
            f"the webhook URL must be an absolute http(s) URL such as"
            f" 'https://client.example.com/a2a/webhook', not {url[:200]!r}",
            path=path,
        )
    return Webhook(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))


def _kind_of_address(address: str) -> str | None:
    """What makes ``address`` non-public ("a loopback address", ...), ``None`` if public."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 zone id is not part of it
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 reaches 127.0.0.1
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_unspecified:
        return "the unspecified address, which reaches this host"
    if ip.is_link_local:
        return "a link-local address (where cloud metadata services answer)"
    if ip.is_private:
        return "a private-network address"
    if not ip.is_global or ip.is_multicast:
        return "not a public unicast address"
    return None


async def resolved(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to for a TCP connection, each once, in the resolver's
    order.

    Raises:
        OSError: the host name does not resolve (``socket.gaierror``).
    """
    found = await trio.socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(sockaddr[0]) for *_, sockaddr in found))


def first_non_public(addresses: list[str]) -> str | None:
    """The first of ``addresses`` that is not public, described ("127.0.0.1, a loopback
    address"); ``None`` when all are public."""
    for address in addresses:
        kind = _kind_of_address(address)
        if kind is not None:
            return f"{address}, {kind}"
    return None


async def non_public_address(webhook: Webhook) -> str | None:
    """The first address ``webhook``'s host resolves to that is not public, described;
    ``None`` when all are public.

    Raises:
        OSError: the host name does not resolve (``socket.gaierror``).
    """
    return first_non_public(await resolved(webhook.host, webhook.port))


async def check_webhook(url: str, *, path: str, allow_private_networks: bool) -> Webhook:
    """``url``'s webhook, once it is known the server may POST there; else
    ``InvalidParamsError`` at ``path`` saying why."""
    webhook = webhook_of(url, path=path)
    if allow_private_networks:
        return webhook
    try:
        refused = await non_public_address(webhook)
    except OSError as exc:
        raise InvalidParamsError(
            f"the webhook host {webhook.host[:200]!r} does not resolve"
            f" ({exc.strerror or exc}); give a URL the server can reach",
            path=path,
        ) from None
    if refused is not None:
        raise InvalidParamsError(
            f"the webhook URL reaches {refused}: this server sends push notifications to public"
            " addresses only (its operator can allow private ones:"
            " PushSettings(allow_private_networks=True), a2a-trio serve --push private,"
            " A2A_TRIO_PUSH=private)",
            path=path,
        )
    return webhook


def check_headers(config: m.TaskPushNotificationConfig, *, under: str) -> None:
    """Refuse a token or credentials that cannot travel in a header (``InvalidParamsError``
    at their path under ``under``): found only at the POST, they would fail every delivery."""
    auth = config.authentication
    values = {".token": config.token}
    if auth is not None:
        values[".authentication.credentials"] = auth.credentials
        if not AUTH_SCHEME.fullmatch(auth.scheme):
            raise InvalidParamsError(
                Phrase.of(FIELD, " must be an HTTP authentication scheme such as 'Bearer'"),
                path=under + ".authentication.scheme",
            )
    for path, value in values.items():
        if not HEADER_TEXT.fullmatch(value):
            raise InvalidParamsError(
                Phrase.of(FIELD, " must be visible ASCII text: it is sent in an HTTP header"),
                path=under + path,
            )
