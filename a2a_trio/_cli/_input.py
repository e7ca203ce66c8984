"""The text of the message ``send`` and ``stream`` send: given on the command line, or read from
stdin (``TEXT`` of ``-``) or a file (``--text-file PATH``), whole and as it is.

Whatever stops the reading (no such file, a directory, no permission, bytes that are not
UTF-8) is a usage problem saying which source and why, before anything is sent.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ._running import UsageProblem

STDIN = "-"
"""``TEXT`` (or ``--text-file``) naming stdin, as for most commands that read files."""

TYPING_HINT = "type the message, then Ctrl-D on a line of its own to send it (Ctrl-C gives up)"
"""Said on stderr when stdin is a terminal: without it the command seems to hang."""


def message_text(text: str | None, text_file: str | None) -> str:
    """The message's text: ``text`` as given, or read from stdin or ``text_file``.

    Reading stdin blocks until it ends (Ctrl-D at a terminal, which is then said on stderr); a
    Ctrl-C meanwhile raises ``KeyboardInterrupt``, which the command turns into exit 130.
    """
    if text is not None and text_file is not None:
        raise UsageProblem("give the message as TEXT or with --text-file, not both")
    if text_file is not None and text_file != STDIN:
        return _read_file(text_file)
    if text_file is not None or text == STDIN:
        return _read_stdin()
    if text is None:
        raise UsageProblem(
            "Missing argument 'TEXT': give the message, - to read it from stdin, or"
            " --text-file PATH"
        )
    return text


def _read_file(path: str) -> str:
    source = f"--text-file {path!r}"
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UsageProblem(f"{source}: {exc.strerror or exc}") from None
    return _decoded(data, source)


def _read_stdin() -> str:
    if sys.stdin is None:  # started with its stdin closed
        raise UsageProblem("TEXT '-' reads the message from stdin, but stdin is closed")
    if sys.stdin.isatty():  # a person typing, who may not know how to end it
        print(TYPING_HINT, file=sys.stderr, flush=True)
    return _decoded(sys.stdin.buffer.read(), "stdin")


def _decoded(data: bytes, source: str) -> str:
    """``data`` as UTF-8 text (a leading byte-order mark dropped), or a problem naming the line
    of the first byte that is not."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UsageProblem(
            f"{source} is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}):"
            " save it as UTF-8"
        ) from None
