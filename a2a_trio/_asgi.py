"""Guard for the ASGI entry point: a2a_trio runs on trio, so refuse any other event loop."""

from __future__ import annotations

from typing import Any

import sniffio

TRIO_ONLY = (
    "a2a_trio runs on trio: start it with hypercorn's trio worker, "
    "'hypercorn -k trio a2a_trio.app:app' (or use the 'a2a-trio serve' command)"
)


class TrioOnly:
    """Wraps an ASGI app and fails at once, with instructions, under a non-trio server."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if sniffio.current_async_library() == "trio":
            await self.app(scope, receive, send)
        elif scope["type"] == "lifespan":
            # Failing the startup makes the server exit at once, showing this message.
            await receive()
            await send({"type": "lifespan.startup.failed", "message": TRIO_ONLY})
        else:
            raise RuntimeError(TRIO_ONLY)
