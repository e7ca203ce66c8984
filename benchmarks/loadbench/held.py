"""Many SSE subscriptions held open at once, for the idle, fan-out and disconnect scenarios.

A :class:`StreamPool` opens one connection per body, at most ``ramp`` handshakes at a time,
and keeps every stream reading until the server ends it or the pool's nursery is cancelled.
Per-stream outcomes are kept in :class:`HeldStream` records the scenario reads.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import attrs
import trio

from loadbench.client import STREAM_HEADERS, Connection
from loadbench.http1 import ProtocolError
from loadbench.payloads import emit_time, is_terminal
from loadbench.sse import Event

RAMP = 64


@attrs.define
class HeldStream:
    """What one held stream saw."""

    connected: bool = False
    comments: int = 0
    terminal: bool = False
    ended: bool = False
    error: str = ""
    delays: list[float] = attrs.Factory(list)
    """Fan-out delivery times: from each event's emission to its arrival at the socket."""
    read_delays: list[float] = attrs.Factory(list)
    """The same up to the moment the load generator read it."""

    def see(self, events: list[Event], arrived: float) -> None:
        """Record a batch of events that reached the socket at ``arrived``: fan-out delays
        and the terminal state."""
        read = time.time()
        for event in events:
            emitted = emit_time(event.data)
            if emitted is not None:
                self.delays.append(arrived - emitted)
                self.read_delays.append(read - emitted)
            elif is_terminal(event.data):
                self.terminal = True


class StreamPool:
    """Hold one SSE stream per body against ``127.0.0.1:port``."""

    def __init__(self, port: int, bodies: Sequence[bytes], *, ramp: int = RAMP) -> None:
        self.port = port
        self.bodies = bodies
        self.streams = [HeldStream() for _ in bodies]
        self.settled = trio.Event()
        self.finished = trio.Event()
        self._limiter = trio.CapacityLimiter(ramp)
        self._settled = 0
        self._finished = 0

    @property
    def connected(self) -> int:
        """Streams that got their first event."""
        return sum(stream.connected for stream in self.streams)

    @property
    def open(self) -> int:
        """Streams connected and not ended."""
        return sum(s.connected and not s.ended and not s.error for s in self.streams)

    def errors(self) -> list[str]:
        """The distinct errors seen."""
        return sorted({stream.error for stream in self.streams if stream.error})

    async def run(self) -> None:
        """Open every stream and keep them reading; returns when all have ended."""
        async with trio.open_nursery() as nursery:
            for body, stream in zip(self.bodies, self.streams, strict=True):
                nursery.start_soon(self._hold, body, stream)

    def _settle(self) -> None:
        self._settled += 1
        if self._settled == len(self.streams):
            self.settled.set()

    def _finish(self) -> None:
        self._finished += 1
        if self._finished == len(self.streams):
            self.finished.set()

    async def _hold(self, body: bytes, stream: HeldStream) -> None:
        settled = False
        try:
            async with Connection(self.port) as conn:
                async with self._limiter:
                    head = await conn.start_stream("/", body, STREAM_HEADERS)
                    if head.status != 200:
                        stream.error = f"HTTP {head.status}"
                        return
                    events: list[Event] | None = []
                    while events is not None and not events:
                        events = await conn.events()
                if events is None:
                    stream.error = "ended before its first event"
                    return
                stream.connected = True
                settled = True
                self._settle()
                stream.see(events, conn.arrived)
                while (events := await conn.events()) is not None:
                    stream.comments = conn.comments
                    stream.see(events, conn.arrived)
                stream.ended = True
        except (OSError, ProtocolError, trio.BrokenResourceError) as exc:
            stream.error = f"{type(exc).__name__}: {exc}"[:120]
        finally:
            if not settled:
                self._settle()
            self._finish()
