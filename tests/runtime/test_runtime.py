"""The task runtime without HTTP: cancellation, multi-turn, parked jobs, shutdown, restart."""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Set
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

import attrs
import pytest
import trio
import trio.testing
from server import agents

from a2a_trio import Agent, TaskContext
from a2a_trio import model as m
from a2a_trio.errors import (
    ContextMismatchError,
    InvalidParamsError,
    StoreError,
    StoreUnavailableError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_trio.runtime import EventLogLimits, RuntimeConfig, TaskRuntime, TaskStream
from a2a_trio.runtime._outcome import INTERNAL_FAILURE
from a2a_trio.runtime._readback import READ_BACK_TRIES
from a2a_trio.runtime._runtime import RECOVERY_RETRY, RESTART_MESSAGE, SHUTDOWN_MESSAGE
from a2a_trio.store import (
    ANONYMOUS,
    CallerScope,
    MemoryTaskStore,
    Retention,
    ScopedTask,
    StoredTask,
    TaskStore,
    TaskUpdate,
    open_store,
)
from runtime.lost_answers import AnswerLost
from runtime.streams import read_all

FAST = RuntimeConfig(poll_interval=0.01)


@pytest.fixture
async def runtime(nursery: trio.Nursery) -> AsyncIterator[TaskRuntime]:
    rt = TaskRuntime(agents.agent, MemoryTaskStore(), FAST)
    await nursery.start(rt.run)
    yield rt


def request(text: str, skill: str | None = None, **config: object) -> m.SendMessageRequest:
    metadata: m.JsonObject | None = {"skillId": skill} if skill else None
    return m.SendMessageRequest(
        m.text_message(text, metadata=metadata),
        configuration=m.SendMessageConfiguration(**config),  # type: ignore[arg-type]
    )


async def drain(stream: TaskStream) -> list[m.StreamEvent]:
    return [entry.event for entry in await read_all(stream)]


async def test_cancel_reaches_the_handler_promptly(runtime: TaskRuntime) -> None:
    task = await runtime.send(ANONYMOUS, request("c1", "gated", return_immediately=True))
    assert isinstance(task, m.Task)
    await trio.testing.wait_all_tasks_blocked()
    start = trio.current_time()
    canceled = await runtime.cancel(ANONYMOUS, task.id)
    assert trio.current_time() - start < 0.1
    assert canceled.status.state is m.TaskState.CANCELED
    assert task.id in agents.cleanups  # the handler's finally ran
    with pytest.raises(TaskNotCancelableError):
        await runtime.cancel(ANONYMOUS, task.id)  # double cancel
    stored = await runtime.get(ANONYMOUS, task.id, None)
    assert stored.status.state is m.TaskState.CANCELED


async def test_cancel_of_a_finished_task_is_refused(runtime: TaskRuntime) -> None:
    task = await runtime.send(ANONYMOUS, request("done"))
    assert isinstance(task, m.Task) and task.status.state is m.TaskState.COMPLETED
    with pytest.raises(TaskNotCancelableError):
        await runtime.cancel(ANONYMOUS, task.id)


async def test_multi_turn_resumes_the_same_handler(runtime: TaskRuntime) -> None:
    asked = await runtime.send(ANONYMOUS, request("hi", "ask"))
    assert isinstance(asked, m.Task)
    assert asked.status.state is m.TaskState.INPUT_REQUIRED
    assert asked.status.message is not None
    follow_up = m.text_message("Ada", task_id=asked.id)
    done = await runtime.send(ANONYMOUS, m.SendMessageRequest(follow_up))
    assert isinstance(done, m.Task)
    assert done.status.state is m.TaskState.COMPLETED
    assert done.artifacts[0].parts == (m.TextPart("hello Ada"),)
    assert [msg.role for msg in done.history] == [m.Role.USER, m.Role.AGENT, m.Role.USER]
    with pytest.raises(UnsupportedOperationError):
        await runtime.send(ANONYMOUS, m.SendMessageRequest(m.text_message("x", task_id=asked.id)))


class WaitingStore(MemoryTaskStore):
    """The memory store, yielding in every update as the database stores do."""

    async def update_task(self, *args: Any, **kwargs: Any) -> StoredTask:
        await trio.lowlevel.checkpoint()
        return await super().update_task(*args, **kwargs)


async def test_of_two_racing_follow_ups_exactly_one_resumes_the_task() -> None:
    """The second follow-up is refused, not stored and then ignored: both requests reach the
    job before the first one's write is done."""
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(agents.agent, WaitingStore(), FAST)
        await nursery.start(runtime.run)
        asked = await runtime.send(ANONYMOUS, request("hi", "ask"))
        assert isinstance(asked, m.Task) and asked.status.state is m.TaskState.INPUT_REQUIRED
        outcomes: dict[str, m.Task | m.Message | UnsupportedOperationError] = {}

        async def follow_up(name: str) -> None:
            message = m.SendMessageRequest(m.text_message(name, task_id=asked.id))
            try:
                outcomes[name] = await runtime.send(ANONYMOUS, message)
            except UnsupportedOperationError as refused:
                outcomes[name] = refused

        async with trio.open_nursery() as racers:
            for name in ("Ada", "Bob"):
                racers.start_soon(follow_up, name)
        tasks = [o for o in outcomes.values() if isinstance(o, m.Task)]
        refused = [o for o in outcomes.values() if isinstance(o, UnsupportedOperationError)]
        assert len(tasks) == 1 and len(refused) == 1
        done = tasks[0]
        winner = done.history[-1].parts
        assert done.status.state is m.TaskState.COMPLETED
        assert done.artifacts[0].parts == (m.TextPart("hello " + winner[0].text),)  # type: ignore[union-attr]
        stored = await runtime.get(ANONYMOUS, asked.id, None)
        assert [msg.role for msg in stored.history] == [m.Role.USER, m.Role.AGENT, m.Role.USER]
        nursery.cancel_scope.cancel()


async def test_a_follow_up_in_another_context_is_refused_as_a_context_mismatch(
    runtime: TaskRuntime,
) -> None:
    """A follow-up naming the task but another context gets ``ContextMismatchError``, the
    invalid-params error a caller can catch by its kind; the task still waits for input."""
    asked = await runtime.send(ANONYMOUS, request("hi", "ask"))
    assert isinstance(asked, m.Task) and asked.status.state is m.TaskState.INPUT_REQUIRED
    elsewhere = m.text_message("Ada", task_id=asked.id, context_id="another")
    with pytest.raises(ContextMismatchError) as refused:
        await runtime.send(ANONYMOUS, m.SendMessageRequest(elsewhere))
    assert isinstance(refused.value, InvalidParamsError) and refused.value.code == -32602
    assert refused.value.path == "$.params.message.contextId"
    assert "'another' does not match" in str(refused.value)
    stored = await runtime.get(ANONYMOUS, asked.id, None)
    assert stored.status.state is m.TaskState.INPUT_REQUIRED


class GatedLoads(MemoryTaskStore):
    """The memory store, holding what a load read while ``gate`` is armed and closed."""

    gate: trio.Event | None = None

    async def load_task(self, *args: Any, **kwargs: Any) -> StoredTask | None:
        stored = await super().load_task(*args, **kwargs)
        if self.gate is not None:
            await self.gate.wait()
        return stored


async def test_a_follow_up_overtaken_by_a_cancel_is_refused_cleanly() -> None:
    """The follow-up read the task while it waited for input; a cancel ended it before the
    follow-up could write.  Before, the store's version conflict escaped as a bare HTTP 500."""
    store = GatedLoads()
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(agents.agent, store, FAST)
        await nursery.start(runtime.run)
        asked = await runtime.send(ANONYMOUS, request("hi", "ask"))
        assert isinstance(asked, m.Task)
        store.gate = trio.Event()
        refused: list[UnsupportedOperationError] = []

        async def follow_up() -> None:
            message = m.SendMessageRequest(m.text_message("late", task_id=asked.id))
            with pytest.raises(UnsupportedOperationError, match="changed while") as caught:
                await runtime.send(ANONYMOUS, message)
            refused.append(caught.value)

        async with trio.open_nursery() as racers:
            racers.start_soon(follow_up)
            await trio.testing.wait_all_tasks_blocked()  # it is reading the task
            canceled = await runtime.cancel(ANONYMOUS, asked.id)  # a live job: no load
            store.gate.set()
            store.gate = None
        assert canceled.status.state is m.TaskState.CANCELED and len(refused) == 1
        stored = await runtime.get(ANONYMOUS, asked.id, None)
        assert stored.status.state is m.TaskState.CANCELED
        assert all(msg.parts != (m.TextPart("late"),) for msg in stored.history)
        nursery.cancel_scope.cancel()


async def test_parked_job_reports_only_changes_and_completes(runtime: TaskRuntime) -> None:
    stream = await runtime.send_stream(ANONYMOUS, request("p", "parked"))
    events = await drain(stream)
    progress = [
        e.status.message.metadata
        for e in events
        if isinstance(e, m.TaskStatusUpdateEvent)
        and e.status.state is m.TaskState.WORKING
        and e.status.message is not None
    ]
    assert progress == [{"progress": 0.0}, {"progress": 0.5}]  # repeats suppressed
    final = events[-1]
    assert isinstance(final, m.TaskStatusUpdateEvent)
    assert final.status.state is m.TaskState.COMPLETED
    artifact = next(e for e in events if isinstance(e, m.TaskArtifactUpdateEvent))
    assert artifact.artifact.parts == (m.DataPart({"answer": 42}, media_type="application/json"),)


async def test_message_only_skill_creates_no_task(runtime: TaskRuntime) -> None:
    reply = await runtime.send(ANONYMOUS, request("x", "quick"))
    assert isinstance(reply, m.Message)
    assert reply.parts == (m.TextPart("quick x"),)
    page = await runtime.list(ANONYMOUS, m.ListTasksRequest())
    assert page.total_size == 0


async def test_shutdown_fails_running_tasks_and_keeps_waiting_ones() -> None:
    store = MemoryTaskStore()
    async with trio.open_nursery() as nursery:
        first = TaskRuntime(agents.agent, store, FAST)
        await nursery.start(first.run)
        running = await first.send(ANONYMOUS, request("shut", "gated", return_immediately=True))
        waiting = await first.send(ANONYMOUS, request("q", "ask"))
        stream = await first.subscribe(ANONYMOUS, running.id)
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    events = await drain(stream)
    assert isinstance(events[-1], m.TaskStatusUpdateEvent)  # the stream ended with a final event
    assert events[-1].status.state is m.TaskState.FAILED
    after = await store.load_task(ANONYMOUS, running.id)
    assert after is not None and after.task.status.state is m.TaskState.FAILED
    kept = await store.load_task(ANONYMOUS, waiting.id)
    assert kept is not None and kept.task.status.state is m.TaskState.INPUT_REQUIRED

    # A new runtime on the same store resumes the waiting task from its stored history.
    async with trio.open_nursery() as nursery:
        second = TaskRuntime(agents.agent, store, FAST)
        await nursery.start(second.run)
        follow_up = m.SendMessageRequest(m.text_message("Bo", task_id=waiting.id))
        with trio.fail_after(1):
            again = await second.send(ANONYMOUS, follow_up)
        nursery.cancel_scope.cancel()
    # The skill starts over on the stored history (it is not resumable mid-function), so it
    # asks its question again; the history keeps every turn.
    assert isinstance(again, m.Task)
    assert again.status.state is m.TaskState.INPUT_REQUIRED
    roles = [msg.role for msg in again.history]
    assert roles == [m.Role.USER, m.Role.AGENT, m.Role.USER, m.Role.AGENT]
    # The re-run's events follow the stored ones, from a snapshot of the task WORKING again.
    logged = await store.load_events(ANONYMOUS, waiting.id)
    assert [seq for seq, _event in logged] == [1, 2, 3, 4]
    snapshot = logged[2][1]
    assert isinstance(snapshot, m.Task) and snapshot.status.state is m.TaskState.WORKING
    # stored in the same write as the follow-up: exactly the task as that write left it
    assert snapshot.history == again.history[:3]
    assert snapshot.history[-1].parts == (m.TextPart("Bo"),)
    assert snapshot.status.timestamp is not None
    assert snapshot.status.timestamp <= again.status.timestamp


async def test_shutdown_leaves_resumable_tasks_for_the_next_start() -> None:
    """A resumable skill is "re-run after a restart instead of being failed": a clean shutdown
    is a restart too, so its task is left unfinished rather than recorded FAILED."""
    store = MemoryTaskStore()
    async with trio.open_nursery() as nursery:
        first = TaskRuntime(agents.agent, store, FAST)
        await nursery.start(first.run)
        task = await first.send(ANONYMOUS, request("later", "gated_redo", return_immediately=True))
        await trio.testing.wait_all_tasks_blocked()
        await first.drain(0.05)
        nursery.cancel_scope.cancel()
    left = await store.load_task(ANONYMOUS, task.id)
    assert left is not None and left.task.status.state is m.TaskState.WORKING
    agents.gates["later"].set()
    async with trio.open_nursery() as nursery:
        second = TaskRuntime(agents.agent, store, FAST)
        await nursery.start(second.run)
        stream = await second.subscribe(ANONYMOUS, task.id)
        with trio.fail_after(2):
            events = await drain(stream)
        nursery.cancel_scope.cancel()
    assert isinstance(events[-1], m.TaskStatusUpdateEvent)
    assert events[-1].status.state is m.TaskState.COMPLETED


class SlowCreate(MemoryTaskStore):
    """A memory store whose ``create_task`` waits for ``release``: a send caught mid-write."""

    def __init__(self) -> None:
        super().__init__()
        self.creating = trio.Event()
        self.release = trio.Event()

    async def create_task(self, *args: Any, **kwargs: Any) -> StoredTask:
        self.creating.set()
        await self.release.wait()
        return await super().create_task(*args, **kwargs)


async def test_a_drain_waits_for_a_send_still_writing_its_task() -> None:
    """A send past the accepting check is running work: the drain's grace covers it.  Before,
    the drain saw no running job and returned, so the server stopped under the send."""
    store = SlowCreate()
    drained, answered = trio.Event(), trio.Event()
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(agents.agent, store, FAST)
        await nursery.start(runtime.run)
        answers: list[m.Task | m.Message] = []

        async def send() -> None:
            answers.append(await runtime.send(ANONYMOUS, request("in time")))
            answered.set()

        async def drain_then_say() -> None:
            await runtime.drain(10.0)
            drained.set()

        nursery.start_soon(send)
        await store.creating.wait()
        nursery.start_soon(drain_then_say)
        await trio.testing.wait_all_tasks_blocked()
        assert not drained.is_set()
        store.release.set()
        with trio.fail_after(5):
            await drained.wait()
            # The job's end wakes the drain and the sender at once: either may run first.
            await answered.wait()
        nursery.cancel_scope.cancel()
    assert isinstance(answers[0], m.Task)
    assert answers[0].status.state is m.TaskState.COMPLETED


async def test_a_send_the_runtime_stopped_under_is_refused_and_its_task_recovered() -> None:
    """The runtime stopped at once while a send was writing its task: the send is refused as
    shutting down (it failed on an assertion, an internal error with a traceback) and the next
    start records the task FAILED as any task a stop left unfinished."""
    store = SlowCreate()
    refusals: list[UnsupportedOperationError] = []

    async def send(runtime: TaskRuntime) -> None:
        with pytest.raises(UnsupportedOperationError, match="shutting down") as refused:
            await runtime.send(ANONYMOUS, request("too late"))
        refusals.append(refused.value)

    async with trio.open_nursery() as outer:
        runtime = TaskRuntime(agents.agent, store, FAST)
        async with trio.open_nursery() as lifetime:
            await lifetime.start(runtime.run)
            outer.start_soon(send, runtime)
            await store.creating.wait()
            lifetime.cancel_scope.cancel()
        store.release.set()
    assert len(refusals) == 1
    (left,) = await store.list_unfinished()
    assert left.stored.task.status.state is m.TaskState.SUBMITTED
    async with trio.open_nursery() as nursery:
        await nursery.start(TaskRuntime(agents.agent, store, FAST).run)
        nursery.cancel_scope.cancel()
    recovered = await store.load_task(ANONYMOUS, left.stored.task.id)
    assert recovered is not None and recovered.task.status.state is m.TaskState.FAILED


misusing = Agent("misusing", "hands a2a_trio what it cannot take")


@misusing.skill()
async def returns_a_date(ctx: TaskContext) -> object:
    return {"when": ctx.task.status.timestamp}  # a datetime: no JSON value


@misusing.skill()
async def emits_a_set(ctx: TaskContext) -> str:
    await ctx.emit_artifact({"tags": {"a"}})
    return "unreached"


@pytest.mark.parametrize(
    ("skill", "logged", "traceback"),
    [
        # No traceback: it would point into the runtime's final write, not at the skill.
        ("returns_a_date", "returned content no store can hold on task {id}: artifact ", False),
        # The traceback points at the skill's emit_artifact line; no TaskFailed hint.
        ("emits_a_set", "used a2a_trio wrongly on task {id}: artifact ", True),
    ],
)
async def test_content_no_store_can_hold_is_logged_with_its_reason_and_the_task_fails(
    skill: str, logged: str, traceback: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, the log said "returned content no store can hold" with no task and the reason
    only at the end of a traceback into the runtime, or, for an emit, gave the TaskFailed hint
    meant for a skill's own errors."""
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(misusing, MemoryTaskStore(), FAST)
        await nursery.start(runtime.run)
        task = await runtime.send(ANONYMOUS, request("x", skill))
        nursery.cancel_scope.cancel()
    assert isinstance(task, m.Task)
    assert task.status.state is m.TaskState.FAILED
    assert task.status.message is not None
    assert task.status.message.parts == (m.TextPart(INTERNAL_FAILURE),)
    (record,) = [r for r in caplog.records if r.name == "a2a_trio.runtime"]
    message = record.getMessage()
    assert message.startswith(f"skill {skill!r} " + logged.format(id=task.id)), message
    assert "not a JSON value" in message
    assert message.endswith(f"; its client is told only {INTERNAL_FAILURE!r}")
    assert (record.exc_info is not None) is traceback


asks_later = Agent("asks later", "waits on a gate, then asks")


@asks_later.skill()
async def ask_after_gate(ctx: TaskContext) -> str:
    await agents.gates.setdefault(ctx.text, trio.Event()).wait()
    reply = await ctx.ask("and now?")
    return reply.parts[0].text  # type: ignore[union-attr]


async def test_drain_ends_when_the_last_running_job_starts_waiting_for_input() -> None:
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(asks_later, MemoryTaskStore(), FAST)
        await nursery.start(runtime.run)
        await runtime.send(ANONYMOUS, request("ask late", return_immediately=True))
        await trio.testing.wait_all_tasks_blocked()
        start = trio.current_time()
        async with trio.open_nursery() as draining:
            draining.start_soon(runtime.drain, 10.0)
            await trio.testing.wait_all_tasks_blocked()
            agents.gates["ask late"].set()  # the job now waits for input: nothing left to drain
        assert trio.current_time() - start < 1
        nursery.cancel_scope.cancel()


slow_to_stop = Agent("slow to stop", "works until stopped, then tidies up until a gate opens")


@slow_to_stop.skill()
async def tidy(ctx: TaskContext) -> None:
    await ctx.update("working")
    try:
        await trio.sleep_forever()
    finally:  # cleanup that takes a while, as closing a connection or a file can
        with trio.CancelScope(shield=True):
            await agents.gates.setdefault(ctx.text, trio.Event()).wait()


@slow_to_stop.skill()
async def keeps_its_draft(ctx: TaskContext) -> str:
    """Catches the cancellation, as ``except BaseException`` does, and returns."""
    await ctx.update("drafting")
    try:
        await trio.sleep_forever()
    except trio.Cancelled:
        return "the draft so far"
    return "unreached"


async def test_a_handler_returning_after_a_cancel_ends_the_task_as_it_says() -> None:
    """As docs/agents.md says: the task completes and the cancel is refused as too late.
    Nothing is logged: a handler that returned just as the cancel came, as the crash soak's
    did while its last chunk was being written, takes the same path, so a warning would
    blame correct handlers too."""
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(slow_to_stop, MemoryTaskStore(), FAST)
        await nursery.start(runtime.run)
        sent = request("x", "keeps_its_draft", return_immediately=True)
        task = await runtime.send(ANONYMOUS, sent)
        assert isinstance(task, m.Task)
        await trio.testing.wait_all_tasks_blocked()  # WORKING, in its sleep
        with pytest.raises(TaskNotCancelableError, match="ended TASK_STATE_COMPLETED first"):
            await runtime.cancel(ANONYMOUS, task.id)
        done = await runtime.get(ANONYMOUS, task.id, None)
        nursery.cancel_scope.cancel()
    assert done.status.state is m.TaskState.COMPLETED


@pytest.mark.parametrize("first", ["cancel", "drain"])
async def test_of_a_cancel_and_a_drain_stopping_one_job_the_first_decides_its_end(
    first: str,
) -> None:
    """A job stopped by a CancelTask and by a drain whose grace ran out, while its handler was
    still cleaning up after the first of them: that first one decides the task's end.  A
    cancel that reached the handler first ends it CANCELED, and its answer says so; a drain
    that stopped it first ends it FAILED ("shut down"), and a later cancel is refused as
    too late.  (The drain's stop used to win either way: a cancel that came first was
    answered "ended FAILED first".)"""
    text = f"tidy after {first}"
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(slow_to_stop, MemoryTaskStore(), FAST)
        await nursery.start(runtime.run)
        task = await runtime.send(ANONYMOUS, request(text, return_immediately=True))
        await trio.testing.wait_all_tasks_blocked()  # WORKING, in its sleep
        answers: list[m.Task | TaskNotCancelableError] = []

        async def cancel() -> None:
            try:
                answers.append(await runtime.cancel(ANONYMOUS, task.id))
            except TaskNotCancelableError as refused:
                answers.append(refused)

        drain = partial(runtime.drain, 0)  # no grace: it stops the running jobs at once
        async with trio.open_nursery() as stoppers:
            for stop in (cancel, drain) if first == "cancel" else (drain, cancel):
                stoppers.start_soon(stop)
                await trio.testing.wait_all_tasks_blocked()  # the handler is tidying up
            agents.gates[text].set()
        nursery.cancel_scope.cancel()
    stored = await runtime.get(ANONYMOUS, task.id, None)
    (answer,) = answers
    if first == "cancel":
        assert isinstance(answer, m.Task), answer
        assert answer.status.state is stored.status.state is m.TaskState.CANCELED
    else:
        assert isinstance(answer, TaskNotCancelableError)
        assert stored.status.state is m.TaskState.FAILED
        assert stored.status.message is not None
        assert stored.status.message.parts == (m.TextPart(SHUTDOWN_MESSAGE),)


async def tidying(nursery: trio.Nursery, text: str) -> tuple[TaskRuntime, m.Task]:
    """A runtime in ``nursery`` (default config) running ``tidy`` on ``text``, in its sleep."""
    runtime = TaskRuntime(slow_to_stop, MemoryTaskStore(), RuntimeConfig())
    await nursery.start(runtime.run)
    task = await runtime.send(ANONYMOUS, request(text, return_immediately=True))
    assert isinstance(task, m.Task)
    await trio.testing.wait_all_tasks_blocked()
    return runtime, task


def stuck_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "a2a_trio.runtime" and "has not returned" in r.getMessage()
    ]


async def test_a_cancel_answers_when_the_handler_does_not_return_and_the_log_says_why(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, a handler whose cleanup did not end (a shielded wait in its ``finally``) held
    the CancelTask request forever, with nothing in the log."""
    gate = agents.gates.setdefault("stuck tidy", trio.Event())
    async with trio.open_nursery() as nursery:
        runtime, task = await tidying(nursery, "stuck tidy")
        start = trio.current_time()
        answered = None
        with trio.move_on_after(60):  # (before, forever)
            answered = await runtime.cancel(ANONYMOUS, task.id)
        waited = trio.current_time() - start
        warnings = stuck_warnings(caplog)
        gate.set()
        await trio.testing.wait_all_tasks_blocked()
        stored = await runtime.get(ANONYMOUS, task.id, None)
        nursery.cancel_scope.cancel()
    assert waited == RuntimeConfig().finalize_timeout
    assert answered is not None
    assert answered.status.state is m.TaskState.WORKING  # as it stood: still tidying up
    assert warnings == [
        f"skill 'tidy' has not returned 5.0 s after a CancelTask cancelled it on task"
        f" {task.id}: its cleanup (a finally block, a shielded scope) still runs, or it"
        " caught trio.Cancelled and works on; let the cancellation through and keep"
        " cleanup short"
    ]
    assert stored.status.state is m.TaskState.CANCELED  # once the handler returned


async def test_a_drain_names_a_handler_that_does_not_return_once(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    """The drain waits for it (its final write needs the store), as before, but no longer
    in silence."""
    gate = agents.gates.setdefault("stuck at shutdown", trio.Event())
    async with trio.open_nursery() as nursery:
        runtime, task = await tidying(nursery, "stuck at shutdown")
        async with trio.open_nursery() as draining:
            draining.start_soon(runtime.drain, 0)
            await trio.sleep(60)  # many times finalize_timeout
            warnings = stuck_warnings(caplog)
            gate.set()
        stored = await runtime.get(ANONYMOUS, task.id, None)
        nursery.cancel_scope.cancel()
    (warning,) = warnings
    assert warning.startswith(
        f"skill 'tidy' has not returned 5.0 s after the shutdown cancelled it on task {task.id}: "
    )
    assert stored.status.state is m.TaskState.FAILED


async def test_a_purged_task_is_not_replayed_from_memory() -> None:
    store = MemoryTaskStore()
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(agents.agent, store, FAST)
        await nursery.start(runtime.run)
        done = await runtime.send(ANONYMOUS, request("gone"))
        assert isinstance(done, m.Task)
        assert len(await read_all(await runtime.subscribe(ANONYMOUS, done.id, last_event_id=0)))
        assert await store.delete_task(ANONYMOUS, done.id)  # what a retention purge does
        with pytest.raises(TaskNotFoundError):
            await runtime.subscribe(ANONYMOUS, done.id, last_event_id=0)
        nursery.cancel_scope.cancel()


async def test_another_replica_numbers_its_snapshot_after_the_stored_log(tmp_path: Path) -> None:
    """Subscribing on a replica that does not run the task: a resume from its snapshot replays
    only what came after it (before, the snapshot was event 0 and every resume replayed all)."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    async with (
        open_store(url) as store_a,
        open_store(url) as store_b,
        trio.open_nursery() as nursery,
    ):
        running = TaskRuntime(agents.agent, store_a, FAST)
        other = TaskRuntime(agents.agent, store_b, FAST)
        await nursery.start(running.run)
        await nursery.start(other.run)
        task = await running.send(ANONYMOUS, request("far", "gated", return_immediately=True))
        live = await running.subscribe(ANONYMOUS, task.id)
        while not isinstance((await live.receive()).event, m.TaskStatusUpdateEvent):
            pass  # the job is at its gate once its WORKING update is out (and stored)
        live.close()
        stored = await store_a.load_events(ANONYMOUS, task.id)
        following = await other.subscribe(ANONYMOUS, task.id)
        snapshot = [await following.receive()]
        following.close()  # it follows the task through the store (tests/runtime/test_follow.py)
        assert [entry.seq for entry in snapshot] == [stored[-1][0]]
        agents.gates["far"].set()
        with trio.fail_after(5):
            await read_all(await running.subscribe(ANONYMOUS, task.id))  # it finished
        resumed = await read_all(
            await other.subscribe(ANONYMOUS, task.id, last_event_id=snapshot[0].seq)
        )
        everything = await store_b.load_events(ANONYMOUS, task.id)
        assert [e.seq for e in resumed] == [seq for seq, _ in everything if seq > stored[-1][0]]
        nursery.cancel_scope.cancel()


class KillableStore:
    """A store a test can kill: like a process that died, it writes nothing afterwards."""

    WRITES = frozenset({"create_task", "update_task", "append_events", "delete_task"})

    def __init__(self, store: TaskStore) -> None:
        self.store = store
        self.dead = False

    def __getattr__(self, name: str) -> Any:
        if self.dead and name in self.WRITES:
            return self._refuse
        return getattr(self.store, name)

    async def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise StoreError("the process is gone")


async def crash(store: TaskStore, resumable: str = "redo") -> tuple[m.Task, m.Task]:
    """Two tasks a killed process left unfinished: one WORKING, one SUBMITTED (of the
    ``resumable`` skill, with its name as text).

    The runtime is shut down on a store that was killed first: like a killed process, its
    jobs record no final state, and only what they stored before remains.
    """
    killable = KillableStore(store)
    async with trio.open_nursery() as nursery:
        doomed = TaskRuntime(agents.agent, killable, FAST)  # type: ignore[arg-type]
        await nursery.start(doomed.run)
        plain = await doomed.send(ANONYMOUS, request("crash", "gated", return_immediately=True))
        await trio.testing.wait_all_tasks_blocked()  # it reported progress, waits at its gate
        redo = await doomed.send(ANONYMOUS, request(resumable, resumable, return_immediately=True))
        killable.dead = True
        nursery.cancel_scope.cancel()  # neither job can record a result now
    assert isinstance(plain, m.Task) and isinstance(redo, m.Task)
    return plain, redo


async def test_restart_fails_unfinished_tasks_and_reruns_resumable_ones() -> None:
    store = MemoryTaskStore()
    plain, resumable = await crash(store)
    for task, state in [(plain, m.TaskState.WORKING), (resumable, m.TaskState.SUBMITTED)]:
        left = await store.load_task(ANONYMOUS, task.id)
        assert left is not None and left.task.status.state is state
    told: list[Set[tuple[CallerScope, str]]] = []
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(agents.agent, store, FAST)
        runtime.on_recovered = told.append
        await nursery.start(runtime.run)
        assert told == [{(ANONYMOUS, plain.id), (ANONYMOUS, resumable.id)}]  # one pass, both
        failed = await runtime.get(ANONYMOUS, plain.id, None)
        assert failed.status.state is m.TaskState.FAILED
        assert failed.status.message is not None
        assert failed.status.message.parts == (m.TextPart(RESTART_MESSAGE),)
        await trio.testing.wait_all_tasks_blocked()  # the re-run job has finished
        redone = await runtime.get(ANONYMOUS, resumable.id, None)
        assert redone.artifacts[0].parts == (m.TextPart("redone redo"),)
        # The stored event log continues after the crash: a resubscriber replays it in order,
        # to the FAILED event carrying the stored status.
        stream = await runtime.subscribe(ANONYMOUS, plain.id, last_event_id=0)
        replayed = await read_all(stream)
        assert [entry.seq for entry in replayed] == [1, 2, 3]
        assert isinstance(replayed[-1].event, m.TaskStatusUpdateEvent)
        assert replayed[-1].event.status == failed.status
        # The re-run's log goes on after the stored one, from a snapshot of the task.
        stream = await runtime.subscribe(ANONYMOUS, resumable.id, last_event_id=0)
        logged = [(entry.seq, entry.event) for entry in await read_all(stream)]
        assert [(seq, type(event)) for seq, event in logged] == [
            (1, m.Task),
            (2, m.Task),
            (3, m.TaskArtifactUpdateEvent),
            (4, m.TaskStatusUpdateEvent),
        ]
        nursery.cancel_scope.cancel()


class HeldStore:
    """A store that holds one task's writes, as a slow database would: each ``update_task`` of
    ``task_id`` waits for ``release``, before writing or (``stored_first``) after."""

    def __init__(self, store: TaskStore, task_id: str, *, stored_first: bool) -> None:
        self.store = store
        self.task_id = task_id
        self.stored_first = stored_first
        self.holding = trio.Event()
        self.release = trio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    async def update_task(
        self, scope: CallerScope, task_id: str, update: TaskUpdate, **kwargs: Any
    ) -> StoredTask:
        held = task_id == self.task_id and update != TaskUpdate()  # not the re-run's own write
        if held and not self.stored_first:
            await self._hold()
        stored = await self.store.update_task(scope, task_id, update, **kwargs)
        if held and self.stored_first:
            await self._hold()
        return stored

    async def _hold(self) -> None:
        self.holding.set()
        await self.release.wait()


@pytest.mark.parametrize("finished_logs", [0, 10], ids=["log dropped", "log kept"])
@pytest.mark.parametrize("stored_first", [False, True], ids=["held unstored", "held stored"])
async def test_a_rerun_task_replays_from_the_store_without_losing_or_repeating(
    store_url: str, finished_logs: int, stored_first: bool
) -> None:
    """A re-run's in-memory log starts after the stored one: a resubscriber from the start gets
    the rest from the store, while it runs (its write caught before or after the store has
    the event) and after it finished (its in-memory log kept or dropped)."""
    config = RuntimeConfig(poll_interval=0.01, finished_logs=finished_logs)
    async with open_store(store_url) as store:
        _plain, task = await crash(store, "gated_redo")
        agents.gates["gated_redo"] = gate = trio.Event()
        gate.set()  # the re-run runs straight through but for its held first write
        held = HeldStore(store, task.id, stored_first=stored_first)
        async with trio.open_nursery() as nursery:
            runtime = TaskRuntime(agents.agent, held, config)
            await nursery.start(runtime.run)
            with trio.fail_after(5):
                await held.holding.wait()
                running = await runtime.subscribe(ANONYMOUS, task.id, last_event_id=0)
                held.release.set()
                live = await read_all(running)
                ended = await runtime.subscribe(ANONYMOUS, task.id, last_event_id=0)
                finished = await read_all(ended)
            nursery.cancel_scope.cancel()
        logged = list(await store.load_events(ANONYMOUS, task.id))
    assert [(seq, type(event)) for seq, event in logged] == [
        (1, m.Task),
        (2, m.Task),  # the re-run's snapshot
        (3, m.TaskStatusUpdateEvent),  # WORKING, the held write
        (4, m.TaskArtifactUpdateEvent),  # "opened"
        (5, m.TaskArtifactUpdateEvent),  # "done", the result
        (6, m.TaskStatusUpdateEvent),  # COMPLETED
    ]
    assert [(entry.seq, entry.event) for entry in live] == logged
    assert [(entry.seq, entry.event) for entry in finished] == logged


async def test_cancel_after_a_restart_ends_the_stored_log(store_url: str) -> None:
    async with open_store(store_url) as store:
        async with trio.open_nursery() as nursery:
            first = TaskRuntime(agents.agent, store, FAST)
            await nursery.start(first.run)
            asked = await first.send(ANONYMOUS, request("q", "ask"))
            assert isinstance(asked, m.Task)
            nursery.cancel_scope.cancel()  # the waiting task outlives its handler
        async with trio.open_nursery() as nursery:
            second = TaskRuntime(agents.agent, store, FAST)
            await nursery.start(second.run)
            canceled = await second.cancel(ANONYMOUS, asked.id)
            stream = await second.subscribe(ANONYMOUS, asked.id, last_event_id=0)
            replayed = await read_all(stream)
            nursery.cancel_scope.cancel()
    assert canceled.status.state is m.TaskState.CANCELED
    assert [entry.seq for entry in replayed] == list(range(1, len(replayed) + 1))
    waited, final = replayed[-2].event, replayed[-1].event
    assert isinstance(waited, m.TaskStatusUpdateEvent)
    assert waited.status.state is m.TaskState.INPUT_REQUIRED
    assert isinstance(final, m.TaskStatusUpdateEvent) and final.status == canceled.status


@pytest.mark.parametrize("finished_logs", [0, 10], ids=["logs dropped", "logs kept"])
async def test_cancel_after_a_lost_final_write_ends_the_log(
    nursery: trio.Nursery, finished_logs: int
) -> None:
    killable = KillableStore(MemoryTaskStore())
    runtime = TaskRuntime(agents.agent, killable, attrs.evolve(FAST, finished_logs=finished_logs))
    await nursery.start(runtime.run)
    agents.gates["lost"] = gate = trio.Event()
    task = await runtime.send(ANONYMOUS, request("lost", "gated", return_immediately=True))
    assert isinstance(task, m.Task)
    await trio.testing.wait_all_tasks_blocked()  # it reported progress, waits at its gate
    killable.dead = True
    gate.set()
    await trio.testing.wait_all_tasks_blocked()  # its job ended; no result was stored
    killable.dead = False
    canceled = await runtime.cancel(ANONYMOUS, task.id)
    # The job's log ends without a final event, so it is not kept: the store's log has the
    # cancellation.
    replayed = await read_all(await runtime.subscribe(ANONYMOUS, task.id, last_event_id=0))
    assert [entry.seq for entry in replayed] == [1, 2, 3]
    assert isinstance(replayed[-1].event, m.TaskStatusUpdateEvent)
    assert replayed[-1].event.status == canceled.status


@pytest.mark.parametrize(
    "after", [0, 3, 4], ids=["from the start", "from the job's last", "past the job's last"]
)
async def test_a_resume_after_a_final_write_whose_answer_was_lost_gets_the_stored_end(
    store_url: str, after: int
) -> None:
    """The job published events 1 to 3; its final write stored 4 (the result) and 5
    (COMPLETED) and raised.  A resume gets every stored event after its id, with
    ``finished_logs`` on.  Before, the job's log was kept though it lacked 4 and 5: a resume
    from it ended at 3, and one from 3 or 4 got nothing."""
    config = attrs.evolve(FAST, finished_logs=10)
    async with open_store(store_url) as store, trio.open_nursery() as nursery:
        runtime = TaskRuntime(agents.agent, AnswerLost(store), config)  # type: ignore[arg-type]
        await nursery.start(runtime.run)
        agents.gates["answer lost"] = gate = trio.Event()
        sent = request("answer lost", "gated", return_immediately=True)
        task = await runtime.send(ANONYMOUS, sent)
        assert isinstance(task, m.Task)
        live = await runtime.subscribe(ANONYMOUS, task.id)
        gate.set()
        with trio.fail_after(5):
            await read_all(live)  # ends with the job's log
        resumed = await read_all(await runtime.subscribe(ANONYMOUS, task.id, last_event_id=after))
        stored = await store.load_events(ANONYMOUS, task.id, after_seq=after)
        nursery.cancel_scope.cancel()
    assert [(entry.seq, entry.event) for entry in resumed] == list(stored)
    assert [seq for seq, _event in stored] == list(range(after + 1, 6))
    final = stored[-1][1]
    assert isinstance(final, m.TaskStatusUpdateEvent)
    assert final.status.state is m.TaskState.COMPLETED


async def send_past_a_lost_answer(lost: AnswerLost, text: str) -> tuple[m.Task, StoredTask | None]:
    """A blocking send of ``text`` to a runtime on ``lost``: the task it answered with, and
    the task as the store underneath holds it."""
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(agents.agent, lost, FAST)  # type: ignore[arg-type]
        await nursery.start(runtime.run)
        with trio.fail_after(5):
            task = await runtime.send(ANONYMOUS, request(text))
        nursery.cancel_scope.cancel()
    assert isinstance(task, m.Task)
    return task, await lost.store.load_task(ANONYMOUS, task.id)


def final_state_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the runtime warned about final writes."""
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    return [w for w in warnings if "final state" in w]


async def test_a_blocking_send_whose_final_write_answer_was_lost_gets_the_stored_task(
    store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The final write was stored, then the store raised: the runtime reads the task back and
    answers with it, COMPLETED with its result, as GetTask has it.  Before, the send got the
    task as it was before that write (SUBMITTED), and the log said the final state was not
    recorded."""
    async with open_store(store_url) as store:
        task, stored = await send_past_a_lost_answer(AnswerLost(store), "lost answer")
    assert task.status.state is m.TaskState.COMPLETED
    assert [artifact.parts for artifact in task.artifacts] == [(m.TextPart("lost answer"),)]
    assert stored is not None and stored.task == task
    assert final_state_warnings(caplog) == [
        f"task {task.id}: final state recorded, though the store's answer was lost (the"
        " connection dropped before the commit's answer); the task was read back"
    ]


async def test_a_live_stream_whose_final_write_answer_was_lost_gets_the_final_events(
    store_url: str,
) -> None:
    """A stream of the job gets the events its final write stored (the result, then
    COMPLETED), numbered as in the store, then ends.  Before, it ended after the job's
    progress, without them."""
    gate = f"lost answer {m.new_id()}"  # the gates outlive a test
    async with open_store(store_url) as store, trio.open_nursery() as nursery:
        runtime = TaskRuntime(agents.agent, AnswerLost(store), FAST)  # type: ignore[arg-type]
        await nursery.start(runtime.run)
        stream = await runtime.send_stream(ANONYMOUS, request(gate, "gated"))
        agents.gates.setdefault(gate, trio.Event()).set()
        with trio.fail_after(5):
            streamed = await read_all(stream)
        first = streamed[0].event
        assert isinstance(first, m.Task)
        logged = await store.load_events(ANONYMOUS, first.id)
        nursery.cancel_scope.cancel()
    assert [(entry.seq, entry.event) for entry in streamed] == list(logged)
    result, final = logged[-2][1], logged[-1][1]
    assert isinstance(result, m.TaskArtifactUpdateEvent)
    assert result.artifact.parts == (m.TextPart("done"),)
    assert isinstance(final, m.TaskStatusUpdateEvent)
    assert final.status.state is m.TaskState.COMPLETED


async def test_a_cancel_whose_final_write_answer_was_lost_answers_canceled(
    store_url: str,
) -> None:
    """CancelTask on a running task whose CANCELED write was stored but answered with an
    error gets the task CANCELED, as the store has it.  Before, it was refused: the task had
    "ended WORKING first"."""
    gate = f"cancel lost {m.new_id()}"  # never opened: the cancel ends the task
    async with open_store(store_url) as store, trio.open_nursery() as nursery:
        runtime = TaskRuntime(agents.agent, AnswerLost(store), FAST)  # type: ignore[arg-type]
        await nursery.start(runtime.run)
        task = await runtime.send(ANONYMOUS, request(gate, "gated", return_immediately=True))
        assert isinstance(task, m.Task)
        live = await runtime.subscribe(ANONYMOUS, task.id)
        while not isinstance((await live.receive()).event, m.TaskStatusUpdateEvent):
            pass  # the handler is at its gate once its WORKING update is out (and stored)
        with trio.fail_after(5):
            canceled = await runtime.cancel(ANONYMOUS, task.id)
            streamed = await drain(live)
        stored = await store.load_task(ANONYMOUS, task.id)
        nursery.cancel_scope.cancel()
    assert canceled.status.state is m.TaskState.CANCELED
    assert stored is not None and stored.task == canceled
    assert isinstance(streamed[-1], m.TaskStatusUpdateEvent)
    assert streamed[-1].status == canceled.status


async def test_a_final_write_the_store_did_not_store_is_not_taken_for_recorded(
    store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The final write failed before it was stored: the task read back does not hold it, so
    the send gets the task as it stands (SUBMITTED, as the store has it), its stream ends
    without a final event, and the log says the store does not hold the final state.  Before,
    the log said so without having looked."""
    async with open_store(store_url) as store, trio.open_nursery() as nursery:
        lost = AnswerLost(store, stored=False)
        runtime = TaskRuntime(agents.agent, lost, FAST)  # type: ignore[arg-type]
        await nursery.start(runtime.run)
        stream = await runtime.send_stream(ANONYMOUS, request("not stored"))
        with trio.fail_after(5):
            streamed = await read_all(stream)
        task_id = streamed[0].event.id  # type: ignore[union-attr]
        task = await runtime.send(ANONYMOUS, request("not stored either"))
        assert isinstance(task, m.Task)
        stored = await store.load_task(ANONYMOUS, task.id)
        logged = await store.load_events(ANONYMOUS, task_id)
        nursery.cancel_scope.cancel()
    assert [(entry.seq, entry.event) for entry in streamed] == list(logged)
    assert stored is not None and stored.task == task
    assert task.status.state is m.TaskState.SUBMITTED
    assert final_state_warnings(caplog) == [
        f"task {task_id}: final state not recorded, the store does not hold it: the"
        " connection dropped before the commit's answer",
        f"task {task.id}: final state not recorded, the store does not hold it: the"
        " connection dropped before the commit's answer",
    ]


async def test_a_final_write_the_store_cannot_be_asked_about_is_left_unknown(
    store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The final write was stored, then the store stays down: the runtime reads the task
    back a few times, then gives up and answers as before (the task as the job last had it),
    saying the final state is unknown.  Before, it did not read back, and the log said the
    final state was not recorded, which was false."""
    async with open_store(store_url) as store:
        lost = AnswerLost(store, down_for=math.inf)
        task, stored = await send_past_a_lost_answer(lost, "unreadable")
    assert task.status.state is m.TaskState.SUBMITTED
    assert stored is not None and stored.task.status.state is m.TaskState.COMPLETED
    assert lost.reads == READ_BACK_TRIES
    assert final_state_warnings(caplog) == [
        f"task {task.id}: final state unknown, the store could not be read back"
        f" ({READ_BACK_TRIES} tries): the connection dropped before the commit's answer"
    ]


class DeletedBetweenReads:
    """A store whose task is deleted (a retention purge, another replica) right after the
    next ``load_task`` of it, once ``armed``: the reader's next read finds it gone."""

    def __init__(self, store: TaskStore) -> None:
        self.store = store
        self.armed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    async def load_task(self, scope: CallerScope, task_id: str, **kwargs: Any) -> StoredTask | None:
        stored = await self.store.load_task(scope, task_id, **kwargs)
        if self.armed:
            self.armed = False
            await self.store.delete_task(scope, task_id)
        return stored


@pytest.mark.parametrize("between_reads", [False, True], ids=["deleted", "deleted between reads"])
async def test_a_task_deleted_under_its_running_handler_stops_the_job(
    store_url: str, between_reads: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """The handler's write finds the task gone: the job stops as one whose task moved on (the
    handler cancelled, nothing written, its stream ended, nothing logged as the skill's
    failure).  Before, the write was a skill failure, and the final write's
    TaskNotFoundError escaped the job and took the runtime down.

    ``between_reads``: the write is refused because another replica wrote the task, and the
    task is deleted after the job read it, before it read its events.  Before, the events'
    TaskNotFoundError reached the handler's write: a skill failure again."""
    async with open_store(store_url) as store, trio.open_nursery() as nursery:
        deleting = DeletedBetweenReads(store)
        runtime = TaskRuntime(agents.agent, deleting, FAST)  # type: ignore[arg-type]
        await nursery.start(runtime.run)
        gate = f"deleted {m.new_id()}"  # the gates outlive a test
        task = await runtime.send(ANONYMOUS, request(gate, "gated", return_immediately=True))
        assert isinstance(task, m.Task)
        live = await runtime.subscribe(ANONYMOUS, task.id)
        while not isinstance((await live.receive()).event, m.TaskStatusUpdateEvent):
            pass  # the handler is at its gate once its WORKING update is out (and stored)
        if between_reads:
            moved = await store.load_task(ANONYMOUS, task.id)
            assert moved is not None
            await store.update_task(
                ANONYMOUS, task.id, TaskUpdate(), expected_version=moved.version
            )
            deleting.armed = True
        else:
            assert await store.delete_task(ANONYMOUS, task.id)
        agents.gates[gate].set()
        with trio.fail_after(5):
            assert await drain(live) == []  # it ends: nothing more was written
            await trio.testing.wait_all_tasks_blocked()
        assert task.id in agents.cleanups  # the handler's finally ran
        assert runtime.statistics().running_jobs == 0
        assert await store.load_task(ANONYMOUS, task.id) is None
        echoed = await runtime.send(ANONYMOUS, request("still serving"))
        assert isinstance(echoed, m.Task) and echoed.status.state is m.TaskState.COMPLETED
        nursery.cancel_scope.cancel()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_a_restarted_runtime_replays_a_task_as_it_was_streamed(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tasks.db'}"
    async with open_store(url) as store, trio.open_nursery() as nursery:
        first = TaskRuntime(agents.agent, store, FAST)
        await nursery.start(first.run)
        stream = await first.send_stream(ANONYMOUS, request("x", "chunks"))
        live = [(entry.seq, entry.event) for entry in await read_all(stream)]
        nursery.cancel_scope.cancel()
    task, final = live[0][1], live[-1][1]
    assert isinstance(task, m.Task) and isinstance(final, m.TaskStatusUpdateEvent)
    assert [seq for seq, _event in live] == [1, 2, 3, 4, 5]  # snapshot, 3 chunks, completion
    async with open_store(url) as store, trio.open_nursery() as nursery:
        second = TaskRuntime(agents.agent, store, FAST)
        await nursery.start(second.run)
        for after in (0, 2):
            stream = await second.subscribe(ANONYMOUS, task.id, last_event_id=after)
            replayed = [(entry.seq, entry.event) for entry in await read_all(stream)]
            assert replayed == live[after:]
        assert final.status == (await second.get(ANONYMOUS, task.id, None)).status
        nursery.cancel_scope.cancel()


async def test_drain_waits_for_running_jobs_but_not_for_waiting_ones(
    runtime: TaskRuntime,
) -> None:
    await runtime.send(ANONYMOUS, request("q", "ask"))  # waits for input: not drained
    gate = agents.gates.setdefault("drain", trio.Event())
    running = await runtime.send(ANONYMOUS, request("drain", "gated", return_immediately=True))
    drained = trio.Event()

    async def drain_then_mark() -> None:
        await runtime.drain(grace=30)
        drained.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(drain_then_mark)
        await trio.testing.wait_all_tasks_blocked()
        assert not drained.is_set()  # the gated job is still running
        gate.set()
        with trio.fail_after(5):
            await drained.wait()
    finished = await runtime.get(ANONYMOUS, running.id, None)
    assert finished.status.state is m.TaskState.COMPLETED
    with pytest.raises(UnsupportedOperationError):  # draining: no new tasks
        await runtime.send(ANONYMOUS, request("late"))


LEASED = attrs.evolve(FAST, recovery_lease=0.6)


class Watched:
    """A real store that tells when a runtime sweeps it for unfinished tasks and when a task
    is written FAILED (the lease is real time: stored write times, so the tests wait for
    these rather than for a fixed time)."""

    def __init__(self, store: TaskStore) -> None:
        self.store = store
        self.sweeps = 0
        self.failed = trio.Event()
        self._swept = trio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    async def list_unfinished(self) -> tuple[ScopedTask, ...]:
        found = await self.store.list_unfinished()
        self.sweeps += 1
        self._swept.set()
        self._swept = trio.Event()
        return found

    async def swept(self, times: int) -> None:
        while self.sweeps < times:
            await self._swept.wait()

    async def update_task(
        self, scope: CallerScope, task_id: str, update: TaskUpdate, **kwargs: Any
    ) -> StoredTask:
        stored = await self.store.update_task(scope, task_id, update, **kwargs)
        if stored.task.status.state is m.TaskState.FAILED:
            self.failed.set()
        return stored


async def test_with_a_lease_a_starting_replica_leaves_a_live_peers_task_alone() -> None:
    """Before, any replica starting recovered every unfinished task: a peer's live task was
    recorded FAILED under it."""
    store = MemoryTaskStore()
    async with trio.open_nursery() as nursery:
        peer = TaskRuntime(agents.agent, store, LEASED)
        await nursery.start(peer.run)
        task = await peer.send(ANONYMOUS, request("leased", "gated", return_immediately=True))
        watched = Watched(store)
        starting = TaskRuntime(agents.agent, watched, LEASED)
        await nursery.start(starting.run)
        with trio.fail_after(5):
            await watched.swept(5)  # four ticks of a third of a lease: the lease ran out twice
        still = await store.load_task(ANONYMOUS, task.id)
        assert still is not None and still.task.status.state is m.TaskState.WORKING
        agents.gates["leased"].set()
        with trio.fail_after(5):
            events = await drain(await peer.subscribe(ANONYMOUS, task.id))
        assert isinstance(events[-1], m.TaskStatusUpdateEvent)
        assert events[-1].status.state is m.TaskState.COMPLETED
        nursery.cancel_scope.cancel()


async def test_with_a_lease_a_crashed_replicas_task_is_recovered_once_stale() -> None:
    store = MemoryTaskStore()
    plain, _resumable = await crash(store)
    watched = Watched(store)
    async with trio.open_nursery() as nursery:
        survivor = TaskRuntime(agents.agent, watched, LEASED)
        await nursery.start(survivor.run)
        fresh = await store.load_task(ANONYMOUS, plain.id)
        assert fresh is not None and fresh.task.status.state is m.TaskState.WORKING  # not yet
        with trio.fail_after(5):
            await watched.failed.wait()  # a sweep once the lease ran out
        recovered = await store.load_task(ANONYMOUS, plain.id)
        assert recovered is not None
        final = recovered.task.status
        assert final.state is m.TaskState.FAILED
        assert final.message is not None
        assert final.message.parts == (m.TextPart(RESTART_MESSAGE),)
        nursery.cancel_scope.cancel()


async def test_a_resume_older_than_what_is_kept_starts_over_from_a_snapshot() -> None:
    """Before, the store's newest events came back as if contiguous: an artifact chunk whose
    start the client never got, with no sign of the gap."""
    store = MemoryTaskStore(retention=Retention(max_events_per_task=3))
    config = attrs.evolve(FAST, event_log=EventLogLimits(replay=2))
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(agents.agent, store, config)
        await nursery.start(runtime.run)
        done = await runtime.send(ANONYMOUS, request("x", "chunks"))
        assert isinstance(done, m.Task) and done.status.state is m.TaskState.COMPLETED
        last = (await store.load_events(ANONYMOUS, done.id))[-1][0]
        assert last > 3  # more events than either keeps
        for after in (0, 1):
            entries = await read_all(
                await runtime.subscribe(ANONYMOUS, done.id, last_event_id=after)
            )
            assert [(e.seq, e.event) for e in entries] == [(last, done)]
        # Within what is kept, the events themselves, contiguous:
        kept = await read_all(await runtime.subscribe(ANONYMOUS, done.id, last_event_id=last - 2))
        assert [e.seq for e in kept] == [last - 1, last]
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("live", [True, False])
async def test_a_last_event_id_never_sent_is_refused(live: bool) -> None:
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(agents.agent, MemoryTaskStore(), FAST)
        await nursery.start(runtime.run)
        text = "unsent live" if live else "unsent"
        skill = "gated" if live else None
        task = await runtime.send(ANONYMOUS, request(text, skill, return_immediately=live))
        assert isinstance(task, m.Task)
        with pytest.raises(InvalidParamsError, match="Last-Event-ID 99999 was never sent"):
            await runtime.subscribe(ANONYMOUS, task.id, last_event_id=99999)
        if live:
            agents.gates.setdefault(text, trio.Event()).set()
        nursery.cancel_scope.cancel()


class ListUnavailableOnce(MemoryTaskStore):
    """The memory store, unavailable for the first listing of unfinished tasks."""

    listings = 0

    async def list_unfinished(self) -> tuple[ScopedTask, ...]:
        self.listings += 1
        if self.listings == 1:
            raise StoreUnavailableError("database is locked")
        return await super().list_unfinished()


async def test_a_recovery_the_store_could_not_do_at_start_is_retried(
    autojump_clock: object,
) -> None:
    """Before, it was logged and skipped: a crashed task stayed WORKING until the next restart."""
    store = ListUnavailableOnce()
    plain, _resumable = await crash(store)
    store.listings = 0  # the crashed runtime listed too
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(agents.agent, store, FAST)
        await nursery.start(runtime.run)
        assert (await runtime.get(ANONYMOUS, plain.id, None)).status.state is m.TaskState.WORKING
        await trio.sleep(RECOVERY_RETRY + 1)
        recovered = await runtime.get(ANONYMOUS, plain.id, None)
        assert recovered.status.state is m.TaskState.FAILED
        assert store.listings == 2
        nursery.cancel_scope.cancel()


class DeletedOnceListed(MemoryTaskStore):
    """The memory store, whose user deletes the tasks a recovery has just listed (with the
    store's own ``delete_task``) before the recovery gets to them."""

    async def list_unfinished(self) -> tuple[ScopedTask, ...]:
        listed = await super().list_unfinished()
        for item in listed:
            await self.delete_task(item.scope, item.stored.task.id)
        return listed


async def test_a_task_deleted_while_the_recovery_gets_to_it_is_left_gone() -> None:
    """Before, the store's ``TaskNotFoundError`` for it ended the runtime's nursery: the
    server did not start."""
    store = DeletedOnceListed()
    plain, resumable = await crash(store)
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(agents.agent, store, FAST)
        await nursery.start(runtime.run)
        for task in (plain, resumable):
            assert await store.load_task(ANONYMOUS, task.id) is None
        done = await runtime.send(ANONYMOUS, request("after"))
        assert isinstance(done, m.Task) and done.status.state is m.TaskState.COMPLETED
        nursery.cancel_scope.cancel()
