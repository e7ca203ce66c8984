"""Embedded ``serve(agent, store=...)``: a store URL works as ``A2A_TRIO_STORE`` does, a bad
value is refused before anything is bound, a store that cannot be opened or an address taken
raises out of ``nursery.start`` as itself, and the default keeps tasks in memory."""

from __future__ import annotations

import socket
import sqlite3
from functools import partial
from pathlib import Path

import httpx
import pytest
import trio

from a2a_trio import RuntimeConfig, ServerConfig, serve
from a2a_trio._one_server import StoreInUseError
from a2a_trio.store import MemoryTaskStore, open_store

from . import agents
from .conftest import V1_HEADERS, rpc, user_message


async def send_then_get(url: str, task_id: str | None) -> tuple[str, dict[str, object]]:
    """Send one message (when ``task_id`` is None) or fetch ``task_id``: the id and the task."""
    async with httpx.AsyncClient(base_url=url, headers=V1_HEADERS, timeout=10) as http:
        if task_id is None:
            sent = await http.post("/", json=rpc("SendMessage", {"message": user_message("k")}))
            task_id = sent.json()["result"]["task"]["id"]
            assert isinstance(task_id, str)
        got = await http.post("/", json=rpc("GetTask", {"id": task_id}))
    return task_id, got.json()


async def serve_once(store: object, task_id: str | None) -> tuple[str, dict[str, object]]:
    """Serve the test agent with ``store`` just long enough for one send or get."""
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve, agents.agent, port=0, store=store))
        result = await send_then_get(url, task_id)
        nursery.cancel_scope.cancel()
    return result


async def test_a_sqlite_url_keeps_tasks_across_servers(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tasks.db'}"
    task_id, first = await serve_once(url, None)
    assert first["result"]["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]
    _, again = await serve_once(url, task_id)
    assert again["result"]["id"] == task_id  # type: ignore[index]
    assert (tmp_path / "tasks.db").exists()


@pytest.mark.parametrize("store", [None, "memory", lambda: open_store("memory")])
async def test_memory_stores_forget_tasks_with_their_server(store: object) -> None:
    """The default (``None``) is memory, like ``"memory"`` and a factory of one."""
    task_id, first = await serve_once(store, None)
    assert first["result"]["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]
    _, again = await serve_once(store, task_id)
    assert again["error"]["code"] == -32001  # type: ignore[index]  # TaskNotFoundError


@pytest.mark.parametrize("url", ["redis://localhost", "sqlite://host/x.db", "", "memroy"])
async def test_an_unknown_store_url_is_refused_before_binding(url: str) -> None:
    async with trio.open_nursery() as nursery:
        with pytest.raises(ValueError, match=r"unknown task store|bad SQLite store URL"):
            await nursery.start(partial(serve, agents.agent, port=0, store=url))


@pytest.mark.parametrize(
    "store",
    [42, b"memory", MemoryTaskStore(), open_store("memory")],
    ids=["int", "bytes", "an opened store", "a context manager, not a factory"],
)
async def test_a_store_of_another_kind_is_refused_before_binding(store: object) -> None:
    async with trio.open_nursery() as nursery:
        with pytest.raises(TypeError, match="store must be a store URL such as"):
            await nursery.start(partial(serve, agents.agent, port=0, store=store))


async def test_a_second_server_on_a_sqlite_file_in_use_is_refused(tmp_path: Path) -> None:
    """A server starting on a store records the tasks it finds running as a crashed server's,
    so a second one on the file of a running one would end the first one's tasks under it;
    it now stops at start-up, and the first serves on."""
    url = f"sqlite:///{tmp_path / 'tasks.db'}"
    async with trio.open_nursery() as nursery:
        first = await nursery.start(partial(serve, agents.agent, port=0, store=url))
        with pytest.raises(StoreInUseError, match="another a2a_trio server is serving from it"):
            await nursery.start(partial(serve, agents.agent, port=0, store=url))
        _, got = await send_then_get(first, None)
        assert got["result"]["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]
        nursery.cancel_scope.cancel()
    _, again = await serve_once(url, None)  # the file is free once the first one stopped
    assert again["result"]["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]


async def test_replicas_with_a_recovery_lease_share_a_sqlite_file(tmp_path: Path) -> None:
    """With a lease each replica tells a crashed peer's tasks from a live one's, so they may
    share the file (as tests/server/test_replicas.py runs them)."""
    url = f"sqlite:///{tmp_path / 'tasks.db'}"
    config = ServerConfig(runtime=RuntimeConfig(recovery_lease=5.0))
    async with trio.open_nursery() as nursery:
        urls = [
            await nursery.start(partial(serve, agents.agent, port=0, store=url, config=config))
            for _ in range(2)
        ]
        task_id, _ = await send_then_get(urls[0], None)
        _, got = await send_then_get(urls[1], task_id)
        assert got["result"]["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]
        nursery.cancel_scope.cancel()


async def test_a_taken_port_raises_an_oserror_saying_what_to_do_before_opening_the_store(
    tmp_path: Path,
) -> None:
    """Before, ``nursery.start`` raised an exception group three levels deep around a bare
    ``OSError: [Errno 98] Address already in use``, after the app had opened the store and
    started its runtime."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        store = f"sqlite:///{tmp_path / 'tasks.db'}"
        async with trio.open_nursery() as nursery:
            with pytest.raises(OSError) as refused:  # as itself, not in an exception group
                await nursery.start(partial(serve, agents.agent, port=port, store=store))
    assert str(refused.value) == (
        f"cannot listen on 127.0.0.1:{port}: Address already in use (another program is"
        " listening there: stop it, or pick another port; port=0 picks a free one)"
    )
    assert not (tmp_path / "tasks.db").exists()  # the store was never opened


async def test_a_store_that_cannot_be_opened_raises_before_any_url_is_reported(
    tmp_path: Path,
) -> None:
    """Before, ``nursery.start`` reported a URL for a server whose app had failed to start
    (hypercorn bound the port all the same), then the program's nursery died of a
    ``LifespanFailureError`` holding the store's error as a string only."""
    store = f"sqlite:///{tmp_path / 'missing' / 'tasks.db'}"
    async with trio.open_nursery() as nursery:
        with pytest.raises(sqlite3.OperationalError, match="unable to open database file"):
            await nursery.start(partial(serve, agents.agent, port=0, store=store))
    _, served = await serve_once(None, None)  # nothing was left behind
    assert served["result"]["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]
