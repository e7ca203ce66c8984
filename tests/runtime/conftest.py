"""Fixtures of the runtime tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from store.conftest import make_backend


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def shared_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """One database two replicas open."""
    async with make_backend(request.param, tmp_path) as backend:
        yield backend.url


@pytest.fixture(params=["memory", "sqlite"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A real store to open: memory, or a SQLite file."""
    return "memory" if request.param == "memory" else f"sqlite:///{tmp_path / 'tasks.db'}"
