"""Choosing a backend from a URL with ``open_store``."""

from __future__ import annotations

import os
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from a2a_trio import model as m
from a2a_trio.store import (
    ANONYMOUS,
    MemoryTaskStore,
    PostgresTimeouts,
    SqlTaskStore,
    TaskQuery,
    check_store_url,
    open_store,
)

from .conftest import Backend


async def test_memory_opens_the_memory_store() -> None:
    async with open_store("memory") as store:
        assert isinstance(store, MemoryTaskStore)


@pytest.mark.parametrize(
    "url", ["sqlite:///{path}", "sqlite:///{path}?synchronous=normal", "{path}"]
)
async def test_sqlite_urls_and_plain_paths_open_a_relative_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.chdir(tmp_path)
    async with open_store(url.format(path="tasks.db")) as store:
        assert isinstance(store, SqlTaskStore)
        task = m.new_task(m.text_message("hi"))
        await store.create_task(ANONYMOUS, task)
        assert await store.load_task(ANONYMOUS, task.id) is not None
        assert (await store.list_tasks(ANONYMOUS, TaskQuery())).total_size == 1
    with closing(sqlite3.connect(tmp_path / "tasks.db")) as conn:
        assert conn.execute("SELECT count(*) FROM a2a_tasks").fetchone() == (1,)


async def test_an_absolute_sqlite_url(tmp_path: Path) -> None:
    path = tmp_path / "abs.db"
    async with open_store(f"sqlite:///{path}") as store:
        assert isinstance(store, SqlTaskStore)
    assert path.exists()


@pytest.mark.parametrize(
    "url", ["sqlite:tasks.db", "sqlite:/tasks.db", "sqlte:tasks.db", "postgres:/host/db"]
)
async def test_a_mistyped_url_is_refused_not_opened_as_a_file_of_that_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    """These were plain paths: the store quietly became a SQLite file named ``sqlite:tasks.db``
    in the working directory, or failed to open a file in a missing directory ``sqlite:``."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=f"unknown task store '{url}': it starts like a URL"):
        check_store_url(url)
    with pytest.raises(ValueError, match=rf"write \./{url}\); use \"memory\""):
        async with open_store(url):
            pass
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("url", ["host=db.internal dbname=tasks user=a2a", "dbname=tasks"])
async def test_a_libpq_connection_string_is_refused_not_opened_as_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    """psycopg takes ``host=... dbname=...``; a store URL cannot, and it used to become a
    SQLite file of that name in the working directory."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="libpq key=value connection string") as refused:
        async with open_store(url):
            pass
    assert "write it as a postgresql://user:password@host:port/db URL" in str(refused.value)
    assert os.listdir(tmp_path) == []
    async with open_store(f"./{url}") as store:  # a file really named so is still reachable
        assert isinstance(store, SqlTaskStore)


async def test_a_file_name_with_a_colon_is_a_path_starting_with_a_dot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    async with open_store("./tasks:2026.db") as store:
        assert isinstance(store, SqlTaskStore)
    assert (tmp_path / "tasks:2026.db").exists()


async def test_postgresql_urls_open_postgres(sql_backend: Backend) -> None:
    async with open_store(sql_backend.url) as store:
        assert isinstance(store, SqlTaskStore)


@pytest.mark.parametrize(
    "url",
    [
        "",
        "   ",
        ":memory:",
        "mysql://user@host/db",
        "sqlite://host/tasks.db",
        "sqlite:///",
        "sqlite:///tasks.db?cache=shared",
        "sqlite:///tasks.db?synchronous=off",
        "redis://localhost",
    ],
)
async def test_anything_else_is_a_clear_value_error(url: str) -> None:
    with pytest.raises(ValueError, match=r'"memory", "sqlite:///.*postgresql://'):
        async with open_store(url):
            pass


async def test_an_in_memory_sqlite_url_points_to_the_memory_store() -> None:
    """Each of the store's SQLite connections would open a database of its own, so it used to
    fail at its first call with "no such table"."""
    with pytest.raises(
        ValueError, match=r"'sqlite:///:memory:': for tasks in memory, use \"memory\""
    ):
        async with open_store("sqlite:///:memory:"):
            pass


@pytest.mark.parametrize("url", ["memory", "sqlite:///tasks.db", "tasks.db"])
async def test_postgres_timeouts_for_another_store_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    """Bounds that would silently not apply are a mistake to be told of, not ignored."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="postgres_timeouts bound a PostgreSQL store"):
        async with open_store(url, postgres_timeouts=PostgresTimeouts(lock=2)):
            pass
    assert not (tmp_path / "tasks.db").exists()


async def test_a_bad_url_is_named_before_misplaced_postgres_timeouts() -> None:
    with pytest.raises(ValueError, match=r'unknown task store .*"memory"'):
        async with open_store("mysql://host/db", postgres_timeouts=PostgresTimeouts()):
            pass


@pytest.mark.parametrize("url", ["memroy", "memry", "mmory", "Memory", "MEMORY", "memoyr"])
async def test_a_misspelled_memory_is_refused_not_opened_as_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    """It became a SQLite file of that name in the working directory: the typo kept the
    tasks the user meant to throw away, and nothing said so."""
    monkeypatch.chdir(tmp_path)
    said = f'unknown task store {url!r}: did you mean "memory"? For a SQLite file, give a path'
    with pytest.raises(ValueError, match=re.escape(f"{said} such as ./{url}.db")):
        check_store_url(url)
    with pytest.raises(ValueError, match=re.escape(said)):
        async with open_store(url):
            pass
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("url", ["./memroy", "memroy.db", "data/memroy", "tasks", "mem"])
async def test_a_file_meant_as_one_near_memory_still_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    async with open_store(url) as store:
        assert isinstance(store, SqlTaskStore)
    assert (tmp_path / url).exists()
