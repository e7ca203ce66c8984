"""ThrottledLog: a recurring problem logged at most once per interval, with the number left
out; another problem, or one that comes back after a quiet interval, logged at once."""

from __future__ import annotations

import logging

import pytest
import trio

from a2a_trio._throttle import REMEMBERED, ThrottledLog

logger = logging.getLogger(__name__)


async def test_one_problem_is_logged_once_per_interval_saying_how_many_were_left_out(
    autojump_clock: object, caplog: pytest.LogCaptureFixture
) -> None:
    log = ThrottledLog(logger, interval=60)
    for _ in range(150):  # one report a second, at 0 .. 149 s
        log.log(logging.ERROR, "store %s", "damaged")
        await trio.sleep(1)
    assert [r.getMessage() for r in caplog.records] == [
        "store damaged",
        "store damaged [59 more like it in the last 60 s not logged]",
        "store damaged [59 more like it in the last 60 s not logged]",
    ]
    assert {r.levelno for r in caplog.records} == {logging.ERROR}


async def test_another_problem_is_logged_at_once_and_throttled_apart(
    autojump_clock: object, caplog: pytest.LogCaptureFixture
) -> None:
    log = ThrottledLog(logger, interval=60)
    for _ in range(3):
        log.log(logging.ERROR, "damaged")
        log.log(logging.WARNING, "locked")
        log.log(logging.WARNING, "damaged")  # the same words at another level: another report
        await trio.sleep(1)
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("ERROR", "damaged"),
        ("WARNING", "locked"),
        ("WARNING", "damaged"),
    ]


async def test_a_problem_back_after_a_quiet_interval_is_logged_at_once(
    autojump_clock: object, caplog: pytest.LogCaptureFixture
) -> None:
    log = ThrottledLog(logger, interval=60)
    log.log(logging.WARNING, "unavailable")
    log.log(logging.WARNING, "unavailable")
    await trio.sleep(3600)  # the store worked meanwhile
    log.log(logging.WARNING, "unavailable")
    log.log(logging.WARNING, "unavailable")
    assert [r.getMessage() for r in caplog.records] == [
        "unavailable",
        "unavailable [1 more like it in the last 3600 s not logged]",
    ]


async def test_it_remembers_a_bounded_number_of_problems(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = ThrottledLog(logger, interval=60)
    for n in range(REMEMBERED + 1):
        log.log(logging.WARNING, "problem %d", n)
    log.log(logging.WARNING, "problem %d", REMEMBERED)  # remembered: left out
    log.log(logging.WARNING, "problem %d", 0)  # forgotten: logged again
    assert len(log._seen) == REMEMBERED
    assert [r.getMessage() for r in caplog.records][-2:] == [f"problem {REMEMBERED}", "problem 0"]
