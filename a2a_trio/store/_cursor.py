"""ListTasks page tokens: an opaque wrapper around a store's listing-order number.

Every backend lists newest-updated first by a unique, store-wide increasing number (the order of
the task's last write), so "the rows below the last one I saw" is a stable keyset cursor: rows
inserted while a client pages come in front of it and are neither skipped nor repeated.
"""

from __future__ import annotations

import base64

from ..errors import InvalidParamsError

BAD_TOKEN = "not a page token this server issued"
_MAX_ORDER = 2**63 - 1  # a signed 64-bit SQL integer


def encode_cursor(order: int) -> str:
    """The page token that continues below ``order``."""
    return base64.urlsafe_b64encode(f"m{order}".encode()).decode().rstrip("=")


def decode_cursor(token: str) -> int:
    """The order a token continues below; anything else raises ``InvalidParamsError``."""
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        if not text.startswith("m") or not text[1:].isascii() or not text[1:].isdigit():
            raise ValueError(text)
        order = int(text[1:])
        if order > _MAX_ORDER:
            raise ValueError(text)
        return order
    except ValueError:  # also bad base64 (binascii.Error) and bad UTF-8
        raise InvalidParamsError(BAD_TOKEN, path="$.pageToken") from None
