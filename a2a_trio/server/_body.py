"""Reading request bodies with a byte bound, whatever the framing.

Quart refuses an oversize body up front only when it has a Content-Length; a chunked body would be
buffered whole first.  Counting while reading refuses it as soon as it passes the bound.
"""

from __future__ import annotations

from quart import Request


class BodyTooLarge(Exception):
    """The request body exceeds the configured limit."""


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, or ``BodyTooLarge`` as soon as more than ``limit`` bytes arrived."""
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
