"""Shared fixtures."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from sdk_peer import running_sdk_agent


@pytest.fixture(scope="session")
def sdk_agent() -> Iterator[str]:
    """Base URL of the official a2a-sdk echo agent, one per session."""
    with running_sdk_agent() as url:
        yield url


@pytest.fixture
def unused_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound once, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``postgres`` looks for its server here, before its fixtures run: a skip
    raised in an async fixture, inside pytest-trio's run, reaches the report as a bare
    "Skipped" without its reason."""
    if item.get_closest_marker("postgres") is not None:
        from store.conftest import pg_base_url

        pg_base_url()
