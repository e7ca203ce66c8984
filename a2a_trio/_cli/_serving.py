"""What ``a2a-trio serve`` says when it cannot start: the reason, and what to change."""

from __future__ import annotations

import errno

from ..loading import StoreOpenError

LISTEN_HINTS = {
    errno.EADDRINUSE: "another program is listening there: stop it, or pick another --port;"
    " --port 0 picks a free one",
    errno.EACCES: "ports below 1024 need privileges: pick --port 1024 or above",
    errno.EADDRNOTAVAIL: "no interface of this machine has that address: check --host",
}


def listen_problem(host: str, port: int, error: OSError) -> str:
    """Why the server could not listen on ``host:port``."""
    reason = error.strerror or str(error)
    hint = LISTEN_HINTS.get(error.errno or 0, "")
    if error.errno is not None and error.errno < 0:  # a resolver error: the host name is wrong
        hint = "check --host"
    return f"cannot listen on {host}:{port}: {reason}" + (f" ({hint})" if hint else "")


def store_problem(url: str, error: StoreOpenError) -> str:
    """Why the task store at ``url`` could not be opened.

    A PostgreSQL URL is not repeated (it may hold a password); a SQLite one is, since the
    reason (``unable to open database file``) does not say which file.
    """
    if url.startswith(("postgresql:", "postgres:")):
        return f"cannot open the task store: {error}"
    hint = ""
    if "unable to open database file" in str(error):
        hint = " (does its directory exist, and may you write there?)"
    return f"cannot open the task store {url!r}: {error}{hint}"
