"""How long a PostgreSQL store call may wait, and the libpq connection string that says so.

psycopg's sync calls run in worker threads that trio cannot cancel, so every wait a call can
meet needs a bound of its own: for a free pooled connection (the pool's ``timeout``), for a new
connection (``connect_timeout``), for a row or table lock (``lock_timeout``), for a statement
(``statement_timeout``), and for a server that stopped answering mid-call (``tcp_user_timeout``
and TCP keepalives; without them a dead connection holds its call for as long as the OS keeps
it, many minutes), and, for a server process that stopped while its host runs, a watchdog on
the client side (``late_answer``).  On the server's side, a transaction of this store left open
by a client that froze or died is ended (``idle_in_transaction_session_timeout``), so its locks
do not outlive it.  A parameter the store URL (or libpq's environment) gives itself wins: that
is the deployment's say, these are the code's defaults.
"""

from __future__ import annotations

import math
import os
from typing import Final

import attrs
from psycopg import pq
from psycopg.conninfo import conninfo_to_dict, make_conninfo

KEEPALIVES: Final = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5}
"""Probe a connection silent for 10 s every 5 s: a server gone while a call waits for its
answer is noticed by the probes, which ``tcp_user_timeout`` then bounds (on Linux)."""


@attrs.frozen
class PostgresTimeouts:
    """Seconds a PostgreSQL store call may wait; ``None`` sets no bound of a2a_trio's, leaving
    the wait to the deployment's settings (the server's, role's or database's, libpq's, the
    OS's), by default unbounded.

    ``statement``: one statement's run on the server (``statement_timeout``); 30 s fits a full
    event-log replay or a listing's count over 100,000 tasks with room to spare, as SQLite's
    busy timeout does.  ``lock``: waiting for a row or table lock held by another transaction
    (``lock_timeout``); the store's own transactions hold their locks for milliseconds, so 10 s
    means someone else's long transaction.  ``idle_in_transaction``: a session of this store
    sitting inside an open transaction with no statement running
    (``idle_in_transaction_session_timeout``): the store's transactions go from one statement to
    the next in milliseconds, so 30 s means the client froze or vanished mid-transaction, and
    the server then ends the session, releasing its locks.  ``network``: data sent and not
    acknowledged by the server, a dead or unreachable host (``tcp_user_timeout``).
    ``connect``: opening a connection (``connect_timeout``, whole seconds).  ``pool``: waiting
    for a free pooled connection (the pool's ``timeout``).  ``late_answer``: how long after the
    statement bound in force a statement's answer may still come; past it the store gives up on
    the server from the client side and shuts the connection down (a watchdog in the store):
    the only bound a server process that stopped while its host runs meets.  ``None`` here, or no
    statement bound, turns that watchdog off.
    """

    statement: float | None = 30.0
    lock: float | None = 10.0
    idle_in_transaction: float | None = 30.0
    network: float | None = 30.0
    connect: float | None = 10.0
    pool: float = 30.0
    late_answer: float | None = 5.0

    def __attrs_post_init__(self) -> None:
        """Refuse a zero or negative bound: PostgreSQL would read 0 as no limit at all."""
        for field in attrs.fields(PostgresTimeouts):
            value = getattr(self, field.name)
            if value is not None and value <= 0:
                raise ValueError(f"PostgresTimeouts.{field.name} must be positive, not {value}")

    def session_options(self) -> str:
        """The server settings as libpq ``options`` (``-c name=milliseconds``)."""
        settings = {
            "statement_timeout": self.statement,
            "lock_timeout": self.lock,
            "idle_in_transaction_session_timeout": self.idle_in_transaction,
        }
        return " ".join(
            f"-c {name}={_millis(value)}" for name, value in settings.items() if value is not None
        )

    def network_parameters(self) -> dict[str, int]:
        """The libpq connection parameters bounding connecting and a silent server."""
        parameters: dict[str, int] = {}
        if self.network is not None:
            parameters |= {**KEEPALIVES, "tcp_user_timeout": _millis(self.network)}
        if self.connect is not None:
            parameters["connect_timeout"] = math.ceil(self.connect)
        return parameters


DEFAULT_POSTGRES_TIMEOUTS: Final = PostgresTimeouts()


def _millis(seconds: float) -> int:
    """Milliseconds as PostgreSQL and libpq take them (at least 1: 0 would mean no limit)."""
    return max(1, round(seconds * 1000))


def _given(url: str) -> dict[str, object]:
    """The libpq parameters the deployment sets: in ``url``, or else in libpq's environment
    variables (``PGOPTIONS``, ``PGCONNECT_TIMEOUT``), which libpq reads only for what the
    connection string leaves out."""
    environment = {
        option.keyword.decode(): option.val.decode()
        for option in pq.Conninfo.get_defaults()
        if option.envvar is not None
        and option.val is not None
        and option.envvar.decode() in os.environ
    }
    return {**environment, **conninfo_to_dict(url)}


def conninfo(url: str, timeouts: PostgresTimeouts, *, bound_statements: bool) -> str:
    """``url`` with ``timeouts`` for what the deployment leaves unset: its own parameters are
    kept, and its ``options`` come after the store's, so a ``-c statement_timeout=...`` there
    wins.

    Without ``bound_statements`` only the network bounds are added, for the migrations: one may
    build an index over a large table for longer than a statement's bound, or wait for a peer
    replica's migration to finish.
    """
    given = _given(url)
    extra: dict[str, str | int | None] = {
        name: value for name, value in timeouts.network_parameters().items() if name not in given
    }
    if bound_statements:
        extra["options"] = " ".join(
            filter(None, [timeouts.session_options(), str(given.get("options") or "")])
        )
    return make_conninfo(url, **extra)
