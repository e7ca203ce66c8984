"""``a2a-trio serve`` as a child process, for the tests that kill one (SIGKILL, SIGTERM) and
start the next on the same store."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import attrs
import trio
import trio.lowlevel

TESTS = Path(__file__).parent
SERVING = re.compile(r"serving \S+ at (http://\S+)")


async def lines(stream: trio.abc.ReceiveStream) -> AsyncIterator[str]:
    """A process pipe's lines as they come."""
    pending = b""
    async for chunk in stream:
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield line.decode()
    if pending:
        yield pending.decode()


@attrs.define
class Server:
    """One ``a2a-trio serve`` process: its URL and everything it wrote to stderr."""

    process: trio.Process
    url: str = ""
    stderr: list[str] = attrs.field(factory=list)


async def run_server(
    agent: str, store_url: str, *options: str, task_status: trio.TaskStatus[Server]
) -> None:
    """Run ``a2a-trio serve agent`` on ``store_url`` (``options`` added) until it exits,
    killed on cancellation; report it once it listens.  Agents are found under ``tests/``."""
    command = [sys.executable, "-m", "a2a_trio", "serve", agent, "--port", "0"]
    options = ("--store", store_url, "--log-level", "warning", "--keepalive", "0.2", *options)
    path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
    process = await trio.lowlevel.open_process(
        [*command, *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": path},
    )
    assert process.stdout is not None and process.stderr is not None
    server = Server(process)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(collect, process.stderr, server.stderr)
            async for line in lines(process.stdout):
                if found := SERVING.match(line):
                    server.url = found[1]
                    task_status.started(server)
        assert server.url, f"the server exited before it listened: {server.stderr}"
    finally:
        process.kill()
        with trio.CancelScope(shield=True):
            await process.wait()


async def collect(stream: trio.abc.ReceiveStream, into: list[str]) -> None:
    async for line in lines(stream):
        into.append(line)
