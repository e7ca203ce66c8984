"""The HTTP layer: sends a binding's calls with httpx and hands answers back to the binding.

Every httpx failure becomes a :class:`TransportError` here, so nothing above sees httpx errors.

Two rules hold for every request the client makes (cards included), whatever the
``httpx.AsyncClient`` it was given is configured to do:

- **Redirects stay on the origins the caller chose.**  httpx is never left to follow a
  redirect (it would follow one to any host, stripping only ``Authorization``: an API key
  header, the caller's extra headers and, on 307/308, the request body would go along).
  :func:`send_following` follows a redirect itself, with the credentials applied again, only
  when the target's origin (scheme, host, port) is one of the allowed ones; any other
  redirect is handed back unfollowed for the caller to refuse.
- **Bodies are read up to a limit.**  :func:`read_body` streams a body and stops once it is
  past :attr:`Limits.max_body_bytes`, so a peer cannot make the client buffer without bound.
"""

from __future__ import annotations

import math
import socket
from collections.abc import AsyncIterator, Collection, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import attrs
import httpx
import trio

from .._causes import causes
from ._bindings import Binding, HttpCall, Op
from ._errors import InvalidResponseError, TransportError
from ._options import Limits, Timeouts

EVENT_STREAM = "text/event-stream"
DEFAULT_PORTS = {"http": 80, "https": 443}

type Origin = tuple[str, str, int]
"""``(scheme, host, port)``: where credentials given for one URL may go (RFC 6454)."""


def origin(url: httpx.URL | str) -> Origin:
    """The origin of ``url``, with the scheme's default port filled in.

    Raises:
        httpx.InvalidURL: ``url`` cannot be parsed.
    """
    url = httpx.URL(url)
    return (url.scheme, url.host, url.port or DEFAULT_PORTS.get(url.scheme, 0))


def show_origin(value: Origin) -> str:
    scheme, host, port = value
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" + ("" if DEFAULT_PORTS.get(scheme) == port else f":{port}")


@attrs.frozen
class TrustedOrigins:
    """Origins besides the agent's own that may receive the credentials and messages.

    Made once from URLs (:meth:`parse`) and handed on as it is, so a bad URL is refused before
    anything is sent and each URL is read once, however many requests consult the origins.
    """

    origins: frozenset[Origin] = frozenset()

    @classmethod
    def parse(cls, urls: Iterable[str]) -> TrustedOrigins:
        """The origins of ``urls`` (``"https://api.example.com"``; only the origin counts).
        One URL may be given alone, as a string: it is one URL, not its characters.

        Raises:
            ValueError: one is not an absolute ``http://`` or ``https://`` URL.
        """
        parsed = set()
        for value in (urls,) if isinstance(urls, str) else urls:
            try:
                found = origin(value)
            except httpx.InvalidURL:
                found = ("", "", 0)
            if found[0] not in DEFAULT_PORTS or not found[1]:
                raise ValueError(f"{value!r} is not an http:// or https:// origin")
            parsed.add(found)
        return cls(frozenset(parsed))


def trusted(value: Iterable[str] | TrustedOrigins) -> TrustedOrigins:
    """``trusted_origins=`` as given: already parsed, or URLs parsed now (``ValueError``)."""
    if isinstance(value, TrustedOrigins):
        return value
    try:
        return TrustedOrigins.parse(value)
    except ValueError as exc:
        raise ValueError(f"trusted_origins: {exc}") from None


async def send_following(
    http: httpx.AsyncClient,
    request: httpx.Request,
    *,
    auth: httpx.Auth | None,
    origins: Collection[Origin],
) -> httpx.Response:
    """Send ``request`` and follow its redirects that stay on ``origins``; return the answer
    with its body not yet read (the caller closes it).

    Each redirect is followed with the request httpx builds for it (``next_request``: the
    method and body rules of RFC 9110) and the credentials applied again.  A redirect to any
    other origin is returned unfollowed, closed, with ``next_request`` set: the caller raises
    its own error for it (see :func:`refused_redirect`).  More than the client's
    ``max_redirects`` in a row raise ``httpx.TooManyRedirects``.
    """
    for _ in range(http.max_redirects + 1):
        response = await http.send(
            request, auth=auth or httpx.USE_CLIENT_DEFAULT, follow_redirects=False, stream=True
        )
        target = response.next_request
        if target is None:
            return response
        await response.aclose()
        if origin(target.url) not in origins:
            return response
        request = target
    raise httpx.TooManyRedirects("Exceeded maximum allowed redirects.", request=request)


def refused_redirect(what: str, response: httpx.Response) -> str:
    """Why a redirect :func:`send_following` handed back was not followed."""
    target = response.next_request.url if response.next_request else ""
    return (
        f"{what} was redirected (HTTP {response.status_code}) to {target}, another origin: "
        "not followed (credentials and requests go only to the origins you gave)"
    )


async def read_body(response: httpx.Response, max_bytes: int) -> bytes | None:
    """The (decoded) body of a streamed ``response``, or ``None`` if it is larger than
    ``max_bytes``; either way the response is closed.

    The body is read as it arrives and the read stops as soon as it is past the limit (at
    once, when ``Content-Length`` announces more), so memory stays bounded whatever the peer
    sends.  On cancellation the response is closed.
    """
    try:
        declared = int(response.headers.get("content-length", ""))
    except ValueError:
        declared = 0
    if declared > max_bytes:
        await response.aclose()
        return None
    body = bytearray()
    chunks = response.aiter_bytes()
    try:
        async for chunk in chunks:
            body += chunk
            if len(body) > max_bytes:
                return None
        return bytes(body)
    finally:
        await close_response(response, chunks)


async def close_response(response: httpx.Response, chunks: AsyncIterator[bytes] | None) -> None:
    """Close ``response`` and finish ``chunks``, the iterator over its body, if one was started.

    Closing only the outermost of httpx's nested byte generators would leave the inner ones
    for the garbage collector (trio warns about each).  On a closed connection the next read
    fails at the innermost level, and that error unwinds every generator in the chain.  An
    iterator never started has nothing to unwind: its first step finds the response closed
    (``httpx.StreamClosed``, which is no ``HTTPError``).  Shielded from cancellation: the
    connection is released whatever happens.
    """
    with trio.CancelScope(shield=True):
        await response.aclose()
        if chunks is not None:
            try:
                async for _ in chunks:
                    pass
            except (httpx.HTTPError, httpx.StreamClosed):
                pass


@attrs.frozen
class ClientStatistics:
    """Counters of one client: unary calls made, streams opened (resubscribes included),
    streams open now, and streams resumed after a drop."""

    calls: int
    streams: int
    open_streams: int
    reconnects: int


# What the client was doing when a timeout of :class:`Timeouts` ran out.
TIMED_OUT: dict[type[httpx.TimeoutException], str] = {
    httpx.ConnectTimeout: "connecting",
    httpx.ReadTimeout: "waiting for the answer",
    httpx.WriteTimeout: "sending the request",
    httpx.PoolTimeout: "waiting for a free connection",
}


def answered_within(
    limit: float | None, request: httpx.Request, setting: str
) -> AbstractContextManager[None]:
    """Bound a whole exchange, the answer's last byte included, by ``limit`` seconds.

    httpx's read timeout bounds each read only: a peer that sends a byte now and then keeps
    a request going as long as it likes.  Past the deadline the exchange is cancelled (its
    response closed) and ``httpx.ReadTimeout`` raised, as for an answer that never came, so
    :func:`http_errors` words it the same way.  ``None`` sets no bound.

    Raises:
        httpx.ReadTimeout: the exchange was not over within ``limit`` seconds.
    """
    why = f"not answered within {limit} s ({setting})"
    return answered_by(deadline_after(limit), request, why)


def deadline_after(limit: float | None) -> float:
    """The trio clock's time ``limit`` seconds from now (``math.inf`` for ``None``)."""
    return math.inf if limit is None else trio.current_time() + limit


@contextmanager
def answered_by(deadline: float, request: httpx.Request, why: str) -> Iterator[None]:
    """Bound an exchange by the trio clock's ``deadline``, which several exchanges may share
    (the requests of one card discovery); as :func:`answered_within` otherwise.

    Raises:
        httpx.ReadTimeout: ``why``: the exchange was not over by ``deadline``.
    """
    with trio.move_on_at(deadline) as scope:
        yield
    if scope.cancelled_caught:
        raise httpx.ReadTimeout(why, request=request)


@contextmanager
def http_errors(what: str) -> Iterator[None]:
    """Turn httpx's exceptions into :class:`TransportError` naming what was being done."""
    try:
        yield
    except httpx.TimeoutException as exc:
        waiting = TIMED_OUT.get(type(exc), type(exc).__name__)
        raise TransportError(f"{what}: timed out {waiting}") from exc
    except httpx.ConnectError as exc:
        reason = connect_failure(exc) or str(exc) or type(exc).__name__
        raise TransportError(f"{what}: {reason}") from exc
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise TransportError(f"{what}: {str(exc) or type(exc).__name__}") from exc


def connect_failure(error: BaseException) -> str:
    """Why a connection could not be made, in the words a user acts on, or ``""``.

    httpx words a refused connection as "all attempts to connect ... failed" (the refusal is in
    an exception group down the cause chain) and an unknown host as a bare resolver error.
    """
    for cause in causes(error):
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused: nothing is listening there (is the agent running?)"
        if isinstance(cause, socket.gaierror):
            return f"the host name does not resolve ({cause.strerror or cause})"
    return ""


class Transport:
    """One binding over a shared ``httpx.AsyncClient``, with auth and extra headers.

    Redirects are followed only to ``origins``; bodies are read up to ``limits``.
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        binding: Binding,
        *,
        auth: httpx.Auth | None,
        headers: Mapping[str, str],
        timeouts: Timeouts,
        limits: Limits,
        origins: Collection[Origin],
    ) -> None:
        self.http = http
        self.binding = binding
        self.limits = limits
        self._auth = auth
        self._headers = {**headers, **binding.headers()}
        self._timeouts = timeouts
        self._origins = origins
        self.calls = 0
        self.streams = 0
        self.open_streams = 0
        self.reconnects = 0

    def statistics(self) -> ClientStatistics:
        return ClientStatistics(self.calls, self.streams, self.open_streams, self.reconnects)

    def _request(
        self, call: HttpCall, headers: Mapping[str, str], timeout: httpx.Timeout
    ) -> httpx.Request:
        return self.http.build_request(
            call.method,
            call.url,
            json=call.json,
            params=call.params or None,
            headers={**self._headers, **headers},
            timeout=timeout,
        )

    async def _send(self, what: str, request: httpx.Request) -> httpx.Response:
        """The answer to ``request`` (body unread), redirects followed within the origins."""
        response = await send_following(self.http, request, auth=self._auth, origins=self._origins)
        if response.next_request is not None:
            raise TransportError(refused_redirect(what, response), status_code=response.status_code)
        return response

    async def _body(self, what: str, response: httpx.Response) -> bytes:
        """The answer's body; past :attr:`Limits.max_body_bytes` raises InvalidResponseError."""
        body = await read_body(response, self.limits.max_body_bytes)
        if body is None:
            raise InvalidResponseError(
                f"the answer to {what} is larger than {self.limits.max_body_bytes} bytes "
                "(Limits.max_body_bytes): not read"
            )
        return body

    async def unary(self, op: Op, request: Any) -> Any:
        """Make a unary call; return its typed result or raise the typed error."""
        call = self.binding.call(op, request)
        self.calls += 1
        what = f"{op} to {call.url}"
        request = self._request(call, {"Accept": "application/json"}, self._timeouts.unary())
        with http_errors(what), answered_within(self._timeouts.read, request, "Timeouts.read"):
            response = await self._send(what, request)
            body = await self._body(what, response)
        return self.binding.result(op, call, response.status_code, body)

    async def open_stream(self, op: Op, request: Any, *, last_event_id: str = "") -> httpx.Response:
        """Start a streaming call; return the open SSE response (the caller closes it).

        An answer that is not an event stream (a JSON error, an HTTP error) raises its error.
        """
        call = self.binding.call(op, request)
        headers = {"Accept": EVENT_STREAM, "Cache-Control": "no-cache"}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        self.streams += 1
        what = f"{op} to {call.url}"
        with http_errors(what):
            response, body = await self._stream_answer(
                what, self._request(call, headers, self._timeouts.stream())
            )
        if body is None:
            self.open_streams += 1
            return response
        raise self.binding.error(response.status_code, body)

    async def _stream_answer(
        self, what: str, request: httpx.Request
    ) -> tuple[httpx.Response, bytes | None]:
        """The answer to a streaming call: an open event stream (no body), or any other answer
        read whole.  It must start (and another answer be read) within ``Timeouts.read``, as a
        unary answer: the request's own read limit is ``stream_read``, the longest silence
        between events, which is no limit by default.

        Raises:
            httpx.ReadTimeout: no answer within ``Timeouts.read``.
        """
        with answered_within(self._timeouts.read, request, "Timeouts.read"):
            response = await self._send(what, request)
            content_type = response.headers.get("content-type", "")
            if response.is_success and content_type.startswith(EVENT_STREAM):
                return response, None
            return response, await self._body(what, response)
