"""Client configuration as frozen values (timeouts, reconnection, size limits)."""

from __future__ import annotations

import attrs
import httpx


@attrs.frozen
class Timeouts:
    """Seconds to wait; ``None`` waits forever.

    ``read`` bounds each unary call as a whole, from sending the request to the answer's last
    byte (a blocking send waits for the task to finish, so it is long), and a streaming call
    until its answer starts: the event stream's headers, or an error answer read whole (a
    resume's included).  A peer that sends a byte now and then does not keep a call going
    past it: the call is cancelled and fails as one never answered.
    ``card`` bounds the agent card's discovery the same way, as a whole: every request it
    makes (the two well-known paths, their redirects, and a look at the origin's own card
    when the URL has none) ends within it, which fails with the same timeout as one request
    never answered.  A card is a static document, so an address that accepts connections but
    answers slowly or never fails in seconds, not after a blocking send's ``read``.
    ``stream_read`` bounds the gap between bytes on an open stream, which may last for hours:
    leave it ``None``, or make it longer than the server's keepalive interval, so an idle
    stream is never cut.
    ``connect``, ``write`` and ``pool`` bound their own steps within a call: connecting,
    sending the request, and waiting for a free connection when every one the HTTP client may
    open is in use (an ``http=`` client's ``limits``; each open stream holds one).
    """

    connect: float | None = 10.0
    read: float | None = 300.0
    write: float | None = 30.0
    stream_read: float | None = None
    card: float | None = 30.0
    pool: float | None = 30.0

    def unary(self) -> httpx.Timeout:
        return self._reading(self.read)

    def card_fetch(self) -> httpx.Timeout:
        return self._reading(self.card)

    def stream(self) -> httpx.Timeout:
        return self._reading(self.stream_read)

    def _reading(self, read: float | None) -> httpx.Timeout:
        """httpx's limits for a request whose answer may be silent for ``read`` seconds."""
        return httpx.Timeout(connect=self.connect, read=read, write=self.write, pool=self.pool)


@attrs.frozen
class Reconnect:
    """How a dropped stream is resumed: at most ``attempts`` tries in a row, with backoff.

    The delay doubles from ``initial_delay`` up to ``max_delay``; a ``retry:`` the server sent
    is used as the floor.  The count starts again after progress: an update, a changed state
    or a new event id (the task snapshot a resubscribe starts with is not progress).
    """

    attempts: int = attrs.field(default=5, validator=attrs.validators.ge(0))
    initial_delay: float = attrs.field(default=0.25, validator=attrs.validators.ge(0))
    max_delay: float = attrs.field(default=5.0, validator=attrs.validators.ge(0))

    def delay(self, attempt: int, server_retry_ms: int | None) -> float:
        backoff = min(self.max_delay, self.initial_delay * 2.0 ** (attempt - 1))
        floor = (server_retry_ms or 0) / 1000
        return max(backoff, min(floor, self.max_delay))


MiB = 1024 * 1024


@attrs.frozen
class Limits:
    """How much of one answer the client holds in memory.

    ``max_body_bytes`` bounds an agent card, the body of a unary answer (an error answer
    included) and each event of a stream.  The body is read as it arrives and the read stops
    as soon as it is past the limit (or at once, when ``Content-Length`` already says so), so a
    peer that never stops sending costs at most this much.  The default matches the
    event limit of :class:`~a2a_trio.wire.SSEDecoder` (16 MiB).
    """

    max_body_bytes: int = attrs.field(default=16 * MiB, validator=attrs.validators.gt(0))


DEFAULT_TIMEOUTS = Timeouts()
DEFAULT_LIMITS = Limits()
DEFAULT_RECONNECT = Reconnect()
