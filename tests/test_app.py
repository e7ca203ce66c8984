"""``hypercorn a2a_trio.app:app``: serves the demo under the trio worker; a setting that cannot
work (or the asyncio worker) stops it with one line, no traceback."""

from __future__ import annotations

import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import httpx
import pytest
import trio
from open_files import CONNECTIONS, answered_together, with_soft_limit

from a2a_trio import PushSettings

HYPERCORN = str(Path(sys.executable).with_name("hypercorn"))
TRIO_APP = [HYPERCORN, "-k", "trio", "--bind", "127.0.0.1:0", "a2a_trio.app:app"]


async def served_url(proc: trio.Process) -> str:
    """The URL a hypercorn process says it serves on, once it does (read from its stderr)."""
    assert proc.stderr is not None
    output = b""
    with trio.fail_after(30):
        while (found := re.search(rb"http://127\.0\.0\.1:\d+", output)) is None:
            output += await proc.stderr.receive_some()
    return found[0].decode()


async def test_trio_worker_serves_the_demo_agent() -> None:
    env = {**os.environ, "A2A_TRIO_STORE": "memory"}
    command = [HYPERCORN, "-k", "trio", "--bind", "127.0.0.1:0", "a2a_trio.app:app"]
    proc = await trio.lowlevel.open_process(command, stderr=subprocess.PIPE, env=env)
    try:
        url = await served_url(proc)
        message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "yo"}]}
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
        async with httpx.AsyncClient(base_url=url, timeout=10) as client:
            card = (await client.get("/.well-known/agent-card.json")).json()
            assert [s["id"] for s in card["skills"]] == ["echo", "countdown", "ask"]
            reply = await client.post("/", json=body, headers={"A2A-Version": "1.0"})
            task = reply.json()["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"
            assert task["artifacts"][0]["parts"] == [{"text": "yo"}]
    finally:
        proc.terminate()
        with trio.fail_after(10):
            await proc.wait()


async def test_the_app_raises_its_open_file_limit_and_holds_more_connections() -> None:
    """hypercorn started with a soft limit of 128 open files: the worker serving
    ``a2a_trio.app`` raises its own to the hard limit, so it answers 300 connections held open
    together; before, it stopped accepting at its 128th descriptor."""
    command = with_soft_limit(TRIO_APP)
    proc = await trio.lowlevel.open_process(command, stderr=subprocess.PIPE, env=settings())
    try:
        assert await answered_together(await served_url(proc)) == CONNECTIONS
    finally:
        proc.terminate()
        with trio.fail_after(10):
            await proc.wait()


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
async def test_a_stop_signal_logs_the_drain_once(stop: signal.Signals) -> None:
    """hypercorn's shutdown (the lifespan's) starts the drain: the log says so once, in the
    words ``a2a-trio serve`` uses (a warning: Python shows it with no logging configured).
    Before, nothing was logged until the process was gone."""
    proc = await trio.lowlevel.open_process(TRIO_APP, stderr=subprocess.PIPE, env=settings())
    try:
        await served_url(proc)
        proc.send_signal(stop)
        assert proc.stderr is not None
        rest = b""
        with trio.fail_after(30):
            while chunk := await proc.stderr.receive_some():
                rest += chunk
            assert await proc.wait() == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert rest.decode().splitlines() == [
        "shutdown requested: stopping; new tasks are refused and running ones get up to 10 s"
        " to finish"
    ]


def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def settings(**values: str) -> dict[str, str]:
    """The environment with only these a2a_trio settings (a memory store unless given)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("A2A_TRIO_")}
    return {**env, "A2A_TRIO_STORE": "memory", **values}


async def start_up(command: list[str], env: dict[str, str], cwd: Path) -> tuple[int, list[str]]:
    """Run a server that should stop at once: its exit status and stderr lines."""
    with trio.fail_after(60):
        result = await trio.run_process(
            command, capture_stdout=True, capture_stderr=True, check=False, env=env, cwd=cwd
        )
    return result.returncode, result.stderr.decode().splitlines()


def assert_one_line(lines: list[str], says: str) -> None:
    """One line starting with ``says``: no traceback, no file paths."""
    assert len(lines) == 1, lines
    assert lines[0].startswith(says), lines[0]
    assert "Traceback" not in lines[0]
    assert "site-packages" not in lines[0]
    assert 'File "' not in lines[0]


BAD_SETTINGS = [
    pytest.param(
        {"A2A_TRIO_AGENT": "no_such_module_here:agent"},
        "error: A2A_TRIO_AGENT: cannot import 'no_such_module_here'",
        id="agent-missing-module",
    ),
    pytest.param(
        {"A2A_TRIO_AGENT": "a2a_trio.demo"},
        "error: A2A_TRIO_AGENT: agent 'a2a_trio.demo' names no attribute: give the module and"
        " the Agent's name, 'a2a_trio.demo:agent'",
        id="agent-malformed",
    ),
    pytest.param(
        {"A2A_TRIO_STORE": "redis://localhost"},
        "error: A2A_TRIO_STORE: unknown task store 'redis://localhost': use \"memory\"",
        id="store-unknown",
    ),
    pytest.param(
        {"A2A_TRIO_STORE": "memroy"},
        "error: A2A_TRIO_STORE: unknown task store 'memroy': did you mean \"memory\"?",
        id="store-misspelled-memory",
    ),
    pytest.param(
        {"A2A_TRIO_STORE": "sqlite:///no/such/directory/tasks.db"},
        "error: A2A_TRIO_STORE='sqlite:///no/such/directory/tasks.db': cannot open the task"
        " store: unable to open database file",
        id="store-sqlite-unopenable",
    ),
    pytest.param(
        {"A2A_TRIO_KEEPALIVE": "0"},
        "error: A2A_TRIO_KEEPALIVE: keepalive must be a positive number of seconds, not 0.0",
        id="keepalive-zero",
    ),
    pytest.param(
        {"A2A_TRIO_KEEPALIVE": "-1"},
        "error: A2A_TRIO_KEEPALIVE: keepalive must be a positive number of seconds, not -1.0",
        id="keepalive-negative",
    ),
    pytest.param(
        {"A2A_TRIO_KEEPALIVE": "nan"},
        "error: A2A_TRIO_KEEPALIVE: keepalive must be a positive number of seconds, not nan",
        id="keepalive-nan",
    ),
    pytest.param(
        {"A2A_TRIO_KEEPALIVE": "soon"},
        "error: A2A_TRIO_KEEPALIVE must be a number of seconds, not 'soon'",
        id="keepalive-not-a-number",
    ),
    pytest.param(
        {"A2A_TRIO_RETENTION": "0"},
        "error: A2A_TRIO_RETENTION: the retention must be a positive number of seconds, not '0'",
        id="retention-zero",
    ),
    pytest.param(
        {"A2A_TRIO_RECOVERY_LEASE": "0"},
        "error: A2A_TRIO_RECOVERY_LEASE: recovery_lease must be a positive number of seconds,"
        " not 0.0",
        id="recovery-lease-zero",
    ),
    pytest.param(
        {"A2A_TRIO_FOLLOW_INTERVAL": "inf"},
        "error: A2A_TRIO_FOLLOW_INTERVAL: follow_interval must be a positive number of seconds,"
        " not inf",
        id="follow-interval-infinite",
    ),
    pytest.param(
        {"A2A_TRIO_STALL_WARNING": "-1"},
        "error: A2A_TRIO_STALL_WARNING: stall_warning must be a positive number of seconds,"
        " not -1.0",
        id="stall-warning-negative",
    ),
    pytest.param(
        {"A2A_TRIO_PUSH": "yes"},
        "error: A2A_TRIO_PUSH: 'yes' is not one of off, on, private",
        id="push-unknown-mode",
    ),
    pytest.param(
        {"A2A_TRIO_PUSH": "on", "SSL_CERT_FILE": "/no/such/ca.pem"},
        "error: SSL_CERT_FILE='/no/such/ca.pem' cannot be loaded as CA certificates (No such"
        " file or directory): name a PEM file of the CAs to trust, or unset it to trust"
        " certifi's bundle",
        id="push-with-a-missing-ca-file",
    ),
    pytest.param(
        {"A2A_TRIO_FOLLOW_INTERVAL": "soon"},
        "error: A2A_TRIO_FOLLOW_INTERVAL must be a number of seconds, not 'soon'",
        id="follow-interval-not-a-number",
    ),
    pytest.param(
        {"A2A_TRIO_PUBLIC_URL": "example.com"},
        "error: A2A_TRIO_PUBLIC_URL: public_url must be an absolute http(s) URL without query"
        " or fragment, such as 'https://agents.example.com', not 'example.com'",
        id="public-url-without-scheme",
    ),
]


@pytest.mark.parametrize(("values", "says"), BAD_SETTINGS)
async def test_a_bad_setting_stops_start_up_with_one_line(
    values: dict[str, str], says: str, tmp_path: Path
) -> None:
    """hypercorn as documented (one worker process) prints just our line; with --workers 0 the
    worker is the main process, and its status 1 reaches the caller."""
    env = settings(**values)
    async with trio.open_nursery() as nursery:
        runs: dict[str, tuple[int, list[str]]] = {}

        async def run(name: str, command: list[str]) -> None:
            runs[name] = await start_up(command, env, tmp_path)

        nursery.start_soon(run, "default", TRIO_APP)
        nursery.start_soon(run, "no workers", [*TRIO_APP, "--workers", "0"])
    assert_one_line(runs["default"][1], says)
    assert_one_line(runs["no workers"][1], says)
    assert runs["no workers"][0] == 1


async def test_a_port_in_use_stops_hypercorn_before_the_app_is_loaded(tmp_path: Path) -> None:
    """hypercorn binds its sockets before its worker imports the app: a port in use is its own
    traceback and exit status 1, with or without workers, the app never loaded (no store file
    made, no line of ours).  ``a2a-trio serve`` says it in one line (tests/cli/test_cli.py);
    the README tells hypercorn users what the traceback means."""
    env = settings(A2A_TRIO_STORE="")  # the default: ./a2a_trio.db, made once the app loads
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        bind = f"127.0.0.1:{busy.getsockname()[1]}"
        for workers in ([], ["--workers", "0"]):
            command = [HYPERCORN, "-k", "trio", "--bind", bind, *workers, "a2a_trio.app:app"]
            status, lines = await start_up(command, env, tmp_path)
            assert (status, lines[-1]) == (1, "OSError: [Errno 98] Address already in use")
            assert not [line for line in lines if line.startswith("error: ")]
    assert list(await trio.Path(tmp_path).iterdir()) == []


async def test_an_unreachable_postgres_stops_start_up_without_its_password(
    tmp_path: Path,
) -> None:
    url = f"postgresql://a2a:s3cret@127.0.0.1:{closed_port()}/tasks"
    status, lines = await start_up([*TRIO_APP, "-w", "0"], settings(A2A_TRIO_STORE=url), tmp_path)
    assert status == 1
    assert_one_line(lines, "error: A2A_TRIO_STORE='postgresql://a2a:***@127.0.0.1:")
    assert "cannot open the task store: connection failed:" in lines[0]
    assert "s3cret" not in lines[0]


def test_a_sqlite_file_in_a_missing_directory_says_what_to_check(tmp_path: Path) -> None:
    """``a2a-trio serve`` said it; under hypercorn the line stopped at SQLite's reason."""
    from a2a_trio.app import app_from_env
    from a2a_trio.loading import ConfigError

    url = f"sqlite:///{tmp_path / 'missing' / 'tasks.db'}"
    with pytest.raises(ConfigError) as refused:
        app_from_env({"A2A_TRIO_STORE": url})
    assert str(refused.value) == (
        f"A2A_TRIO_STORE={url!r}: cannot open the task store: unable to open database file"
        " (does its directory exist, and may you write there?)"
    )


def test_a_sqlite_store_another_server_holds_stops_start_up(tmp_path: Path) -> None:
    """Under hypercorn too: the second server would have failed the first one's running tasks."""
    from a2a_trio._one_server import hold_store_alone
    from a2a_trio.app import app_from_env
    from a2a_trio.loading import ConfigError

    path = tmp_path / "tasks.db"
    with hold_store_alone(str(path)) as holder, pytest.raises(ConfigError) as refused:
        holder.opened()  # a running server's hold
        app_from_env({"A2A_TRIO_STORE": f"sqlite:///{path}"})
    assert str(refused.value) == (
        f"A2A_TRIO_STORE='sqlite:///{path}': cannot open the task store: another a2a_trio"
        f" server is serving from it (it holds {path}.lock): stop that one, or give this one"
        " another store"
    )
    assert (tmp_path / "tasks.db.lock").exists()  # the holder's: the refused start left it
    assert app_from_env({"A2A_TRIO_STORE": f"sqlite:///{path}"})  # released: free again


def test_a_lock_file_removed_before_it_was_locked_is_taken_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server whose store failed to open removes the lock file it created while it holds
    it; one that opened that file just before locks a file no longer at the path, and takes
    the new one instead of serving beside the server that holds it."""
    import fcntl

    from a2a_trio._one_server import StoreInUseError, hold_store_alone

    path = tmp_path / "tasks.db"
    lock = tmp_path / "tasks.db.lock"
    lock.touch()
    flock = fcntl.flock

    def removed_before_the_first_lock(fd: int, operation: int) -> None:
        monkeypatch.setattr(fcntl, "flock", flock)
        lock.unlink()  # the failed server's removal, between this open and this lock
        flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", removed_before_the_first_lock)
    with hold_store_alone(str(path)):
        assert lock.exists()
        # the file at the path is the one held: a second server is refused, not let in
        with pytest.raises(StoreInUseError), hold_store_alone(str(path)):
            pass


def test_the_lock_is_on_the_file_at_the_path(tmp_path: Path) -> None:
    """What docs/stores.md says of ``FILE.lock``: it stays after a stop and may be deleted
    while no server runs; deleted under a running server, it holds no second one off."""
    from a2a_trio._one_server import hold_store_alone

    path = tmp_path / "tasks.db"
    lock = tmp_path / "tasks.db.lock"
    with hold_store_alone(str(path)) as first:
        first.opened()
    assert lock.exists()
    lock.unlink()
    with hold_store_alone(str(path)) as first:
        first.opened()
        assert lock.exists()
        lock.unlink()
        with hold_store_alone(str(path)) as second:  # a new file at the path, not the one held
            second.opened()
            assert lock.exists()


@pytest.mark.postgres
def test_a_wrong_postgres_password_says_what_to_check() -> None:
    from urllib.parse import urlsplit

    from store.conftest import pg_base_url

    from a2a_trio.app import app_from_env
    from a2a_trio.loading import ConfigError

    real = urlsplit(pg_base_url())
    wrong = real._replace(
        netloc=f"{real.username}:wrong-{real.password}@{real.hostname}:{real.port}"
    )
    with pytest.raises(ConfigError) as refused:
        app_from_env({"A2A_TRIO_STORE": wrong.geturl()})
    said = str(refused.value)
    assert "password authentication failed" in said
    assert said.endswith(" (check the user name and password in the store URL)")
    assert f"wrong-{real.password}" not in said


@pytest.mark.postgres
def test_a_missing_postgres_database_says_to_create_it() -> None:
    from urllib.parse import urlsplit

    from store.conftest import pg_base_url

    from a2a_trio.app import app_from_env
    from a2a_trio.loading import ConfigError

    missing = urlsplit(pg_base_url())._replace(path="/a2a_trio_no_such_database")
    with pytest.raises(ConfigError) as refused:
        app_from_env({"A2A_TRIO_STORE": missing.geturl()})
    said = str(refused.value)
    assert 'database "a2a_trio_no_such_database" does not exist' in said
    assert said.endswith(" (create that database, or fix its name at the end of the store URL)")


async def test_asyncio_worker_fails_at_once_saying_what_to_do(tmp_path: Path) -> None:
    asyncio_app = [HYPERCORN, "--bind", "127.0.0.1:0", "a2a_trio.app:app"]
    says = "error: a2a_trio runs on trio: start it with hypercorn's trio worker,"
    _, lines = await start_up(asyncio_app, settings(), tmp_path)
    assert_one_line(lines, says)
    assert "'hypercorn -k trio a2a_trio.app:app'" in lines[0]
    status, lines = await start_up([*asyncio_app, "--workers", "0"], settings(), tmp_path)
    assert_one_line(lines, says)
    assert status == 1


def test_the_recovery_lease_setting_reaches_the_runtime() -> None:
    from a2a_trio.app import app_from_env

    env = {"A2A_TRIO_STORE": "memory", "A2A_TRIO_RECOVERY_LEASE": "30"}
    assert app_from_env(env).app.server.config.runtime.recovery_lease == 30.0
    assert (
        app_from_env({"A2A_TRIO_STORE": "memory"}).app.server.config.runtime.recovery_lease is None
    )


def test_the_follow_interval_setting_reaches_the_runtime() -> None:
    from a2a_trio.app import app_from_env

    env = {"A2A_TRIO_STORE": "memory", "A2A_TRIO_FOLLOW_INTERVAL": "2.5"}
    assert app_from_env(env).app.server.config.runtime.follow_interval == 2.5


@pytest.mark.parametrize(("value", "stall_warning"), [("", 1.0), ("0.25", 0.25), ("0", None)])
def test_the_stall_warning_setting_reaches_the_runtime_and_0_turns_it_off(
    value: str, stall_warning: float | None
) -> None:
    from a2a_trio.app import app_from_env

    env = {"A2A_TRIO_STORE": "memory", "A2A_TRIO_STALL_WARNING": value}
    assert app_from_env(env).app.server.config.runtime.stall_warning == stall_warning


@pytest.mark.parametrize(
    ("value", "push"),
    [
        ("", None),
        ("off", None),
        ("on", PushSettings()),
        ("Private", PushSettings(allow_private_networks=True)),
    ],
)
def test_the_push_setting_turns_push_notifications_on(
    value: str, push: PushSettings | None
) -> None:
    from a2a_trio.app import app_from_env

    env = {"A2A_TRIO_STORE": "memory", "A2A_TRIO_PUSH": value}
    assert app_from_env(env).app.server.config.push == push


async def test_a_store_of_a_newer_release_stops_start_up_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "newer.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA user_version = 999")
    env = settings(A2A_TRIO_STORE=f"sqlite:///{path}")
    status, lines = await start_up([*TRIO_APP, "--workers", "0"], env, tmp_path)
    assert status == 1
    assert_one_line(lines, f"error: A2A_TRIO_STORE='sqlite:///{path}': cannot open the task store")
    assert "upgrade a2a_trio" in lines[0]
