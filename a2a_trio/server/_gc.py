"""Garbage-collector settings for a process that serves many streams.

Measured in the fan-out benchmark (docs/benchmarks.md, finding 2): with a thousand open streams
the cyclic collector's generation-0 passes, triggered by trio's per-wake-up allocations, walk the
whole heap of stream objects; a larger threshold cut server CPU per delivered frame by 20-33 %.
The collector is process-wide, so only the process owners call this: ``a2a_trio.app`` and the
``a2a-trio serve`` command.  Embedders of :func:`~a2a_trio.serve` decide for themselves.
"""

from __future__ import annotations

import gc

STREAM_THRESHOLDS = (50_000, 20, 100)


def tune_gc_for_streams() -> None:
    """Collect generation 0 less often and move start-up objects out of the collector's way."""
    gc.set_threshold(*STREAM_THRESHOLDS)
    gc.freeze()
