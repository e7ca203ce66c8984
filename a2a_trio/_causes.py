"""Walking what an exception was raised from: HTTP libraries bury the reason for a failure
(a refused connection, a TLS handshake) several causes, contexts or group members down."""

from __future__ import annotations

from collections.abc import Iterator


def causes(error: BaseException) -> Iterator[BaseException]:
    """``error``, then its causes and contexts, the members of exception groups among them
    included, each once."""
    pending = [error]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        pending.extend(c for c in (current.__cause__, current.__context__) if c is not None)
