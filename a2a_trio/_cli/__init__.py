"""Pieces of the ``a2a-trio`` command (the command itself is ``a2a_trio.cli``), and its entry
point, which loads it."""

INTERRUPTED = 130
"""The exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells and typer give."""


def main() -> int:
    """Run the ``a2a-trio`` command (``a2a_trio.cli.main``), loading it first.

    Loading it takes most of a second; a Ctrl-C meanwhile (or while the command line is read)
    exits 130 without a word, as one while the command runs does, not with a traceback of the
    import under way.  This module and the package above it load nothing else.
    """
    try:
        from ..cli import main as run

        return run()
    except KeyboardInterrupt:
        return INTERRUPTED
