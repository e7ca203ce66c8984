"""Store backends for the tests: a private database per test.

PostgreSQL tests need ``A2A_TRIO_TEST_PG_URL`` (``scripts/postgres.sh start`` prints one).  Without
it they are skipped on a developer machine and FAIL in CI (``CI`` set), never silently skipped.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import attrs
import psycopg
import pytest
import trio
from prerequisites import missing_prerequisite

from a2a_trio.store import TaskStore, open_store

PG_URL_VARIABLE = "A2A_TRIO_TEST_PG_URL"


@attrs.frozen
class Backend:
    """One backend under test: its name and the ``open_store`` URL of this test's database."""

    name: str
    url: str


def pg_base_url() -> str:
    """The test server's URL, or skip (locally) / fail (in CI) when there is none."""
    url = os.environ.get(PG_URL_VARIABLE, "")
    if not url:
        missing_prerequisite(
            f"{PG_URL_VARIABLE} is not set (run scripts/postgres.sh start)",
            in_ci=f"{PG_URL_VARIABLE} is not set: CI must run the PostgreSQL tests",
        )
    return url


def with_search_path(url: str, schema: str) -> str:
    """``url`` with the connection's ``search_path`` set to ``schema`` (libpq ``options``)."""
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options=-csearch_path%3D{schema}"


def _run_sql(url: str, sql: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql)  # test-built DDL, not user input


@asynccontextmanager
async def pg_schema_url() -> AsyncIterator[str]:
    """A URL whose tables live in a fresh schema, dropped afterwards."""
    base = pg_base_url()
    schema = f"test_{uuid.uuid4().hex[:12]}"
    await trio.to_thread.run_sync(_run_sql, base, f"CREATE SCHEMA {schema}")
    try:
        yield with_search_path(base, schema)
    finally:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(_run_sql, base, f"DROP SCHEMA {schema} CASCADE")


ALL_BACKENDS = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
SQL_BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@asynccontextmanager
async def make_backend(name: str, tmp_path: Path) -> AsyncIterator[Backend]:
    """A private, empty database of backend ``name``."""
    if name == "postgres":
        async with pg_schema_url() as url:
            yield Backend(name, url)
    elif name == "sqlite":
        yield Backend(name, f"sqlite:///{tmp_path / 'tasks.db'}")
    else:
        yield Backend(name, "memory")


@pytest.fixture(params=ALL_BACKENDS)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    """Every backend, each with a private, empty database."""
    async with make_backend(request.param, tmp_path) as made:
        yield made


@pytest.fixture(params=SQL_BACKENDS)
async def sql_backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    """The durable backends, whose database outlives a store instance."""
    async with make_backend(request.param, tmp_path) as made:
        yield made


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A durable database URL for synchronous tests (Hypothesis runs each example in its own
    ``trio.run``; the memory store would not outlive one)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'tasks.db'}"
        return
    base = pg_base_url()
    schema = f"test_{uuid.uuid4().hex[:12]}"
    _run_sql(base, f"CREATE SCHEMA {schema}")
    try:
        yield with_search_path(base, schema)
    finally:
        _run_sql(base, f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[TaskStore]:
    async with open_store(backend.url) as opened:
        yield opened
