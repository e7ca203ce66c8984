"""The HTTP layer: sends a binding's calls with httpx and hands answers back to the binding.

Every httpx failure becomes a :class:`TransportError` here, so nothing above sees httpx errors.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import attrs
import httpx

from ._bindings import Binding, HttpCall, Op
from ._errors import TransportError
from ._options import Timeouts

EVENT_STREAM = "text/event-stream"


@attrs.frozen
class ClientStatistics:
    """Counters of one client: unary calls made, streams opened (resubscribes included),
    streams open now, and streams resumed after a drop."""

    calls: int
    streams: int
    open_streams: int
    reconnects: int


@contextmanager
def http_errors(what: str) -> Iterator[None]:
    """Turn httpx's exceptions into :class:`TransportError` naming what was being done."""
    try:
        yield
    except httpx.TimeoutException as exc:
        raise TransportError(f"{what}: timed out ({type(exc).__name__})") from exc
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise TransportError(f"{what}: {str(exc) or type(exc).__name__}") from exc


class Transport:
    """One binding over a shared ``httpx.AsyncClient``, with auth and extra headers."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        binding: Binding,
        *,
        auth: httpx.Auth | None,
        headers: Mapping[str, str],
        timeouts: Timeouts,
    ) -> None:
        self.http = http
        self.binding = binding
        self._auth = auth
        self._headers = {**headers, **binding.headers()}
        self._timeouts = timeouts
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

    async def unary(self, op: Op, request: Any) -> Any:
        """Make a unary call; return its typed result or raise the typed error."""
        call = self.binding.call(op, request)
        self.calls += 1
        with http_errors(f"{op} to {call.url}"):
            response = await self.http.send(
                self._request(call, {"Accept": "application/json"}, self._timeouts.unary()),
                auth=self._auth or httpx.USE_CLIENT_DEFAULT,
            )
        return self.binding.result(op, call, response.status_code, response.content)

    async def open_stream(self, op: Op, request: Any, *, last_event_id: str = "") -> httpx.Response:
        """Start a streaming call; return the open SSE response (the caller closes it).

        An answer that is not an event stream (a JSON error, an HTTP error) raises its error.
        """
        call = self.binding.call(op, request)
        headers = {"Accept": EVENT_STREAM, "Cache-Control": "no-cache"}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        self.streams += 1
        with http_errors(f"{op} to {call.url}"):
            response = await self.http.send(
                self._request(call, headers, self._timeouts.stream()),
                auth=self._auth or httpx.USE_CLIENT_DEFAULT,
                stream=True,
            )
            content_type = response.headers.get("content-type", "")
            if response.is_success and content_type.startswith(EVENT_STREAM):
                self.open_streams += 1
                return response
            try:
                body = await response.aread()
            finally:
                await response.aclose()
        raise self.binding.error(response.status_code, body)
