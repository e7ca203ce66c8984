"""The event log: numbering, replay after a sequence, gaps, slow subscribers, closing."""

import pytest
import trio
import trio.testing

from a2a_trio import model as m
from a2a_trio.runtime import EventLog, EventLogLimits, ReplayGap, SubscriberOverflow


def status(state: m.TaskState) -> m.TaskStatusUpdateEvent:
    return m.TaskStatusUpdateEvent("t", "c", m.TaskStatus(state))


async def test_replay_then_live_without_gaps() -> None:
    log = EventLog()
    log.publish(status(m.TaskState.SUBMITTED))
    log.publish(status(m.TaskState.WORKING))
    sub = log.subscribe(after=1)
    log.publish(status(m.TaskState.COMPLETED))
    log.close()
    seen = [entry.seq async for entry in sub]
    assert seen == [2, 3]


async def test_an_event_numbered_by_its_writer_must_come_next() -> None:
    log = EventLog(last_seq=4)
    assert log.publish(status(m.TaskState.WORKING), seq=5).seq == 5
    with pytest.raises(ValueError, match="does not follow"):
        log.publish(status(m.TaskState.WORKING), seq=7)
    assert log.last_seq == 5


async def test_resume_from_an_evicted_event_is_a_gap() -> None:
    log = EventLog(EventLogLimits(replay=2))
    for _ in range(5):
        log.publish(status(m.TaskState.WORKING))
    with pytest.raises(ReplayGap):
        log.subscribe(after=1)
    assert [e.seq for e in log.subscribe(after=3)._pending] == [4, 5]


async def test_skipped_events_are_dropped_whether_queued_or_still_to_come() -> None:
    log = EventLog()
    sub = log.subscribe()
    log.publish(status(m.TaskState.SUBMITTED))
    sub.skip_through(3)  # the caller has events 1 to 3 from elsewhere
    for state in (m.TaskState.WORKING, m.TaskState.WORKING, m.TaskState.COMPLETED):
        log.publish(status(state))
    log.close()
    assert [entry.seq async for entry in sub] == [4]


async def test_slow_subscriber_is_cut_off_without_blocking_the_publisher() -> None:
    log = EventLog(EventLogLimits(subscriber_buffer=3))
    slow = log.subscribe()
    fast = log.subscribe()
    for n in range(10):
        log.publish(status(m.TaskState.WORKING))
        assert (await fast.receive()).seq == n + 1  # the publisher never waited
    with pytest.raises(SubscriberOverflow):
        await slow.receive()
    assert log.subscriber_count == 1


async def test_receive_waits_for_the_next_event() -> None:
    log = EventLog()
    sub = log.subscribe()
    got: list[int] = []

    async def reader() -> None:
        got.append((await sub.receive()).seq)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader)
        await trio.testing.wait_all_tasks_blocked()
        assert got == []
        log.publish(status(m.TaskState.WORKING))
    assert got == [1]


async def test_closed_log_ends_subscribers_after_draining() -> None:
    log = EventLog()
    log.publish(status(m.TaskState.COMPLETED))
    log.close()
    sub = log.subscribe()
    assert (await sub.receive()).seq == 1
    with pytest.raises(trio.EndOfChannel):
        await sub.receive()
    with pytest.raises(RuntimeError):
        log.publish(status(m.TaskState.WORKING))


async def test_receive_nowait_drains_what_is_queued_without_waiting() -> None:
    log = EventLog()
    sub = log.subscribe()
    assert sub.receive_nowait() is None  # nothing yet: no wait, no error
    for _ in range(3):
        log.publish(status(m.TaskState.WORKING))
    drained = []
    while (entry := sub.receive_nowait()) is not None:
        drained.append(entry.seq)
    assert drained == [1, 2, 3]
    log.close()
    with pytest.raises(trio.EndOfChannel):
        sub.receive_nowait()
