"""Count a2a_trio's own cost per JSON-RPC send, in process: no HTTP, no hypercorn.

    .venv/bin/python -P benchmarks/sendcost.py send 600            # wall time per request
    .venv/bin/python -P benchmarks/sendcost.py stream 600 --profile  # cProfile, by own time
    .venv/bin/python -P benchmarks/sendcost.py --callgrind           # instructions per request
    .venv/bin/python -P benchmarks/sendcost.py stream --callgrind    # of one kind

(``-P``: this directory's ``profile.py`` would shadow the standard library's.)

Starts ``create_app(agent)``'s ASGI app with its lifespan (memory store, an echo skill that
returns ``ctx.text``) and drives blocking ``SendMessage`` (``send``) or ``SendStreamingMessage``
(``stream``) requests, one after the other, straight through the ASGI callable.  With
``--callgrind`` it runs itself under valgrind's callgrind (``PYTHONHASHSEED=0``) for 200 and for
600 requests of each kind (side by side) and prints the difference over 400, so start-up cancels
out: instruction counts do not move with the machine's load, wall time does.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import attrs
import orjson
import trio

from a2a_trio import Agent, TaskContext
from a2a_trio.runtime import RuntimeConfig
from a2a_trio.server import ServerConfig, create_app, tune_gc_for_streams

SHORT, LONG = 200, 600
CALLGRIND = ("valgrind", "--tool=callgrind")


def _agent() -> Agent:
    agent = Agent("bench", "echo")

    @agent.skill(default=True)
    async def echo(ctx: TaskContext) -> str:
        return ctx.text

    return agent


def _config() -> ServerConfig | None:
    """The watch for a held event loop turned off, where there is one (``stall_warning``):
    under valgrind every step runs some 50 times slower, so the watch sees stalls and then
    times every step, which no request costs outside valgrind (+19k instructions a send)."""
    if "stall_warning" not in attrs.fields_dict(RuntimeConfig):  # a snapshot from before it
        return None
    return ServerConfig(runtime=RuntimeConfig(stall_warning=None))


def _body(method: str, n: int) -> bytes:
    message = {"messageId": f"m{n}", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    return orjson.dumps(
        {"jsonrpc": "2.0", "id": n, "method": method, "params": {"message": message}}
    )


async def _request(app: Any, path: str, body: bytes) -> bytes:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 2),
    }
    sent = False
    chunks: list[bytes] = []

    # Each yields to the scheduler, as hypercorn's do (a memory channel, a socket send).
    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            await trio.lowlevel.checkpoint()
            return {"type": "http.request", "body": body, "more_body": False}
        await trio.sleep_forever()

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
        await trio.lowlevel.checkpoint()

    await app(scope, receive, send)
    return b"".join(chunks)


async def run(kind: str, count: int, *, profile: bool = False, tune_gc: bool = True) -> None:
    """Serve ``count`` requests of ``kind`` in process; ``tune_gc`` as ``a2a-trio serve`` does
    for its process (left out by the smoke test, which shares its process)."""
    app = create_app(_agent(), config=_config())
    path = app.server.config.jsonrpc_path
    method = "SendMessage" if kind == "send" else "SendStreamingMessage"
    to_app: trio.MemorySendChannel[dict[str, Any]]
    to_app, app_receives = trio.open_memory_channel[dict[str, Any]](1)
    from_app, we_receive = trio.open_memory_channel[dict[str, Any]](1)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            app,
            {"type": "lifespan", "asgi": {"version": "3.0"}},
            app_receives.receive,
            from_app.send,
        )
        await to_app.send({"type": "lifespan.startup"})
        assert (await we_receive.receive())["type"] == "lifespan.startup.complete"
        if tune_gc:
            tune_gc_for_streams()
        for n in range(10):  # warm the caches
            await _request(app, path, _body(method, n))
        profiler = None
        if profile:
            import cProfile  # here: this directory's profile.py would shadow the stdlib's

            profiler = cProfile.Profile()
        started = time.perf_counter()
        if profiler:
            profiler.enable()
        for n in range(count):
            reply = await _request(app, path, _body(method, n))
            if b"TASK_STATE_COMPLETED" not in reply:
                raise RuntimeError(reply.decode())
        if profiler:
            profiler.disable()
        elapsed = time.perf_counter() - started
        await to_app.send({"type": "lifespan.shutdown"})
        assert (await we_receive.receive())["type"] == "lifespan.shutdown.complete"
    print(f"{kind}: {elapsed / count * 1e6:.1f} us per request over {count}", file=sys.stderr)
    if profiler:
        import pstats

        stats = pstats.Stats(profiler)
        stats.sort_stats("tottime").print_stats(45)


def _instructions(kind: str) -> float:
    """Instructions per request of ``kind``: the runs of ``SHORT`` and ``LONG`` requests side by
    side, the difference over ``LONG - SHORT``."""
    with tempfile.TemporaryDirectory() as tmp:
        outs = {count: Path(tmp) / f"callgrind.{count}" for count in (SHORT, LONG)}
        runs = [
            subprocess.Popen(
                [
                    *CALLGRIND,
                    f"--callgrind-out-file={out}",
                    sys.executable,
                    "-P",
                    __file__,
                    kind,
                    str(count),
                ],
                env={**os.environ, "PYTHONHASHSEED": "0"},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for count, out in outs.items()
        ]
        if any(run.wait() for run in runs):
            raise RuntimeError(f"a run under valgrind failed ({kind})")
        totals = {}
        for count, out in outs.items():
            found = re.search(r"^totals: (\d+)", out.read_text(), re.MULTILINE)
            assert found is not None
            totals[count] = int(found.group(1))
        return (totals[LONG] - totals[SHORT]) / (LONG - SHORT)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("kind", nargs="?", choices=("send", "stream"))
    parser.add_argument("count", nargs="?", type=int, default=600)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--callgrind", action="store_true", help="count instructions (of kind, or both)"
    )
    args = parser.parse_args()
    if not args.callgrind:
        trio.run(partial(run, args.kind or "send", args.count, profile=args.profile))
        return
    for kind in (args.kind,) if args.kind else ("send", "stream"):
        print(f"{kind}: {_instructions(kind) / 1000:,.1f}k instructions per request", flush=True)


if __name__ == "__main__":
    main()
