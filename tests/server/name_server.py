"""A DNS server a test controls, for the webhook address checks (trio's custom resolver hook)."""

from __future__ import annotations

import socket
from typing import Any

import trio


class NameServer(trio.abc.HostnameResolver):
    """``name`` resolves to ``answers[n]`` at its n-th lookup, and to the last answer from then
    on (``"1.2.3.4", "127.0.0.1"``: DNS rebinding); other names resolve as usual.  Install it
    with ``trio.socket.set_custom_hostname_resolver``: it lasts for the test's trio run."""

    def __init__(self, name: str, *answers: str) -> None:
        self.name = name.encode()
        self.answers = answers
        self.lookups = 0

    async def getaddrinfo(
        self,
        host: bytes | None,
        port: bytes | str | int | None,
        family: int = 0,
        type: int = 0,
        proto: int = 0,
        flags: int = 0,
    ) -> list[Any]:
        if host != self.name:
            return await trio.to_thread.run_sync(
                socket.getaddrinfo, host, port, family, type, proto, flags
            )
        address = self.answers[min(self.lookups, len(self.answers) - 1)]
        self.lookups += 1
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port))]

    async def getnameinfo(self, sockaddr: tuple[str, int], flags: int) -> tuple[str, str]:
        raise NotImplementedError  # never asked here
