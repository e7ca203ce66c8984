"""A handler's writes the store answered with an error.

A write the store answers with ``StoreUnavailableError`` may be stored all the same (the
commit went through, then the connection dropped): the job reads the task back, so its next
write is not refused as stale and the job does not stop as if another replica had taken the
task.  Before, only final writes were read back.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Awaitable, Collection
from contextlib import asynccontextmanager
from typing import Any, NoReturn

import attrs
import pytest
import trio
import trio.testing
from server import agents

from a2a_trio import Agent, TaskContext
from a2a_trio import model as m
from a2a_trio.errors import StoreUnavailableError
from a2a_trio.runtime import RuntimeConfig, TaskRuntime
from a2a_trio.runtime._lease import keep_leases
from a2a_trio.runtime._readback import READ_BACK_TRIES
from a2a_trio.store import ANONYMOUS, TaskAtVersion, TaskUpdate, open_store
from runtime.lost_answers import AnswerLost, final_write
from runtime.streams import read_all

FAST = RuntimeConfig(poll_interval=0.01)
AT_ONCE = m.SendMessageConfiguration(return_immediately=True)
LOST = "the connection dropped before the commit's answer"

retrying = Agent("retrying agent", "Retries a report the store refused", version="0.0.1")
outages: dict[str, str] = {}
"""Task id -> the error the handler's first report met."""


async def refused(ctx: TaskContext, report: Awaitable[object]) -> bool:
    """Await the handler's ``report``; whether the store refused it (the error noted in
    ``outages``)."""
    try:
        await report
    except StoreUnavailableError as exc:
        outages[ctx.task_id] = str(exc)
        return True
    return False


@retrying.skill(default=True)
async def retry_once(ctx: TaskContext) -> str:
    """Report progress; when the store refuses the report, note the error and report again."""
    if await refused(ctx, ctx.update("first try")):
        await ctx.update("second try")
    return "done"


gates: dict[str, trio.Event] = {}
"""Per-text events the gated handlers wait on after the store refused them."""
at_gates: dict[str, trio.Event] = {}
"""Per-text events a handler sets on reaching its gate (the read back over)."""


async def wait_at_gate(text: str) -> None:
    """Say that the handler has reached the gate named ``text``, then wait for it to open."""
    at_gates[text].set()
    await gates[text].wait()


@retrying.skill()
async def wait_on_outage(ctx: TaskContext) -> str:
    """Report progress; when the store refuses the report, note the error, wait at the gate
    named by the text, then complete."""
    if await refused(ctx, ctx.update("first try")):
        await wait_at_gate(ctx.text)
    return "done"


@retrying.skill()
async def change_while_writing(ctx: TaskContext) -> str:
    """Report progress (the store refuses it), then emit an artifact whose value a sibling task
    changes as soon as everything waits: while the job reads the doubtful report back."""
    await refused(ctx, ctx.update("first try"))
    value: m.JsonObject = {"value": "as handed over"}

    async def change_meanwhile() -> None:
        await trio.testing.wait_all_tasks_blocked()
        value["value"] = "changed during the write"

    async with trio.open_nursery() as nursery:
        nursery.start_soon(change_meanwhile)
        await ctx.emit_artifact(value, artifact_id="out")
    return "done"


cancel_on_refusal: list[trio.CancelScope] = []
"""Scopes the ``ReadsCancel`` store cancels when it refuses a read."""


@retrying.skill()
async def give_up_on_report(ctx: TaskContext) -> str:
    """Report progress inside a scope the store cancels while it reads the report back; go on
    without it."""
    with trio.CancelScope() as scope:
        cancel_on_refusal.append(scope)
        await ctx.update("first try")
    return "done"


class ReadsCancel(AnswerLost):
    """Cancels the scopes in ``cancel_on_refusal`` as it refuses a read: the read-back's
    caller gives up while it waits to read again."""

    async def _refuse_read(self, *args: object, **kwargs: object) -> NoReturn:
        for scope in cancel_on_refusal:
            scope.cancel()
        await super()._refuse_read(*args, **kwargs)


@retrying.skill()
async def ask_on_outage(ctx: TaskContext) -> str:
    """Ask a question; when the store refuses it, note the error, wait at the gate named by
    the text, then complete."""
    if await refused(ctx, ctx.ask("which one?")):
        await wait_at_gate(ctx.text)
    return "done"


def gated_text(label: str) -> str:
    """A fresh text naming a closed gate (see ``wait_at_gate``)."""
    text = f"{label} {m.new_id()}"
    gates[text] = trio.Event()
    at_gates[text] = trio.Event()
    return text


@asynccontextmanager
async def retrying_runtime(lost: AnswerLost) -> AsyncIterator[TaskRuntime]:
    """A runtime of the ``retrying`` agent on ``lost``, running for the block."""
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(retrying, lost, FAST)  # type: ignore[arg-type]
        await nursery.start(runtime.run)
        yield runtime
        nursery.cancel_scope.cancel()


def asking(update: TaskUpdate) -> bool:
    return update.state is m.TaskState.INPUT_REQUIRED


def first_try(update: TaskUpdate) -> bool:
    message = update.status_message
    return message is not None and message.parts == (m.TextPart("first try"),)


def request(text: str, skill: str | None = None) -> m.SendMessageRequest:
    metadata: m.JsonObject | None = {"skillId": skill} if skill else None
    return m.SendMessageRequest(m.text_message(text, metadata=metadata))


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def status_texts(logged: list[tuple[int, m.StreamEvent]]) -> list[str]:
    """The status messages' texts of a log's status events ("" for none)."""
    return [
        "".join(p.text for p in (event.status.message.parts if event.status.message else ()))
        for _seq, event in logged
        if isinstance(event, m.TaskStatusUpdateEvent)
    ]


async def stream_to_the_end(
    lost: AnswerLost, agent: Agent, sent: m.SendMessageRequest
) -> tuple[list[tuple[int, m.StreamEvent]], list[tuple[int, m.StreamEvent]], m.Task]:
    """Stream ``sent`` to a runtime of ``agent`` on ``lost`` to its end: what was
    streamed, the task's log as the store underneath holds it, and the task as GetTask has
    it."""
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(agent, lost, FAST)  # type: ignore[arg-type]
        await nursery.start(runtime.run)
        with trio.fail_after(5):
            streamed = [
                (entry.seq, entry.event)
                for entry in await read_all(await runtime.send_stream(ANONYMOUS, sent))
            ]
            await trio.testing.wait_all_tasks_blocked()  # the job has retired
        task_id = streamed[0][1].id  # type: ignore[union-attr]
        task = await runtime.get(ANONYMOUS, task_id, None)
        nursery.cancel_scope.cancel()
    logged = list(await lost.store.load_events(ANONYMOUS, task_id))
    return streamed, logged, task


@pytest.mark.parametrize("skill", ["gated", "chunks"])
async def test_handler_writes_stored_but_answered_with_an_error_count_as_done(
    store_url: str, skill: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Every report of the handler is stored, then answered with ``StoreUnavailableError``:
    each is read back and counts as done, the handler goes on, and the task completes; its
    stream carries every stored event once, in order.  Before, the handler got the error,
    and the job's final write was refused as stale: the job stopped as if the task had moved
    on elsewhere, and the task stayed WORKING."""
    text = f"lost reports {m.new_id()}"  # the gated skill's gate, open from the start
    agents.gates.setdefault(text, trio.Event()).set()
    async with open_store(store_url) as store:
        lost = AnswerLost(store, lose=lambda update: not final_write(update))
        streamed, logged, task = await stream_to_the_end(lost, agents.agent, request(text, skill))
    assert streamed == logged
    assert [seq for seq, _event in logged] == list(range(1, len(logged) + 1))
    assert task.status.state is m.TaskState.COMPLETED
    reports = 2 if skill == "gated" else 3  # an update and an artifact, or three chunks
    assert warnings(caplog) == reports * [
        f"task {task.id}: write stored, though the store's answer was lost ({LOST});"
        " the task was read back"
    ]


@pytest.mark.parametrize(
    ("stored", "down_for", "reports"),
    [
        (False, 0, ["second try"]),
        (False, READ_BACK_TRIES, ["second try"]),
        (True, READ_BACK_TRIES, ["first try", "second try"]),
    ],
    ids=["not stored", "not stored, unreadable", "stored, unreadable"],
)
async def test_a_report_answered_with_an_error_reaches_the_handler_and_a_retry_works(
    store_url: str, stored: bool, down_for: int, reports: list[str]
) -> None:
    """The first report is answered with ``StoreUnavailableError`` and the store either does
    not hold it or cannot be read back (``READ_BACK_TRIES`` reads): the handler gets the
    error and reports again.  The retry first reads the task back when the first report was
    in doubt: a first report the store held after all counts as done, and the retry follows
    it.  The task completes, its stream and log the same, without gaps.  Before, a stored
    first report made the retry stale: the job stopped and the task stayed WORKING."""
    async with open_store(store_url) as store:
        lost = AnswerLost(store, lose=first_try, stored=stored, down_for=down_for)
        streamed, logged, task = await stream_to_the_end(lost, retrying, request("retry"))
    assert outages[task.id] == LOST
    assert lost.reads == down_for
    assert streamed == logged
    assert [seq for seq, _event in logged] == list(range(1, len(logged) + 1))
    assert status_texts(logged) == [*reports, ""]
    assert task.status.state is m.TaskState.COMPLETED


async def test_a_report_in_doubt_while_the_store_stays_down_stores_nothing_more(
    store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The first report was stored, and the store stays down for reads: the retry cannot
    find out whether the first one is in, so it stores nothing and raises
    ``StoreUnavailableError`` too; the task fails as one whose store was down, and the
    failure is not recorded either (the store cannot say what it holds)."""
    async with open_store(store_url) as store:
        lost = AnswerLost(store, lose=first_try, down_for=math.inf)
        async with trio.open_nursery() as nursery:
            runtime = TaskRuntime(retrying, lost, FAST)  # type: ignore[arg-type]
            await nursery.start(runtime.run)
            with trio.fail_after(5):
                task = await runtime.send(ANONYMOUS, request("retry"))
            nursery.cancel_scope.cancel()
        assert isinstance(task, m.Task)
        kept = await store.load_task(ANONYMOUS, task.id)
        logged = list(await store.load_events(ANONYMOUS, task.id))
    assert outages[task.id] == LOST
    assert lost.reads == 3 * READ_BACK_TRIES  # the report, its retry, the final write
    assert kept is not None and kept.task.status.state is m.TaskState.WORKING
    assert status_texts(logged) == ["first try"]
    assert warnings(caplog) == [
        f"task {task.id}: final state not recorded, the store does not hold it: not written,"
        f" as the store could not be read back ({READ_BACK_TRIES} tries) after an earlier"
        " write it answered with an error: the database is still unreachable"
    ]


async def test_a_lease_tick_after_a_report_in_doubt_keeps_the_job(store_url: str) -> None:
    """The first report was stored, but the store could not be read back, and the handler
    waits on: the next lease tick reads the task back before touching it, finds the report
    stored and keeps the job, whose stream then gets the report.  Before, the tick found the
    task at a version the job did not know and stopped the job as if another replica had
    taken the task."""
    text = gated_text("in doubt at a tick")
    async with open_store(store_url) as store:
        lost = AnswerLost(store, lose=first_try, down_for=READ_BACK_TRIES)
        async with retrying_runtime(lost) as runtime:
            stream = await runtime.send_stream(ANONYMOUS, request(text, "wait_on_outage"))
            with trio.fail_after(5):
                await at_gates[text].wait()
                assert await keep_leases(lost, list(runtime._jobs.values()))  # type: ignore[arg-type]
                assert runtime.statistics().running_jobs == 1
                gates[text].set()
                streamed = [(entry.seq, entry.event) for entry in await read_all(stream)]
            task_id = streamed[0][1].id  # type: ignore[union-attr]
            task = await runtime.get(ANONYMOUS, task_id, None)
        logged = list(await store.load_events(ANONYMOUS, task.id))
    assert outages[task.id] == LOST
    assert streamed == logged
    assert status_texts(logged) == ["first try", ""]
    assert task.status.state is m.TaskState.COMPLETED


async def test_a_write_after_a_report_in_doubt_keeps_the_value_handed_over(store_url: str) -> None:
    """The first report is in doubt, so the handler's next write reads the task back first,
    waiting between tries, and the handler changes the artifact's value meanwhile: the store
    and the stream hold the value as handed over.  Before, the write was copied after the
    read-back, so it stored the value as changed during the write (and a value changed into
    something that is not JSON there, past the check, reached the store)."""
    async with open_store(store_url) as store:
        lost = AnswerLost(store, lose=first_try, down_for=READ_BACK_TRIES + 1)
        request_ = request("change", "change_while_writing")
        streamed, logged, task = await stream_to_the_end(lost, retrying, request_)
    assert outages[task.id] == LOST
    assert lost.reads == READ_BACK_TRIES + 1  # the write waited between two read-backs
    assert streamed == logged
    out = next(artifact for artifact in task.artifacts if artifact.artifact_id == "out")
    assert [part.data for part in out.parts if isinstance(part, m.DataPart)] == [
        {"value": "as handed over"}
    ]
    assert task.status.state is m.TaskState.COMPLETED


async def test_a_report_whose_read_back_is_cancelled_stays_in_doubt(store_url: str) -> None:
    """The first report is stored, answered with an error, and the handler's own scope is
    cancelled while the job waits to read the task back: the report stays in doubt, so the
    final write reads the task back first, finds the report stored, and completes the task.
    Before, the cancelled read-back forgot the report: the final write was refused as stale,
    the job stopped as if another replica had taken the task, and it stayed WORKING."""
    async with open_store(store_url) as store:
        lost = ReadsCancel(store, lose=first_try, down_for=1)
        request_ = request("give up", "give_up_on_report")
        streamed, logged, task = await stream_to_the_end(lost, retrying, request_)
    assert lost.reads == 1
    assert streamed == logged
    assert status_texts(logged) == ["first try", ""]
    assert task.status.state is m.TaskState.COMPLETED


class TouchesSeen(AnswerLost):
    """``AnswerLost`` noting the tasks of every batched lease touch (``touch_tasks``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.touched: list[set[TaskAtVersion]] = []

    async def touch_tasks(self, tasks: Collection[TaskAtVersion]) -> set[TaskAtVersion]:
        self.touched.append(set(tasks))
        return await self.store.touch_tasks(tasks)


async def test_a_lease_tick_reads_a_report_in_doubt_back_instead_of_touching_it_stale(
    store_url: str,
) -> None:
    """The first report was stored, but the store could not be read back: at the next lease
    tick the job's task is left out of the batched touch (the version the job knows is behind
    the store's, so the touch could only miss), and the job reads it back and touches it alone.
    Before, the batch touched it at the stale version first, for nothing."""
    text = gated_text("left out of the batch")
    async with open_store(store_url) as store:
        lost = TouchesSeen(store, lose=first_try, down_for=READ_BACK_TRIES)
        async with retrying_runtime(lost) as runtime:
            sent = attrs.evolve(request(text, "wait_on_outage"), configuration=AT_ONCE)
            await runtime.send(ANONYMOUS, sent)
            with trio.fail_after(5):
                await at_gates[text].wait()
                (job,) = runtime._jobs.values()
                version_in_doubt = job.version
                assert await keep_leases(lost, [job])  # type: ignore[arg-type]
            assert lost.touched == [set()]
            assert job.version == version_in_doubt + 1  # read back: the report is the job's
            assert runtime.statistics().running_jobs == 1
            gates[text].set()


async def test_a_follow_up_to_a_question_in_doubt_resumes_the_task(store_url: str) -> None:
    """The handler's ``ctx.ask`` was stored, but the store could not be read back, so the
    handler got ``StoreUnavailableError``; the client, who sees the task waiting for input,
    answers.  The follow-up reads the question back first, finds it stored, and resumes the
    task; the handler then completes it.  Before, the follow-up was turned away ("not waiting
    for input"): the job still took its task for WORKING."""
    text = gated_text("asked in doubt")
    async with open_store(store_url) as store:
        lost = AnswerLost(store, lose=asking, down_for=READ_BACK_TRIES)
        async with retrying_runtime(lost) as runtime:
            sent = attrs.evolve(request(text, "ask_on_outage"), configuration=AT_ONCE)
            first = await runtime.send(ANONYMOUS, sent)
            assert isinstance(first, m.Task)
            with trio.fail_after(5):
                await at_gates[text].wait()
                answer = m.text_message("that one", task_id=first.id)
                stream = await runtime.send_stream(ANONYMOUS, m.SendMessageRequest(answer))
                gates[text].set()
                head, *streamed = await read_all(stream)
            task = await runtime.get(ANONYMOUS, first.id, None)
        logged = list(await store.load_events(ANONYMOUS, first.id))
    assert outages[first.id] == LOST
    assert isinstance(head.event, m.Task)
    assert head.event.status.state is m.TaskState.WORKING
    assert [(entry.seq, entry.event) for entry in streamed] == logged[head.seq :]
    assert [seq for seq, _event in logged] == list(range(1, len(logged) + 1))
    assert status_texts(logged) == ["which one?", "", ""]  # asked, resumed, completed
    assert task.status.state is m.TaskState.COMPLETED
    replies = [message.parts for message in task.history if message.role is m.Role.USER]
    assert replies[-1] == (m.TextPart("that one"),)
