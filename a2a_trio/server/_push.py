"""Push notifications: each event of a task POSTed to the task's webhooks (A2A v1.0 §4.3).

A task with push configs gets one *watcher*, a trio task in the sender's nursery, which reads
the task's events as a SubscribeToTask stream does (from the runtime, so a task that moves to
another replica is followed through the store) and POSTs each one, as a v1.0
``StreamResponse``, to every webhook the task has when the event comes.  The configs are read
from the store at each event, so one created or deleted meanwhile, on any replica, counts from
the next event.  A task's events go out one at a time, in order; its webhooks are called at
once.  A slow webhook holds back only its own task's watcher, never the job: a watcher that
falls a whole subscriber buffer behind picks up again from the store.  A watcher ends with its
task's terminal event, or when the task is gone.

Once an event has gone to every webhook (or been given up on), the store marks it sent
(``mark_push_delivered``).  One sender at a time delivers a task's notifications: the one
holding the task's push claim in the store, which it renews every third of the runtime's
``recovery_lease`` and gives up when the task needs no more.  Each such tick also claims the
tasks whose deliveries lag and whose claim ran out (a replica crashed or stopped: its tasks,
finished ones included, and those it followed on another replica), and a server alone on its
store takes every claim there is.  A sender that stops gives up the claims of the deliveries
it cut, so a live replica takes them at its next tick, not a lease later.  A claimed task is
watched from its first unsent event, or, when it finished or waits for input, sent its unsent
events from the store once: what a crash, or a shutdown's grace running out, left stored but
not sent goes out (at least once: a webhook may get an event twice, never none).
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Set
from datetime import datetime, timedelta
from typing import Final

import trio

from .. import model as m
from .._throttle import ThrottledLog
from .._trust import trusted_context
from ..errors import (
    A2AError,
    StoreDamagedError,
    StoreUnavailableError,
    TaskNotFoundError,
)
from ..runtime import LogEntry, SubscriberOverflow, TaskRuntime
from ..store import CallerScope, PushBacklog
from ..wire import V1, dumps
from ._config import PushSettings
from ._webhook_client import WebhookClient
from ._webhooks import check_headers, check_webhook

logger = logging.getLogger("a2a_trio.push")

STORE_RETRY: Final = 5.0
"""Seconds a watcher waits before reading a task store that was unavailable again."""
SETTLE: Final = 0.05
"""How long :meth:`PushSender.drain` lets woken watchers start before it looks."""
RELEASE_AT_STOP: Final = 2.0
"""Seconds a stopping sender gives the store to take its claims back (else they lapse)."""
CLAIM_ALONE: Final = 60.0
"""Seconds a server alone on its store (no ``recovery_lease``) claims a task's deliveries for,
unrenewed: nobody else delivers there, and the next process takes every claim at once."""

type TaskKey = tuple[CallerScope, str]
type Delivery = Callable[[TaskKey, int], Awaitable[None]]
"""A claimed task's deliveries after an event: ``_watch`` or ``_catch_up``."""


def _body(event: m.StreamEvent) -> bytes:
    return dumps(V1.encode_stream_response(event))


class PushSender:
    """Delivers the push notifications of one server's tasks (see the module docstring)."""

    def __init__(self, runtime: TaskRuntime, settings: PushSettings) -> None:
        self.runtime = runtime
        self.settings = settings
        self.claimant = uuid.uuid4().hex
        """Who this sender is in the store's push claims: one process's run."""
        self._lease = runtime.config.recovery_lease
        self._nursery: trio.Nursery | None = None
        self._client: WebhookClient | None = None
        self._delivered: dict[TaskKey, trio.CancelScope] = {}
        """The tasks this sender delivers for, each with its delivery's cancel scope."""
        self._unreleased: set[TaskKey] = set()
        """The tasks whose claims this sender's deliveries hold and have not given up: a stop
        that cuts a delivery, or its release of the claim, gives them up at its end."""
        self._claim_passes: list[set[TaskKey]] = []
        """The claim passes under way, each with the deliveries that ended since it began."""
        self._delivering = 0
        self._idle = trio.lowlevel.ParkingLot()
        """Where :meth:`drain` waits for ``_delivering`` to reach 0."""
        self._failures = ThrottledLog(logger)

    async def run(
        self,
        *,
        resume: bool = False,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Own the deliveries and the connections they share until cancelled.

        ``resume``: first send, from the store, what the last process left unsent of the
        tasks that finished or wait for input (:meth:`_resume_watching`).  The tasks left
        running come from the runtime's recovery (:meth:`take_over`); a task waiting for input
        is watched again when its answer comes (:meth:`watch_again`), not meanwhile: a task no
        job runs here is followed by polling the store, and it may wait for days.  With a
        ``recovery_lease``, this sender's claims are renewed, and lagging tasks nobody
        delivers claimed, every third of it (:meth:`_keep_claims`).  The claims of the
        deliveries a stop cuts are given up (:meth:`_give_up_claims`)."""
        tls = await trusted_context()
        try:
            async with (
                WebhookClient(self.settings, self._failures, tls) as client,
                trio.open_nursery() as nursery,
            ):
                self._client = client
                self._nursery = nursery
                if resume:
                    await self._resume_watching()
                if self._lease is not None:
                    nursery.start_soon(self._keep_claims, self._lease, name="a2a push: claims")
                task_status.started()
                try:
                    await trio.sleep_forever()
                finally:
                    self._nursery = None
        finally:
            await self._give_up_claims()

    async def _give_up_claims(self) -> None:
        """At the sender's stop, give up the claims its deliveries still hold, so that a live
        replica takes them at its next tick rather than once they lapse, a lease later (and a
        restart within a lease: the next process is another claimant).  Shielded, briefly: a
        store that does not answer leaves them to lapse."""
        if not self._unreleased:
            return
        with trio.move_on_after(RELEASE_AT_STOP, shield=True):
            with contextlib.suppress(StoreUnavailableError):
                await self.runtime.store.release_push_claims(self.claimant, self._unreleased)
                self._unreleased.clear()

    async def check(self, config: m.TaskPushNotificationConfig, *, under: str) -> None:
        """Refuse a config this server could not deliver to: its URL not one it may POST to
        (see ``_webhooks``), or its token or credentials not sendable in a header
        (``InvalidParamsError`` at the field's path under ``under``)."""
        check_headers(config, under=under)
        await check_webhook(
            config.url,
            path=under + ".url",
            allow_private_networks=self.settings.allow_private_networks,
        )

    def _claim_until(self) -> datetime:
        return m.utcnow() + timedelta(seconds=self._lease or CLAIM_ALONE)

    async def _resume_watching(self) -> None:
        """Send the unsent events of each task that finished or waits for input, from the
        store, once.  The tasks left running are the runtime's recovery's, which hands them
        over when it has re-run or settled them (:meth:`take_over`)."""
        try:
            await self._claim_lagging(running=False)
        except StoreUnavailableError as exc:  # the runtime's recovery reports the store too
            logger.warning("unsent push notifications not sent: %s", exc)

    def take_over(self, recovered: Set[TaskKey]) -> None:
        """For the runtime's recovery (``TaskRuntime.on_recovered``): deliver, from their
        first unsent event, the tasks it took over from a stopped process (after a restart, or
        a crashed replica's, past its lease), so what that process left unsent goes out, then
        the FAILED or the re-run's events."""
        if self._nursery is not None:
            self._nursery.start_soon(self._take_over, recovered, name="a2a push: take over")

    async def _take_over(self, recovered: Set[TaskKey]) -> None:
        try:
            await self._claim_lagging(running=True)
        except StoreUnavailableError as exc:
            count = f"{len(recovered)} task" + ("s" if len(recovered) > 1 else "")
            logger.warning("push notifications of %s recovered not taken over: %s", count, exc)

    async def _keep_claims(self, lease: float) -> None:
        """Every third of ``lease``: renew this sender's claims, stopping the deliveries whose
        claim another sender took (this process stalled past the lease), then claim and deliver
        the lagging tasks nobody delivers.  The store work gives up at the next tick."""
        while True:
            await trio.sleep(lease / 3)
            with trio.move_on_after(lease / 3):
                try:
                    await self._renew_claims()
                    await self._claim_lagging(running=True)
                except StoreUnavailableError as exc:  # the claims last a lease: try again
                    self._failures.log(
                        logging.WARNING, "push notification claims wait for the task store: %s", exc
                    )

    async def _renew_claims(self) -> None:
        store = self.runtime.store
        delivered = set(self._delivered)
        if not delivered:
            return
        held = await store.claim_push_deliveries(
            self.claimant, delivered, until=self._claim_until()
        )
        for key in delivered - held:
            cancel_scope = self._delivered.get(key)
            if cancel_scope is not None:
                logger.info(
                    "push notifications for task %s stopped here: another server sends them"
                    " now, or the task is gone",
                    key[1],
                )
                cancel_scope.cancel()
        if ended := held - self._delivered.keys():  # ended during the renewal: not held on
            await store.release_push_claims(self.claimant, ended)

    async def _claim_lagging(self, *, running: bool) -> None:
        """Claim the tasks whose deliveries lag and that no other sender holds, and deliver
        each: one that finished or waits for input once from the store, a running one (only
        if ``running``: else left claimed, for :meth:`take_over`) watched.

        A delivery here that ends while this reads may have sent more than the backlog it
        read says (it marks each event, then ends): then the backlog is read again, so that
        no event is sent twice."""
        while True:
            ended: set[TaskKey] = set()
            self._claim_passes.append(ended)
            try:
                chosen = await self._lagging(running=running)
            finally:
                self._claim_passes.remove(ended)
            if not ended.intersection((b.scope, b.task_id) for b, _deliver in chosen):
                break
        for backlog, deliver in chosen:
            key = (backlog.scope, backlog.task_id)
            if key not in self._delivered:  # (a watch may have started meanwhile)
                self._deliver(key, deliver, backlog.delivered_through)

    async def _lagging(self, *, running: bool) -> list[tuple[PushBacklog, Delivery]]:
        """The lagging tasks this sender now holds and delivers for nowhere yet, each with how
        to deliver it (see :meth:`_claim_lagging`)."""
        store = self.runtime.store
        lagging = await store.claim_push_backlog(
            self.claimant, until=self._claim_until(), steal=self._lease is None
        )
        chosen: list[tuple[PushBacklog, Delivery]] = []
        for backlog in lagging:  # a few tasks, not every unfinished one
            if (backlog.scope, backlog.task_id) in self._delivered:
                continue
            stored = await store.load_task(
                backlog.scope, backlog.task_id, history_length=0, include_artifacts=False
            )
            if stored is not None and m.is_settled(stored.task.status.state):
                chosen.append((backlog, self._catch_up))
            elif stored is not None and running:
                chosen.append((backlog, self._watch))
        return chosen

    def watch(self, scope: CallerScope, task_id: str, *, after: int) -> None:
        """Deliver the task's events after event ``after``, unless a sender, here or on another
        replica, delivers them already (it reads the configs at each event, so it takes the
        new one on too)."""
        if (scope, task_id) not in self._delivered:
            self._deliver((scope, task_id), self._claim_and_watch, after)

    async def watch_again(self, scope: CallerScope, task_id: str, after: int) -> None:
        """For a message continuing a task: watch it from the message's events on if it has
        configs and nothing watches it here (it waited for input when this server started, or
        on another replica)."""
        if (scope, task_id) not in self._delivered and await self.runtime.store.list_push_configs(
            scope, task_id
        ):
            self.watch(scope, task_id, after=after)

    @property
    def watcher_count(self) -> int:
        return len(self._delivered)

    async def drain(self, grace: float) -> None:
        """Wait up to ``grace`` seconds for deliveries under way (their retries included),
        so the final events of a shutdown's tasks still go out."""
        with trio.move_on_after(grace):
            await trio.sleep(SETTLE)  # watchers woken by the last events take them first
            while self._delivering:
                await self._idle.park()

    def _deliver(self, key: TaskKey, deliver: Delivery, after: int) -> None:
        if self._nursery is not None:
            cancel_scope = self._delivered[key] = trio.CancelScope()
            self._nursery.start_soon(
                self._delivery, key, deliver, after, cancel_scope, name=f"a2a push: task {key[1]}"
            )

    async def _delivery(
        self, key: TaskKey, deliver: Delivery, after: int, cancel_scope: trio.CancelScope
    ) -> None:
        """``deliver`` the task's events after ``after``, then give up its claim (unless
        another sender took it); one the sender's stop cuts is given up at the stop's end."""
        self._unreleased.add(key)
        try:
            with cancel_scope:
                await deliver(key, after)
        finally:
            if self._delivered.get(key) is cancel_scope:
                del self._delivered[key]
            for ended in self._claim_passes:
                ended.add(key)
        if not cancel_scope.cancelled_caught:
            with contextlib.suppress(StoreUnavailableError):  # else it lapses after a lease
                await self.runtime.store.release_push_claims(self.claimant, [key])
        if key not in self._delivered:  # (else a new delivery of the task holds the claim)
            self._unreleased.discard(key)

    async def _claim_and_watch(self, key: TaskKey, after: int) -> None:
        """:meth:`_watch`, once this sender holds the task's claim; nothing if another does."""
        task_id = key[1]
        while True:
            try:
                held = await self.runtime.store.claim_push_deliveries(
                    self.claimant, [key], until=self._claim_until(), steal=self._lease is None
                )
                break
            except StoreUnavailableError as exc:
                await self._wait_for_store(task_id, exc)
        if key in held:
            await self._watch(key, after)
        else:
            logger.debug("push notifications for task %s are sent by another replica", task_id)

    async def _watch(self, key: TaskKey, after: int) -> None:
        """The task's events after ``after``, read as a SubscribeToTask stream does, until its
        terminal event."""
        scope, task_id = key
        while True:
            try:
                stream = await self.runtime.subscribe(scope, task_id, last_event_id=after)
                try:
                    while True:
                        entry = await stream.receive()
                        await self._send(scope, task_id, entry)
                        after = entry.seq
                finally:
                    stream.close()
            except trio.EndOfChannel:
                return  # the task's terminal event went out
            except SubscriberOverflow:
                continue  # fell a buffer behind: the rest comes from the store
            except TaskNotFoundError:
                return  # deleted or purged: nothing more will come
            except (A2AError, StoreDamagedError) as exc:  # no use trying again
                logger.error("push notifications for task %s stopped: %s", task_id, exc)
                return
            except StoreUnavailableError as exc:
                await self._wait_for_store(task_id, exc)

    async def _wait_for_store(self, task_id: str, exc: StoreUnavailableError) -> None:
        """Say (once a minute) that the task's deliveries wait for the store, then wait a bit."""
        self._failures.log(
            logging.WARNING,
            "push notifications for task %s wait for the task store: %s",
            task_id,
            exc,
        )
        await trio.sleep(STORE_RETRY)

    async def _catch_up(self, key: TaskKey, after: int) -> None:
        """The stored events after ``after`` of a task no job runs here, sent once (a task
        waiting for input is watched again when its answer comes: ``watch_again``).  Where the
        store no longer holds them all (its log keeps the newest ``max_events_per_task``), the
        task as stored goes instead, as a stream resumed from there starts over: never an
        artifact chunk without its start."""
        scope, task_id = key
        store = self.runtime.store
        try:
            events = await store.load_events(scope, task_id, after_seq=after)
            entries = [LogEntry(seq, event) for seq, event in events]
            if entries and entries[0].seq != after + 1:  # some were trimmed
                found = await store.load_task_with_seq(scope, task_id)
                entries = [] if found is None else [LogEntry(found[1], found[0].task)]
            for entry in entries:
                await self._send(scope, task_id, entry)
        except TaskNotFoundError:
            pass  # deleted or purged meanwhile
        except StoreUnavailableError as exc:  # or damaged: sent by the next start, if any
            logger.warning("unsent push notifications for task %s not sent: %s", task_id, exc)

    async def _send(self, scope: CallerScope, task_id: str, entry: LogEntry) -> None:
        """One event to the task's webhooks, then marked sent in the store."""
        self._delivering += 1
        try:
            targets = await self.runtime.store.list_push_targets(scope, task_id)
            configs = [t.config for t in targets if t.delivered_through < entry.seq]
            if not configs:  # none, or all had it (created after it, or a resend past them)
                return
            body = entry.encoded(_body)
            assert self._client is not None
            async with trio.open_nursery() as nursery:
                for config in configs:
                    nursery.start_soon(self._client.post, config, body)
            try:
                await self.runtime.store.mark_push_delivered(scope, task_id, entry.seq)
            except StoreUnavailableError as exc:  # sent again after a restart, at worst
                self._failures.log(
                    logging.WARNING,
                    "push notification for task %s sent but not marked sent: %s",
                    task_id,
                    exc,
                )
        finally:
            self._delivering -= 1
            if not self._delivering:
                self._idle.unpark_all()
