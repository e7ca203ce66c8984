"""A PostgreSQL store call waits a bounded time: a lock held by someone else's transaction makes
it StoreUnavailableError after the lock timeout, with nothing written and the pool still
usable, and a client is told plainly.  Before, nothing bounded a call but the OS: a request, a
lease tick, or the follow poll every stream of a task shares hung for as long as a lock was
held or a dead connection was kept."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import Any

import a2a.types as t
import httpx
import psycopg
import pytest
import trio
from a2a.client import ClientConfig, create_client
from a2a.utils.errors import InternalError as SdkInternalError
from server import agents
from server.conftest import V1_HEADERS, rpc, user_message

from a2a_trio import model as m
from a2a_trio import serve
from a2a_trio.errors import StoreUnavailableError
from a2a_trio.store import (
    ANONYMOUS,
    PostgresTimeouts,
    SqlTaskStore,
    TaskStore,
    TaskUpdate,
    open_postgres_store,
    open_store,
)

from .conftest import pg_schema_url

pytestmark = pytest.mark.postgres

QUICK_LOCKS = PostgresTimeouts(lock=0.2)
"""Gives up on a held lock at once, so a test need not wait the default 10 s.  The stores
below have one pooled connection, so the call after a timed-out one shows it came back usable."""

UNAVAILABLE = "The task store is unavailable right now; try again shortly"


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async with pg_schema_url() as schema_url:
        yield schema_url


@asynccontextmanager
async def held(url: str, sql: str, *params: object) -> AsyncIterator[None]:
    """``sql`` run in another connection's transaction, left open (its locks held) inside,
    and rolled back on the way out: a close alone does not wait for the server, whose session
    may still hold the locks while the caller goes on (a purge then passes over the rows)."""
    conn = await trio.to_thread.run_sync(psycopg.connect, url)
    try:
        await trio.to_thread.run_sync(conn.execute, sql, params)
        yield
        await trio.to_thread.run_sync(conn.rollback)
    finally:
        await trio.to_thread.run_sync(conn.close)


def row_locked(url: str, task_id: str) -> AbstractAsyncContextManager[None]:
    """The task's row locked, as another replica's or an operator's long transaction may."""
    return held(url, "SELECT 1 FROM a2a_tasks WHERE id = %s FOR UPDATE", task_id)


async def test_a_write_waiting_on_a_locked_row_gives_up_and_writes_nothing(url: str) -> None:
    async with open_postgres_store(url, pool_size=1, timeouts=QUICK_LOCKS) as store:
        task = m.new_task(m.text_message("hi"))
        await store.create_task(ANONYMOUS, task, events=[(1, task)])
        working = m.TaskStatusUpdateEvent(
            task.id, task.context_id, m.TaskStatus(m.TaskState.WORKING)
        )
        start = TaskUpdate(state=m.TaskState.WORKING)
        async with row_locked(url, task.id):
            # One statement in autocommit (this store wrote the task last), then a
            # transaction (a lease's touch): both wait on the row, both give up.
            with pytest.raises(StoreUnavailableError, match="lock timeout"):
                await store.update_task(ANONYMOUS, task.id, start, events=[(2, working)])
            with pytest.raises(StoreUnavailableError, match="lock timeout"):
                await store.touch_task(ANONYMOUS, task.id, expected_version=1)
        stored = await store.load_task_with_seq(ANONYMOUS, task.id)
        assert stored is not None
        assert (stored[0].task, stored[0].version, stored[1]) == (task, 1, 1)
        updated = await store.update_task(ANONYMOUS, task.id, start, events=[(2, working)])
        assert (updated.version, updated.task.status.state) == (2, m.TaskState.WORKING)
        assert await store.touch_task(ANONYMOUS, task.id, expected_version=2)
        assert await store.load_events(ANONYMOUS, task.id) == ((1, task), (2, working))


async def test_a_full_write_in_a_transaction_rolls_back_on_a_lock_timeout(url: str) -> None:
    """A store that did not write the task last reads the row ``FOR UPDATE`` first."""
    async with open_postgres_store(url) as writer:
        task = (await writer.create_task(ANONYMOUS, m.new_task(m.text_message("hi")))).task
    async with open_postgres_store(url, pool_size=1, timeouts=QUICK_LOCKS) as store:
        async with row_locked(url, task.id):
            with pytest.raises(StoreUnavailableError, match="lock timeout"):
                await store.update_task(ANONYMOUS, task.id, TaskUpdate(state=m.TaskState.WORKING))
        loaded = await store.load_task(ANONYMOUS, task.id)
        assert loaded is not None
        assert (loaded.task, loaded.version) == (task, 1)
        update = TaskUpdate(state=m.TaskState.WORKING)
        assert (await store.update_task(ANONYMOUS, task.id, update)).version == 2


async def test_a_client_is_told_the_store_is_unavailable_while_a_table_is_locked(
    url: str,
) -> None:
    """A table locked by someone else's transaction (a manual ``ALTER TABLE``, a ``VACUUM
    FULL``) stops reads too: GetTask on every binding answers with the outage error."""
    store = partial(open_postgres_store, url, timeouts=QUICK_LOCKS)
    async with serving_one_task(store) as (base, http, task_id):
        get = rpc("GetTask", {"id": task_id})
        async with held(url, "LOCK TABLE a2a_tasks IN ACCESS EXCLUSIVE MODE"):
            answer = await http.post("/", json=get)
            rest = await http.get(f"/tasks/{task_id}")
            for binding in ("JSONRPC", "HTTP+JSON"):
                await sdk_get_task_is_refused(base, task_id, binding)
        again = await http.post("/", json=get)
    assert answer.status_code == 200
    assert answer.json()["error"]["code"] == -32603
    assert answer.json()["error"]["message"] == UNAVAILABLE
    assert rest.status_code == 500
    assert rest.json()["error"]["status"] == "INTERNAL"
    assert rest.json()["error"]["message"] == UNAVAILABLE
    for body in (answer.text, rest.text):
        assert "Traceback" not in body
        assert "lock" not in body  # the database's own words stay in the server's log
    assert again.json()["result"]["status"]["state"] == "TASK_STATE_COMPLETED"


@asynccontextmanager
async def serving_one_task(
    store: Callable[[], AbstractAsyncContextManager[TaskStore]],
) -> AsyncIterator[tuple[str, httpx.AsyncClient, str]]:
    """A real server on ``store`` that has run one task: its base URL, a client of it, and the
    task's id."""
    async with trio.open_nursery() as nursery:
        base = await nursery.start(partial(serve, agents.agent, port=0, store=store))
        async with httpx.AsyncClient(base_url=base, headers=V1_HEADERS, timeout=30) as http:
            sent = await http.post("/", json=rpc("SendMessage", {"message": user_message("k")}))
            yield base, http, sent.json()["result"]["task"]["id"]
        nursery.cancel_scope.cancel()


async def sdk_get_task_is_refused(base: str, task_id: str, binding: str) -> None:
    """The official SDK's client, over ``binding``, raises its ``InternalError`` saying so."""
    async with httpx.AsyncClient(timeout=30) as sdk_http:
        config = ClientConfig(httpx_client=sdk_http, supported_protocol_bindings=[binding])
        client = await create_client(base, config)
        with pytest.raises(SdkInternalError, match="task store is unavailable"):
            await client.get_task(t.GetTaskRequest(id=task_id))


def socket_options(conn: psycopg.Connection[Any]) -> dict[str, int]:
    """The TCP options libpq set on ``conn``'s socket."""
    sock = socket.socket(fileno=conn.fileno())
    try:
        return {
            "keepalive": sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
            "idle": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
            "interval": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL),
            "user_timeout": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT),
        }
    finally:
        sock.detach()  # the socket stays libpq's


def pooled_settings(store: SqlTaskStore) -> dict[str, object]:
    """What a connection taken from ``store``'s pool runs with (blocking: run it in a thread)."""
    pool = store._driver._pool  # type: ignore[attr-defined]
    with pool.connection() as conn:
        return {**session_settings(conn), "pool_timeout": pool.timeout}


def session_settings(conn: psycopg.Connection[Any]) -> dict[str, object]:
    """The server's timeouts and the socket's TCP options ``conn`` runs with (blocking)."""
    shown = {
        name: conn.execute(f"SHOW {name}").fetchone()[0]
        for name in ("statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout")
    }
    return {**shown, **socket_options(conn)}


async def settings_of(store: object) -> dict[str, object]:
    assert isinstance(store, SqlTaskStore)
    return await trio.to_thread.run_sync(pooled_settings, store)


async def test_pooled_connections_have_the_default_bounds(url: str) -> None:
    async with open_store(url) as store:
        assert await settings_of(store) == {
            "statement_timeout": "30s",
            "lock_timeout": "10s",
            "idle_in_transaction_session_timeout": "30s",
            "keepalive": 1,
            "idle": 10,
            "interval": 5,
            "user_timeout": 30_000,
            "pool_timeout": 30.0,
        }


type TimedOpener = Callable[[str, PostgresTimeouts], AbstractAsyncContextManager[TaskStore]]


@pytest.mark.parametrize(
    "opener",
    [
        lambda url, timeouts: open_postgres_store(url, timeouts=timeouts),
        lambda url, timeouts: open_store(url, postgres_timeouts=timeouts),
    ],
    ids=["open_postgres_store", "open_store"],
)
async def test_the_store_takes_other_bounds(url: str, opener: TimedOpener) -> None:
    """``open_store`` takes them too, so ``serve(agent, store=partial(open_store, url,
    postgres_timeouts=...))`` needs no PostgreSQL-only opener."""
    timeouts = PostgresTimeouts(
        statement=None, lock=1.5, idle_in_transaction=None, network=4, pool=2
    )
    async with opener(url, timeouts) as store:
        settings = await settings_of(store)
    assert settings["statement_timeout"] == "0"  # None: the server's own, no limit here
    assert settings["lock_timeout"] == "1500ms"
    assert settings["idle_in_transaction_session_timeout"] == "0"
    assert settings["user_timeout"] == 4_000
    assert settings["pool_timeout"] == 2.0


async def test_none_leaves_a_bound_to_the_deployment(url: str) -> None:
    """``None`` sets nothing of a2a_trio's: a pooled connection runs with what a connection
    libpq opens untuned gets (the server's and OS's settings).  ``network=None`` used to keep
    probing a silent connection every 5 s, bounding it after about a minute anyway."""
    unbounded = PostgresTimeouts(
        statement=None, lock=None, idle_in_transaction=None, network=None, connect=None
    )
    async with open_postgres_store(url, timeouts=unbounded) as store:
        settings = await settings_of(store)
        parameters = await trio.to_thread.run_sync(connection_parameters, store)
    untuned = await trio.to_thread.run_sync(untuned_settings, url)
    assert {name: settings[name] for name in untuned} == untuned
    assert "timeout" not in parameters.get("options", "")
    assert "connect_timeout" not in parameters


def untuned_settings(url: str) -> dict[str, object]:
    """What a connection to ``url`` that a2a_trio did not tune runs with (blocking)."""
    with psycopg.connect(url) as conn:
        return session_settings(conn)


async def test_parameters_in_the_url_win_over_the_defaults(url: str) -> None:
    """``url`` ends with libpq's ``options=-csearch_path%3D...`` (the test's schema)."""
    tuned = url + "%20-cstatement_timeout%3D7s&tcp_user_timeout=4000&keepalives_idle=7"
    async with open_store(tuned) as store:
        settings = await settings_of(store)
    assert settings["statement_timeout"] == "7s"
    assert settings["lock_timeout"] == "10s"  # the URL leaves it, so the default holds
    assert settings["user_timeout"] == 4_000
    assert settings["idle"] == 7


async def test_libpq_environment_variables_win_over_the_defaults(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGCONNECT_TIMEOUT", "4")
    async with open_store(url) as store:
        assert isinstance(store, SqlTaskStore)
        parameters = await trio.to_thread.run_sync(connection_parameters, store)
    assert parameters["connect_timeout"] == "4"
    assert parameters["tcp_user_timeout"] == "30000"


def connection_parameters(store: SqlTaskStore) -> dict[str, str]:
    """The libpq parameters a pooled connection was opened with (blocking)."""
    with store._driver._pool.connection() as conn:  # type: ignore[attr-defined]
        return dict(conn.info.get_parameters())


@pytest.mark.parametrize(
    "field",
    ["statement", "lock", "idle_in_transaction", "network", "connect", "pool", "late_answer"],
)
def test_a_bound_of_zero_is_refused(field: str) -> None:
    """PostgreSQL reads 0 as no limit: ``None`` says that, 0 is a mistake."""
    with pytest.raises(ValueError, match=f"PostgresTimeouts.{field} must be positive"):
        PostgresTimeouts(**{field: 0})
