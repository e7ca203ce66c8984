"""Fixtures of the runtime tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from store.conftest import ALL_BACKENDS, make_backend


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def shared_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """One database two replicas open."""
    async with make_backend(request.param, tmp_path) as backend:
        yield backend.url


@pytest.fixture(params=ALL_BACKENDS)
async def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A real store to open, its database private and empty: memory, SQLite or PostgreSQL."""
    async with make_backend(request.param, tmp_path) as backend:
        yield backend.url
