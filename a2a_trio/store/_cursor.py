"""The ListTasks order and its page tokens.

A2A v1.0 §3.1.4 lists tasks "sorted by their status timestamp time in descending order (most
recently updated tasks first)".  Every backend lists by one key, greatest first: the task's
status time in microseconds (``NO_STATUS_TIME`` for a task without one, which lists last),
then its write order (a store-wide number every create and update raises), so of tasks whose
status times are equal the one written last comes first.  A status change moves a task to
where its new status time lists it; a write that leaves the status alone (a message, an
artifact, metadata) moves it only among the tasks whose status time is its own; an event or a
touch does not move it.  A page token is the key of the last task shown, and the next page
holds the rows below it: a keyset cursor, so rows listed in front of it meanwhile (a task
created, or whose status changed, while a client pages) are neither skipped nor repeated.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Final

from .. import model as m
from ..errors import InvalidParamsError

BAD_TOKEN = "not a page token this server issued"
_MIN, _MAX = -(2**63), 2**63 - 1  # a signed 64-bit SQL integer

NO_STATUS_TIME: Final = -(2**62)
"""The listing time of a task without a status time: below any real one (the year 1 is about
-6.2e16 microseconds), so such a task lists after every task with one."""

type ListingKey = tuple[int, int]
"""(status time in microseconds, or ``NO_STATUS_TIME``; write order): listings go greatest
first."""


def to_micros(stamp: datetime) -> int:
    """A timestamp as integer microseconds since the epoch (exact, and comparable in SQL)."""
    delta = stamp - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def listing_key(task: m.Task, order: int) -> ListingKey:
    """Where ``task``, last written at write order ``order``, lists (see the module docstring)."""
    stamp = task.status.timestamp
    return (NO_STATUS_TIME if stamp is None else to_micros(stamp), order)


def encode_cursor(key: ListingKey) -> str:
    """The page token that continues below ``key``."""
    micros, order = key
    return base64.urlsafe_b64encode(f"t{micros}:{order}".encode()).decode().rstrip("=")


def decode_cursor(token: str) -> ListingKey:
    """The key a token continues below; anything else raises ``InvalidParamsError``."""
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        micros, colon, order = text.removeprefix("t").partition(":")
        if not text.startswith("t") or not colon or not _integer(micros) or not _integer(order):
            raise ValueError(text)
        key = int(micros), int(order)
        if not all(_MIN <= part <= _MAX for part in key):
            raise ValueError(text)
        return key
    except ValueError:  # also bad base64 (binascii.Error) and bad UTF-8
        raise InvalidParamsError(BAD_TOKEN, path="$.pageToken") from None


def _integer(text: str) -> bool:
    digits = text.removeprefix("-")
    return digits.isascii() and digits.isdigit()
