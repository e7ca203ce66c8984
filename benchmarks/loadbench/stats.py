"""Percentiles and rates, computed the same way for every server."""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) by nearest rank; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[rank]


@attrs.frozen
class Latency:
    """Count, p50 and p99 of a set of durations, in milliseconds."""

    count: int
    p50_ms: float
    p99_ms: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Latency:
        """Summarise durations given in seconds."""
        return cls(
            count=len(seconds),
            p50_ms=percentile(seconds, 50) * 1000,
            p99_ms=percentile(seconds, 99) * 1000,
        )


def ratio(ours: float, theirs: float) -> float:
    """``ours / theirs``, NaN when ``theirs`` is zero or missing."""
    if not theirs or theirs != theirs:
        return float("nan")
    return ours / theirs
