"""Guard for the ASGI entry point: a2a_trio runs on trio, so refuse any other event loop."""

from __future__ import annotations

import sys
from typing import Any

import sniffio

TRIO_ONLY = (
    "a2a_trio runs on trio: start it with hypercorn's trio worker, "
    "'hypercorn -k trio a2a_trio.app:app' (or use the 'a2a-trio serve' command)"
)


class TrioOnly:
    """Wraps an ASGI app and stops the process at once, with instructions, under a non-trio
    server (hypercorn's default asyncio worker)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        library = sniffio.current_async_library()
        if library == "trio":
            await self.app(scope, receive, send)
        elif scope["type"] == "lifespan" and library == "asyncio":
            import asyncio  # only reached when the server is not trio's

            # A SystemExit raised from a loop callback ends the loop and the process with the
            # message as one line and status 1; raised from this task, or a failed startup
            # reported to hypercorn, would print tracebacks instead.
            await receive()
            asyncio.get_running_loop().call_soon(sys.exit, f"error: {TRIO_ONLY}")
            await receive()  # the loop stops before another lifespan message arrives
        elif scope["type"] == "lifespan":
            await receive()
            await send({"type": "lifespan.startup.failed", "message": TRIO_ONLY})
        else:
            raise RuntimeError(TRIO_ONLY)
