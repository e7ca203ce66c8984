"""The event log: numbering, replay after a sequence, gaps, slow subscribers, closing, handing
a task over."""

import pytest
import trio
import trio.testing

from a2a_trio import model as m
from a2a_trio.runtime import (
    EventLog,
    EventLogLimits,
    HandedOver,
    ReplayGap,
    SubscriberOverflow,
    Subscription,
    TaskStream,
)
from runtime.streams import read_all


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


async def test_a_receive_cancelled_while_waiting_loses_no_event() -> None:
    log = EventLog()
    sub = log.subscribe()
    with trio.move_on_after(0.01) as waited:
        await sub.receive()
    assert waited.cancelled_caught
    log.publish(status(m.TaskState.WORKING))  # nobody waits now: nothing to wake
    log.publish(status(m.TaskState.COMPLETED))
    log.close()
    assert [entry.seq async for entry in sub] == [1, 2]


async def test_events_published_before_the_waiter_runs_wake_it_once() -> None:
    log = EventLog()
    sub = log.subscribe()
    got: list[int] = []

    async def reader() -> None:
        got.extend([(await sub.receive()).seq, (await sub.receive()).seq])

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader)
        await trio.testing.wait_all_tasks_blocked()
        for _ in range(3):  # three wake-ups of one waiting task: trio would refuse a second
            log.publish(status(m.TaskState.WORKING))
    assert got == [1, 2]
    assert sub.receive_nowait() is not None


async def test_a_receive_with_an_event_queued_is_still_a_cancel_point() -> None:
    log = EventLog()
    sub = log.subscribe()
    log.publish(status(m.TaskState.WORKING))
    with trio.CancelScope() as scope:
        scope.cancel()
        await sub.receive()
    assert scope.cancelled_caught
    assert (await sub.receive()).seq == 1  # still there


async def test_two_tasks_receiving_from_one_subscription_is_refused() -> None:
    log = EventLog()
    sub = log.subscribe()

    async def first() -> None:
        with pytest.raises(trio.EndOfChannel):
            await sub.receive()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(first)
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(trio.BusyResourceError, match="already receiving"):
            await sub.receive()
        log.close()  # ends the first receive, as it would have without the second
    with pytest.raises(trio.EndOfChannel):
        await sub.receive()


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


async def test_a_log_handed_over_ends_each_subscriber_after_the_last_event_it_had() -> None:
    """Its task goes on elsewhere: each subscriber drains what it has, then learns where the
    rest starts; one its owner closed just ends."""
    log = EventLog(last_seq=2)
    live = log.subscribe(after=2)
    skipping = log.subscribe(after=2)
    closed = log.subscribe(after=2)
    closed.close()
    log.publish(status(m.TaskState.WORKING))
    skipping.skip_through(5)  # the caller has events 3 to 5 from elsewhere
    log.publish(status(m.TaskState.WORKING))
    log.close(handed_over=True)
    late = log.subscribe(after=3)
    assert [entry.seq async for entry in live] == [3, 4]  # an EndOfChannel ends iteration
    for subscription, after in ((live, 4), (skipping, 5)):
        with pytest.raises(HandedOver) as handover:
            await subscription.receive()
        assert handover.value.after == after
    assert (await late.receive()).seq == 4
    with pytest.raises(HandedOver) as handover:
        late.receive_nowait()
    assert handover.value.after == 4
    with pytest.raises(trio.EndOfChannel) as ended:
        await closed.receive()
    assert type(ended.value) is trio.EndOfChannel


@pytest.mark.parametrize("stop_on_interrupt", [False, True])
async def test_a_stream_goes_on_from_where_its_log_handed_over(stop_on_interrupt: bool) -> None:
    """The stream takes the events after the last one it delivered from ``follow`` (here a log
    standing for the store), each once, and keeps its own end rules."""
    here, elsewhere = EventLog(), EventLog()
    for log in (here, elsewhere):
        log.publish(status(m.TaskState.SUBMITTED))
        log.publish(status(m.TaskState.WORKING))
    starts: list[int] = []

    def follow(after: int) -> Subscription:
        starts.append(after)
        return elsewhere.subscribe(after=after)

    stream = TaskStream([], here.subscribe(), stop_on_interrupt=stop_on_interrupt, follow=follow)
    assert (await stream.receive()).seq == 1
    here.close(handed_over=True)
    assert stream.receive_nowait() is not None  # event 2, still from here
    assert stream.receive_nowait() is None  # handed over: nothing there yet
    assert starts == [2]
    for state in (m.TaskState.WORKING, m.TaskState.INPUT_REQUIRED, m.TaskState.COMPLETED):
        elsewhere.publish(status(state))
    seqs = [entry.seq for entry in await read_all(stream)]
    assert seqs == ([3, 4] if stop_on_interrupt else [3, 4, 5])
    assert starts == [2]
