"""The open-file limit of a process that serves many streams.

Every open stream holds a connection and every connection a file descriptor.  Many systems start
processes with a soft limit of 1,024 descriptors under a much higher hard one (systemd's default
is 1,024 under 524,288), which caps a server at about a thousand streams: past it, hypercorn's
accept loop waits for a descriptor to free up, and new clients hang without an answer.  Any
process may raise its soft limit up to its hard one, so the process owners (``a2a_trio.app`` and
the ``a2a-trio serve`` command) do, as they tune the collector (``_gc.py``).  Embedders of
:func:`~a2a_trio.serve` decide for themselves: the limit belongs to their process.
"""

from __future__ import annotations

import logging
import sys

logger = logging.getLogger(__name__)

UNLIMITED_TARGET = 1_048_576
"""The soft limit asked for where the hard limit is unlimited (the kernel refuses "unlimited" as
a soft limit on some systems, macOS among them)."""


def raise_open_file_limit() -> int | None:
    """Raise this process's soft limit on open files to its hard limit, and return the soft
    limit in force afterwards (``None`` on Windows, which has no such limit).  A system that
    refuses keeps the old limit, and the log says how to raise it."""
    if sys.platform == "win32":
        return None
    import resource  # POSIX only: imported here, so the package still imports on Windows

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = UNLIMITED_TARGET if hard == resource.RLIM_INFINITY else hard
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    except (ValueError, OSError) as exc:
        logger.warning(
            "open files stay limited to %d (about as many concurrent streams): raising the"
            " limit to %d failed (%s); raise it before start-up (ulimit -n, LimitNOFILE=)",
            soft,
            wanted,
            exc,
        )
        return soft
    logger.info("open-file limit raised from %d to %d (one per connection)", soft, wanted)
    return wanted
