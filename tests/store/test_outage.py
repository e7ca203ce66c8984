"""A database that cannot work right now: StoreUnavailableError, a clear client error, and a
purge loop that carries on (before, one locked purge stopped the store and the runtime)."""

from __future__ import annotations

import logging
import shutil
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

import httpx
import pytest
import trio

from a2a_trio import Agent, JobStatus, TaskContext, serve
from a2a_trio import model as m
from a2a_trio.errors import StoreDamagedError, StoreUnavailableError
from a2a_trio.runtime import RuntimeConfig, TaskRuntime
from a2a_trio.runtime._runtime import STORE_UNAVAILABLE_MESSAGE
from a2a_trio.store import (
    ANONYMOUS,
    MemoryTaskStore,
    Retention,
    StoredTask,
    TaskStore,
    TaskUpdate,
    open_sqlite_store,
    open_store,
)
from a2a_trio.store._open import _purge_forever


async def test_an_unreachable_sqlite_file_is_store_unavailable(tmp_path: Path) -> None:
    folder = tmp_path / "gone"
    folder.mkdir()
    async with open_store(f"sqlite:///{folder / 'tasks.db'}") as store:
        task = (await store.create_task(ANONYMOUS, m.new_task(m.text_message("hi")))).task
        shutil.rmtree(folder)  # a new reader connection cannot open the file any more
        with pytest.raises(StoreUnavailableError, match="SQLite store is unavailable"):
            await store.load_task(ANONYMOUS, task.id)


async def test_every_sqlite_connection_waits_for_a_lock_at_most_30_s(tmp_path: Path) -> None:
    """SQLite's one unbounded wait would be a lock held by another process: the busy timeout
    bounds it on the writer and on every reader, so a locked file is StoreUnavailableError."""
    async with open_store(f"sqlite:///{tmp_path / 'tasks.db'}") as store:
        driver = store._driver  # type: ignore[attr-defined]
        read = await driver.read(lambda tx: tx.run("PRAGMA busy_timeout").fetchone())
        written = await driver.write(lambda tx: tx.run("PRAGMA busy_timeout").fetchone())
    assert read == written == (30_000,)


agent = Agent("outage", "echo")


@agent.skill(default=True)
async def echo(ctx: TaskContext) -> str:
    return ctx.text


class Unreachable(MemoryTaskStore):
    """The memory store, its reads failing as an unreachable database's do."""

    async def load_task(self, *args: object, **kwargs: object) -> NoReturn:
        raise StoreUnavailableError("the PostgreSQL store is unavailable: connection refused")


@asynccontextmanager
async def unreachable() -> AsyncIterator[Unreachable]:
    yield Unreachable()


async def test_a_client_is_told_the_store_is_unavailable() -> None:
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve, agent, port=0, store=unreachable))
        async with httpx.AsyncClient(base_url=url, headers={"A2A-Version": "1.0"}) as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}
            answer = await http.post("/", json=body)
            rest = await http.get("/tasks/x")
        nursery.cancel_scope.cancel()
    assert answer.status_code == 200
    error = answer.json()["error"]
    assert error["code"] == -32603
    assert error["message"] == "The task store is unavailable right now; try again shortly"
    assert "refused" not in answer.text  # the store's own words stay in the server's log
    assert rest.status_code == 500
    assert rest.json()["error"]["status"] == "INTERNAL"


class FlakyPurge(MemoryTaskStore):
    """The memory store, its first purge failing as a locked or failing-over database does."""

    purges = 0

    async def purge_expired(self, *, now: datetime | None = None) -> int:
        self.purges += 1
        if self.purges == 1:
            raise StoreUnavailableError("database is locked")
        return await super().purge_expired(now=now)


async def test_the_purge_loop_outlives_an_unavailable_database(autojump_clock: object) -> None:
    store = FlakyPurge(retention=Retention(terminal_ttl=timedelta(0)))
    task = (await store.create_task(ANONYMOUS, m.new_task(m.text_message("old")))).task
    await store.update_task(ANONYMOUS, task.id, TaskUpdate(state=m.TaskState.COMPLETED))
    with trio.move_on_after(2.5):  # purges at 0 (fails), 1 and 2 s
        await _purge_forever(store, Retention(terminal_ttl=timedelta(0)))
    assert store.purges == 3
    assert await store.load_task(ANONYMOUS, task.id) is None


class ReadOnly:
    """A real SQLite store whose database refuses writes while the outage lasts, as a full
    disk or a read-only remount does (``PRAGMA query_only`` on its one writer connection)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.writer: sqlite3.Connection | None = None

    @asynccontextmanager
    async def open(self) -> AsyncIterator[TaskStore]:
        async with open_store(f"sqlite:///{self.path}") as store:
            self.writer = store._driver._writer.conn  # type: ignore[attr-defined]
            yield store

    def begin(self) -> None:
        assert self.writer is not None
        self.writer.execute("PRAGMA query_only = ON")

    def end(self) -> None:
        assert self.writer is not None
        self.writer.execute("PRAGMA query_only = OFF")


outage_agent = Agent("outage", "reports progress while the store goes away")
outages: dict[str, ReadOnly] = {}


@outage_agent.skill(default=True)
async def progress(ctx: TaskContext) -> str:
    outage = outages[ctx.text]
    outage.begin()  # the database goes away under the running task
    try:
        await ctx.update("halfway")  # refused: StoreUnavailableError, not caught here
    finally:
        if ctx.text == "back":
            outage.end()  # back in time for the runtime to record the task's end
    return "never"


class Scripted:
    """Parked work reporting progress on every poll; the store is unavailable from the second
    poll to the fifth, then the work completes at the seventh."""

    def __init__(self, outage: ReadOnly) -> None:
        self.outage = outage
        self.polls = 0
        self.cancelled = False

    async def status(self) -> JobStatus:
        self.polls += 1
        if self.polls == 2:
            self.outage.begin()
        elif self.polls == 5:
            self.outage.end()
        if self.polls < 7:
            return JobStatus("running", progress=self.polls / 10, message=f"poll {self.polls}")
        return JobStatus("completed")

    async def cancel(self) -> None:
        self.cancelled = True

    async def result(self) -> str:
        return "finished"


parked_work: dict[str, Scripted] = {}
parking_agent = Agent("parked", "long-running work that reports progress")


@parking_agent.skill(default=True)
async def park(ctx: TaskContext) -> Scripted:
    return parked_work[ctx.text]


async def test_a_parked_jobs_progress_waits_out_an_outage(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Progress the store cannot take is recorded at a later poll; the work is neither failed
    nor cancelled for it (before: the task failed and the work ran on, cancelled by nobody)."""
    outage = ReadOnly(tmp_path / "tasks.db")
    parked_work["go"] = work = Scripted(outage)
    config = RuntimeConfig(poll_interval=0.01)
    async with outage.open() as store, trio.open_nursery() as nursery:
        runtime = TaskRuntime(parking_agent, store, config)
        await nursery.start(runtime.run)
        with trio.fail_after(10):
            task = await runtime.send(ANONYMOUS, m.SendMessageRequest(m.text_message("go")))
        nursery.cancel_scope.cancel()
    assert isinstance(task, m.Task) and task.status.state is m.TaskState.COMPLETED
    assert [part.text for part in task.artifacts[0].parts] == ["finished"]  # type: ignore[union-attr]
    assert not work.cancelled
    progress = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(progress) == 3  # polls 2, 3 and 4
    assert all("progress was not recorded" in line for line in progress)


@outage_agent.skill()
async def progress_in_a_nursery(ctx: TaskContext) -> str:
    """The same, from a task of the handler's own nursery: the outage comes out of it in an
    exception group (which was logged as the skill's failure)."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(progress, ctx)
    return "never"


@pytest.mark.parametrize("skill", ["progress", "progress_in_a_nursery"])
@pytest.mark.parametrize("text", ["back", "still down"])
async def test_a_write_refused_by_an_outage_is_not_the_skills_failure(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, text: str, skill: str
) -> None:
    """The handler's ``ctx.update`` meets an unavailable store: the task fails (recorded if the
    store is back for it) with a message saying why, and the log has one warning saying the
    store was unavailable (before: a traceback logged as the skill's failure, then "final state
    not recorded")."""
    outages[text] = outage = ReadOnly(tmp_path / "tasks.db")
    caplog.set_level(logging.INFO, logger="a2a_trio")
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve, outage_agent, port=0, store=outage.open))
        async with httpx.AsyncClient(base_url=url, headers={"A2A-Version": "1.0"}) as http:
            message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}
            metadata = {"skillId": skill}
            sent = await http.post("/message:send", json={"message": message, "metadata": metadata})
            task = sent.json()["task"]
            if text != "back":
                outage.end()
            stored = (await http.get(f"/tasks/{task['id']}")).json()
        nursery.cancel_scope.cancel()
    assert stored["status"] == task["status"]
    if text == "back":
        assert task["status"]["state"] == "TASK_STATE_FAILED"
        assert task["status"]["message"]["parts"] == [{"text": STORE_UNAVAILABLE_MESSAGE}]
    else:  # nothing was written: the task is left for recovery to end, as after a crash
        assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
    logged = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [(r.name, r.levelname, r.exc_info) for r in logged] == [
        ("a2a_trio.runtime", "WARNING", None)
    ]
    line = logged[0].getMessage()
    assert line.startswith(f"task {task['id']}")
    if text == "back":
        assert "failed, the task store was unavailable: the SQLite store is unavailable" in line
    else:
        assert "final state not recorded, the store does not hold it: the SQLite store" in line
    assert "readonly database" in line  # the cause, for the operator


async def damaged_store(path: Path, state: m.TaskState = m.TaskState.COMPLETED) -> str:
    """A SQLite store at ``path`` holding a task in ``state`` (finished by default), closed,
    then damaged past its first page (its tasks table's root page overwritten); returns the
    task's id."""
    async with open_store(f"sqlite:///{path}") as store:
        task = (await store.create_task(ANONYMOUS, m.new_task(m.text_message("kept")))).task
        await store.update_task(ANONYMOUS, task.id, TaskUpdate(state=state))
    with closing(sqlite3.connect(path)) as conn:
        (page_size,) = conn.execute("PRAGMA page_size").fetchone()
        (root,) = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'a2a_tasks'"
        ).fetchone()
    assert root > 1
    with path.open("r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(b"\xa5" * page_size)
    return task.id


async def test_a_damaged_sqlite_file_is_said_in_one_line_and_written_no_more(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A file damaged past its first page starts (only a read of every page would find it).
    Each request meeting the damage is an internal error saying so, with no path, and the log
    has one error line saying which file and what to do, however many requests met it (the
    next would come a minute later, with their number: a server under load flooded its log
    with one line per request); from then on nothing is written to the file.  Before that:
    "The server failed on this request; its log says why" and a traceback of
    ``sqlite3.DatabaseError``."""
    path = tmp_path / "tasks.db"
    task_id = await damaged_store(path)
    damaged = path.read_bytes()
    caplog.set_level(logging.INFO, logger="a2a_trio")
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve, agent, port=0, store=f"sqlite:///{path}"))
        async with httpx.AsyncClient(base_url=url, headers={"A2A-Version": "1.0"}) as http:
            message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
            answers = []
            for _ in range(10):
                answers += [
                    await http.get(f"/tasks/{task_id}"),
                    await http.post("/message:send", json={"message": message}),
                    await http.get("/tasks"),
                ]
        nursery.cancel_scope.cancel()
    for answer in answers:
        assert answer.status_code == 500
        error = answer.json()["error"]
        assert error["status"] == "INTERNAL"
        assert error["message"] == "The task store is damaged; the server's log says what to do"
        assert str(tmp_path) not in answer.text
    logged = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [(r.name, r.levelname, r.exc_info) for r in logged] == [
        ("a2a_trio.server", "ERROR", None)
    ]
    assert logged[0].getMessage() == (
        f"request failed: the SQLite store's file {path} is damaged (database disk image is"
        " malformed): stop the server, then restore the file from a backup or name a new"
        " file; the server writes nothing more to it"
    )
    assert path.read_bytes() == damaged


async def test_once_the_damage_is_found_no_write_reaches_the_file(tmp_path: Path) -> None:
    """A write could spread the damage (a page it rewrites beside a damaged one): refused
    before it runs, even one that would touch only sound pages."""
    path = tmp_path / "tasks.db"
    task_id = await damaged_store(path)
    ran: list[str] = []
    async with open_store(f"sqlite:///{path}") as store:
        with pytest.raises(StoreDamagedError, match=r"is damaged \(database disk image is"):
            await store.load_task(ANONYMOUS, task_id)
        with pytest.raises(StoreDamagedError, match="the server writes nothing more to it"):
            await store._driver.write(ran.append)  # type: ignore[attr-defined]
    assert ran == []


async def test_the_purge_loop_on_a_damaged_file_warns_once_a_minute_with_the_count(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, autojump_clock: object
) -> None:
    """Every tick's purge is refused on a damaged file: the first refusal is logged in full,
    then one line a minute says how many were left out (before: a warning every tick, here
    every second).  Virtual time: the writes are refused before they reach a thread."""
    path = tmp_path / "tasks.db"
    task_id = await damaged_store(path)
    retention = Retention(terminal_ttl=timedelta(0), purge_interval=timedelta(seconds=1))
    caplog.set_level(logging.INFO, logger="a2a_trio")
    async with open_sqlite_store(str(path), retention=retention) as store:
        with pytest.raises(StoreDamagedError):
            await store.load_task(ANONYMOUS, task_id)  # found: writes are refused from now on
        with trio.move_on_after(150):  # purges at 0, 1, ..., 149 s
            await _purge_forever(store, retention)
    damage = (
        f"retention purge skipped, retried in 1 s: the SQLite store's file {path} is damaged"
        " (database disk image is malformed): stop the server, then restore the file from a"
        " backup or name a new file; the server writes nothing more to it"
    )
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", damage),
        ("WARNING", f"{damage} [59 more like it in the last 60 s not logged]"),
        ("WARNING", f"{damage} [59 more like it in the last 60 s not logged]"),
    ]


async def test_recovery_meeting_a_damaged_file_says_so_and_what_to_do(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A task a crash left WORKING sits on a damaged page: the start-up recovery logs one
    error naming the damage and what to do (and does not try again: no try can mend it).
    Before: "recovery postponed, the task store is unavailable", retried every 5 s."""
    path = tmp_path / "tasks.db"
    await damaged_store(path, m.TaskState.WORKING)
    caplog.set_level(logging.INFO, logger="a2a_trio")
    async with trio.open_nursery() as nursery:
        await nursery.start(partial(serve, agent, port=0, store=f"sqlite:///{path}"))
        nursery.cancel_scope.cancel()
    logged = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [(r.name, r.levelname, r.getMessage()) for r in logged] == [
        (
            "a2a_trio.runtime",
            "ERROR",
            f"recovery stopped, the task store is damaged: the SQLite store's file {path} is"
            " damaged (database disk image is malformed): stop the server, then restore the"
            " file from a backup or name a new file; the server writes nothing more to it",
        )
    ]


class Unlisted(MemoryTaskStore):
    """The memory store, unable to list the unfinished tasks as an unreachable database is."""

    async def list_unfinished(self) -> NoReturn:
        raise StoreUnavailableError("the PostgreSQL store is unavailable: connection refused")


async def test_recovery_retrying_an_unavailable_store_warns_once_a_minute(
    caplog: pytest.LogCaptureFixture, autojump_clock: object
) -> None:
    """The recovery at start tries again every 5 s while the store is unavailable: one
    warning, then one a minute with the count (before: one every 5 s)."""
    caplog.set_level(logging.INFO, logger="a2a_trio")
    runtime = TaskRuntime(agent, Unlisted())
    with trio.move_on_after(150):  # tries at 0, 5, ..., 145 s
        await runtime.run()
    postponed = (
        "recovery postponed, the task store is unavailable: the PostgreSQL store is"
        " unavailable: connection refused"
    )
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", postponed),
        ("WARNING", f"{postponed} [11 more like it in the last 60 s not logged]"),
        ("WARNING", f"{postponed} [11 more like it in the last 60 s not logged]"),
    ]


class SettlesLate(MemoryTaskStore):
    """The memory store, its first task write failing as a database dropping out does."""

    outages = 1

    async def update_task(self, *args: Any, **kwargs: Any) -> StoredTask:
        if self.outages:
            self.outages -= 1
            raise StoreUnavailableError("the PostgreSQL store is unavailable: connection lost")
        return await super().update_task(*args, **kwargs)


async def test_recovery_meeting_an_outage_while_settling_a_task_tries_again(
    caplog: pytest.LogCaptureFixture, autojump_clock: object
) -> None:
    """The store dropping out while the recovery at start records a task left running
    FAILED: a warning, and the recovery tries again 5 s later.  Before, the outage was taken
    for another process having settled the task, and with no recovery lease the task stayed
    WORKING until the next restart."""
    caplog.set_level(logging.WARNING, logger="a2a_trio")
    store = SettlesLate()
    task = (await store.create_task(ANONYMOUS, m.new_task(m.text_message("left")))).task
    store.outages = 0
    await store.update_task(ANONYMOUS, task.id, TaskUpdate(state=m.TaskState.WORKING))
    store.outages = 1
    runtime = TaskRuntime(agent, store)
    with trio.move_on_after(10):
        await runtime.run()
    stored = await store.load_task(ANONYMOUS, task.id)
    assert stored is not None
    assert stored.task.status.state is m.TaskState.FAILED
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        (
            "WARNING",
            "recovery postponed, the task store is unavailable: the PostgreSQL store is"
            " unavailable: connection lost",
        )
    ]
