"""How ``a2a-trio serve`` stops: the first SIGINT/SIGTERM drains, a second one stops at once.

The signal receiver stays installed until the server has stopped, so a second Ctrl-C during
the drain is an orderly stop (running tasks recorded failed) instead of a ``KeyboardInterrupt``
traceback out of the server's nursery.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import AsyncIterator, Awaitable, Callable

import trio

from ..server._stopping import draining

logger = logging.getLogger("a2a_trio.serve")

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

type Serve = Callable[..., Awaitable[None]]
"""``serve(shutdown_trigger=..., task_status=...)``: a server reporting its URL when started."""


async def serve_until_signalled(
    serve: Serve, *, grace: float, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED
) -> None:
    """Run ``serve`` until SIGINT or SIGTERM; report its URL through ``task_status``.

    The first signal triggers ``serve``'s graceful shutdown (running tasks get ``grace``
    seconds); a second one cancels ``serve``, which stops at once.  Each is logged, saying
    what happens next.
    """
    stop = trio.Event()
    with trio.open_signal_receiver(*STOP_SIGNALS) as signals:
        async with trio.open_nursery() as nursery:

            async def serving(*, task_status: trio.TaskStatus[str]) -> None:
                await serve(shutdown_trigger=stop.wait, task_status=task_status)
                nursery.cancel_scope.cancel()  # stopped: no more signals to wait for

            nursery.start_soon(_stop_on_signals, signals, stop, nursery.cancel_scope, grace)
            task_status.started(await nursery.start(serving))


async def _stop_on_signals(
    signals: AsyncIterator[int], stop: trio.Event, serving: trio.CancelScope, grace: float
) -> None:
    async for number in signals:
        name = signal.Signals(number).name
        if not stop.is_set():
            logger.warning(
                "%s received: %s (send %s again to stop at once)", name, draining(grace), name
            )
            stop.set()
            continue
        logger.warning(
            "%s received again: stopping at once; running tasks are recorded as failed", name
        )
        serving.cancel()
        return
