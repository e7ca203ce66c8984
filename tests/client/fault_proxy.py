"""A seeded TCP proxy that gives each connection through it one network fault.

It sits between a client and a real server on loopback.  Each accepted connection gets the next
:class:`Plan` of those the proxy was given: pass clean, close at once, cut the request or the
answer after some bytes, stall the answer for a while, split both directions into tiny writes,
hold the answer back, or forward only an answer's head and hang up.  :func:`random_plans`
deals them from a seed, in the order connections are accepted; a test aiming at one exchange
gives one plan for all (``itertools.repeat``).
"""

from __future__ import annotations

import enum
import random
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from functools import partial

import attrs
import trio

from .stub_agent import serving


class Fault(enum.Enum):
    CLEAN = "clean"
    REFUSE = "close right after accept"
    CUT_REQUEST = "cut the request after some bytes"
    CUT_ANSWER = "cut the answer after some bytes"
    STALL = "stop forwarding the answer for a while"
    SPLIT = "forward in tiny writes"
    LATE = "hold the whole answer back"
    HEAD_ONLY = "forward an answer's head, then hang up"


CUTS = (Fault.CUT_REQUEST, Fault.CUT_ANSWER)
SPLIT_WRITES = 64
"""How many tiny writes a split makes.  Each one costs a round of the test process's scheduler
(the proxy, the client and the server share it), tens of milliseconds on a loaded machine; a
split of every byte up to 64 KiB cost hundreds of rounds, so a card fetch through it outlived
the soak's bound on calls while no timeout was due."""


@attrs.frozen
class Plan:
    """One connection's fault: it strikes once ``at`` bytes of the direction it affects have
    passed (over the whole connection, every exchange on it counted); ``seconds`` is a stall's
    or a hold's length, ``chunk`` the size of a split's writes (the ``SPLIT_WRITES * chunk``
    bytes from ``at`` are split; the rest passes as it comes, to keep the load on the machine
    bounded)."""

    fault: Fault
    at: int = 0
    seconds: float = 0.0
    chunk: int = 65536

    def request_side(self) -> Plan:
        """What the request direction gets: a cut or a split of the request, else nothing."""
        return self if self.fault in (Fault.CUT_REQUEST, Fault.SPLIT) else Plan(Fault.CLEAN)

    def answer_side(self) -> Plan:
        """What the answer direction gets: every fault but a cut of the request."""
        return Plan(Fault.CLEAN) if self.fault is Fault.CUT_REQUEST else self


class FaultProxy:
    """Forwards to ``upstream_port``, giving each connection the next plan of ``plans``."""

    def __init__(self, upstream_port: int, plans: Iterator[Plan]) -> None:
        self.upstream_port = upstream_port
        self.plans = plans
        self.dealt: Counter[Fault] = Counter()
        """The faults dealt so far."""
        self.forwarded: Counter[str] = Counter()
        """Bytes forwarded so far, by direction (``"request"``, ``"answer"``)."""
        self.url = ""

    async def connection(self, downstream: trio.SocketStream) -> None:
        plan = next(self.plans)
        self.dealt[plan.fault] += 1
        if plan.fault is Fault.REFUSE:
            await downstream.aclose()
            return
        upstream = await trio.open_tcp_stream("127.0.0.1", self.upstream_port)
        async with downstream, upstream, trio.open_nursery() as nursery:
            hang_up = nursery.cancel_scope
            pump = partial(forward, hang_up=hang_up, tally=self.forwarded)
            nursery.start_soon(pump, downstream, upstream, plan.request_side(), "request")
            nursery.start_soon(pump, upstream, downstream, plan.answer_side(), "answer")


def random_plans(
    rng: random.Random, *, stalls: Sequence[float], holds: Sequence[float]
) -> Iterator[Plan]:
    """Seeded plans: about one connection in three passes clean; a stall lasts one of
    ``stalls`` seconds, a hold one of ``holds``."""
    faults = [Fault.CLEAN] * 4 + [fault for fault in Fault if fault is not Fault.CLEAN]
    while True:
        fault = rng.choice(faults)
        yield Plan(
            fault,
            at=rng.choice([0, 1, rng.randrange(2, 400), rng.randrange(400, 4000)]),
            seconds=rng.choice(holds if fault is Fault.LATE else stalls),
            chunk=rng.choice([1, 2, 3, 7, 13]),
        )


async def forward(
    source: trio.SocketStream,
    sink: trio.SocketStream,
    plan: Plan,
    direction: str,
    *,
    hang_up: trio.CancelScope,
    tally: Counter[str],
) -> None:
    """Copy ``source`` to ``sink`` under ``plan``, counting the bytes in ``tally[direction]``;
    when either side ends, or the plan cuts, ``hang_up`` closes both directions (no orderly
    end of the exchange)."""

    async def send(data: bytes) -> None:
        await sink.send_all(data)
        tally[direction] += len(data)

    passed = 0
    held = b""  # HEAD_ONLY: what came past ``at``, until a head is complete
    try:
        if plan.fault is Fault.LATE:
            await trio.sleep(plan.seconds)
        while data := await source.receive_some(65536):
            keep = max(plan.at - passed, 0)
            passed += len(data)
            if plan.fault in CUTS and passed > plan.at:
                await send(data[:keep])
                break
            if plan.fault is Fault.HEAD_ONLY and passed > plan.at:
                await send(data[:keep])
                held += data[keep:]
                if (end := held.find(b"\r\n\r\n")) >= 0:
                    await send(held[: end + 4])
                    break
                continue
            if plan.fault is Fault.STALL and passed > plan.at >= passed - len(data):
                await send(data[:keep])
                await trio.sleep(plan.seconds)
                data = data[keep:]
            if plan.fault is Fault.SPLIT:
                await split(data, passed - len(data), plan, send)
            else:
                await send(data)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    hang_up.cancel()


async def split(
    data: bytes, offset: int, plan: Plan, send: Callable[[bytes], Awaitable[None]]
) -> None:
    """Send ``data``, which starts ``offset`` bytes into its direction, with the part of it
    in the split window (``SPLIT_WRITES`` writes of ``plan.chunk`` bytes from ``plan.at``)
    sent a chunk at a time and the parts before and after it in one write each."""
    window = max(plan.at - offset, 0), max(plan.at + SPLIT_WRITES * plan.chunk - offset, 0)
    start, end = (min(edge, len(data)) for edge in window)
    if data[:start]:
        await send(data[:start])
    for piece in range(start, end, plan.chunk):
        await send(data[piece : min(piece + plan.chunk, end)])
    if data[end:]:
        await send(data[end:])


@asynccontextmanager
async def open_fault_proxy(upstream_url: str, plans: Iterator[Plan]) -> AsyncIterator[FaultProxy]:
    """A :class:`FaultProxy` to the server at ``upstream_url`` (``http://127.0.0.1:PORT``)."""
    port = int(upstream_url.rsplit(":", 1)[1].split("/")[0])
    proxy = FaultProxy(port, plans)
    async with serving(proxy.connection) as proxy.url:
        yield proxy
