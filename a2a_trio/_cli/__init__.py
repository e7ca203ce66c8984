"""Pieces of the ``a2a-trio`` command (the command itself is ``a2a_trio.cli``), and its entry
point, which loads it."""

from __future__ import annotations

import signal
from types import FrameType

INTERRUPTED = 130
"""The exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells and typer give."""


def main() -> int:
    """Run the ``a2a-trio`` command (``a2a_trio.cli.main``), loading it first.

    Loading it takes most of a second; a Ctrl-C meanwhile (or while the command line is read)
    exits 130 without a word, as one while the command runs does, not with a traceback of the
    import under way.  This module and the package above it load nothing else.

    While it loads, a Ctrl-C is only noted, and acted on once the command is loaded: Python's
    own handler raises ``KeyboardInterrupt`` wherever the interpreter is, and when that is a
    callback whose exceptions Python ignores (importlib runs weakref callbacks for its module
    locks), the interrupt was printed as "Exception ignored" and lost, and the command ran on.
    """
    try:
        with _NotedInterrupts() as noted:
            from ..cli import main as run
        if noted.interrupted:
            return INTERRUPTED
        return run()
    except KeyboardInterrupt:
        return INTERRUPTED


class _NotedInterrupts:
    """SIGINT noted, not raised, inside the block; Python's handler again after it.  Left
    alone when SIGINT has another handler than Python's (ignored by the shell that started the
    command in the background, say)."""

    def __init__(self) -> None:
        self.interrupted = False
        self._installed = False

    def __enter__(self) -> _NotedInterrupts:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, self._note)
            self._installed = True
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, signal.default_int_handler)

    def _note(self, _signum: int, _frame: FrameType | None) -> None:
        self.interrupted = True
