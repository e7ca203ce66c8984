"""What a server says as its graceful stop begins: the same words whoever starts it (a signal
to ``a2a-trio serve``, or hypercorn's lifespan shutdown under ``hypercorn a2a_trio.app:app``)."""

from __future__ import annotations


def draining(grace: float) -> str:
    """The log's account of a drain that gives running tasks ``grace`` seconds."""
    return f"stopping; new tasks are refused and running ones get up to {grace:g} s to finish"
