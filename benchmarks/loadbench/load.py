"""Closed-loop load: ``concurrency`` workers, each on its own keep-alive connection.

Every worker sends, waits for the whole answer, and sends again until the window closes.
Only requests that finish inside the measurement window (after the warm-up) are counted.
A hard deadline past the window bounds the run even if a server stalls.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import attrs
import trio

from loadbench.client import A2A_HEADERS, STREAM_HEADERS, Connection
from loadbench.http1 import Head
from loadbench.payloads import is_terminal
from loadbench.stats import Latency

GRACE = 10.0


@attrs.define
class LoadResult:
    """What a closed-loop run measured; ``first_event`` is filled for streams only."""

    seconds: float
    latencies: list[float] = attrs.Factory(list)
    first_event: list[float] = attrs.Factory(list)
    errors: int = 0
    error_sample: str = ""
    server_cpu: float = float("nan")
    """CPU seconds the server used inside the window (NaN when not sampled)."""

    @property
    def cpu_ms(self) -> float:
        """Server CPU milliseconds per completed request: its own cost, whatever the load."""
        return self.server_cpu * 1000 / len(self.latencies) if self.latencies else float("nan")

    @property
    def capacity(self) -> float:
        """Requests per server CPU second: the rate one whole core would sustain."""
        return len(self.latencies) / self.server_cpu if self.server_cpu > 0 else float("nan")

    @property
    def rate(self) -> float:
        """Completed requests (or streams) per second in the window."""
        return len(self.latencies) / self.seconds if self.seconds else 0.0

    @property
    def latency(self) -> Latency:
        """Whole-request latency."""
        return Latency.of(self.latencies)

    @property
    def ttfe(self) -> Latency:
        """Time to first event (streams)."""
        return Latency.of(self.first_event)


@attrs.frozen
class Window:
    """The warm-up and measurement window of a run, in ``time.perf_counter`` seconds."""

    start: float
    end: float

    @classmethod
    def after(cls, warmup: float, duration: float) -> Window:
        start = time.perf_counter() + warmup
        return cls(start, start + duration)

    def counts(self, finished: float) -> bool:
        return self.start <= finished <= self.end


def answered(head: Head, body: bytes) -> bool:
    """Whether a blocking request got a JSON-RPC result (not an error, not another status)."""
    return head.status == 200 and b'"result"' in body


async def read_stream(conn: Connection, body: bytes) -> tuple[Head, float, bool]:
    """Send a streaming request on ``conn`` and read its stream to the end: its head, when
    (``time.perf_counter``) its first event came (0.0: none did), and whether a terminal event
    came."""
    first = 0.0
    finished = False
    head = await conn.start_stream("/", body, STREAM_HEADERS)
    while (events := await conn.events()) is not None:
        if events:
            first = first or time.perf_counter()
            finished = finished or any(is_terminal(event.data) for event in events)
    return head, first, finished


async def _request_worker(
    port: int, make_body: Callable[[], bytes], window: Window, result: LoadResult
) -> None:
    async with Connection(port) as conn:
        while time.perf_counter() < window.end:
            began = time.perf_counter()
            head, body = await conn.post("/", make_body(), A2A_HEADERS)
            done = time.perf_counter()
            if not answered(head, body):
                result.errors += 1
                result.error_sample = result.error_sample or body[:300].decode(errors="replace")
            elif window.counts(done):
                result.latencies.append(done - began)


async def _stream_worker(
    port: int, make_body: Callable[[], bytes], window: Window, result: LoadResult
) -> None:
    async with Connection(port) as conn:
        while time.perf_counter() < window.end:
            began = time.perf_counter()
            head, first, finished = await read_stream(conn, make_body())
            done = time.perf_counter()
            if head.status != 200 or not finished:
                result.errors += 1
                result.error_sample = result.error_sample or f"status {head.status}"
            elif window.counts(done):
                result.latencies.append(done - began)
                result.first_event.append(first - began)


async def _sample_cpu(cpu: Callable[[], float], window: Window, result: LoadResult) -> None:
    await trio.sleep(max(0.0, window.start - time.perf_counter()))
    began = cpu()
    await trio.sleep(max(0.0, window.end - time.perf_counter()))
    result.server_cpu = cpu() - began


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection in the load generator while it measures: its pauses would
    be counted as the server's latency.  A run is seconds long, and reference counting still
    frees everything that is not in a cycle."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def closed_loop(
    port: int,
    make_body: Callable[[], bytes],
    *,
    concurrency: int,
    warmup: float,
    duration: float,
    streaming: bool = False,
    cpu: Callable[[], float] | None = None,
) -> LoadResult:
    """Run ``concurrency`` workers against ``127.0.0.1:port`` and return what they measured.

    ``cpu`` (e.g. ``Server.cpu_seconds``) is read at both ends of the window, so the result
    also says how much server CPU the counted requests took.
    """
    result = LoadResult(seconds=duration)
    window = Window.after(warmup, duration)
    worker = _stream_worker if streaming else _request_worker
    with collector_paused(), trio.move_on_after(warmup + duration + GRACE) as scope:
        async with trio.open_nursery() as nursery:
            for _ in range(concurrency):
                nursery.start_soon(worker, port, make_body, window, result)
            if cpu is not None:
                nursery.start_soon(_sample_cpu, cpu, window, result)
    if scope.cancelled_caught:
        result.errors += 1
        result.error_sample = result.error_sample or "run hit its hard deadline"
    return result


def total_rate(rounds: list[LoadResult]) -> float:
    """Requests per second over all rounds together."""
    seconds = sum(r.seconds for r in rounds)
    return sum(len(r.latencies) for r in rounds) / seconds if seconds else float("nan")


def total_capacity(rounds: list[LoadResult]) -> float:
    """Requests per server CPU second over all rounds together."""
    cpu = sum(r.server_cpu for r in rounds)
    return sum(len(r.latencies) for r in rounds) / cpu if cpu > 0 else float("nan")
