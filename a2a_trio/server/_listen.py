"""Listening on a server's address, and saying plainly why it cannot: in the terms of whoever
chose the address (``serve(port=...)``, ``a2a-trio serve --port``).  Serving an app there is
``_worker.serve_on``."""

from __future__ import annotations

import errno
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import attrs
from hypercorn.config import Sockets


@attrs.frozen
class ListenTerms:
    """How the address settings are spelled where they were given."""

    port: str
    """The port setting's name (``port``, ``--port``)."""
    port_set_to: str
    """The port setting given a value, ``{}`` standing for it (``port={}``, ``--port {}``)."""
    host: str
    """The host setting's name."""


SERVE_TERMS = ListenTerms("port", "port={}", "host")
"""``serve()``'s keyword arguments."""

_HINTS = {
    errno.EADDRINUSE: "another program is listening there: stop it, or pick another {port};"
    " {port_0} picks a free one",
    errno.EACCES: "ports below 1024 need privileges: pick {port_1024} or above",
    errno.EADDRNOTAVAIL: "no interface of this machine has that address: check {host}",
}


def listen_problem(host: str, port: int, error: OSError, terms: ListenTerms = SERVE_TERMS) -> str:
    """Why the server could not listen on ``host:port``, and what to change."""
    reason = error.strerror or str(error)
    if error.errno is not None and error.errno < 0:  # a resolver error: the host name is wrong
        hint = f"check {terms.host}"
    else:
        hint = _HINTS.get(error.errno or 0, "").format(
            port=terms.port,
            port_0=terms.port_set_to.format(0),
            port_1024=terms.port_set_to.format(1024),
            host=terms.host,
        )
    return f"cannot listen on {host}:{port}: {reason}" + (f" ({hint})" if hint else "")


class ListenError(OSError):
    """A server could not listen on its address; ``errno`` and ``strerror`` are the socket's,
    the message says where and what to change (:func:`listen_problem`)."""

    def __init__(self, host: str, port: int, error: OSError) -> None:
        super().__init__(error.errno, error.strerror or str(error))
        self.host = host
        self.port = port

    def __str__(self) -> str:
        return listen_problem(self.host, self.port, self)


def open_sockets(host: str, port: int, *, backlog: int) -> Sockets:
    """A listening socket on ``host:port`` (an IPv6 address bare or in brackets), made as
    hypercorn makes its own, for hypercorn to serve on; closed again when it cannot listen.

    Raises:
        ListenError: the address is taken, needs privileges, or is not this machine's.
    """
    address = host.removeprefix("[").removesuffix("]")
    sock = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setblocking(False)
        sock.bind((address, port))
        sock.listen(backlog)
    except OSError as exc:
        sock.close()
        raise ListenError(host, port, exc) from None
    return Sockets(secure_sockets=[], insecure_sockets=[sock], quic_sockets=[])


@contextmanager
def listening(host: str, port: int, *, backlog: int) -> Iterator[Sockets]:
    """:func:`open_sockets` for the block, closed at its end whatever happened meanwhile."""
    sockets = open_sockets(host, port, backlog=backlog)
    try:
        yield sockets
    finally:
        for sock in sockets.insecure_sockets:
            sock.close()
