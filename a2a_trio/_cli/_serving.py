"""What ``a2a-trio serve`` says when it cannot start: the reason, and what to change."""

from __future__ import annotations

import ipaddress
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..loading import StoreOpenError

_HOST_NAME = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?", re.ASCII)


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _is_host(host: str) -> bool:
    """A host name, an IPv4 address, or an IPv6 one (bare or in brackets)."""
    if host.startswith("[") and host.endswith("]"):
        return _is_ipv6(host[1:-1])
    if ":" in host:
        return _is_ipv6(host)
    return _HOST_NAME.fullmatch(host) is not None


def _port_split(address: str) -> tuple[str, str]:
    """``address`` as host and port (``1.2.3.4:80``, ``[::1]:80``); the port is empty when
    there is none (a bare IPv6 address has colons but no port)."""
    if address.startswith("["):
        host, bracket, rest = address.partition("]")
        if bracket and rest.startswith(":"):
            return host + bracket, rest[1:]
        return address, ""
    host, colon, port = address.rpartition(":")
    return (host, port) if colon and ":" not in host else (address, "")


def host_problem(given: str) -> str | None:
    """Why ``--host given`` cannot be listened on, or None.  A URL or a port in it is told to
    go to ``--port`` (hypercorn would read ``1.2.3.4:80`` as a host and listen nowhere); a
    malformed one (``[::1``, which hypercorn would quietly read as ``::1``) is refused."""
    is_url = "://" in given
    address = given.split("://", 1)[1].split("/", 1)[0] if is_url else given
    host, port = _port_split(address)
    if not _is_host(host) or (port and not port.isdigit()):
        return f"--host {given!r} is not a host name or IP address"
    if host == given:
        return None
    advice = f"--host {host}" + (f" --port {port}" if port else "")
    what = "is a URL" if is_url else "carries a port"
    return f"--host {given!r} {what}: pass the host alone, and the port with --port ({advice})"


def store_problem(url: str, error: StoreOpenError) -> str:
    """Why the task store at ``url`` could not be opened.

    A PostgreSQL URL is not repeated (it may hold a password); a SQLite one is, since the
    reason (``unable to open database file``) does not say which file.
    """
    if url.startswith(("postgresql:", "postgres:")):
        return f"cannot open the task store: {error}"
    return f"cannot open the task store {url!r}: {error}"
