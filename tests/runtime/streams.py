"""Reading a task stream to its end, for the runtime tests."""

import trio

from a2a_trio.runtime import LogEntry, TaskStream


async def read_all(stream: TaskStream) -> list[LogEntry]:
    """Every entry the stream carries, until it ends."""
    entries = []
    while True:
        try:
            entries.append(await stream.receive())
        except trio.EndOfChannel:
            return entries
