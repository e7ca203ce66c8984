"""Shared fixtures."""

from __future__ import annotations

import signal
import socket
from collections.abc import Iterator

import pytest
from sdk_peer import running_sdk_agent


def pytest_configure(config: pytest.Config) -> None:
    """A run started in the background by a non-interactive shell (``cmd &``, as some CI
    runners do) inherits SIGINT ignored, and so would every command the tests start and then
    stop with Ctrl-C, which would run on: the commands get the default instead."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


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
