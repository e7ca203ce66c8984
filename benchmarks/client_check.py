"""Is the load generator the bottleneck? Compare httpx with the raw client on the floor app.

    .venv/bin/python benchmarks/client_check.py

Both clients drive the same raw ASGI floor (hypercorn, trio) with blocking POSTs at
concurrency 1 and 16, interleaved, from one trio process pinned like ``run.py``. The client
that gets more requests per second out of the same server costs less per request; the scenarios
use ``loadbench.client`` (raw HTTP/1.1 on trio sockets) for that reason.
"""

from __future__ import annotations

import time

import httpx
import trio
from loadbench import payloads
from loadbench.client import A2A_HEADERS
from loadbench.load import closed_loop
from loadbench.scenario import Settings, open_servers
from loadbench.servers import pin_loadgen
from loadbench.stats import Latency

FLOOR = "asgi floor"
SECONDS = 3.0


async def httpx_loop(port: int, concurrency: int, seconds: float) -> tuple[float, Latency]:
    """The same closed loop as ``loadbench.load`` but through one pooled ``httpx.AsyncClient``."""
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

        async with trio.open_nursery() as nursery:
            for _ in range(concurrency):
                nursery.start_soon(worker)
    return len(latencies) / seconds, Latency.of(latencies)


async def check() -> None:
    settings = Settings(quick=True, pinned=pin_loadgen(), servers=(FLOOR,))
    async with open_servers((FLOOR,), settings) as servers:
        port = servers[FLOOR].port
        print("| client | concurrency | req/s | p50 ms | p99 ms |")
        print("|---|---|---|---|---|")
        for concurrency in (1, 16):
            raw = await closed_loop(
                port, payloads.send_message, concurrency=concurrency, warmup=0.3, duration=SECONDS
            )
            lat = raw.latency
            print(
                f"| raw | {concurrency} | {raw.rate:,.0f} | {lat.p50_ms:.2f} | {lat.p99_ms:.2f} |"
            )
            rate, lat = await httpx_loop(port, concurrency, SECONDS)
            print(f"| httpx | {concurrency} | {rate:,.0f} | {lat.p50_ms:.2f} | {lat.p99_ms:.2f} |")


if __name__ == "__main__":
    trio.run(check)
