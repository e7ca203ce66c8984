"""``raise_open_file_limit``: the soft open-file limit goes up to the hard one; a system that
refuses keeps its limit and the log says how to raise it.  The served processes are tested
where they start (tests/cli/test_cli.py, tests/test_app.py)."""

from __future__ import annotations

import logging
import resource
from collections.abc import Iterator

import pytest

from a2a_trio.server import raise_open_file_limit


@pytest.fixture
def lowered() -> Iterator[tuple[int, int]]:
    """This process's soft limit lowered to 256 (its hard limit as it was), restored after."""
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, before[1]))
    try:
        yield 256, before[1]
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)


def test_the_soft_limit_goes_up_to_the_hard_one(
    lowered: tuple[int, int], caplog: pytest.LogCaptureFixture
) -> None:
    soft, hard = lowered
    caplog.set_level(logging.INFO, logger="a2a_trio")
    assert raise_open_file_limit() == hard
    assert resource.getrlimit(resource.RLIMIT_NOFILE) == (hard, hard)
    assert f"open-file limit raised from {soft} to {hard}" in caplog.text
    caplog.clear()
    assert raise_open_file_limit() == hard  # already there: nothing to do, nothing logged
    assert caplog.text == ""


def test_a_refusal_keeps_the_limit_and_says_how_to_raise_it(
    lowered: tuple[int, int], caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As on systems whose kernel refuses the hard limit as a soft one (macOS with an unlimited
    hard limit): simulated, as Linux never refuses it."""

    def refuse(_which: int, _limits: tuple[int, int]) -> None:
        raise ValueError("current limit exceeds maximum limit")

    soft, _hard = lowered
    monkeypatch.setattr(resource, "setrlimit", refuse)
    assert raise_open_file_limit() == soft
    assert f"open files stay limited to {soft}" in caplog.text
    assert "ulimit -n, LimitNOFILE=" in caplog.text
