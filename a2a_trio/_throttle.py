"""Logging a recurring problem without flooding the log.

A task store that cannot work (a damaged file, a database out of reach) fails every request
that reaches it and every tick of a loop that uses it: logged each time, a server under load
writes the same line thousands of times a minute, and the one line that differs is lost among
them.  :class:`ThrottledLog` logs a problem's first report in full, then at most one report of
it per ``interval`` seconds, which says how many were left out since the one before.  Another
problem (another line) is logged at once, and throttled apart; so is a problem that comes back
after ``interval`` seconds without a report.
"""

from __future__ import annotations

import logging
from typing import Final

import attrs
import trio

REPORT_INTERVAL: Final = 60.0
"""Seconds between two logged reports of one problem."""

REMEMBERED: Final = 64
"""Problems a log remembers; past that the one reported least lately is forgotten (its next
report is logged in full, without the count of those left out)."""


@attrs.define
class _Seen:
    logged_at: float
    left_out: int = 0


class ThrottledLog:
    """Reports of recurring problems to ``logger``, each problem (its line and level) logged at
    most once per ``interval`` seconds of trio's clock.  Not thread-safe: one trio run."""

    def __init__(self, logger: logging.Logger, *, interval: float = REPORT_INTERVAL) -> None:
        self._logger = logger
        self._interval = interval
        self._seen: dict[tuple[int, str], _Seen] = {}  # least lately reported first

    def log(self, level: int, message: str, *args: object) -> None:
        """Log ``message % args`` at ``level``, unless the same line was logged at that level
        less than ``interval`` seconds ago: then count it, and the next one logged says how
        many were left out."""
        line = message % args
        now = trio.current_time()
        seen = self._seen.pop((level, line), None)
        if seen is not None and now - seen.logged_at < self._interval:
            seen.left_out += 1
            self._seen[level, line] = seen
            return
        self._seen[level, line] = _Seen(now)
        if len(self._seen) > REMEMBERED:
            del self._seen[next(iter(self._seen))]
        if seen is not None and seen.left_out:
            line += (
                f" [{seen.left_out} more like it in the last {now - seen.logged_at:.0f} s"
                " not logged]"
            )
        self._logger.log(level, "%s", line)
