"""One scenario matrix, run on every binding: the same requests must give the same results.

Differences the legacy dialect's contract requires are spelled out where they occur: it has no
``submitted`` state, answers a parked job's tasks/send at once with ``working``, reports unknown
task ids as -32602, and makes tasks/cancel idempotent.
"""

from __future__ import annotations

import uuid

import httpx
import pytest
import trio

from .agents import gates
from .drivers import DRIVERS, CallFailed, Driver, Outcome

UNKNOWN_ID = "no-such-task"


@pytest.fixture(params=DRIVERS, ids=lambda cls: cls.name)
def driver(request: pytest.FixtureRequest, http: httpx.AsyncClient) -> Driver:
    cls: type[Driver] = request.param
    return cls(http)


def not_found(driver: Driver) -> str:
    """The error class for an unknown task id (the dialect's contract says -32602)."""
    return "InvalidParamsError" if driver.legacy else "TaskNotFoundError"


async def test_send_completes_with_the_same_artifact(driver: Driver) -> None:
    task_id, outcome = await driver.send("echo", "hello")
    assert outcome == Outcome("COMPLETED", "hello")
    assert await driver.get(task_id) == outcome


async def test_json_results_read_the_same(driver: Driver) -> None:
    _task_id, outcome = await driver.send("data", "four")
    assert outcome == Outcome("COMPLETED", '{"length":4}')


async def test_failure_is_a_failed_task_not_an_error(driver: Driver) -> None:
    task_id, outcome = await driver.send("refuse", "x")
    assert outcome.state == "FAILED"
    assert (await driver.get(task_id)).state == "FAILED"


async def test_stream_ends_completed_with_the_artifact(driver: Driver) -> None:
    states, outcome = await driver.stream("echo", "streamed")
    assert outcome == Outcome("COMPLETED", "streamed")
    assert states[-1] == "COMPLETED"
    if driver.legacy:
        assert states == ["COMPLETED"]  # sync handler: one artifact, one final status
    else:
        assert states[0] == "SUBMITTED"


async def test_parked_job_progress_and_result(driver: Driver) -> None:
    states, outcome = await driver.stream("parked", "abc")
    assert outcome == Outcome("COMPLETED", "cba")
    # The repeated 0.25 progress is not sent again on any binding.
    assert states.count("WORKING") == 2


async def test_parked_job_on_blocking_send(driver: Driver) -> None:
    task_id, outcome = await driver.send("parked", "xyz")
    if driver.legacy:  # answered at once, then polled with tasks/get (§4.3)
        assert outcome.state == "WORKING"
        with trio.fail_after(5):
            while (outcome := await driver.get(task_id)).state == "WORKING":  # noqa: ASYNC110
                await trio.sleep(0.01)  # polling tasks/get is how this dialect waits
    assert outcome == Outcome("COMPLETED", "zyx")


async def test_cancel_a_running_task(driver: Driver) -> None:
    task_id = await driver.start("gated", str(uuid.uuid4()))
    assert (await driver.cancel(task_id)).state == "CANCELED"
    assert (await driver.get(task_id)).state == "CANCELED"
    if driver.legacy:  # idempotent in the dialect
        assert (await driver.cancel(task_id)).state == "CANCELED"
    else:
        with pytest.raises(CallFailed) as failed:
            await driver.cancel(task_id)
        assert failed.value.kind == "TaskNotCancelableError"


async def test_subscribe_follows_a_task_to_its_end(driver: Driver) -> None:
    gate = str(uuid.uuid4())
    task_id = await driver.start("gated", gate)
    ready = trio.Event()
    seen: list[Outcome] = []

    async def follow() -> None:
        seen.append(await driver.subscribe(task_id, ready.set))

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(follow)
            await ready.wait()
            gates.setdefault(gate, trio.Event()).set()
    assert seen == [Outcome("COMPLETED", "opened")]


async def test_unknown_task_is_the_same_error_everywhere(driver: Driver) -> None:
    for call in (driver.get, driver.cancel):
        with pytest.raises(CallFailed) as failed:
            await call(UNKNOWN_ID)
        assert failed.value.kind == not_found(driver)
    with pytest.raises(CallFailed) as failed:
        await driver.subscribe(UNKNOWN_ID, lambda: None)
    assert failed.value.kind == not_found(driver)


@pytest.mark.parametrize("cls", [d for d in DRIVERS if not d.legacy], ids=lambda c: c.name)
async def test_multi_turn(cls: type[Driver], http: httpx.AsyncClient) -> None:
    """The legacy dialect has no follow-up messages (its §4, Appendix B.6): not run there."""
    driver = cls(http)
    task_id, outcome = await driver.send("ask", "hi")
    assert outcome.state == "INPUT_REQUIRED"
    again, outcome = await driver.send("ask", "bob", task_id=task_id)
    assert (again, outcome) == (task_id, Outcome("COMPLETED", "hello bob"))


async def test_list_shows_tasks_from_every_binding(http: httpx.AsyncClient) -> None:
    drivers = [cls(http) for cls in DRIVERS]
    created = {driver.name: (await driver.send("echo", driver.name))[0] for driver in drivers}
    for driver in drivers:
        if driver.legacy:
            continue  # the dialect has no list
        listed = await driver.list()
        # Legacy ids are the dialect's own; the other bindings share the runtime's ids.
        assert {created[d.name] for d in drivers if not d.legacy} <= listed
