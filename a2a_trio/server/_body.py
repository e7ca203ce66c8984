"""Reading request bodies with a byte bound, whatever the framing, and a time bound.

Quart refuses an oversize body up front only when it has a Content-Length; a chunked body would be
buffered whole first.  Counting while reading refuses it as soon as it passes the bound.  Every
binding reads its body under :func:`body_deadline`, the one place a late body becomes a 408.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from types import TracebackType

import trio
from quart import Request
from quart.wrappers.base import ClientDisconnectedError

from ..errors import InvalidRequestError


class BodyTooLargeError(InvalidRequestError):
    """The request body exceeds ``ServerConfig.max_body_bytes`` (-32600, HTTP 413); the body
    readers raise it, and each binding answers it in its own error shape."""

    http_status = 413

    def __init__(self, limit: int) -> None:
        super().__init__(f"Request body larger than {limit} bytes")


class BodyTooSlowError(InvalidRequestError):
    """The request body did not arrive within ``body_timeout`` (-32600, HTTP 408)."""

    http_status = 408
    grpc_status = "DEADLINE_EXCEEDED"


def body_deadline(timeout: float) -> AbstractContextManager[None]:
    """Bound reading a request body (``ServerConfig.body_timeout``): when ``timeout`` seconds
    pass first, the read is cancelled and ``BodyTooSlowError`` raised, which each binding
    answers in its own error shape with the error's HTTP status."""
    return _BodyDeadline(timeout)


class _BodyDeadline:
    """:func:`body_deadline`: a cancel scope whose cancellation becomes ``BodyTooSlowError``.
    A class rather than ``@contextmanager`` around ``trio.fail_after``: every request enters
    one, and each generator-based layer costs a generator and two resumptions of it."""

    def __init__(self, timeout: float) -> None:
        self._timeout = timeout
        self._scope = trio.move_on_after(timeout)

    def __enter__(self) -> None:
        self._scope.__enter__()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        handled = self._scope.__exit__(exc_type, exc, traceback)
        if self._scope.cancelled_caught:
            raise BodyTooSlowError(
                f"The request body did not arrive within {self._timeout:g} seconds"
            ) from None
        return handled


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, or ``BodyTooLargeError`` as soon as more than ``limit`` bytes arrived.

    No deadline of its own: callers bound it with :func:`body_deadline`.  A client that
    disconnects before its body is complete cancels the request (quart-trio has cancelled its
    scope by then), which is no failure to answer or log.
    """
    declared = request.content_length
    if declared is not None and declared > limit:
        raise BodyTooLargeError(limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.body:
            size += len(chunk)
            if size > limit:
                raise BodyTooLargeError(limit)
            chunks.append(chunk)
    except ClientDisconnectedError:
        await trio.lowlevel.checkpoint()  # raises the request's cancellation
        raise
    return b"".join(chunks)
