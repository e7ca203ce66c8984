"""Smoke tests for the benchmark harness, so it does not rot.

They drive the real load generator against a real a2a_trio benchmark server for a second or
two. No figure is asserted: only that requests succeed, streams connect, keepalives arrive and
held tasks complete. The figures come from ``benchmarks/run.py``.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import callcount
import followers
import leases
import purge
import sendcost
import trio
from loadbench import payloads
from loadbench.client import KERNEL_STAMPS, STREAM_HEADERS, Connection
from loadbench.held import StreamPool
from loadbench.http1 import ResponseParser
from loadbench.load import LoadResult, closed_loop
from loadbench.report import render
from loadbench.scenario import OURS, Section, Settings, open_servers
from loadbench.servers import ServerOptions
from loadbench.sse import SseParser
from loadbench.stalls import Stalls, measure_stalls, stalls_over
from loadbench.stats import percentile
from loadbench.tasks import create_tasks, hold_metadata

from a2a_trio.store import open_sqlite_store
from a2a_trio.store._sql import Driver, Tx


def test_chunked_response_split_anywhere() -> None:
    body = b'data: {"a": 1}\r\n\r\n: ping\r\n\r\n'
    raw = (
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-type: text/event-stream\r\n"
        b"\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    )
    for cut in range(1, len(raw)):
        parser, sse = ResponseParser(), SseParser()
        events = sse.feed(parser.feed(raw[:cut])) + sse.feed(parser.feed(raw[cut:]))
        assert parser.done
        assert [e.data for e in events] == [b'{"a": 1}']
        assert sse.comments == 1


async def test_a_read_says_when_its_bytes_arrived_not_when_they_were_read() -> None:
    """An event sent at once but read 0.3 s later: ``arrived`` is the kernel's timestamp of
    its arrival (Linux), which the fan-out's delivery times use; elsewhere, the read's time."""
    frame = b"data: {}\n\n"
    chunk = b"%x\r\n%s\r\n" % (len(frame), frame)
    sent_at: list[float] = []

    async def answer(stream: trio.SocketStream) -> None:
        request = b""
        while b"\r\n\r\n" not in request:
            request += await stream.receive_some(4096)
        head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
        await stream.send_all(head)
        await trio.sleep(0.05)  # the event after the head: a read of its own
        sent_at.append(time.time())
        await stream.send_all(chunk)
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, answer, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        async with Connection(port) as conn:
            await conn.start_stream("/", b"{}", STREAM_HEADERS)
            await trio.sleep(0.3)
            read_from = time.time()
            events = await conn.events()
        nursery.cancel_scope.cancel()
    assert events is not None and [e.data for e in events] == [b"{}"]
    if KERNEL_STAMPS:
        assert sent_at[0] - 0.01 <= conn.arrived <= sent_at[0] + 0.1 < read_from
    else:
        assert conn.arrived >= read_from


def test_percentile_nearest_rank() -> None:
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile(list(map(float, range(1, 101))), 99) == 99.0
    assert math.isnan(percentile([], 50))


def test_report_renders_a_section() -> None:
    section = Section("x", ["server", "req/s"])
    section.add("a2a_trio", 1234.5)
    text = render("t", ["- header"], [section])
    assert "| a2a_trio | 1,234 |" in text


def test_stall_counts() -> None:
    stalls = Stalls(cpu=0, seconds=2.0, gaps=(0.0003, 0.0012, 0.0025, 0.006))
    assert stalls.per_second(1.0) == 1.5  # three gaps over 1 ms in two seconds
    assert stalls.per_second(5.0) == 0.5
    assert math.isclose(stalls.lost_share, 0.005)  # 10 ms lost in 2 s
    assert stalls.longest_ms == 6.0
    assert stalls_over([stalls, stalls], 2.0) == 2.0
    assert "1.5/s > 1 ms" in stalls.describe()


async def test_stall_probe_runs_pinned() -> None:
    cpu = min(os.sched_getaffinity(0))
    (found,) = await measure_stalls((cpu,), 0.2)
    assert found.cpu == cpu
    assert all(gap > 0.0002 for gap in found.gaps)
    assert found.lost_share < 1.0


async def counted(port: int, body: Callable[[], bytes], *, streaming: bool) -> LoadResult:
    """A 1 s window of closed-loop load that completed something, none with an error: on a
    loaded machine a window can end before its first request does, so up to 10 are run."""
    for _ in range(10):
        window = await closed_loop(
            port, body, concurrency=4, warmup=0.1, duration=1.0, streaming=streaming
        )
        assert window.errors == 0, window.error_sample
        if window.latencies:
            return window
    raise AssertionError("10 windows of 1 s completed no request")


async def test_harness_against_a2a_trio(tmp_path: Path) -> None:
    release = tmp_path / "release"
    settings = Settings(quick=True, pinned=False, servers=(OURS,))
    async with open_servers((OURS,), settings, ServerOptions(keepalive=0.2)) as servers:
        port = servers[OURS].port
        sent = await counted(port, payloads.send_message, streaming=False)
        assert sent.latencies
        streamed = await counted(port, payloads.send_streaming_message, streaming=True)
        assert streamed.first_event

        ids = await create_tasks(port, 2, hold_metadata(release))
        pool = StreamPool(port, [payloads.subscribe(ids[i % 2]) for i in range(10)])
        async with trio.open_nursery() as nursery:
            nursery.start_soon(pool.run)
            with trio.fail_after(10):
                await pool.settled.wait()
            await trio.sleep(0.6)
            await trio.Path(release).touch()
            with trio.fail_after(10):
                await pool.finished.wait()
        assert pool.errors() == []
        assert all(s.connected and s.terminal and s.ended for s in pool.streams)
        assert min(s.comments for s in pool.streams) >= 1


async def test_followers_script_counts_the_followed_reads() -> None:
    """``benchmarks/followers.py`` runs: its streams at the second replica follow the task
    through a counted store, and the line it prints names what was read.  Counted for four
    follow intervals (0.5 s each), so a loaded machine that delays a poll still has some."""
    line = await followers.measure(streams=5, seconds=2.0)
    prefix = "5 streams of one task: "
    assert line.startswith(prefix)
    reads = int(line.removeprefix(prefix).split()[0])
    assert reads > 0  # the task wrote while counted, so the followers read the store
    assert "'last_event_seq': " in line and "'load_events': " in line


async def test_leases_script_times_a_tick_of_one_write(tmp_path: Path) -> None:
    """``benchmarks/leases.py`` runs: a tick at a replica running 5 jobs is timed, and its
    writes counted: one, the 5 touches together."""
    row = await leases.measure("sqlite", f"sqlite:///{tmp_path / 'tasks.db'}", 5, 2)
    assert (row.backend, row.jobs, row.writes) == ("sqlite", 5, 1)


async def test_purge_script_purges_a_backlog_in_its_batches(tmp_path: Path) -> None:
    """``benchmarks/purge.py`` runs: 30 finished tasks go in batches of 10, all of them (the
    script checks the count), and the table shows the row."""
    row = await purge.measure("sqlite", str(tmp_path / "purge.db"), 30, 2, 10)
    assert (row.backend, row.tasks, row.batch) == ("sqlite", 30, 10)
    assert 0 < row.longest_write_ms <= row.total_s * 1000
    assert "| sqlite | 30 | 10 |" in purge.table([row])


class ProbeWritesWait:
    """A SQL store's driver on which every write but ``purger``'s waits until cancelled, as
    a probe's write queued behind a long transaction would."""

    def __init__(self, driver: Driver, purger: trio.lowlevel.Task) -> None:
        self.driver = driver
        self.dialect = driver.dialect
        self._purger = purger

    async def write[T](self, fn: Callable[[Tx], T], *, one_statement: bool = False) -> T:
        if trio.lowlevel.current_task() is not self._purger:
            await trio.sleep_forever()
        return await self.driver.write(fn, one_statement=one_statement)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.driver, name)


async def test_purge_script_times_only_the_purges_own_writes(tmp_path: Path) -> None:
    """The probe writes through the same store: its write, queued before the purge's clock
    starts and given up after it stops, is not the purge's longest write.  Before, it was
    reported as one, longer than the whole purge."""
    path = str(tmp_path / "purge.db")
    async with open_sqlite_store(path, retention=purge.RETENTION) as store:
        await trio.to_thread.run_sync(purge.fill_sqlite, path, 10, 1)
        store._driver = ProbeWritesWait(store._driver, trio.lowlevel.current_task())
        total, longest_write, probe_wait = await purge.purge_with_probe(store, 10)
    assert 0 < longest_write <= total
    assert probe_wait == 0  # the probe's one write never finished


async def test_sendcost_script_drives_sends_and_streams_through_the_app() -> None:
    for kind in ("send", "stream"):
        await sendcost.run(kind, 3, tune_gc=False)  # raises unless each one completed


def test_callcount_names_the_package_of_generated_code() -> None:
    assert callcount.package_of("<attrs generated methods trio._core._run.CancelScope>") == "trio"
    assert callcount.package_of("<cattrs generated structure a2a_trio.model._core.Message>") == (
        "a2a_trio"
    )
    assert callcount.package_of("/x/lib/python3.13/site-packages/h11/_util.py") == "h11"
    assert callcount.package_of("/x/lib/python3.13/contextlib.py") == "stdlib"
    assert callcount.package_of("<frozen abc>") == "stdlib"


async def test_callcount_counts_calls_per_request_on_both_servers() -> None:
    results = await callcount.measure(("send", "stream"), 32)
    assert [(r.server, r.load) for r in results] == [
        (OURS, "send"),
        (OURS, "stream"),
        ("asgi floor", "send"),
        ("asgi floor", "stream"),
    ]
    for result in results:
        packages = result.by_package()
        assert result.requests == 32
        assert packages["h11"] > 0 and packages["trio"] > 0 and result.resumes > 0
        assert (packages.get("a2a_trio", 0) > 0) == (result.server == OURS)
    assert any("a2a_trio makes" in line for line in callcount.report(results, 5))


async def test_callcount_counts_calls_per_fanned_out_frame_on_both_servers() -> None:
    fanout = callcount.FanOut(subscribers=20, counted=3, interval=0.1)
    results = await callcount.measure(("fanout",), 0, fanout=fanout)
    assert [(r.server, r.load, r.requests) for r in results] == [
        (OURS, "fanout", 60),
        ("asgi floor", "fanout", 60),
    ]
    for result in results:
        packages = result.by_package()
        assert packages["h11"] > 0 and packages["trio"] > 0 and result.resumes > 0
        assert (packages.get("a2a_trio", 0) > 0) == (result.server == OURS)
