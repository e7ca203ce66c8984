"""Credentials for every request: a bearer token, an API key header, or headers from a callable.

Each is an ``httpx.Auth``, so any other ``httpx.Auth`` (OAuth flows, digest, ...) works too.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Mapping

import httpx


class BearerAuth(httpx.Auth):
    """``Authorization: Bearer <token>`` on every request."""

    def __init__(self, token: str) -> None:
        self._value = f"Bearer {token}"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        request.headers["Authorization"] = self._value
        yield request


class ApiKeyAuth(httpx.Auth):
    """An API key in a header (``X-API-Key`` unless the agent's card names another)."""

    def __init__(self, key: str, *, header: str = "X-API-Key") -> None:
        self._header = header
        self._key = key

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        request.headers[self._header] = self._key
        yield request


type HeaderProvider = Callable[[], Awaitable[Mapping[str, str]]]


class HeaderAuth(httpx.Auth):
    """Headers computed per request by an async callable (e.g. a token that gets refreshed)."""

    def __init__(self, provider: HeaderProvider) -> None:
        self._provider = provider

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        request.headers.update(await self._provider())
        yield request
