"""Start the benchmark servers as pinned child processes and read their resource use.

Each server is one Python process running a script from ``benchmarks/servers/``; it writes
its port to a file once it listens. Servers run on one CPU and the load generator on the other
(when the machine has two), like the reference measurements.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import attrs
import trio

SERVERS_DIR = Path(__file__).resolve().parent.parent / "servers"
LOG_DIR = Path(__file__).resolve().parent.parent / "results" / "logs"
SERVER_CPU = 0
LOADGEN_CPU = 1
START_TIMEOUT = 120.0
STOP_TIMEOUT = 5.0

SCRIPTS = {
    "a2a_trio": "trio_server.py",
    "a2a-sdk": "sdk_server.py",
    "asgi floor": "asgi_floor.py",
    "quart floor": "quart_floor.py",
}


@attrs.frozen
class ServerOptions:
    """Options passed to every server script (see ``servers/behaviour.py``)."""

    keepalive: float = 15.0
    release_file: str = ""
    retention_seconds: float = 0.0
    pythonpath: str = ""
    """Prepended to ``PYTHONPATH`` (to run a2a_trio from a snapshot, not the working tree)."""
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment variables for the server process (profiling tools use them)."""
    wrapper: str = ""
    """A script in ``servers/`` that runs the server script given as its first argument
    (``counted.py`` counts the Python calls it makes)."""


@attrs.frozen
class Server:
    """A running server process."""

    name: str
    pid: int
    port: int

    def rss_kb(self) -> int:
        """Resident set size (VmRSS) in KiB."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError(f"no VmRSS for pid {self.pid}")

    def cpu_seconds(self) -> float:
        """User plus system CPU time the process has used so far."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def fd_count(self) -> int:
        """Open file descriptors (sockets included)."""
        return len(os.listdir(f"/proc/{self.pid}/fd"))


def pin_loadgen() -> bool:
    """Pin this process to the load generator's CPU; return whether pinning applies."""
    cpus = os.sched_getaffinity(0)
    if {SERVER_CPU, LOADGEN_CPU} <= cpus:
        os.sched_setaffinity(0, {LOADGEN_CPU})
        return True
    return False


async def _wait_port(port_file: Path, proc: trio.Process, name: str) -> int:
    with trio.move_on_after(START_TIMEOUT):
        while not await trio.Path(port_file).exists():
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode}; see {LOG_DIR}")
            await trio.sleep(0.05)
        return int(await trio.Path(port_file).read_text())
    raise RuntimeError(f"{name} did not listen within {START_TIMEOUT} s")


@asynccontextmanager
async def open_server(name: str, options: ServerOptions, *, pinned: bool) -> AsyncIterator[Server]:
    """Start the server called ``name``; stop it (SIGTERM, then SIGKILL) on exit."""
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="a2a-bench-") as tmp:
        port_file = Path(tmp) / "port"
        wrapper = [str(SERVERS_DIR / options.wrapper)] if options.wrapper else []
        argv: Sequence[str] = [
            sys.executable,
            *wrapper,
            str(SERVERS_DIR / SCRIPTS[name]),
            "--port-file",
            str(port_file),
            "--keepalive",
            str(options.keepalive),
            "--release-file",
            options.release_file,
            "--retention-seconds",
            str(options.retention_seconds),
        ]
        log_path = LOG_DIR / f"{name.replace(' ', '_')}.log"
        with log_path.open("ab") as log:
            env = dict(os.environ) | dict(options.env)
            if options.pythonpath:
                env["PYTHONPATH"] = os.pathsep.join(
                    filter(None, [options.pythonpath, env.get("PYTHONPATH", "")])
                )
            proc = await trio.lowlevel.open_process(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd=str(SERVERS_DIR),
                env=env,
            )
            try:
                if pinned:
                    os.sched_setaffinity(proc.pid, {SERVER_CPU})
                port = await _wait_port(port_file, proc, name)
                yield Server(name=name, pid=proc.pid, port=port)
            finally:
                with trio.CancelScope(shield=True):
                    await _stop(proc)


async def _stop(proc: trio.Process) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    with trio.move_on_after(STOP_TIMEOUT):
        await proc.wait()
        return
    proc.kill()
    await proc.wait()
