"""Reading request bodies with a byte bound, whatever the framing.

Quart refuses an oversize body up front only when it has a Content-Length; a chunked body would be
buffered whole first.  Counting while reading refuses it as soon as it passes the bound.
"""

from __future__ import annotations

from quart import Request


class BodyTooLarge(Exception):
    """The request body exceeds the configured limit."""


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, or ``BodyTooLarge`` as soon as more than ``limit`` bytes arrived.

    No deadline of its own: callers bound it with ``trio.fail_after(config.body_timeout)``.
    """
    declared = request.content_length
    if declared is not None and declared > limit:
        raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.body:
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def too_slow(timeout: float) -> str:
    """What a client whose body did not arrive in time is told."""
    return f"The request body did not arrive within {timeout:g} seconds"
