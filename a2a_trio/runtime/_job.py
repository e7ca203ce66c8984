"""A live task: its latest snapshot, its event log, its cancel scope, and its inbox.

All writes of one job go through :meth:`Job.write` under one lock, so store versions, snapshots
and event sequence numbers advance together and subscribers see events in write order.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import attrs
import trio

from .. import model as m
from ..errors import ConcurrencyError, StoreUnavailableError, TaskNotFoundError
from ..store import (
    CallerScope,
    SequencedEvent,
    StoredTask,
    TaskAtVersion,
    TaskStore,
    TaskUpdate,
    detached_update,
)
from ._agent import Skill
from ._content import check_update
from ._eventlog import EventLog, EventLogLimits
from ._readback import READ_BACK_TRIES, find_write

logger = logging.getLogger("a2a_trio.runtime")


class FinalStateUnknown(StoreUnavailableError):
    """A final write raised ``StoreUnavailableError`` and the store could not be read back
    either: it may hold the task's terminal state or not."""


@attrs.frozen
class Incoming:
    """A message sent to a task, with what its send asked of the answer: the media types the
    client accepts (``SendMessageConfiguration.accepted_output_modes``, empty for anything)."""

    message: m.Message
    accepted_output_modes: tuple[str, ...] = ()


class Job:
    """The runtime's view of one task while its handler runs (or waits for input)."""

    def __init__(
        self,
        *,
        scope: CallerScope,
        task: m.Task,
        version: int,
        skill: Skill,
        store: TaskStore,
        limits: EventLogLimits,
        on_waiting: trio.lowlevel.ParkingLot,
        on_superseded: Callable[[Job], None],
        last_seq: int = 0,
    ) -> None:
        """``on_waiting`` is woken when the job starts waiting for input: the runtime's drain
        waits for the jobs that do not (a finished job wakes it as it retires).
        ``on_superseded`` is called once the job has found its task moved on without it."""
        self.scope = scope
        self.task = task
        self.version = version
        self.skill = skill
        self.log = EventLog(limits, last_seq=last_seq)
        self.cancel_scope = trio.CancelScope()
        self.done = trio.Event()
        self.cancel_requested = False
        """A CancelTask reached the job: its task ends CANCELED, even when the drain's grace
        runs out while the handler is still cleaning up."""
        self.shut_down = False
        """The drain's grace ran out before any CancelTask reached the job: the handler is
        cancelled as at shutdown (FAILED, "the server shut down"; a resumable task is left for
        the next start), not as by CancelTask."""
        self.finalizing = False
        """The handler ended on its own and the job's scope now shields and bounds the final
        write (``TaskRuntime._run_job``): a CancelTask or a drain no longer cancels that
        scope, which would cut the write short (a write in a scope of its own, as on every
        other end, ignores them likewise)."""
        self.parked = False
        """The handler handed back a JobHandle: the task now follows long-running work."""
        self.superseded = False
        """The task moved on without this job (another replica cancelled, re-ran or resumed
        it, or it is gone): the handler is cancelled and the job writes nothing more."""
        self._store = store
        self._in_doubt: list[SequencedEvent] | None = None
        """The events of a write the store answered with ``StoreUnavailableError`` and could
        not be read back after: the job's next write or lease tick reads back first
        (:meth:`_settle_doubt`)."""
        self._lock = trio.Lock()
        self._changed = trio.lowlevel.ParkingLot()
        self._on_waiting = on_waiting
        self._on_superseded = on_superseded
        self._reply: Incoming | None = None
        self._mail = trio.lowlevel.ParkingLot()
        self.log.publish(task)  # the runtime stored it with the task as event last_seq + 1

    @property
    def id(self) -> str:
        return self.task.id

    @property
    def state(self) -> m.TaskState:
        return self.task.status.state

    @property
    def waiting_for_input(self) -> bool:
        return m.is_interrupted(self.state)

    async def write(self, update: TaskUpdate, *, chunk: tuple[bool, bool] | None = None) -> m.Task:
        """Persist ``update`` with its events in one store call, then publish those events.

        The events (artifacts first, then the status) are built and numbered before the store
        call so the store logs them atomically with the change; a state change gets its
        timestamp here, so the status event is exactly the stored status.  ``chunk`` is
        (append, last_chunk) for a single streamed artifact write.  Content that is not plain
        JSON raises ``AgentMisuseError`` before anything is stored.

        A ``StoreUnavailableError`` may come after the commit went through (the connection
        dropped before its answer), so the task is read back (:meth:`_read_back`): when the
        store holds this write's events under their numbers, the write counts as done (the
        stored task is the job's, its events are published, a warning is logged) and this
        returns normally.  Otherwise the error is raised and nothing is published; a retry
        is numbered as the first try was.  When the store cannot be read back either, the
        error is raised too and the write is in doubt: the job's next write (or lease tick)
        reads back first, takes the doubtful write for done if the store holds it, and raises
        ``StoreUnavailableError`` itself, storing nothing, while the store still cannot say.
        So a job never takes its own stored write for another replica's.  (For the terminal
        write, see :meth:`write_final`.)

        A write the store refuses because the task moved on without this job (another replica
        wrote it, or it is gone) supersedes the job (see :meth:`_supersede`: the handler's scope
        is cancelled) and raises ``ConcurrencyError``; so does any write of a superseded job,
        which no longer calls the store.

        Not a checkpoint by itself: the lock is taken without yielding when it is free, so on a
        store that does not wait (memory) the runtime's final write costs no scheduler round;
        the :class:`TaskContext` methods handlers await add the checkpoint.
        """
        await self._acquire()
        try:
            await self._write(update, chunk)
        finally:
            self._release()
        return self.task

    async def write_final(self, update: TaskUpdate) -> StoreUnavailableError | None:
        """Write the task's terminal ``update`` as :meth:`write` does, finding out what a
        ``StoreUnavailableError`` left: the store may have stored the write all the same (the
        commit went through, then the connection dropped before its answer).

        The task is read back (:meth:`_read_back`); when the store holds this write's events
        under the numbers they were given, the write counts as recorded: the stored task is
        the job's, its events are published (its streams end with them), and the error the
        store answered with is returned for the caller to log.  ``None`` when the store
        answered.  The error propagates when the store does not hold the write, and
        ``FinalStateUnknown`` when it could not be read back.
        """
        await self._acquire()
        try:
            return await self._write(update, None)
        finally:
            self._release()

    async def resume(self, update: TaskUpdate, incoming: Incoming) -> bool:
        """Write ``update`` (the follow-up message taking the task back to WORKING) and hand
        ``incoming`` to the handler waiting in ``ctx.ask``; False, with nothing written, when the
        task no longer waits for input.  Checked under the write lock: of two follow-ups racing
        for one question, exactly one resumes the task.  A write in doubt is read back first
        (:meth:`_settle_doubt`, which may raise ``StoreUnavailableError``): a ``ctx.ask`` the
        store holds after all is waiting for this message."""
        await self._acquire()
        try:
            await self._settle_doubt()
            if not self.waiting_for_input:
                return False
            await self._write(update, None)
            self.deliver(incoming)
        finally:
            self._release()
        return True

    async def keep_lease(self) -> None:
        """A lease tick for this job alone: freshen the stored task's write time
        (``touch_task``), so no replica takes it for a crashed one's, if it is still at the
        version this job last wrote; a task waiting for input is only checked (nobody recovers
        it).  A task that moved on without this job stops it (:meth:`_supersede`).  Under the
        write lock, so the job's own writes never look like another replica's.

        A tick touches the tasks of the jobs no write holds together instead
        (:meth:`hold_for_touch`); it comes here for a job whose write was under way, and to
        look again at a task the batch did not touch.  A write in doubt is read back first
        (:meth:`_settle_doubt`), which may raise ``StoreUnavailableError``."""
        await self._acquire()
        try:
            if self.superseded or self.done.is_set():
                return  # stopped already, or ended here meanwhile
            await self._settle_doubt()
            if self.waiting_for_input:
                kept = await self._store.task_version(self.scope, self.id) == self.version
            else:
                kept = await self._store.touch_task(
                    self.scope, self.id, expected_version=self.version
                )
            if not kept:
                await self._supersede()
        finally:
            self._release()

    def hold_for_touch(self) -> TaskAtVersion | None:
        """Take the write lock, without waiting, for a lease touch made together with other
        jobs' (``TaskStore.touch_tasks``): the task at the version this job last wrote.
        ``None``, the lock not taken, when a write holds it, the job stopped or a write of
        its is in doubt (the version it knows may be behind the store's): then
        :meth:`keep_lease` touches alone, after that write or the read back, or finds out.
        Held until :meth:`release_after_touch` (from the same trio task), so the job's next
        write comes after the touch and after the store has noted it (which keeps the SQL
        stores' one-statement writes of a running task going)."""
        if (
            self.superseded
            or self.done.is_set()
            or self._lock.locked()
            or self._in_doubt is not None
        ):
            return None
        self._lock.acquire_nowait()
        return TaskAtVersion(self.scope, self.id, self.version)

    def release_after_touch(self) -> None:
        """The touch :meth:`hold_for_touch` held the write lock for is over."""
        self._release()

    async def _supersede(self) -> None:
        """The task moved on without this job (another replica cancelled, re-ran or resumed
        it, or it is gone): read what the store has, publish the events it logged after this
        job's last one (as far as they follow on: a cancel's end with CANCELED), take the
        stored task as this job's, end the log handing the task over (its streams go on from
        the store), cancel the handler's scope and tell the runtime.  From then on the job
        writes nothing.

        The one way a job stops for a task it lost, whether a lease tick or a refused write
        found out; called under the write lock.  If reading the store fails (unavailable,
        cancelled), nothing changes and that exception propagates: the next tick or write
        finds the task moved on again.  A task deleted between its two reads counts as gone.
        """
        stored = await self._store.load_task(self.scope, self.id)
        events: tuple[SequencedEvent, ...] = ()
        if stored is not None:
            try:
                events = await self._store.load_events(
                    self.scope, self.id, after_seq=self.log.last_seq
                )
            except TaskNotFoundError:  # deleted between the two reads: gone
                stored = None
        self.superseded = True
        if not self.log.closed:
            for seq, event in events:
                if seq != self.log.last_seq + 1:
                    break
                self.log.publish(event, seq=seq)
            self.log.close(handed_over=True)
        if stored is not None:
            self.task = stored.task
        self.cancel_scope.cancel()
        self._on_superseded(self)

    def interrupt(self) -> None:
        """Cancel the handler (a CancelTask, a drain), unless its final write is under way:
        that is not cut short (``finalizing``)."""
        if not self.finalizing:
            self.cancel_scope.cancel()

    async def _acquire(self) -> None:
        try:
            self._lock.acquire_nowait()
        except trio.WouldBlock:
            await self._lock.acquire()

    def _release(self) -> None:
        self._lock.release()
        if self._changed:  # (nobody waits on most writes: an empty lot's unpark costs more)
            self._changed.unpark_all()

    async def _write(
        self, update: TaskUpdate, chunk: tuple[bool, bool] | None
    ) -> StoreUnavailableError | None:
        """The write itself, under the lock; a write the store stored but answered with an
        error returns that error (see :meth:`write` and :meth:`write_final`)."""
        if self.superseded:
            raise _moved_on(self.id)
        check_update(update)
        # taken as it is now, as checked (its events are kept): the handler's dicts stay its own
        update = detached_update(update)
        await self._settle_doubt()
        if update.state is not None and update.timestamp is None:
            update = attrs.evolve(update, timestamp=m.utcnow())
        events = self._events(update, chunk)
        lost = None
        try:
            stored = await self._store.update_task(
                self.scope, self.id, update, expected_version=self.version, events=events
            )
        except (ConcurrencyError, TaskNotFoundError) as exc:  # written elsewhere, or gone
            await self._supersede()
            raise _moved_on(self.id) from exc
        except StoreUnavailableError as exc:
            final = update.state is not None and m.is_terminal(update.state)
            stored, lost = await self._read_back(events, exc, final=final), exc
            if not final:
                logger.warning(
                    "task %s: write stored, though the store's answer was lost (%s);"
                    " the task was read back",
                    self.id,
                    exc,
                )
        self._adopt(stored, events)
        return lost

    def _adopt(self, stored: StoredTask, events: list[SequencedEvent]) -> None:
        """``stored`` is the task after this job's write of ``events``: publish them."""
        self.task, self.version = stored.task, stored.version
        for seq, event in events:
            self.log.publish(event, seq=seq)
        if m.is_terminal(self.state):
            self.log.close()
        elif self.waiting_for_input:
            self._on_waiting.unpark_all()  # a drain waits only for jobs that are not waiting

    async def _read_back(
        self, events: list[SequencedEvent], lost: StoreUnavailableError, *, final: bool
    ) -> StoredTask:
        """The stored task, if the store holds ``events`` (a write it answered with ``lost``)
        under their numbers (:func:`find_write`); else ``lost`` is raised again.

        When the store cannot be read back, a ``final`` write raises ``FinalStateUnknown``;
        another raises ``lost`` and leaves the write in doubt for the next one to settle, as
        does a read-back cancelled before the store answered.
        """
        self._in_doubt = events  # until the store says whether it holds them
        try:
            stored = await find_write(
                self._store, self.scope, self.id, events, after_seq=self.log.last_seq
            )
        except StoreUnavailableError:
            if final:
                raise FinalStateUnknown(
                    f"the store could not be read back ({READ_BACK_TRIES} tries): {lost}"
                ) from lost
            stored = None  # raised as not stored, but in doubt
        else:
            self._in_doubt = None
        if stored is None:
            raise lost
        return stored

    async def _settle_doubt(self) -> None:
        """Find out whether the store holds the write in doubt (see :meth:`write`): if it
        does, the write counts as done; if not, as not made.  ``StoreUnavailableError``,
        the write still in doubt, while the store cannot be read."""
        if self._in_doubt is None:
            return
        try:
            stored = await find_write(
                self._store, self.scope, self.id, self._in_doubt, after_seq=self.log.last_seq
            )
        except StoreUnavailableError as exc:
            raise StoreUnavailableError(
                f"not written, as the store could not be read back ({READ_BACK_TRIES} tries)"
                f" after an earlier write it answered with an error: {exc}"
            ) from exc
        events, self._in_doubt = self._in_doubt, None
        if stored is not None:
            logger.warning(
                "task %s: an earlier write was stored, though the store's answer was lost;"
                " the task was read back",
                self.id,
            )
            self._adopt(stored, events)

    def _events(self, update: TaskUpdate, chunk: tuple[bool, bool] | None) -> list[SequencedEvent]:
        """The stream events ``update`` produces, numbered on from the log's last event."""
        return list(enumerate(update_events(self.task, update, chunk), start=self.log.last_seq + 1))

    async def wait_settled(self) -> m.Task:
        """Block until the task is terminal or waiting for input (what a blocking send awaits)."""
        while not (m.is_settled(self.state) or self.done.is_set()):
            await self._changed.park()
        return self.task

    def finish(self) -> None:
        """The handler is over: wake everyone waiting on this job."""
        self.done.set()
        if not self.log.closed:
            self.log.close()
        if self._changed:
            self._changed.unpark_all()

    def deliver(self, incoming: Incoming) -> None:
        """Hand a follow-up message to the handler waiting in ``ctx.ask``."""
        if self._reply is not None:
            raise RuntimeError("a follow-up message is already waiting")
        self._reply = incoming
        self._mail.unpark_all()

    async def next_message(self) -> Incoming:
        """The next follow-up message, with its send's options (waits; cancellation loses
        nothing)."""
        await trio.lowlevel.checkpoint()
        while self._reply is None:
            await self._mail.park()
        reply, self._reply = self._reply, None
        return reply


def _moved_on(task_id: str) -> ConcurrencyError:
    return ConcurrencyError(f"task {task_id} moved on without this job, which writes no more")


def bound_to(task: m.Task, message: m.Message) -> m.Message:
    """``message`` bound to ``task`` (its ids set), as stored in its history."""
    return attrs.evolve(message, task_id=task.id, context_id=task.context_id)


def update_events(
    task: m.Task, update: TaskUpdate, chunk: tuple[bool, bool] | None = None
) -> list[m.StreamEvent]:
    """The stream events an update of ``task`` produces: its artifacts, then its status (built
    from the update's own timestamp, which the caller fixed so it equals the stored status).
    ``chunk`` is (append, last_chunk) for a single streamed artifact write."""
    append, last = chunk or (False, True)
    events: list[m.StreamEvent] = [
        m.TaskArtifactUpdateEvent(
            task_id=task.id,
            context_id=task.context_id,
            artifact=write.artifact,
            append=append,
            last_chunk=last,
        )
        for write in update.artifacts
    ]
    if update.state is not None:
        status = m.TaskStatus(update.state, update.status_message, update.timestamp)
        events.append(
            m.TaskStatusUpdateEvent(task_id=task.id, context_id=task.context_id, status=status)
        )
    return events
