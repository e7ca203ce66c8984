"""A PostgreSQL server process that stops while its host runs (``kill -STOP``, a frozen
container) no longer holds a call for ever: the watchdog shuts the call's connection down once
the statement bound plus ``late_answer`` has passed, the call raises StoreUnavailableError, its
worker thread returns, and the pool replaces the connection.  Before, the kernel acknowledged
everything for the stopped process and the call waited until it ran again.

The tests stop a real backend of the test server with SIGSTOP (as root, on this host), and always
resume it; a safety net resumes it after ``THAW_AFTER`` seconds whatever happens, so a call the
watchdog does not cut off fails its test (too slow, or no error) instead of hanging it.

The watchdog's duplicate of a call's socket needs a file descriptor; the tests that run out of
them do so for real, lowering this process's soft limit and filling the table below it."""

from __future__ import annotations

import errno
import os
import resource
import signal
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from functools import partial
from pathlib import Path

import psycopg
import pytest
import trio
from prerequisites import missing_prerequisite
from server.conftest import rpc

from a2a_trio import model as m
from a2a_trio.errors import StoreUnavailableError
from a2a_trio.store import ANONYMOUS, PostgresTimeouts, SqlTaskStore, open_postgres_store

from .conftest import pg_base_url, pg_schema_url
from .test_pg_timeouts import UNAVAILABLE, sdk_get_task_is_refused, serving_one_task

pytestmark = pytest.mark.postgres

QUICK_WATCHDOG = PostgresTimeouts(statement=1, late_answer=1)
"""A call gives up on a stopped server after 2 s."""

THAW_AFTER = 20
"""Seconds after which a stopped backend is resumed whatever the test does: past the
watchdog's bound and the tests' ``fail_after``, so a call the watchdog did not cut off returns
then, and its test fails instead of hanging."""

NO_ANSWER = "no answer from the server for 2 s"


@pytest.fixture
def application() -> str:
    """An ``application_name`` that tells this test's pooled connections apart."""
    return f"a2a_trio_watchdog_{uuid.uuid4().hex[:8]}"


@pytest.fixture
async def url(application: str) -> AsyncIterator[str]:
    async with pg_schema_url() as schema_url:
        yield f"{schema_url}&application_name={application}"


def _backends(application: str) -> list[tuple[int, int]]:
    """The process id and client port of each server process serving ``application``."""
    with psycopg.connect(pg_base_url(), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid, client_port FROM pg_stat_activity WHERE application_name = %s",
            (application,),
        ).fetchall()
    return [(pid, port) for pid, port in rows]


def _cannot_stop(reason: str) -> None:
    """Skip on a developer machine, FAIL in CI (``CI`` set): never skipped silently there."""
    message = f"cannot stop a PostgreSQL backend here: {reason}"
    missing_prerequisite(message, in_ci=message)


def _local_backend(pid: int, port: int) -> bool:
    """Whether ``pid`` is, on this host, the server process of the connection from ``port``:
    its title names the client's address and port (a remote server's pid may be anything
    here)."""
    try:
        title = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return f"({port})".encode() in title


@asynccontextmanager
async def stopped(application: str) -> AsyncIterator[None]:
    """Every server process serving ``application`` stopped (SIGSTOP) inside, and resumed
    (SIGCONT) on the way out, or after ``THAW_AFTER`` seconds at the latest."""
    backends = await trio.to_thread.run_sync(_backends, application)
    assert backends, f"no connection of {application} to stop"
    for pid, port in backends:
        if not _local_backend(pid, port):
            _cannot_stop(f"process {pid} is not the server process of this host's connection")
    pids = [pid for pid, _ in backends]
    try:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGSTOP)
            except PermissionError as exc:
                _cannot_stop(str(exc))
        await _until_stopped(pids)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_resume_after, THAW_AFTER, pids)
            yield
            nursery.cancel_scope.cancel()
    finally:
        _resume(pids)


async def _until_stopped(pids: list[int]) -> None:
    """Wait until the kernel has stopped them all (a signal takes effect when its process is
    next scheduled)."""
    for _ in range(1000):  # 10 s at most
        if all(_is_stopped(pid) for pid in pids):
            return
        await trio.sleep(0.01)
    pytest.fail(f"processes {pids} did not stop")


async def _resume_after(seconds: float, pids: list[int]) -> None:
    await trio.sleep(seconds)
    _resume(pids)


def _resume(pids: list[int]) -> None:
    for pid in pids:
        with suppress(ProcessLookupError):  # it saw its connection shut down, and ended
            os.kill(pid, signal.SIGCONT)


async def test_calls_to_a_stopped_server_give_up_and_the_store_recovers(
    url: str, application: str
) -> None:
    """A read (autocommit) and a touch (a transaction), each on the one pooled connection,
    stopped under it; the call returning at all shows its worker thread returned."""
    async with open_postgres_store(url, pool_size=1, timeouts=QUICK_WATCHDOG) as store:
        task = (await store.create_task(ANONYMOUS, m.new_task(m.text_message("hi")))).task
        for call in (
            partial(store.load_task, ANONYMOUS, task.id),
            partial(store.touch_task, ANONYMOUS, task.id, expected_version=1),
        ):
            async with stopped(application):
                with trio.fail_after(15), pytest.raises(StoreUnavailableError, match=NO_ANSWER):
                    await call()
            loaded = await store.load_task(ANONYMOUS, task.id)  # on a new connection
            assert loaded is not None
            assert loaded.task == task
        assert await store.touch_task(ANONYMOUS, task.id, expected_version=1)


async def test_a_cancelled_call_to_a_stopped_server_still_returns(
    url: str, application: str
) -> None:
    """Cancelling the caller does not stop the watchdog: the call waits for its thread, which
    the watchdog frees, and reports the thread's error (trio delivers the cancellation at the
    caller's next checkpoint)."""
    async with open_postgres_store(url, pool_size=1, timeouts=QUICK_WATCHDOG) as store:
        task = (await store.create_task(ANONYMOUS, m.new_task(m.text_message("hi")))).task
        async with stopped(application):
            with (
                trio.fail_after(15),
                trio.move_on_after(0.1),
                pytest.raises(StoreUnavailableError, match=NO_ANSWER),
            ):
                await store.load_task(ANONYMOUS, task.id)
        assert await store.load_task(ANONYMOUS, task.id) is not None


async def test_taking_a_pooled_connection_asks_the_server_nothing(
    url: str, application: str
) -> None:
    """The pool's checkout check makes no round trip: a stopped server's idle connection is
    handed out while the server is still stopped (the call on it is the watchdog's business).
    Before, every checkout sent a query first, which here waited for the server to resume."""
    async with open_postgres_store(url, pool_size=1) as store:
        assert isinstance(store, SqlTaskStore)
        pool = store._driver._pool  # type: ignore[attr-defined]
        [(pid, _)] = await trio.to_thread.run_sync(_backends, application)
        async with stopped(application):
            conn = await trio.to_thread.run_sync(pool.getconn)
            try:
                assert conn.info.backend_pid == pid
                assert _is_stopped(pid)
            finally:
                pool.putconn(conn)


def _is_stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (state ``T`` in ``/proc/<pid>/stat``)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rpartition(")")[2].split()[0] == "T"


async def test_a_client_is_told_the_store_is_unavailable_while_the_server_is_stopped(
    url: str, application: str
) -> None:
    """Through a real server: JSON-RPC's -32603 and the official SDK's ``InternalError`` on
    both bindings, each while the store's one connection is stopped; then the task is there."""
    store = partial(open_postgres_store, url, pool_size=1, timeouts=QUICK_WATCHDOG)
    async with serving_one_task(store) as (base, http, task_id):
        get = rpc("GetTask", {"id": task_id})
        async with stopped(application):
            answer = await http.post("/", json=get)
        for binding in ("JSONRPC", "HTTP+JSON"):
            assert (await http.post("/", json=get)).status_code == 200  # a new connection
            async with stopped(application):
                await sdk_get_task_is_refused(base, task_id, binding)
        again = await http.post("/", json=get)
    assert answer.json()["error"]["code"] == -32603
    assert answer.json()["error"]["message"] == UNAVAILABLE
    assert "Traceback" not in answer.text
    assert again.json()["result"]["status"]["state"] == "TASK_STATE_COMPLETED"


@contextmanager
def no_descriptor_left() -> Iterator[None]:
    """This process cannot open another file descriptor inside: its soft limit lowered to a few
    above the highest one open, and the free ones below filled; all given back on the way
    out."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    highest = max(int(fd) for fd in os.listdir("/proc/self/fd"))
    resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 16, hard))
    fillers: list[int] = []
    try:
        while True:
            try:
                fillers.append(os.open(os.devnull, os.O_RDONLY))
            except OSError as exc:
                if exc.errno != errno.EMFILE:
                    raise
                break
        yield
    finally:
        for fd in fillers:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


OUT_OF_DESCRIPTORS = "cannot watch the call's connection: [Errno 24] Too many open files"


async def test_a_call_without_a_descriptor_left_is_store_unavailable(url: str) -> None:
    """The watchdog's duplicate of the connection's socket raised a bare OSError (EMFILE), which
    no caller expects from a store; the call now fails as every store failure does, and the
    store works again once descriptors are free."""
    async with open_postgres_store(url, pool_size=1) as store:
        task = (await store.create_task(ANONYMOUS, m.new_task(m.text_message("hi")))).task
        with no_descriptor_left(), pytest.raises(StoreUnavailableError) as refused:
            await store.load_task(ANONYMOUS, task.id)
        assert str(refused.value).endswith(OUT_OF_DESCRIPTORS)
        loaded = await store.load_task(ANONYMOUS, task.id)
        assert loaded is not None
        assert loaded.task == task


async def test_an_unwatched_call_needs_no_descriptor(url: str) -> None:
    """With no watchdog (``late_answer=None``) a call takes no duplicate of its socket, so a
    process out of descriptors still reads over its pooled connection; before, every call
    duplicated the socket for a watchdog that was not running, and failed here."""
    unwatched = PostgresTimeouts(late_answer=None)
    async with open_postgres_store(url, pool_size=1, timeouts=unwatched) as store:
        task = (await store.create_task(ANONYMOUS, m.new_task(m.text_message("hi")))).task
        with no_descriptor_left():
            loaded = await store.load_task(ANONYMOUS, task.id)
        assert loaded is not None
        assert loaded.task == task


async def test_a_client_is_told_the_store_is_unavailable_when_descriptors_run_out(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Through a real server, on a connection it accepted before: JSON-RPC's -32603 saying the
    store is unavailable, the OSError's words left in the server's log (before: the unexpected
    error's answer)."""
    store = partial(open_postgres_store, url, pool_size=1)
    async with serving_one_task(store) as (_, http, task_id):
        get = rpc("GetTask", {"id": task_id})
        with no_descriptor_left():
            answer = await http.post("/", json=get)
        again = await http.post("/", json=get)
    assert answer.json()["error"]["code"] == -32603
    assert answer.json()["error"]["message"] == UNAVAILABLE
    assert "Errno" not in answer.text
    assert caplog.text.count(OUT_OF_DESCRIPTORS) == 1
    assert again.json()["result"]["status"]["state"] == "TASK_STATE_COMPLETED"
