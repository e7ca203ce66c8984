"""Serving more connections at once than a process's soft open-file limit allowed at start-up."""

from __future__ import annotations

from urllib.parse import urlsplit

import trio

SOFT_LIMIT = 128
"""The soft limit the server process starts with (its hard limit stays as it was)."""

CONNECTIONS = 300
"""More than ``SOFT_LIMIT``: the server answers them all only if it raised its limit."""


def with_soft_limit(command: list[str]) -> list[str]:
    """``command`` started with a soft open-file limit of :data:`SOFT_LIMIT` (``ulimit -Sn``)."""
    return ["sh", "-c", f'ulimit -Sn {SOFT_LIMIT} && exec "$@"', "sh", *command]


def open_files_limits(pid: int) -> tuple[int, int]:
    """The soft and hard open-file limits in force in process ``pid`` (``/proc/PID/limits``)."""
    with open(f"/proc/{pid}/limits") as limits:
        for line in limits:
            if line.startswith("Max open files"):
                soft, hard = line.split()[3:5]
                return int(soft), int(hard)
    raise AssertionError(f"no open-file limit for process {pid}")


async def answered_together(base_url: str, count: int = CONNECTIONS) -> int:
    """Open ``count`` connections, keep them all open, ask for the agent card on each, and
    count the answers (a connection the server never accepted gets none: bounded by 20 s)."""
    address = urlsplit(base_url)
    request = (
        f"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: {address.netloc}\r\n\r\n"
    ).encode()
    answered = 0

    async def ask(stream: trio.SocketStream) -> None:
        nonlocal answered
        await stream.send_all(request)
        head = b""
        while b"\r\n\r\n" not in head:
            data = await stream.receive_some()
            if not data:
                return
            head += data
        answered += head.startswith(b"HTTP/1.1 200 ")

    streams = []
    try:
        for _ in range(count):
            streams.append(await trio.open_tcp_stream(address.hostname or "", address.port or 80))
        with trio.move_on_after(20):
            async with trio.open_nursery() as nursery:
                for stream in streams:
                    nursery.start_soon(ask, stream)
    finally:
        for stream in streams:
            await stream.aclose()
    return answered
