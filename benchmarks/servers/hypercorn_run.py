"""Run an ASGI app under hypercorn's trio worker on 127.0.0.1, port 0, until killed."""

from __future__ import annotations

import gc
from functools import partial
from pathlib import Path
from typing import Any

import trio
from behaviour import write_port
from hypercorn.config import Config
from hypercorn.trio import serve


def hypercorn_config() -> Config:
    """hypercorn's defaults, except the bind, a deep backlog and no access log."""
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.backlog = 4096
    config.accesslog = None
    return config


FLOOR_GC_THRESHOLDS = (50_000, 20, 100)
"""The collector settings a2a_trio's serving process uses (``a2a_trio.server``'s
``tune_gc_for_streams``), so a floor differs from a2a_trio only in the work it does."""


async def serve_and_publish(app: Any, port_file: Path) -> None:
    """Serve ``app``; write the bound port to ``port_file`` once listening."""
    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(partial(serve, app, hypercorn_config()))
        gc.set_threshold(*FLOOR_GC_THRESHOLDS)
        gc.freeze()
        write_port(port_file, int(binds[0].rsplit(":", 1)[1]))
