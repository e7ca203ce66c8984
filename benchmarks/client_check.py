"""Is the load generator the bottleneck? Compare three HTTP clients on the floor app.

    .venv/bin/python benchmarks/client_check.py

The raw client (``loadbench.client``: its own small HTTP/1.1 parser on trio sockets), h11 on
trio sockets and httpx drive the same raw ASGI floor (hypercorn, trio) with blocking POSTs at
concurrency 1, 16 and 64, interleaved, from one trio process pinned like ``run.py``. Besides
the rate each gets out of the server, the load generator's own CPU per request is printed: at
c=1 it is part of every measured latency, and in the stream scenarios it is what a client pays
per event. The scenarios use the client that costs least.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from importlib.metadata import version

import h11
import httpx
import trio
from loadbench import payloads
from loadbench.client import A2A_HEADERS
from loadbench.load import closed_loop, collector_paused
from loadbench.scenario import FLOOR, Settings, open_servers
from loadbench.servers import pin_loadgen
from loadbench.stats import Latency

SECONDS = 3.0
ROUNDS = 2

type Loop = Callable[[int, int, float], Awaitable[list[float]]]


async def raw_loop(port: int, concurrency: int, seconds: float) -> list[float]:
    """The scenarios' own closed loop (``loadbench.load``)."""
    done = await closed_loop(
        port, payloads.send_message, concurrency=concurrency, warmup=0.0, duration=seconds
    )
    return done.latencies


async def h11_loop(port: int, concurrency: int, seconds: float) -> list[float]:
    """The same closed loop with h11 doing the HTTP/1.1 framing on trio sockets."""
    latencies: list[float] = []
    body = payloads.send_message()
    headers = [
        ("Host", f"127.0.0.1:{port}"),
        ("Content-Type", "application/json"),
        ("Content-Length", str(len(body))),
        *A2A_HEADERS.items(),
    ]
    end = time.perf_counter() + seconds

    async def exchange(sock: trio.SocketStream, conn: h11.Connection) -> None:
        request = conn.send(h11.Request(method="POST", target="/", headers=headers))
        request += conn.send(h11.Data(data=body)) + conn.send(h11.EndOfMessage())
        await sock.send_all(request)
        while not isinstance(event := conn.next_event(), h11.EndOfMessage):
            if event is h11.NEED_DATA:
                conn.receive_data(await sock.receive_some(65536))
            elif isinstance(event, h11.Response) and event.status_code != 200:
                raise RuntimeError(f"status {event.status_code}")

    async def worker() -> None:
        while time.perf_counter() < end:  # a connection per keep-alive run of the server
            conn = h11.Connection(h11.CLIENT)
            async with await trio.open_tcp_stream("127.0.0.1", port) as sock:
                while time.perf_counter() < end:
                    began = time.perf_counter()
                    await exchange(sock, conn)
                    latencies.append(time.perf_counter() - began)
                    if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                        break  # the server closes this connection (hypercorn's request limit)
                    conn.start_next_cycle()

    await _run_workers(worker, concurrency)
    return latencies


async def httpx_loop(port: int, concurrency: int, seconds: float) -> list[float]:
    """The same closed loop through one pooled ``httpx.AsyncClient``."""
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    end = time.perf_counter() + seconds
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", limits=limits) as client:

        async def worker() -> None:
            while time.perf_counter() < end:
                began = time.perf_counter()
                reply = await client.post("/", content=payloads.send_message(), headers=A2A_HEADERS)
                reply.raise_for_status()
                latencies.append(time.perf_counter() - began)

        await _run_workers(worker, concurrency)
    return latencies


async def _run_workers(worker: Callable[[], Awaitable[None]], concurrency: int) -> None:
    """``concurrency`` copies of ``worker`` at once, with no cyclic GC pausing them."""
    with collector_paused():
        async with trio.open_nursery() as nursery:
            for _ in range(concurrency):
                nursery.start_soon(worker)


CLIENTS: dict[str, Loop] = {
    "raw (loadbench.client)": raw_loop,
    f"h11 {version('h11')}": h11_loop,
    f"httpx {httpx.__version__}": httpx_loop,
}


async def check() -> None:
    settings = Settings(quick=True, pinned=pin_loadgen(), servers=(FLOOR,))
    async with open_servers((FLOOR,), settings) as servers:
        port = servers[FLOOR].port
        print("| client | c | req/s | p50 ms | p99 ms | load generator CPU us/req |")
        print("|---|---|---|---|---|---|")
        for concurrency in (1, 16, 64):
            for _round in range(ROUNDS):
                for name, loop in CLIENTS.items():
                    began = time.process_time()
                    latencies = await loop(port, concurrency, SECONDS)
                    cpu = (time.process_time() - began) / max(1, len(latencies)) * 1e6
                    lat = Latency.of(latencies)
                    print(
                        f"| {name} | {concurrency} | {len(latencies) / SECONDS:,.0f} | "
                        f"{lat.p50_ms:.2f} | {lat.p99_ms:.2f} | {cpu:.0f} |",
                        flush=True,
                    )


if __name__ == "__main__":
    trio.run(check)
