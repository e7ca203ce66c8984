"""The task runtime: one nursery that owns every running handler, each in its own cancel scope.

Requests hand jobs to this nursery and return (``returnImmediately``), wait for the task to settle
(blocking send) or follow its event log (streams); a stream of a task no job runs here follows
the stored log instead, polling it in the stream's own task (``StoreFollower``; the streams of
one task share its polls), and so does a stream of a job here superseded by another replica,
from its last event on, and a blocking send waiting for such a job's task, with the task's
streams.  A request's cancellation (a client gone) never reaches a job; ``cancel`` does,
through the job's own scope, and the handler's cleanup runs.

Ownership::

    TaskRuntime.run()                    the runtime's lifetime (app serving / serve())
    └── nursery
        ├── watch_for_stalls()               what holds the event loop (``stall_warning``)
        ├── job A: CancelScope ── handler(ctx) [── poll_job(handle) for parked work]
        └── job B: CancelScope ── handler(ctx)
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Set
from datetime import datetime, timedelta
from typing import Any, Final

import attrs
import trio

from .. import model as m
from .._throttle import ThrottledLog
from ..errors import (
    FIELD,
    A2AError,
    AgentMisuseError,
    ConcurrencyError,
    ContextMismatchError,
    InternalError,
    InvalidParamsError,
    InvalidTransitionError,
    Phrase,
    StoreDamagedError,
    StoreError,
    StoreUnavailableError,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskTerminalStateError,
    UnsupportedOperationError,
)
from ..store import (
    DEFAULT_PAGE_SIZE,
    ArtifactWrite,
    CallerScope,
    ScopedTask,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
    TaskUpdate,
    apply_update,
    check_history_length,
    check_query,
    trim_task,
)
from ._agent import Agent, Skill
from ._content import check_content
from ._context import TaskContext
from ._eventlog import EventLog, EventLogLimits, LogEntry, ReplayGap, Subscription
from ._follow import FollowedTask, StoreFollower, stored_snapshot
from ._job import FinalStateUnknown, Incoming, Job, bound_to, update_events
from ._lease import keep_leases
from ._outcome import (
    INTERNAL_FAILURE,
    TaskFailed,
    TaskRejected,
    agent_message,
    nothing_to_await,
    unusable_result,
    value_to_artifacts,
    value_to_parts,
)
from ._parked import DEFAULT_POLL_INTERVAL, JobCanceled, is_job_handle, poll_job
from ._stalls import job_task_name, watch_for_stalls
from ._stream import TaskStream, ends_stream

logger = logging.getLogger("a2a_trio.runtime")

STORE_CONFLICTS = (ConcurrencyError, TaskTerminalStateError, InvalidTransitionError)
"""Store refusals meaning the task changed since it was read (an outage is not one of them)."""
LEFT_TO_OTHERS = (*STORE_CONFLICTS, TaskNotFoundError)
"""What a recovery meets for a task someone else dealt with after it was listed: it was
settled, re-run, or deleted (a user's own ``delete_task``)."""
RECOVERY_RETRY = 5.0
"""Seconds between attempts when the store is unavailable for the recovery at start."""
DEFAULT_FOLLOW_INTERVAL = 0.5
"""Seconds between the looks at the store for a task streams follow (``follow_interval``)."""
DEFAULT_STALL_WARNING = 1.0
"""Seconds without anything else running that are worth a warning (``stall_warning``)."""

SHUTDOWN_MESSAGE = "The server shut down before this task finished; please send it again."
RESTART_MESSAGE = "The server restarted before this task finished; please send it again."
CANCELED_MESSAGE = "The task was canceled."
SHUTTING_DOWN = "The server is shutting down; try again shortly"
STORE_UNAVAILABLE_MESSAGE = (
    "The task store was unavailable while this task ran; please send it again."
)
DEFAULT_SEND: Final = m.SendMessageConfiguration()
"""The options of a send that gives none."""
CANCEL_ATTEMPTS = 20
"""Reads and conditional writes a cancel of a task running on another replica makes before it
gives up: a write in between (the handler's, until the cancel fences it out; another
replica's) makes the cancel read the task again."""


type OnStart = Callable[[str, int], Awaitable[None]]
"""What a send calls once its task's job has started: ``(task_id, after)``, ``after`` being
the task's last event before the message's own (0 for a new task)."""
type OnRecovered = Callable[[Set[tuple[CallerScope, str]]], None]
"""What a recovery pass calls with the tasks it re-ran or settled (``TaskRuntime.on_recovered``)."""


@attrs.frozen
class RuntimeConfig:
    """Limits and timings of the task runtime."""

    event_log: EventLogLimits = attrs.field(factory=EventLogLimits)
    poll_interval: float = DEFAULT_POLL_INTERVAL
    finished_logs: int = 0
    """How many finished tasks keep their in-memory event log for resubscribers (oldest
    dropped first; only tasks whose job recorded their terminal state).  None by default: a
    resume after the end replays the store, which has the same events, while each kept log
    holds its task's events (request bodies included) in memory; raise it to save those store
    reads on a store that is slow to read."""
    finalize_timeout: float = 5.0
    """How long a cancelled or shut-down job may take to record its final state; also how long
    a CancelTask waits for the cancelled handler to return (its ``finally`` blocks) before it
    answers with the task as it stands, and logs that the handler has not returned."""
    recover_unfinished: bool = True
    """At start, re-run tasks of resumable skills and fail other tasks left running by a
    previous process."""
    recovery_lease: float | None = attrs.field(default=None)
    """For several replicas sharing one store: seconds after which a running task that no
    replica has written is taken as left by a crashed one.  Each replica then touches its
    running tasks every third of the lease and recovers only such tasks, as it runs, so no
    replica takes a live peer's task; at the same pace it stops, without writing, its jobs
    whose task another replica cancelled, re-ran or resumed (sooner when such a job writes:
    the store refuses the write).  ``None`` (one server): every unfinished task found at
    start is recovered at once."""

    follow_interval: float = attrs.field(default=DEFAULT_FOLLOW_INTERVAL)
    """How often, in seconds, a stream of a task no job runs on this replica (it runs on
    another replica, or waits here to be recovered or for a follow-up message) checks the
    store for the task's new events, which it then delivers with their stored numbers until a
    terminal state, as a stream on the replica running the task would.  Each check is one
    cheap read (``last_event_seq``) per task, shared by all of its streams here, and one read
    of the events when it moved; the events come up to this much later than on the running
    replica."""

    stall_warning: float | None = attrs.field(default=DEFAULT_STALL_WARNING)
    """Seconds the event loop may run nothing else (a skill calling blocking code, or more
    work at once than the process gets through) before a warning says so; the steps that hold
    it that long are then named, with their skill and task, for a minute.  ``None``: not
    watched."""

    @recovery_lease.validator
    def _check_lease(self, _attribute: object, value: float | None) -> None:
        if value is not None and not (0 < value < float("inf")):
            raise ValueError(f"recovery_lease must be a positive number of seconds, not {value}")

    @follow_interval.validator
    def _check_follow_interval(self, _attribute: object, value: float) -> None:
        if not (0 < value < float("inf")):
            raise ValueError(f"follow_interval must be a positive number of seconds, not {value}")

    @stall_warning.validator
    def _check_stall_warning(self, _attribute: object, value: float | None) -> None:
        if value is not None and not (0 < value < float("inf")):
            raise ValueError(f"stall_warning must be a positive number of seconds, not {value}")


@attrs.frozen
class RuntimeStatistics:
    """What :meth:`TaskRuntime.statistics` returns: this replica's load at one moment."""

    running_jobs: int
    """Jobs here: handlers running, or waiting for input."""
    stream_subscribers: int
    """Open streams getting a task's events after their head: those subscribed to a job's
    live log here and those following the task through the store (``store_followers``)."""
    finished_logs: int
    """Finished tasks' event logs kept in memory (``RuntimeConfig.finished_logs``)."""
    store_followers: int
    """Of ``stream_subscribers``, the streams following a task through the store (no job
    runs it here, or its job here was superseded): the streams of one task share its reads,
    one every ``RuntimeConfig.follow_interval``, with the blocking sends waiting for it (not
    counted here)."""


class TaskRuntime:
    """Runs an agent's tasks against a store; see the module docstring for who owns what."""

    def __init__(self, agent: Agent, store: TaskStore, config: RuntimeConfig = RuntimeConfig()):
        self.agent = agent
        self.store = store
        self.config = config
        self._jobs: dict[str, Job] = {}
        self._finished: OrderedDict[str, tuple[CallerScope, EventLog]] = OrderedDict()
        self._followed: dict[tuple[CallerScope, str], FollowedTask] = {}
        self._nursery: trio.Nursery | None = None
        self._accepting = True
        self._admitting = 0
        """Sends past the accepting check that have not started their job (or replied) yet."""
        self._idle = trio.lowlevel.ParkingLot()
        self._recovery_log = ThrottledLog(logger)
        """Recovery's reports of a store it cannot use, which it meets again at every retry."""
        self.on_recovered: OnRecovered | None = None
        """Told, after each recovery pass, which tasks it took over from a stopped process:
        their push notifications go on from here."""

    # --- lifetime -------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Own the job nursery until cancelled; cancelling it cancels every running job."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            if self.config.recover_unfinished and not await self._recover():
                nursery.start_soon(self._recover_until_done)
            if self.config.recovery_lease is not None:
                nursery.start_soon(self._keep_leases, self.config.recovery_lease)
            if self.config.stall_warning is not None:
                nursery.start_soon(watch_for_stalls, self.config.stall_warning)
            task_status.started()
            try:
                await trio.sleep_forever()
            finally:
                self._nursery = None
                self._accepting = False

    async def drain(self, grace: float) -> None:
        """Stop taking new tasks and wait up to ``grace`` seconds for running jobs to end; then
        stop the ones still running as a shutdown does (FAILED; one a CancelTask reached
        first, its handler still cleaning up, ends CANCELED as that cancel says), and wait for
        their final writes, so their streams and blocking senders, still connected, get the
        final state."""
        self._accepting = False
        with trio.move_on_after(grace):  # a send accepted before is running work too
            while self._running_jobs() or self._admitting:
                await self._idle.park()
        # Each final write is bounded by ``finalize_timeout``; a job a recovery started
        # meanwhile (a lease tick) is stopped too.  A handler that does not return is waited
        # for (its final write needs the store), and logged once.
        stuck: set[str] = set()
        while running := self._running_jobs():
            for job in running:
                if not job.cancel_requested:  # a CancelTask came first: it ends CANCELED
                    job.shut_down = True
                job.interrupt()
            unwatched = [job for job in running if job.id not in stuck]
            if not unwatched:
                await self._idle.park()
            elif not await self._wait_stopped(unwatched[0], "the shutdown"):
                stuck.add(unwatched[0].id)

    async def _wait_stopped(self, job: Job, stopper: str) -> bool:
        """Wait up to ``finalize_timeout`` for ``job``, which ``stopper`` cancelled, to end;
        False, with a warning naming its skill, when its handler has not returned by then."""
        with trio.move_on_after(self.config.finalize_timeout):
            await job.done.wait()
            return True
        logger.warning(
            "skill %r has not returned %s s after %s cancelled it on task %s: its cleanup (a"
            " finally block, a shielded scope) still runs, or it caught trio.Cancelled and"
            " works on; let the cancellation through and keep cleanup short",
            job.skill.id,
            self.config.finalize_timeout,
            stopper,
            job.id,
        )
        return False

    def _running_jobs(self) -> list[Job]:
        """The jobs a drain waits for: all but those waiting for input."""
        return [job for job in self._jobs.values() if not job.waiting_for_input]

    def statistics(self) -> RuntimeStatistics:
        live = sum(job.log.subscriber_count for job in self._jobs.values())
        following = sum(task.follower_count for task in self._followed.values())
        return RuntimeStatistics(len(self._jobs), live + following, len(self._finished), following)

    # --- operations -----------------------------------------------------------------------

    async def send(
        self,
        scope: CallerScope,
        request: m.SendMessageRequest,
        *,
        on_start: OnStart | None = None,
    ) -> m.Task | m.Message:
        """SendMessage: the reply message, or the task once settled (or at once when asked).

        ``on_start(task_id, after)`` is awaited once the task's job has started, before any
        wait: ``after`` is the number of the task's last event before this message's."""
        config = request.configuration or DEFAULT_SEND
        started = await self._accept(scope, request, on_start)
        if isinstance(started, m.Message):
            return started
        task = started.task if config.return_immediately else await self._settled(scope, started)
        return trim_task(task, history_length=config.history_length, include_artifacts=True)

    async def _settled(self, scope: CallerScope, job: Job) -> m.Task:
        """The task once terminal or waiting for input, what a blocking send returns.  A job
        superseded meanwhile (another replica re-ran or recovered its task) leaves the task
        running there: it is then followed through the store until it settles there
        (``_settled_elsewhere``)."""
        task = await job.wait_settled()
        if job.superseded and not m.is_settled(task.status.state):
            return await self._settled_elsewhere(scope, task.id)
        return task

    async def _settled_elsewhere(self, scope: CallerScope, task_id: str) -> m.Task:
        """A task no job runs here, once it is terminal or waiting for input: read with its
        last event number, then followed through the store after that number as its streams
        here follow it, sharing their polls (``FollowedTask``: one per ``follow_interval``
        for all of them), until an event settles it; then read again, and followed on should
        it have moved on meanwhile (a follow-up elsewhere).  ``TaskNotFoundError`` once it is
        gone."""
        while True:
            head = await self._stored_head(scope, task_id)
            assert isinstance(head.event, m.Task)
            if m.is_settled(head.event.status.state):
                return head.event
            follower = self._follower(scope, task_id, head.seq, stream=False)
            try:
                with contextlib.suppress(trio.EndOfChannel):  # gone: the next read says so
                    while not ends_stream((await follower.receive()).event, stop_on_interrupt=True):
                        pass  # not settled yet
            finally:
                follower.close()

    async def send_stream(
        self,
        scope: CallerScope,
        request: m.SendMessageRequest,
        *,
        on_start: OnStart | None = None,
    ) -> TaskStream:
        """SendStreamingMessage: the task's events from its start (or from this follow-up);
        ``on_start`` as for :meth:`send`."""
        started = await self._accept(scope, request, on_start)
        if isinstance(started, m.Message):
            return TaskStream([LogEntry(1, started)], None, stop_on_interrupt=True)
        log = started.log
        if not request.message.task_id:  # a new task: everything from its first event
            return self._live_stream(scope, started.id, [], log.subscribe(after=0), stop=True)
        head = LogEntry(log.last_seq, started.task)
        subscription = log.subscribe(after=log.last_seq)
        return self._live_stream(scope, started.id, [head], subscription, stop=True)

    async def get(self, scope: CallerScope, task_id: str, history_length: int | None) -> m.Task:
        """GetTask."""
        _check_history_length(history_length, under="$.params")
        return (await self._load(scope, task_id, history_length=history_length)).task

    async def list(self, scope: CallerScope, request: m.ListTasksRequest) -> TaskPage:
        """ListTasks, with the page size bounds of A2A v1.0 §3.1.4 (``check_query``'s)."""
        size = DEFAULT_PAGE_SIZE if request.page_size is None else request.page_size
        query = TaskQuery(
            context_id=request.context_id,
            status=request.status,
            page_size=size,
            page_token=request.page_token,
            history_length=request.history_length,
            status_timestamp_after=request.status_timestamp_after,
            include_artifacts=bool(request.include_artifacts),
        )
        try:
            check_query(query)  # here, not only in the store: a custom store may not check
            return await self.store.list_tasks(scope, query)
        except InvalidParamsError as exc:  # the store's paths are relative to the query
            raise exc.under("$.params") from None

    async def cancel(self, scope: CallerScope, task_id: str) -> m.Task:
        """CancelTask: cancels the handler's scope and returns the task once it is CANCELED.

        A handler that has not returned ``finalize_timeout`` seconds later (its cleanup is
        stuck in a shielded scope, or it caught the cancellation and works on) is logged, and
        the task is returned as it stands: it ends CANCELED when the handler returns."""
        job = self._live(scope, task_id)
        if job is not None and not m.is_terminal(job.state):
            job.cancel_requested = True
            job.interrupt()
            if not await self._wait_stopped(job, "a CancelTask"):
                return job.task
            if job.state is m.TaskState.CANCELED:
                return job.task
            if not job.superseded:
                raise TaskNotCancelableError(
                    Phrase.of(f"Task {task_id} ended ", job.state, " first")
                )
            # Its task had moved on to another replica: cancel it there, through the store.
        for attempt in range(CANCEL_ATTEMPTS):
            stored = await self._load(scope, task_id)
            if attempt and not m.is_terminal(stored.task.status.state):
                # Refused: its handler (on another replica) wrote between the read and the
                # write, as a streaming handler does whenever it writes faster than this
                # round trip.  An empty write moves the task's version on, so that handler's
                # next write is refused and its job stops (``Job._supersede``) without writing:
                # then only another cancel or re-run can come between.
                stored = await self.store.update_task(scope, task_id, TaskUpdate())
            if m.is_terminal(stored.task.status.state):
                raise TaskNotCancelableError(
                    Phrase.of(f"Task {task_id} is already ", stored.task.status.state)
                )
            try:
                canceled = await self._settle_stored(
                    scope, stored, m.TaskState.CANCELED, CANCELED_MESSAGE
                )
            except STORE_CONFLICTS:
                continue  # written meanwhile (by its handler on another replica): read again
            return canceled.task
        raise TaskNotCancelableError(
            f"Task {task_id} changed {CANCEL_ATTEMPTS} times while it was being canceled; try again"
        )

    async def subscribe(
        self, scope: CallerScope, task_id: str, *, last_event_id: int | None = None
    ) -> TaskStream:
        """SubscribeToTask: the current task, then live events until a terminal state.

        With ``last_event_id`` the stream resumes after that event instead (see
        :meth:`_resume`).  A task no job runs here (it runs on another replica, or waits to be
        recovered or for a follow-up message) is followed through the store (``_from_store``).
        """
        if last_event_id is not None:
            return await self._resume(scope, task_id, last_event_id)
        following = self._following(scope, task_id)
        if following is not None:
            return following
        head = await self._stored_head(scope, task_id)
        assert isinstance(head.event, m.Task)
        state = head.event.status.state
        if m.is_terminal(state):
            raise UnsupportedOperationError(
                Phrase.of(
                    f"Task {task_id} is ",
                    state,
                    ": a terminal task has no updates to subscribe to; get the task instead",
                )
            )
        return self._from_store(scope, task_id, [head], head.seq)

    def _following(self, scope: CallerScope, task_id: str) -> TaskStream | None:
        """The task as its job has it, then its live events; ``None`` when no job runs it
        here.  The snapshot is numbered after the last event it includes, so a client resuming
        from it gets what comes next."""
        job = self._live(scope, task_id)
        if job is None or job.log.closed:
            return None
        head = LogEntry(job.log.last_seq, job.task)
        return self._live_stream(scope, task_id, [head], job.log.subscribe(after=job.log.last_seq))

    def _live_stream(
        self,
        scope: CallerScope,
        task_id: str,
        head: Iterable[LogEntry],
        subscription: Subscription,
        *,
        stop: bool = False,
    ) -> TaskStream:
        """``head``, then a job's live events here; if the job is superseded before the
        stream ends (its log hands the task over: it goes on at another replica), the events
        the store logs after the last one delivered (``StoreFollower``), as a resume here
        with that ``Last-Event-ID`` would have them.  ``stop``: the stream ends when the task
        needs input (SendStreamingMessage)."""
        follow = functools.partial(self._follower, scope, task_id)
        return TaskStream(head, subscription, stop_on_interrupt=stop, follow=follow)

    def _follower(
        self, scope: CallerScope, task_id: str, after: int, *, stream: bool = True
    ) -> StoreFollower:
        """A source of the events the store logs for the task after event ``after``, sharing
        the task's polls with its other followers here; a ``stream``'s is counted in
        ``statistics()`` while open (a blocking send's is not)."""
        key = (scope, task_id)
        followed = self._followed.get(key)
        if followed is None:
            followed = self._followed[key] = FollowedTask(
                self.store,
                scope,
                task_id,
                after=after,
                interval=self.config.follow_interval,
                on_unfollowed=functools.partial(self._followed.pop, key),
            )
        return StoreFollower(followed, after=after, stream=stream)

    async def _stored_head(self, scope: CallerScope, task_id: str) -> LogEntry:
        """A task no job runs here (waiting after a restart, finished, or running on another
        replica) as stored, numbered after its stored log (see ``stored_snapshot``)."""
        head = await stored_snapshot(self.store, scope, task_id)
        if head is None:
            raise _not_found(task_id)
        return head

    def _from_store(
        self, scope: CallerScope, task_id: str, head: Iterable[LogEntry], after: int
    ) -> TaskStream:
        """``head``, then the events the store logs for the task after event ``after``
        (``StoreFollower``), until a terminal state: the stream of a task no job runs here."""
        return TaskStream(head, self._follower(scope, task_id, after), stop_on_interrupt=False)

    async def _resume(self, scope: CallerScope, task_id: str, after: int) -> TaskStream:
        """The events after ``after``, replayed then live, under the numbers the live stream
        had: from the in-memory log while it holds them, else from the store, the live log
        going on where the stored part ends (it is subscribed before the store is read and
        skips what the store returned, so an event written meanwhile is neither lost nor
        repeated).

        Where neither holds every event after ``after`` any more (the store keeps the newest
        ``max_events_per_task``), the stream starts over from a snapshot of the task instead,
        so a client never gets an artifact chunk without its start.  An id past the live
        log's last event may have been sent by another replica, which follows the store: the
        job here stored it and has yet to publish it (``_resume_ahead``).  An id past the
        stored log's last event was never sent: ``InvalidParamsError``.

        With no job for the task here, what the store logs after the replay (or the snapshot,
        or ``after`` itself when the client has every event) follows until a terminal state,
        as on the replica running it; only a finished task's current id ends the stream at
        once.
        """
        log = self._log(scope, task_id)
        if log is not None and log.closed:
            await self._load(scope, task_id)  # a kept log outlives a purge or delete
        if log is not None:
            if after > log.last_seq:
                return await self._resume_ahead(scope, task_id, log, after)
            _check_sent(after, log.last_seq, task_id)
            with contextlib.suppress(ReplayGap):
                return self._live_stream(scope, task_id, [], log.subscribe(after=after))
        live = None if log is None else log.subscribe(after=log.last_seq)
        try:
            stored = await self.store.load_events(scope, task_id, after_seq=after)
        except BaseException:
            if live is not None:
                live.close()
            raise
        if stored and stored[0][0] == after + 1:
            replay = [LogEntry(seq, event) for seq, event in stored]
            if live is None:  # no job here: the store goes on where the replay ends
                return self._from_store(scope, task_id, replay, stored[-1][0])
            live.skip_through(stored[-1][0])
            return self._live_stream(scope, task_id, replay, live)
        if live is not None:
            live.close()
        if not stored and log is None:  # nothing after it here: up to date, or never sent
            current = await self._load(scope, task_id)  # read first: a terminal task stays
            last_seq = await self.store.last_event_seq(scope, task_id)
            _check_sent(after, last_seq, task_id)
            if after == last_seq and m.is_terminal(current.task.status.state):
                return TaskStream([], None, stop_on_interrupt=False)
            return self._from_store(scope, task_id, [], after)  # what comes next, if anything
        following = self._following(scope, task_id)
        if following is not None:
            return following
        head = await self._stored_head(scope, task_id)
        return self._from_store(scope, task_id, [head], head.seq)

    async def _resume_ahead(
        self, scope: CallerScope, task_id: str, log: EventLog, after: int
    ) -> TaskStream:
        """A resume from an event past ``log``'s last one, which the store may hold already:
        the job here stores each event before it publishes it, and meanwhile another replica,
        following the store, can send it to a client who then resumes here.  The stream then
        goes on with the live events after ``after``: it subscribes to the log now and skips
        the events up to ``after`` when they are published (or, should the job be superseded
        first, follows the store from ``after``), so it neither waits here nor repeats one.

        Raises ``InvalidParamsError`` when the store has no such event either: never sent.
        """
        _check_sent(after, await self.store.last_event_seq(scope, task_id), task_id)
        if after <= log.last_seq:  # published while the store was read: the usual resume
            return await self._resume(scope, task_id, after)
        live = log.subscribe(after=log.last_seq)
        live.skip_through(after)
        return self._live_stream(scope, task_id, [], live)

    # --- starting and continuing tasks ----------------------------------------------------

    async def _accept(
        self, scope: CallerScope, request: m.SendMessageRequest, on_start: OnStart | None
    ) -> Job | m.Message:
        message = request.message
        _check_user_message(message)
        if request.configuration is not None:
            _check_history_length(
                request.configuration.history_length, under="$.params.configuration"
            )
        if not self._accepting or self._nursery is None:
            raise UnsupportedOperationError(SHUTTING_DOWN)
        self._admitting += 1
        try:
            started = await self._admit(scope, request)
            if on_start is not None and isinstance(started, Job):
                after = started.log.last_seq if request.message.task_id else 0
                await on_start(started.id, after)
            return started
        finally:
            self._admitting -= 1
            if not self._admitting and self._idle:  # (only a drain parks there)
                self._idle.unpark_all()

    async def _admit(self, scope: CallerScope, request: m.SendMessageRequest) -> Job | m.Message:
        """A send the runtime took: its task created (or continued) and its job started, or
        the message-only skill's reply."""
        message = request.message
        modes = request.configuration.accepted_output_modes if request.configuration else ()
        if message.task_id:
            return await self._continue(scope, Incoming(message, modes))
        skill = self.agent.resolve(message, request.metadata)
        self.agent.check_media_types(skill, message)
        if skill.message_only:
            return await self._reply(scope, skill, Incoming(message, modes))
        task = m.new_task(message)
        try:
            stored = await self.store.create_task(scope, task, events=[(1, task)])
        except InvalidParamsError as exc:  # the store names the task's keys, not the request's
            sent = {"$.contextId": "$.params.message.contextId", "$.tenant": "$.params.tenant"}
            raise exc.at(sent.get(exc.path, exc.path)) from None
        started = Incoming(stored.task.history[-1], modes)
        return self._start(scope, stored.task, stored.version, skill, started)

    async def _continue(self, scope: CallerScope, incoming: Incoming) -> Job:
        message = incoming.message
        task_id = message.task_id
        stored = await self._load(scope, task_id)
        task = stored.task
        if message.context_id and message.context_id != task.context_id:
            raise ContextMismatchError(
                Phrase.of(
                    FIELD,
                    f" {message.context_id!r} does not match task {task_id}'s context "
                    f"{task.context_id!r}",
                ),
                path="$.params.message.contextId",
            )
        if m.is_terminal(task.status.state):
            raise UnsupportedOperationError(
                Phrase.of(
                    f"Task {task_id} is ",
                    task.status.state,
                    " and accepts no more messages; start a new task (same contextId to keep"
                    " the conversation)",
                )
            )
        bound = attrs.evolve(incoming, message=bound_to(task, message))
        try:
            return await self._deliver(scope, stored, bound)
        except STORE_CONFLICTS:  # the stored task moved on since it was read
            raise UnsupportedOperationError(
                f"Task {task_id} changed while this message was accepted (another message or "
                "a cancel came first); get the task to see where it is"
            ) from None

    async def _deliver(self, scope: CallerScope, stored: StoredTask, incoming: Incoming) -> Job:
        """Hand the follow-up message (bound to the task) to the task's live handler, or re-run
        its skill when it waits with no live handler (e.g. after a restart).  Raises
        ``StoreError`` when the task changed since ``stored`` was read."""
        message = incoming.message
        task_id = message.task_id
        job = self._jobs.get(task_id)
        if job is not None:
            self.agent.check_media_types(job.skill, message)
            if not await job.resume(
                TaskUpdate(state=m.TaskState.WORKING, messages=(message,)), incoming
            ):
                raise _not_waiting(task_id, job.state)
            return job
        task = stored.task
        if not m.is_interrupted(task.status.state):  # running on another replica
            raise _not_waiting(task_id, task.status.state)
        # The stored history now ends with this message; the skill runs again on it.
        skill = self.agent.resolve(task.history[0] if task.history else message)
        self.agent.check_media_types(skill, message)
        update = TaskUpdate(state=m.TaskState.WORKING, messages=(message,), timestamp=m.utcnow())
        return await self._rerun(scope, stored, skill, incoming, update)

    async def _rerun(
        self,
        scope: CallerScope,
        stored: StoredTask,
        skill: Skill,
        incoming: Incoming,
        update: TaskUpdate | None = None,
    ) -> Job:
        """Start ``skill`` again on a stored task, after ``update`` (a follow-up message) if
        given.  Its log goes on after the stored events with the task's snapshot, stored like
        every event a job publishes: in the same write as the update (whose timestamp is fixed
        beforehand, so the snapshot is exactly the stored task).  Without a follow-up the write
        is empty, but it is a write: the new version tells a replica that still runs the task
        (e.g. back from an outage) that it is no longer its own."""
        task = stored.task
        last_seq = await self.store.last_event_seq(scope, task.id)
        if update is None:
            update = TaskUpdate()
        snapshot = apply_update(task, update, now=update.timestamp or m.utcnow())
        stored = await self.store.update_task(
            scope,
            task.id,
            update,
            expected_version=stored.version,
            events=[(last_seq + 1, snapshot)],
        )
        return self._start(scope, stored.task, stored.version, skill, incoming, last_seq=last_seq)

    async def _keep_leases(self, lease: float) -> None:
        """Every third of ``lease``: freshen this replica's running tasks in the store (a touch,
        which changes no version, so another replica's cancel is not refused for it) and check
        that each job's task, waiting ones included, has not moved on elsewhere
        (:func:`keep_leases`); then recover what crashed replicas left.  The store work gives
        up at the next tick, so one slow write cannot hold back the others past the lease.

        A tick that came over a lease after the one before (this process was stalled:
        paused, swapped out) or whose own writes failed or ran out of time (the store was
        stalled, for the other replicas too; a tick writes even when it runs nothing) recovers
        nothing, and neither does the tick after
        it: the tasks that look left then are as likely a live peer's that could not touch
        them either, and the peers get a tick's time to touch them again.  Skipping only
        delays a recovery."""
        previous = trio.current_time()
        clean = 0  # ticks in a row that were not stalled
        while True:
            await trio.sleep(lease / 3)
            stalled = trio.current_time() - previous > lease
            previous = trio.current_time()
            answered = False
            with trio.move_on_after(lease / 3) as window:
                answered = await keep_leases(self.store, list(self._jobs.values()))
            # Past the deadline: cut short, or a write ended late (it cannot be cancelled).
            stalled = stalled or not answered or trio.current_time() >= window.deadline
            clean = 0 if stalled else clean + 1
            if self.config.recover_unfinished and clean >= 2:
                await self._recover()

    def _superseded(self, job: Job) -> None:
        """``job``'s task moved on without it (its lease tick or a refused write found out,
        see ``Job._supersede``): it leaves this replica's jobs at once, so requests for the
        task go by the store, while its handler's cleanup runs."""
        if self._jobs.get(job.id) is job:
            del self._jobs[job.id]
        logger.info(
            "task %s moved on without its job here (now %s); the job stops",
            job.id,
            job.state.name,
        )

    async def _recover_until_done(self) -> None:
        """The recovery at start found the store unavailable: try again until it is done, so
        tasks a crash left running do not stay WORKING until the next restart."""
        while True:
            await trio.sleep(RECOVERY_RETRY)
            if await self._recover():
                return

    async def _recover(self) -> bool:
        """Deal with tasks a previous process left running (see ``recover_unfinished``); with a
        ``recovery_lease``, only those nobody has written for longer than the lease.  False,
        with a warning, when the store is unavailable (the caller tries again later).  A damaged
        store is an error saying what to do, and True: no later try can mend it."""
        lease = self.config.recovery_lease
        cutoff = None if lease is None else m.utcnow() - timedelta(seconds=lease)
        recovered: set[tuple[CallerScope, str]] = set()
        done = True
        try:
            await self._recover_each(await self.store.list_unfinished(), cutoff, recovered)
        except StoreDamagedError as exc:
            self._recovery_log.log(
                logging.ERROR, "recovery stopped, the task store is damaged: %s", exc
            )
        except StoreUnavailableError as exc:
            self._recovery_log.log(
                logging.WARNING, "recovery postponed, the task store is unavailable: %s", exc
            )
            done = False
        if recovered and self.on_recovered is not None:
            self.on_recovered(recovered)
        return done

    async def _recover_each(
        self,
        unfinished: Iterable[ScopedTask],
        cutoff: datetime | None,
        recovered: set[tuple[CallerScope, str]],
    ) -> None:
        """Re-run or settle each task of ``unfinished`` no live process runs, adding it to
        ``recovered``.  A task settled, re-run or deleted elsewhere meanwhile is left as it
        is; the store being unavailable or damaged stops the recovery (``_recover`` says
        which, and tries again after an outage)."""
        for item in unfinished:
            task = item.stored.task
            if m.is_interrupted(task.status.state):
                continue  # waits for the client; the next message re-runs the skill
            if task.id in self._jobs or (cutoff is not None and item.stored.updated_at > cutoff):
                continue  # running here, or written lately: a live replica runs it
            users = [msg for msg in task.history if msg.role is m.Role.USER]
            skill = self._skill_for(task)
            # A taken event number: another process is running it meanwhile.
            with contextlib.suppress(*LEFT_TO_OTHERS):
                if skill is not None and skill.resumable and users:
                    # The accepted output modes are not stored: this run sees none.
                    await self._rerun(item.scope, item.stored, skill, Incoming(users[-1]))
                else:
                    await self._settle_stored(
                        item.scope, item.stored, m.TaskState.FAILED, RESTART_MESSAGE
                    )
                recovered.add((item.scope, task.id))

    async def _settle_stored(
        self, scope: CallerScope, stored: StoredTask, state: m.TaskState, text: str
    ) -> StoredTask:
        """Give a task no job runs its final ``state`` and, in the same write, the status event
        numbered after its stored log, so a replay of that log ends with it.

        Raises ``StoreError`` when the task changed since ``stored`` was read.
        """
        task = stored.task
        message = agent_message(task, text)
        update = TaskUpdate(state=state, status_message=message, timestamp=m.utcnow())
        first = await self.store.last_event_seq(scope, task.id) + 1
        events = list(enumerate(update_events(task, update), start=first))
        return await self.store.update_task(
            scope, task.id, update, expected_version=stored.version, events=events
        )

    def _skill_for(self, task: m.Task) -> Skill | None:
        try:
            return self.agent.resolve(task.history[0]) if task.history else None
        except InvalidParamsError:
            return None  # the skill is gone from this agent

    def _start(
        self,
        scope: CallerScope,
        task: m.Task,
        version: int,
        skill: Skill,
        incoming: Incoming,
        *,
        last_seq: int = 0,
    ) -> Job:
        if self._nursery is None:  # stopped while the task was written: the next start
            raise UnsupportedOperationError(SHUTTING_DOWN)  # recovers it (a restart's FAILED)
        job = Job(
            scope=scope,
            task=task,
            version=version,
            skill=skill,
            store=self.store,
            limits=self.config.event_log,
            last_seq=last_seq,
            on_waiting=self._idle,
            on_superseded=self._superseded,
        )
        self._jobs[task.id] = job
        self._nursery.start_soon(
            self._run_job, job, incoming, name=job_task_name(skill.id, task.id)
        )
        return job

    async def _reply(self, scope: CallerScope, skill: Skill, incoming: Incoming) -> m.Message:
        ctx = TaskContext(None, incoming, caller=scope)
        context_id = incoming.message.context_id or m.new_id()
        try:
            called = skill.handler(ctx)
            if not inspect.isawaitable(called):
                raise _reply_failed(skill, nothing_to_await(called))
            value = await called
            try:
                reply = _reply_message(value, context_id)
            except AgentMisuseError:  # no reply can be made of it: say what can
                raise _reply_failed(skill, unusable_result(value, message_only=True)) from None
            check_content([reply])
        except A2AError:
            raise
        except Exception as exc:  # as for tasks: the handler's bug is logged, never leaked
            ended = _chosen_end(exc)
            if ended is not None:  # no task to end: the error carries the handler's text
                raise InternalError(str(ended)) from None
            logger.exception("message-only skill %r failed", skill.id)
            raise InternalError(INTERNAL_FAILURE) from None
        return reply

    # --- running a job --------------------------------------------------------------------

    async def _run_job(self, job: Job, incoming: Incoming) -> None:
        final: TaskUpdate | None = None
        outage: StoreUnavailableError | None = None
        try:
            with job.cancel_scope:
                try:
                    final = await self._execute(job, TaskContext(job, incoming, caller=job.scope))
                except StoreUnavailableError as exc:  # a write the handler let through
                    outage = exc
                    failed = agent_message(job.task, STORE_UNAVAILABLE_MESSAGE)
                    final = TaskUpdate(state=m.TaskState.FAILED, status_message=failed)
                if not (job.cancel_scope.cancel_called or job.superseded):
                    # The usual end, nothing cancelled it: the job's own scope, which only its
                    # deadline cancels from here on (``finalizing``), shields and bounds the
                    # final write, as the scope of its own below does on the other ends (one
                    # cancel scope fewer for every task).
                    job.finalizing = True
                    job.cancel_scope.shield = True
                    job.cancel_scope.deadline = trio.current_time() + self.config.finalize_timeout
                    await self._settle(job, final, outage=outage)
            if final is None and not job.shut_down:  # our scope caught it: CancelTask
                final = TaskUpdate(
                    state=m.TaskState.CANCELED,
                    status_message=agent_message(job.task, CANCELED_MESSAGE),
                )
        finally:
            # The runtime is shutting down (or its drain stopped the job).  A resumable skill's
            # task stays unfinished in the store, so the next start runs it again; the others
            # record FAILED.
            if final is None and not (job.waiting_for_input or job.skill.resumable):
                final = TaskUpdate(
                    state=m.TaskState.FAILED,
                    status_message=agent_message(job.task, SHUTDOWN_MESSAGE),
                )
            if final is not None and not (job.finalizing or job.superseded):  # shielded, bounded
                deadline = trio.current_time() + self.config.finalize_timeout
                with trio.CancelScope(shield=True, deadline=deadline):
                    await self._settle(job, final, outage=outage)
            self._retire(job)

    async def _execute(self, job: Job, ctx: TaskContext) -> TaskUpdate:
        """Run the handler; its outcome as the task's final update."""
        try:
            called = job.skill.handler(ctx)
            if not inspect.isawaitable(called):
                return _failed_with(job, nothing_to_await(called))
            value = await called
            if is_job_handle(value):
                job.parked = True
                value = await poll_job(ctx, value, interval=self.config.poll_interval)
            try:
                return _completion(job.task, value)
            except AgentMisuseError:  # no task can hold it: say what can
                return _failed_with(job, unusable_result(value))
        except JobCanceled as exc:
            return TaskUpdate(
                state=m.TaskState.CANCELED, status_message=agent_message(job.task, exc.message)
            )
        except StoreUnavailableError:  # the store's outage, not the skill's failure: _run_job's
            raise
        except Exception as exc:  # its chosen end, or its bug: a FAILED task, no traceback sent
            outage = _sole(exc, StoreUnavailableError)
            if outage is not None:  # the outage, met in a task of the handler's own nursery
                raise outage from exc
            ended = _chosen_end(exc)
            if ended is not None:
                return _ended_by(job, ended)
            misuse = exc if isinstance(exc, AgentMisuseError) else _sole(exc, AgentMisuseError)
            if misuse is not None:  # a TaskFailed hint would not fit
                logger.exception(
                    "skill %r used a2a_trio wrongly on task %s: %s; its client is told only %r",
                    job.skill.id,
                    job.id,
                    misuse,
                    INTERNAL_FAILURE,
                )
                return _failed_internally(job)
            logger.exception(
                "skill %r failed on task %s; its client is told only %r (to tell it why,"
                " raise TaskFailed('a message for the client'))",
                job.skill.id,
                job.id,
                INTERNAL_FAILURE,
            )
            return _failed_internally(job)

    async def _settle(
        self, job: Job, final: TaskUpdate, *, outage: StoreUnavailableError | None = None
    ) -> None:
        """Record ``final``; ``outage`` (what refused the handler's write) is logged once.

        A write the store answered with ``StoreUnavailableError`` is read back
        (``Job.write_final``), so the log says whether the final state was recorded."""
        try:
            lost = await job.write_final(final)
        except AgentMisuseError as exc:  # the handler's result cannot be stored: it fails
            # No traceback: it would point here, not at the skill.
            logger.error(
                "skill %r returned content no store can hold on task %s: %s; its client is told"
                " only %r",
                job.skill.id,
                job.id,
                exc,
                INTERNAL_FAILURE,
            )
            await self._settle(job, _failed_internally(job))
        except FinalStateUnknown as exc:
            logger.warning("task %s: final state unknown, %s", job.id, exc)
        except StoreUnavailableError as exc:
            logger.warning(
                "task %s: final state not recorded, the store does not hold it: %s", job.id, exc
            )
        except StoreError as exc:
            if not job.superseded:  # superseded: the task went on without it, as it should
                logger.warning("task %s: final state not recorded: %s", job.id, exc)
        else:
            if lost is not None:
                logger.warning(
                    "task %s: final state recorded, though the store's answer was lost (%s);"
                    " the task was read back",
                    job.id,
                    lost,
                )
            if outage is not None:
                logger.warning("task %s failed, the task store was unavailable: %s", job.id, outage)

    def _retire(self, job: Job) -> None:
        """``job`` is over: it leaves the jobs, and its log is kept (``finished_logs``) only if
        the job recorded the task's terminal state, so the log holds every event the store has.
        A final write that raised may have been stored all the same (the commit went through,
        then the connection dropped): a resume reads the store then, never a log without it."""
        job.finish()
        if not job.superseded:  # a superseded job left the jobs already; its log is not the task's
            self._jobs.pop(job.id, None)
            if m.is_terminal(job.state):
                self._finished[job.id] = (job.scope, job.log)
                while len(self._finished) > self.config.finished_logs:
                    self._finished.popitem(last=False)
        if self._idle:
            self._idle.unpark_all()

    # --- lookups --------------------------------------------------------------------------

    async def _load(
        self, scope: CallerScope, task_id: str, *, history_length: int | None = None
    ) -> StoredTask:
        """The stored task, or ``TaskNotFoundError`` when it does not exist in ``scope``."""
        stored = await self.store.load_task(scope, task_id, history_length=history_length)
        if stored is None:
            raise _not_found(task_id)
        return stored

    def has_job(self, scope: CallerScope, task_id: str) -> bool:
        """Whether the task has a job in this runtime: running, parked or waiting for input."""
        return self._live(scope, task_id) is not None

    def is_parked(self, scope: CallerScope, task_id: str) -> bool:
        """Whether the task is running and parked on a long-running ``JobHandle``."""
        job = self._live(scope, task_id)
        return job is not None and job.parked

    def _live(self, scope: CallerScope, task_id: str) -> Job | None:
        job = self._jobs.get(task_id)
        return job if job is not None and job.scope == scope else None

    def _log(self, scope: CallerScope, task_id: str) -> EventLog | None:
        job = self._live(scope, task_id)
        if job is not None:
            return job.log
        kept = self._finished.get(task_id)
        return kept[1] if kept is not None and kept[0] == scope else None


def _completion(task: m.Task, value: Any) -> TaskUpdate:
    if isinstance(value, m.Message):
        reply = bound_to(task, value)
        return TaskUpdate(state=m.TaskState.COMPLETED, status_message=reply, messages=(reply,))
    writes = tuple(map(ArtifactWrite, value_to_artifacts(value)))
    return TaskUpdate(state=m.TaskState.COMPLETED, artifacts=writes)


def _failed_internally(job: Job) -> TaskUpdate:
    """A FAILED end saying only that the agent failed: a skill's bug, whose details stay in
    the server's log."""
    failed = agent_message(job.task, INTERNAL_FAILURE)
    return TaskUpdate(state=m.TaskState.FAILED, status_message=failed)


def _failed_because(reason: str) -> str:
    """What a client is told of a skill that returned what no task or reply can hold."""
    return f"{INTERNAL_FAILURE.removesuffix('.')}: {reason}."


def _failed_with(job: Job, reason: str) -> TaskUpdate:
    """A FAILED end for a skill that gave nothing to await or a result no task can hold,
    saying ``reason`` to its client and in one log line (no traceback: it would point into
    the runtime, not at the skill)."""
    logger.error("skill %r failed on task %s: %s", job.skill.id, job.id, reason)
    failed = agent_message(job.task, _failed_because(reason))
    return TaskUpdate(state=m.TaskState.FAILED, status_message=failed)


def _reply_failed(skill: Skill, reason: str) -> InternalError:
    """The error for a message-only skill that gave nothing to await or a result that makes
    no reply, logged likewise."""
    logger.error("message-only skill %r failed: %s", skill.id, reason)
    return InternalError(_failed_because(reason))


def _sole[E: Exception](exc: Exception, kind: type[E]) -> E | None:
    """The first exception of ``kind`` an exception group holds when those are all it holds
    (a handler's nursery whose tasks raised them; trio wraps even one), else ``None``."""
    if not isinstance(exc, ExceptionGroup):
        return None
    matched, others = exc.split(kind)
    if matched is None or others is not None:
        return None
    first: BaseException = matched
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    assert isinstance(first, kind)
    return first


def _chosen_end(exc: Exception) -> TaskRejected | TaskFailed | None:
    """The end a handler chose by raising ``exc``, also from a task of its own nursery (trio
    wraps that in an exception group): a ``TaskRejected`` or ``TaskFailed``, else ``None``."""
    if isinstance(exc, TaskRejected | TaskFailed):
        return exc
    return _sole(exc, TaskRejected) or _sole(exc, TaskFailed)


def _ended_by(job: Job, exc: TaskRejected | TaskFailed) -> TaskUpdate:
    """The end a handler chose by raising ``exc``: REJECTED or FAILED, with its text."""
    if isinstance(exc, TaskRejected):
        return TaskUpdate(
            state=m.TaskState.REJECTED, status_message=agent_message(job.task, exc.reason)
        )
    return TaskUpdate(state=m.TaskState.FAILED, status_message=agent_message(job.task, exc.message))


def _reply_message(value: Any, context_id: str) -> m.Message:
    """A message-only skill's return value as its reply."""
    if isinstance(value, m.Message):
        return attrs.evolve(value, context_id=value.context_id or context_id)
    if value is None:
        raise AgentMisuseError("a message_only skill must return a reply")
    parts = value_to_parts(value)
    return m.Message(message_id=m.new_id(), role=m.Role.AGENT, parts=parts, context_id=context_id)


def _check_user_message(message: m.Message) -> None:
    if message.role is not m.Role.USER:
        raise InvalidParamsError(
            Phrase.of("a client's message must have role ", m.Role.USER),
            path="$.params.message.role",
        )
    if not message.parts:
        raise InvalidParamsError("a message needs at least one part", path="$.params.message.parts")
    if not message.message_id:  # REQUIRED (A2A v1.0 §5.7): an empty string is not set
        raise InvalidParamsError(
            Phrase.of(FIELD, " must not be empty"), path="$.params.message.messageId"
        )


def _check_history_length(history_length: int | None, *, under: str) -> None:
    """The store's check of ``historyLength``, its path rooted where the request carries it."""
    try:
        check_history_length(history_length)
    except InvalidParamsError as exc:
        raise exc.under(under) from None


def _check_sent(after: int, last_seq: int, task_id: str) -> None:
    if not 0 <= after <= last_seq:
        raise InvalidParamsError(
            f"Last-Event-ID {after} was never sent for task {task_id} (its events are numbered"
            f" 1 to {last_seq}); resume from an id the stream carried, or subscribe without one"
        )


def _not_waiting(task_id: str, state: m.TaskState) -> UnsupportedOperationError:
    return UnsupportedOperationError(
        Phrase.of(
            f"Task {task_id} is ",
            state,
            ", not waiting for input; wait for it to ask (",
            m.TaskState.INPUT_REQUIRED,
            ") or cancel it",
        )
    )


def _not_found(task_id: str) -> TaskNotFoundError:
    return TaskNotFoundError(f"Task {task_id[:200]} not found")
