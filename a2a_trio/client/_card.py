"""Agent card discovery, HTTP caching of cards, and choosing the interface to talk to.

Discovery (A2A v1.0 §8.2): ``<base>/.well-known/agent-card.json``, falling back to the v0.3
``<base>/.well-known/agent.json``; a URL ending in ``.json`` is taken as the card's own URL.
Caching (§8.6.2, RFC 9111 in brief): ``max-age`` sets freshness, ``no-store`` stores nothing,
``no-cache`` revalidates every time; a stale card with an ``ETag`` is revalidated with
``If-None-Match`` and a 304 keeps it.  Selection (§8.3.2): by protocol version first (1.0
before 0.3: v0.3 is the fallback for agents that offer nothing newer), then the first interface
in the card's order whose binding this client speaks, unless the caller ranked bindings.
Origins: a card is fetched following redirects only within the origin of the URL it was asked
at (and any origin the caller trusts), and an interface on another origin than the card's is
not used unless the caller trusts that origin: the card's server does not get to send the
caller's credentials and messages elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import attrs
import httpx
import trio

from .. import model as m
from ..errors import A2AError, AuthenticationRequiredError
from ..wire import V03, V1, loads
from ._bindings import HTTP_JSON, JSONRPC, Binding, JsonRpcBinding, JsonRpcV03Binding, RestBinding
from ._errors import AgentCardError, ClientError
from ._options import DEFAULT_LIMITS, DEFAULT_TIMEOUTS, Limits, Timeouts
from ._transport import (
    Origin,
    TrustedOrigins,
    answered_by,
    deadline_after,
    http_errors,
    origin,
    read_body,
    refused_redirect,
    send_following,
    show_origin,
    trusted,
)

WELL_KNOWN = "/.well-known/agent-card.json"
LEGACY_WELL_KNOWN = "/.well-known/agent.json"
DEFAULT_MAX_AGE = 300.0

BINDINGS: dict[tuple[str, str], type[Binding]] = {
    (JSONRPC, "1.0"): JsonRpcBinding,
    (HTTP_JSON, "1.0"): RestBinding,
    (JSONRPC, "0.3"): JsonRpcV03Binding,
}


def card_urls(url: str) -> list[str]:
    """Where to look for the card of the agent at ``url``, in order."""
    if url.split("?")[0].endswith(".json"):
        return [url]
    base = url.rstrip("/")
    return [base + WELL_KNOWN, base + LEGACY_WELL_KNOWN]


def freshness(headers: Mapping[str, str], default: float) -> float | None:
    """Seconds a card may be served from cache; ``None`` when it must not be stored."""
    directives = {
        name.strip().lower(): value
        for name, _, value in (
            d.partition("=") for d in headers.get("cache-control", "").split(",")
        )
    }
    if "no-store" in directives:
        return None
    if "no-cache" in directives:
        return 0.0
    match = re.fullmatch(r'"?(\d+)"?', directives.get("max-age", "").strip())
    return float(match[1]) if match else default


def decode_card(data: Any, *, source: str) -> m.AgentCard:
    """A card document as a typed card; a bad one raises :class:`AgentCardError`.

    A v1.0 card lists ``supportedInterfaces``; a v0.3 card has a main ``url`` instead, and its
    interfaces come out with the card's v0.3 ``protocolVersion``.
    """
    v03 = isinstance(data, dict) and "supportedInterfaces" not in data and "url" in data
    try:
        return V03.decode(data, m.AgentCard) if v03 else V1.decode(data, m.AgentCard)
    except A2AError as exc:
        raise AgentCardError(f"invalid agent card at {source}: {exc.message}") from None


@attrs.frozen
class _Entry:
    card: m.AgentCard
    etag: str
    expires: float


class CardCache:
    """Agent cards by URL, kept as long as the server's caching headers allow.

    Share one between clients to avoid refetching a card.  Times come from ``trio.current_time``.
    """

    def __init__(self, *, default_max_age: float = DEFAULT_MAX_AGE) -> None:
        self._default = default_max_age
        self._entries: dict[str, _Entry] = {}

    def fresh(self, url: str) -> m.AgentCard | None:
        """The cached card for ``url`` if it has not expired."""
        entry = self._entries.get(url)
        return entry.card if entry and entry.expires > trio.current_time() else None

    def etag(self, url: str) -> str:
        entry = self._entries.get(url)
        return entry.etag if entry else ""

    def store(self, url: str, card: m.AgentCard, headers: Mapping[str, str]) -> None:
        max_age = freshness(headers, self._default)
        if max_age is None:
            self._entries.pop(url, None)
            return
        etag = headers.get("etag", "")
        self._entries[url] = _Entry(card, etag, trio.current_time() + max_age)

    def revalidated(self, url: str, headers: Mapping[str, str]) -> m.AgentCard:
        """A 304 came back: keep the stored card for another freshness period."""
        entry = self._entries[url]
        self.store(url, entry.card, {"etag": entry.etag, **headers})
        return entry.card


async def fetch_card(
    http: httpx.AsyncClient,
    url: str,
    *,
    cache: CardCache | None = None,
    auth: httpx.Auth | None = None,
    headers: Mapping[str, str] | None = None,
    timeouts: Timeouts = DEFAULT_TIMEOUTS,
    limits: Limits = DEFAULT_LIMITS,
    trusted_origins: Iterable[str] | TrustedOrigins = (),
) -> m.AgentCard:
    """Find and read the agent card for ``url`` (an agent base URL or a card URL).

    A redirect is followed only when it stays on the origin (scheme, host, port) of ``url``
    or goes to one of ``trusted_origins`` (URLs, or a :class:`TrustedOrigins` already parsed);
    ``http``'s own ``follow_redirects`` setting is not used.  A card larger than
    ``limits.max_body_bytes`` is not read.  ``timeouts.card`` bounds the whole discovery:
    every request it makes (both well-known paths, their redirects, and the look at the
    origin's card when ``url`` has none), not each one.

    Raises:
        AgentCardError: no card at any well-known path, the card is not valid or too large,
            or it is redirected to another origin.
        AuthenticationRequiredError: the card is served only with credentials (HTTP 401).
        TransportError: the server could not be reached, or the discovery was not over
            within ``timeouts.card`` ("timed out waiting for the answer"), the look at the
            origin's card included.
        ValueError: one of ``trusted_origins`` is not an ``http(s)://`` origin.
    """
    return await _discover(
        http,
        url,
        cache=cache,
        auth=auth,
        headers=headers,
        timeouts=timeouts,
        limits=limits,
        allowed=trusted(trusted_origins).origins,
        deadline=deadline_after(timeouts.card),
        purpose="",
    )


async def _discover(
    http: httpx.AsyncClient,
    url: str,
    *,
    cache: CardCache | None,
    auth: httpx.Auth | None,
    headers: Mapping[str, str] | None,
    timeouts: Timeouts,
    limits: Limits,
    allowed: frozenset[Origin],
    deadline: float,
    purpose: str,
) -> m.AgentCard:
    """:func:`fetch_card`, every request over by the trio clock's ``deadline``; ``purpose``
    follows each card URL in the errors (why that URL is asked, when the caller did not)."""
    why = f"the card discovery was not over within {timeouts.card} s (Timeouts.card)"
    tried: list[str] = []
    for card_url in card_urls(url):
        if cache is not None and (card := cache.fresh(card_url)) is not None:
            return card
        request_headers = {**(headers or {}), "Accept": "application/json"}
        etag = cache.etag(card_url) if cache is not None else ""
        if etag:
            request_headers["If-None-Match"] = etag
        what = f"fetching the agent card at {card_url}{purpose}"
        with http_errors(what):
            request = http.build_request(
                "GET", card_url, headers=request_headers, timeout=timeouts.card_fetch()
            )
            origins = allowed | {origin(request.url)}
            with answered_by(deadline, request, why):
                response = await send_following(http, request, auth=auth, origins=origins)
                if response.next_request is not None:
                    redirect = refused_redirect(f"the agent card at {card_url}", response)
                    raise AgentCardError(redirect)
                content = await read_body(response, limits.max_body_bytes)
        if response.status_code == 304 and cache is not None and etag:
            return cache.revalidated(card_url, response.headers)
        if response.status_code in (404, 405):
            tried.append(card_url)
            continue
        if response.status_code == 401:
            # Like every other 401: the caller can tell "pass credentials" from a broken card.
            raise AuthenticationRequiredError(
                f"the agent card at {card_url} requires authentication (HTTP 401)"
            )
        if content is None:
            raise AgentCardError(
                f"the agent card at {card_url} is larger than {limits.max_body_bytes} bytes "
                "(Limits.max_body_bytes): not read"
            )
        if not response.is_success:
            raise AgentCardError(
                f"HTTP {response.status_code} fetching the card at {card_url}",
                status_code=response.status_code,
            )
        try:
            document = loads(content)
        except A2AError:
            raise AgentCardError(f"the agent card at {card_url} is not JSON") from None
        card = decode_card(document, source=card_url)
        if cache is not None:
            cache.store(card_url, card, response.headers)
        return card
    missing = f"no agent card found (tried {', '.join(tried)})"
    root = show_origin(origin(url))
    if url.rstrip("/") == root:
        raise AgentCardError(missing)
    try:  # a path too many (``/v1``, ``/a2a``): say so when the origin is the agent
        await _discover(
            http,
            root,
            cache=None,
            auth=auth,
            headers=headers,
            timeouts=timeouts,
            limits=limits,
            allowed=frozenset(),
            deadline=deadline,
            purpose=f" (the origin's, as there is none at {', '.join(tried)})",
        )
    except (ClientError, A2AError) as exc:
        if isinstance(exc.__cause__, httpx.TimeoutException):
            raise  # the look was cut short: the caller may give the discovery more time
        raise AgentCardError(missing) from None  # no agent there either: the plain answer
    raise AgentCardError(f"{missing}; {root} has one: give that URL")


def choose_binding(
    card: m.AgentCard,
    preferences: Sequence[str] | None = None,
    *,
    versions: Sequence[str] = ("1.0", "0.3"),
    tenant: str = "",
    origins: Collection[Origin] | None = None,
) -> tuple[m.AgentInterface, Binding]:
    """The interface to use and its binding.

    For the first of ``versions`` the card offers in a binding this client speaks: the card's
    first such interface (A2A v1.0 §8.3.2: earlier entries are the agent's preference), or,
    when ``preferences`` ranks bindings, the first interface of the best-ranked binding.
    With ``origins``, only interfaces on those origins are candidates; when the only usable
    interfaces are elsewhere, the error names one.
    """
    supported = {binding for binding, _ in BINDINGS}
    unknown = [p for p in preferences or () if p not in supported]
    if unknown:
        raise AgentCardError(f"unsupported binding {unknown[0]!r} (one of {', '.join(supported)})")
    found = _choose(card, preferences, versions, tenant, origins)
    if found is not None:
        return found
    elsewhere = _choose(card, preferences, versions, tenant, None) if origins else None
    if elsewhere is not None:
        iface = elsewhere[0]
        allowed = ", ".join(sorted(show_origin(o) for o in origins or ()))
        reason = (
            f"the agent offers {iface.protocol_binding} {iface.protocol_version} only at "
            f"{iface.url}, not on the card's origin ({allowed}): not used, so credentials and "
            "messages are not sent there"
        )
        there = _origin_or_none(iface.url)
        if there is not None and there[0] in ("http", "https") and there[1]:
            raise AgentCardError(reason, untrusted_origin=show_origin(there))
        raise AgentCardError(f"{reason} (to use it, pass a card of your own)")
    offered = ", ".join(
        f"{i.protocol_binding} {i.protocol_version}" for i in card.supported_interfaces
    )
    if preferences is not None and _choose(card, None, versions, tenant, origins) is not None:
        raise AgentCardError(
            f"the agent offers none of the bindings asked for ({', '.join(preferences)};"
            f" offered: {offered})"
        )
    raise AgentCardError(
        f"the agent offers no interface this client speaks (offered: {offered or 'none'})"
    )


def _choose(
    card: m.AgentCard,
    preferences: Sequence[str] | None,
    versions: Sequence[str],
    tenant: str,
    origins: Collection[Origin] | None,
) -> tuple[m.AgentInterface, Binding] | None:
    allowed = list(preferences) if preferences is not None else sorted(b for b, _ in BINDINGS)
    for version in versions:
        usable = [
            iface
            for iface in card.supported_interfaces
            if iface.protocol_binding in allowed
            and _speaks(iface.protocol_version, version)
            and (iface.protocol_binding, version) in BINDINGS
            and (origins is None or _origin_or_none(iface.url) in origins)
        ]
        if preferences is not None:
            usable.sort(key=lambda iface: allowed.index(iface.protocol_binding))  # stable
        if usable:
            iface = usable[0]
            cls = BINDINGS[(iface.protocol_binding, version)]
            return iface, cls(iface.url, tenant=tenant or iface.tenant)
    return None


def _origin_or_none(url: str) -> Origin | None:
    try:
        return origin(url)
    except httpx.InvalidURL:
        return None


def _speaks(declared: str, version: str) -> bool:
    major_minor = ".".join(declared.strip().split(".")[:2])
    return major_minor == version or (version == "1.0" and major_minor == "1")
