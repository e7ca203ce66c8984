"""The benchmark agent written with a2a_trio, served by ``a2a_trio.serve`` (hypercorn, trio).

Same behaviour as the SDK side (see ``behaviour.py``): one default skill that echoes, holds or
fans out. ``--retention-seconds`` turns on the memory store's purge of finished tasks older
than that (checked every second) and keeps the newest ``FINISHED_LOGS`` finished event logs in the
runtime, for the memory scenario; by default the store keeps every task, as in the SDK.
"""

from __future__ import annotations

from datetime import timedelta
from functools import partial
from pathlib import Path

import trio
from behaviour import behaviour_of, emit_text, raise_fd_limit, released, server_args, write_port

from a2a_trio import Agent, RuntimeConfig, ServerConfig, TaskContext, serve
from a2a_trio.server import tune_gc_for_streams
from a2a_trio.store import Retention, open_store

FINISHED_LOGS = 1000


def build_agent() -> Agent:
    """The benchmark agent: one default skill."""
    agent = Agent("bench", "Benchmark agent (echo, hold, fan-out)")

    @agent.skill(default=True)
    async def bench(ctx: TaskContext) -> str:
        """Echo the text, or hold / fan out as the message's metadata asks."""
        todo = behaviour_of(ctx.metadata)
        if todo.kind not in ("hold", "fanout"):
            return ctx.text
        await ctx.update()
        for _poll in range(todo.max_polls):
            if released(todo.file):
                break
            await trio.sleep(todo.poll)
        for _ in range(todo.events):
            await ctx.emit_artifact(emit_text())
            await trio.sleep(todo.interval)
        return "done"

    return agent


async def serve_bench(port_file: Path, keepalive: float, retention_seconds: float) -> None:
    """Serve the agent on 127.0.0.1, an ephemeral port, until killed."""
    config = ServerConfig(keepalive=keepalive)
    store = None
    if retention_seconds > 0:
        config = ServerConfig(
            keepalive=keepalive, runtime=RuntimeConfig(finished_logs=FINISHED_LOGS)
        )
        retention = Retention(
            terminal_ttl=timedelta(seconds=retention_seconds), purge_interval=timedelta(seconds=1)
        )
        store = partial(open_store, "memory", retention=retention)
    async with trio.open_nursery() as nursery:
        url: str = await nursery.start(
            partial(serve, build_agent(), host="127.0.0.1", port=0, store=store, config=config)
        )
        tune_gc_for_streams()  # as `a2a-trio serve` and `a2a_trio.app` do for their process
        write_port(port_file, int(url.rsplit(":", 1)[1]))


def main() -> None:
    args = server_args(__doc__ or "")
    raise_fd_limit()
    trio.run(serve_bench, args.port_file, args.keepalive, args.retention_seconds)


if __name__ == "__main__":
    main()
