"""Pieces of the ``a2a-trio`` command (the command itself is ``a2a_trio.cli``)."""
