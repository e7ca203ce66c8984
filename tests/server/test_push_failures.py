"""Push notifications when things go wrong around them: the store refusing the sender's reads
or marks, a watcher falling a buffer behind, a config or a task deleted while watched, and a
webhook whose name now leads to a private address.  Each delivers what it still can, in
order, and says in the log what it could not."""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial
from typing import Any

import pytest
import trio
import trio.testing
from push_backlog import lagging
from runtime.streams import read_all

from a2a_trio import Agent, PushSettings, TaskContext
from a2a_trio import model as m
from a2a_trio.errors import StoreUnavailableError
from a2a_trio.runtime import EventLogLimits, RuntimeConfig, TaskRuntime
from a2a_trio.server import _push
from a2a_trio.server._push import PushSender
from a2a_trio.store import ANONYMOUS, MemoryTaskStore, PushBacklog, Retention, TaskUpdate
from a2a_trio.wire import V1

from .name_server import NameServer
from .webhook import Webhook

agent = Agent("push failures", "Tasks whose webhooks meet trouble", version="0")
gates: dict[str, trio.Event] = {}


@agent.skill()
async def burst(ctx: TaskContext) -> None:
    """Wait for the test's gate (named by the text), then stream 20 chunks at once."""
    await gates.setdefault(ctx.text, trio.Event()).wait()
    for index in range(20):
        last = index == 19
        await ctx.emit_artifact(f"{index} ", artifact_id="a1", append=index > 0, last_chunk=last)


DOWN = "the database is unreachable"
FAST = PushSettings(retry_wait=0.05, timeout=2, allow_private_networks=True)
QUIET = RuntimeConfig(stall_warning=None)
LEASE = 0.3
LEASED = RuntimeConfig(stall_warning=None, recovery_lease=LEASE)
"""A replica's: its sender renews its push claims, and claims lagging tasks, every 0.1 s."""
LEASED_A_MINUTE = RuntimeConfig(stall_warning=None, recovery_lease=60)


class PushCallsFail(MemoryTaskStore):
    """The memory store, refusing as unavailable the push calls named in ``failing``."""

    def __init__(self) -> None:
        super().__init__()
        self.failing: set[str] = set()
        self.refused = trio.Event()

    def _maybe_refuse(self, name: str) -> None:
        if name in self.failing:
            self.refused.set()
            raise StoreUnavailableError(DOWN)

    async def list_push_targets(self, *args: Any, **kwargs: Any) -> Any:
        self._maybe_refuse("list_push_targets")
        return await super().list_push_targets(*args, **kwargs)

    async def mark_push_delivered(self, *args: Any, **kwargs: Any) -> None:
        self._maybe_refuse("mark_push_delivered")
        await super().mark_push_delivered(*args, **kwargs)

    async def claim_push_deliveries(self, *args: Any, **kwargs: Any) -> Any:
        self._maybe_refuse("claim_push_deliveries")
        return await super().claim_push_deliveries(*args, **kwargs)

    async def claim_push_backlog(self, *args: Any, **kwargs: Any) -> Any:
        self._maybe_refuse("claim_push_backlog")
        return await super().claim_push_backlog(*args, **kwargs)

    async def release_push_claims(self, *args: Any, **kwargs: Any) -> None:
        self._maybe_refuse("release_push_claims")
        await super().release_push_claims(*args, **kwargs)


async def started(
    nursery: trio.Nursery,
    store: MemoryTaskStore,
    *,
    settings: PushSettings = FAST,
    config: RuntimeConfig = QUIET,
) -> tuple[TaskRuntime, PushSender]:
    runtime = TaskRuntime(agent, store, config)
    sender = PushSender(runtime, settings)
    await nursery.start(sender.run)
    await nursery.start(runtime.run)
    return runtime, sender


async def watched_task(
    runtime: TaskRuntime,
    sender: PushSender,
    gate: str,
    *urls: str,
    authentication: m.AuthenticationInfo | None = None,
) -> str:
    """A ``burst`` task waiting at ``gate``, with a config per URL, watched from its start."""
    sent = m.SendMessageRequest(
        m.text_message(gate, metadata={"skillId": "burst"}),
        configuration=m.SendMessageConfiguration(return_immediately=True),
    )
    task = await runtime.send(ANONYMOUS, sent)
    assert isinstance(task, m.Task)
    for url in urls:
        config = m.TaskPushNotificationConfig(url, task_id=task.id, authentication=authentication)
        await runtime.store.set_push_config(ANONYMOUS, config, delivered_through=0)
    sender.watch(ANONYMOUS, task.id, after=0)
    return task.id


def logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records]


def open_gate(gate: str) -> None:
    gates.setdefault(gate, trio.Event()).set()


async def finished(hook: Webhook, sender: PushSender) -> None:
    """Once the webhook has the task's COMPLETED and the sender has nothing under way."""
    await hook.wait_for_state("TASK_STATE_COMPLETED")
    await sender.drain(5)


async def sent_as_logged(store: MemoryTaskStore, hook: Webhook, task_id: str) -> None:
    logged = await store.load_events(ANONYMOUS, task_id)
    assert [d.body for d in hook.received] == [
        V1.encode_stream_response(event) for _seq, event in logged
    ]


async def test_a_store_outage_holds_deliveries_back_then_they_go_out_in_order(
    hook: Webhook, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sender cannot read the task's configs: it says so once, waits, and once the store
    answers again sends every event it had not, each once, in order."""
    monkeypatch.setattr(_push, "STORE_RETRY", 0.05)
    store = PushCallsFail()
    gate = "push-outage"
    with caplog.at_level(logging.WARNING, logger="a2a_trio.push"):
        async with trio.open_nursery() as nursery:
            runtime, sender = await started(nursery, store)
            task_id = await watched_task(runtime, sender, gate, hook.url)
            await hook.wait_for(lambda got: len(got) == 1)  # the task as it started
            store.failing.add("list_push_targets")
            open_gate(gate)
            await store.refused.wait()
            store.failing.clear()
            await finished(hook, sender)
            nursery.cancel_scope.cancel()
    await sent_as_logged(store, hook, task_id)
    assert logged(caplog) == [
        f"push notifications for task {task_id} wait for the task store: {DOWN}"
    ]


async def test_a_mark_the_store_refuses_is_logged_and_the_deliveries_go_on(
    hook: Webhook, caplog: pytest.LogCaptureFixture
) -> None:
    """Every event still goes out; the log says they were not marked, once a minute, and the
    store still lists them as unsent, so a restart would send them again (at least once)."""
    store = PushCallsFail()
    store.failing.add("mark_push_delivered")
    gate = "push-unmarked"
    with caplog.at_level(logging.WARNING, logger="a2a_trio.push"):
        async with trio.open_nursery() as nursery:
            runtime, sender = await started(nursery, store)
            task_id = await watched_task(runtime, sender, gate, hook.url)
            open_gate(gate)
            await finished(hook, sender)
            nursery.cancel_scope.cancel()
    await sent_as_logged(store, hook, task_id)
    assert logged(caplog) == [
        f"push notification for task {task_id} sent but not marked sent: {DOWN}"
    ]
    assert await lagging(store) == (PushBacklog(ANONYMOUS, task_id, 0),)


async def test_a_watcher_a_buffer_behind_picks_up_where_it_was(hook: Webhook) -> None:
    """The webhook refuses the first event twice while the task streams 20 chunks into a
    subscriber buffer of 2: the watcher's subscription ends, and it goes on from the event
    after its last one.  Every event arrives once, in order."""
    store = MemoryTaskStore()
    small = RuntimeConfig(stall_warning=None, event_log=EventLogLimits(subscriber_buffer=2))
    gate = "push-overflow"
    hook.answers = [503, 503]
    async with trio.open_nursery() as nursery:
        runtime, sender = await started(nursery, store, config=small)
        task_id = await watched_task(runtime, sender, gate, hook.url)
        await hook.wait_for(lambda _: hook.attempts == 1)
        open_gate(gate)
        await finished(hook, sender)
        nursery.cancel_scope.cancel()
    await sent_as_logged(store, hook, task_id)
    assert [d.kind for d in hook.received].count("artifactUpdate") == 20


async def test_deleting_a_tasks_last_config_stops_its_deliveries(hook: Webhook) -> None:
    """The watcher reads the configs at each event: with none left it sends nothing more,
    and still ends with the task."""
    store = MemoryTaskStore()
    gate = "push-deleted-config"
    async with trio.open_nursery() as nursery:
        runtime, sender = await started(nursery, store)
        task_id = await watched_task(runtime, sender, gate, hook.url)
        await hook.wait_for(lambda got: len(got) == 1)  # the task as it started
        (config,) = await store.list_push_configs(ANONYMOUS, task_id)
        assert await store.delete_push_config(ANONYMOUS, task_id, config.id)
        open_gate(gate)
        await read_all(await runtime.subscribe(ANONYMOUS, task_id, last_event_id=0))  # ended
        await sender.drain(5)
        await trio.testing.wait_all_tasks_blocked()
        assert sender.watcher_count == 0  # it ended with the task
        nursery.cancel_scope.cancel()
    assert [d.kind for d in hook.received] == ["task"]


async def test_a_task_deleted_while_watched_ends_its_watcher(hook: Webhook) -> None:
    """Its store user deletes the task (with its configs) while it waits: the job's next write
    finds it gone, and the watcher, following the store from there, finds it gone too and
    ends without a word."""
    store = MemoryTaskStore()
    gate = "push-deleted-task"
    following = RuntimeConfig(stall_warning=None, follow_interval=0.01)
    async with trio.open_nursery() as nursery:
        runtime, sender = await started(nursery, store, config=following)
        task_id = await watched_task(runtime, sender, gate, hook.url)
        await hook.wait_for(lambda got: len(got) == 1)
        assert await store.delete_task(ANONYMOUS, task_id)
        open_gate(gate)
        with trio.fail_after(5):  # nothing signals a watcher's end: look after each store poll
            while sender.watcher_count:  # noqa: ASYNC110
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert [d.kind for d in hook.received] == ["task"]


async def test_a_watcher_whose_claim_another_sender_took_stops(
    hook: Webhook, caplog: pytest.LogCaptureFixture
) -> None:
    """Another sender holds the task's claim now (this process stalled past its lease, and a
    replica took the task's deliveries over): at its next tick the sender finds out, says so,
    and sends nothing more, nor takes the task back while the other's claim lasts."""
    store = MemoryTaskStore()
    gate = "push-claim-taken"
    with caplog.at_level(logging.INFO, logger="a2a_trio.push"):
        async with trio.open_nursery() as nursery:
            runtime, sender = await started(nursery, store, config=LEASED)
            task_id = await watched_task(runtime, sender, gate, hook.url)
            await hook.wait_for(lambda got: len(got) == 1)  # the task as it started
            key = (ANONYMOUS, task_id)
            later = m.utcnow() + timedelta(minutes=1)
            taken = await store.claim_push_deliveries("elsewhere", [key], until=later, steal=True)
            assert taken == {key}
            with trio.fail_after(5):  # nothing signals a watcher's end: look after each tick
                while sender.watcher_count:  # noqa: ASYNC110
                    await trio.sleep(0.01)
            open_gate(gate)
            await read_all(await runtime.subscribe(ANONYMOUS, task_id, last_event_id=0))  # ended
            await trio.sleep(LEASE)  # three ticks, each finding the task lagging but held
            nursery.cancel_scope.cancel()
    assert [d.kind for d in hook.received] == ["task"]
    assert logged(caplog) == [
        f"push notifications for task {task_id} stopped here: another server sends them now,"
        " or the task is gone"
    ]
    assert await store.claim_push_backlog("next", until=later) == ()  # still the other's


@pytest.mark.parametrize("answers", [True, False], ids=["the store answers", "the store is down"])
async def test_a_sender_that_stops_gives_up_the_claims_of_the_deliveries_it_cut(
    hook: Webhook, answers: bool
) -> None:
    """A watcher of a running task is cut by its sender's stop: the task's claim is given up,
    for the next sender to take at once rather than a lease (here a minute) later.  A store
    that does not answer then leaves the claim to lapse, and the stop goes on."""
    store = PushCallsFail()
    if not answers:
        store.failing.add("release_push_claims")
    gate = f"push-stopped {m.new_id()}"
    async with trio.open_nursery() as nursery:
        runtime, sender = await started(nursery, store, config=LEASED_A_MINUTE)
        task_id = await watched_task(runtime, sender, gate, hook.url)
        await hook.wait_for(lambda got: len(got) == 1)  # the task as it started: claimed
        nursery.cancel_scope.cancel()
    key = (ANONYMOUS, task_id)
    later = m.utcnow() + timedelta(minutes=1)
    assert (await store.claim_push_deliveries("next", [key], until=later) == {key}) is answers
    assert store.refused.is_set() is not answers


async def test_claims_the_store_refuses_wait_and_the_deliveries_go_on(
    hook: Webhook, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store refuses the watcher's first claim and the tick's renewals: each says so
    once; the watcher claims the task when the store answers again, and sends every event
    once, in order."""
    monkeypatch.setattr(_push, "STORE_RETRY", 0.05)
    store = PushCallsFail()
    store.failing.add("claim_push_deliveries")
    gate = "push-claims-refused"
    with caplog.at_level(logging.WARNING, logger="a2a_trio.push"):
        async with trio.open_nursery() as nursery:
            runtime, sender = await started(nursery, store, config=LEASED)
            task_id = await watched_task(runtime, sender, gate, hook.url)
            await trio.sleep(LEASE)  # the watcher's claim and the ticks' renewals refused
            assert hook.received == []
            store.failing.clear()
            open_gate(gate)
            await finished(hook, sender)
            nursery.cancel_scope.cancel()
    await sent_as_logged(store, hook, task_id)
    assert logged(caplog) == [
        f"push notifications for task {task_id} wait for the task store: {DOWN}",
        f"push notification claims wait for the task store: {DOWN}",
    ]


async def test_a_webhook_that_now_reaches_a_private_address_is_not_called(
    hook: Webhook, caplog: pytest.LogCaptureFixture
) -> None:
    """The address check runs again before each POST: a config whose host has come to
    resolve to a private address since it was accepted (here: a loopback URL written
    straight into the store of a server allowing public webhooks only) is never called, and
    the log says why, without the URL's query."""
    store = MemoryTaskStore()
    public_only = PushSettings(retry_wait=0.05, timeout=2)
    gate = "push-rebound"
    with caplog.at_level(logging.WARNING, logger="a2a_trio.push"):
        async with trio.open_nursery() as nursery:
            runtime, sender = await started(nursery, store, settings=public_only)
            task_id = await watched_task(runtime, sender, gate, hook.url + "?secret=s3cr3t")
            open_gate(gate)
            await read_all(await runtime.subscribe(ANONYMOUS, task_id, last_event_id=0))
            await sender.drain(5)
            nursery.cancel_scope.cancel()
    assert hook.attempts == 0
    assert logged(caplog) == [
        f"push notification for task {task_id} not delivered to {hook.url}: it now reaches"
        " 127.0.0.1, a loopback address, and only public addresses are allowed"
    ]


async def test_a_config_gets_only_the_events_after_its_mark(hook: Webhook) -> None:
    """Two configs, one from the task's start and one created after its first events (its
    mark there), both sent by one watcher from the start: the later one gets only what came
    after its creation, and both get that once, in order."""
    store = MemoryTaskStore()
    gate = "push-late-config"
    async with trio.open_nursery() as nursery:
        runtime, sender = await started(nursery, store)
        task_id = await watched_task(runtime, sender, gate, hook.url + "/early")
        created_at = await store.last_event_seq(ANONYMOUS, task_id)
        late = m.TaskPushNotificationConfig(hook.url + "/late", task_id=task_id)
        await store.set_push_config(ANONYMOUS, late)  # marked at the last event by default
        open_gate(gate)
        await hook.wait_for_state("TASK_STATE_COMPLETED", path="/hook/late")
        await hook.wait_for_state("TASK_STATE_COMPLETED", path="/hook/early")
        await sender.drain(5)
        nursery.cancel_scope.cancel()
    logged = [V1.encode_stream_response(e) for _s, e in await store.load_events(ANONYMOUS, task_id)]
    assert created_at >= 1
    assert [d.body for d in hook.received if d.path == "/hook/early"] == logged
    assert [d.body for d in hook.received if d.path == "/hook/late"] == logged[created_at:]


class HeldCalls(MemoryTaskStore):
    """The memory store, holding the first mark and the second backlog claim until told."""

    def __init__(self) -> None:
        super().__init__()
        self.marks = trio.Event()
        self.second_claim = trio.Event()
        self.claims_read = 0
        self.claim_read = trio.lowlevel.ParkingLot()

    async def mark_push_delivered(self, *args: Any, **kwargs: Any) -> None:
        await self.marks.wait()
        await super().mark_push_delivered(*args, **kwargs)

    async def claim_push_backlog(self, *args: Any, **kwargs: Any) -> Any:
        found = await super().claim_push_backlog(*args, **kwargs)
        self.claims_read += 1
        self.claim_read.unpark_all()
        if self.claims_read == 2:
            await self.second_claim.wait()
        return found


async def test_a_delivery_ending_while_the_backlog_is_read_is_not_sent_again(
    hook: Webhook,
) -> None:
    """A start's catch-up sends a task's two unsent events while the recovery's hand-over
    reads the backlog: the read still lists the task (nothing marked yet), and the catch-up
    ends before the hand-over looks at what it read.  The hand-over reads again instead of
    sending from the stale mark: each event goes out once."""
    store = HeldCalls()
    task = (await store.create_task(ANONYMOUS, m.new_task(m.text_message("asks")))).task
    question = m.text_message("Name?", role=m.Role.AGENT)
    asked = await store.update_task(
        ANONYMOUS, task.id, TaskUpdate(state=m.TaskState.INPUT_REQUIRED, status_message=question)
    )
    asking = m.TaskStatusUpdateEvent(task.id, task.context_id, asked.task.status)
    await store.append_events(ANONYMOUS, task.id, [(1, task), (2, asking)])
    config = m.TaskPushNotificationConfig(url=hook.url, task_id=task.id)
    await store.set_push_config(ANONYMOUS, config, delivered_through=0)
    async with trio.open_nursery() as nursery:
        sender = PushSender(TaskRuntime(agent, store, QUIET), FAST)
        await nursery.start(partial(sender.run, resume=True))  # the catch-up: claim 1
        sender.take_over({(ANONYMOUS, task.id)})  # the hand-over: claim 2, held
        with trio.fail_after(5):
            while store.claims_read < 2:
                await store.claim_read.park()
        store.marks.set()
        await hook.wait_for(lambda got: len(got) == 2)
        await sender.drain(5)
        await trio.testing.wait_all_tasks_blocked()
        assert sender.watcher_count == 0  # the catch-up has ended
        store.second_claim.set()
        await trio.testing.wait_all_tasks_blocked()
        await sender.drain(5)
        nursery.cancel_scope.cancel()
    await sent_as_logged(store, hook, task.id)


async def test_a_catch_up_past_the_kept_log_sends_the_task_as_stored(hook: Webhook) -> None:
    """A finished task's webhook is 6 events behind, and the store keeps its newest 3: the
    catch-up sends the task as stored, once, rather than artifact chunks without their
    start; then nothing is left to send."""
    store = MemoryTaskStore(retention=Retention(max_events_per_task=3))
    task = (await store.create_task(ANONYMOUS, m.new_task(m.text_message("long")))).task
    chunks = [
        m.TaskArtifactUpdateEvent(
            task.id, task.context_id, m.Artifact("a1", (m.TextPart(f"{n} "),)), append=n > 0
        )
        for n in range(4)
    ]
    for number, chunk in enumerate(chunks, start=2):
        await store.update_task(ANONYMOUS, task.id, TaskUpdate(), events=[(number, chunk)])
    done = await store.update_task(ANONYMOUS, task.id, TaskUpdate(state=m.TaskState.COMPLETED))
    finished = m.TaskStatusUpdateEvent(task.id, task.context_id, done.task.status)
    await store.append_events(ANONYMOUS, task.id, [(6, finished)])
    config = m.TaskPushNotificationConfig(url=hook.url, task_id=task.id)
    await store.set_push_config(ANONYMOUS, config, delivered_through=0)
    assert [seq for seq, _event in await store.load_events(ANONYMOUS, task.id)] == [4, 5, 6]
    async with trio.open_nursery() as nursery:
        sender = PushSender(TaskRuntime(agent, store, QUIET), FAST)
        await nursery.start(partial(sender.run, resume=True))
        (delivery,) = await hook.wait_for(lambda got: len(got) == 1)
        await sender.drain(5)
        nursery.cancel_scope.cancel()
    assert delivery.kind == "task" and delivery.state == "TASK_STATE_COMPLETED"
    assert (
        V1.decode_stream_response(delivery.body) == (await store.load_task(ANONYMOUS, task.id)).task
    )
    assert await lagging(store) == ()


async def test_a_name_that_rebinds_to_loopback_between_lookups_is_never_called(
    hook: Webhook, caplog: pytest.LogCaptureFixture
) -> None:
    """The webhook's name answers a public address, then 127.0.0.1, where the webhook really
    is.  Each connection resolves the name once and connects to the addresses it checked:
    the first try goes to the public address (where nobody answers here), the next finds
    loopback and is refused.  The webhook on 127.0.0.1 is never called; checking first and
    letting the HTTP client look the name up again would have called it."""
    rebinding = NameServer("hooks.rebind.test", "1.2.3.4", "127.0.0.1")
    trio.socket.set_custom_hostname_resolver(rebinding)
    store = MemoryTaskStore()
    public_only = PushSettings(retry_wait=0.01, timeout=0.5, attempts=3)
    url = hook.url.replace("127.0.0.1", "hooks.rebind.test")
    gate = "push-rebinding"
    with caplog.at_level(logging.WARNING, logger="a2a_trio.push"):
        async with trio.open_nursery() as nursery:
            runtime, sender = await started(nursery, store, settings=public_only)
            task_id = await watched_task(runtime, sender, gate, url)
            open_gate(gate)
            await read_all(await runtime.subscribe(ANONYMOUS, task_id, last_event_id=0))
            await sender.drain(10)
            nursery.cancel_scope.cancel()
    assert hook.attempts == 0
    assert rebinding.lookups >= 2  # the public answer was used, then loopback refused
    (first, *_) = logged(caplog)
    assert first.startswith(f"push notification for task {task_id} not delivered to {url}")
    assert "it now reaches 127.0.0.1, a loopback address" in "\n".join(logged(caplog))


async def test_a_start_that_cannot_read_what_is_unsent_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A task a stopped process left running, with a config: the start's catch-up and the
    recovery's take-over cannot read the store's backlog.  Both say what was not done; the
    recovery itself goes on (the task ends FAILED)."""
    store = PushCallsFail()
    left = (await store.create_task(ANONYMOUS, m.new_task(m.text_message("left")))).task
    config = m.TaskPushNotificationConfig(url="http://127.0.0.1:1/", task_id=left.id)
    await store.set_push_config(ANONYMOUS, config, delivered_through=0)
    store.failing.add("claim_push_backlog")
    with caplog.at_level(logging.WARNING, logger="a2a_trio.push"):
        async with trio.open_nursery() as nursery:
            runtime = TaskRuntime(agent, store, QUIET)
            sender = PushSender(runtime, FAST)
            runtime.on_recovered = sender.take_over
            await nursery.start(partial(sender.run, resume=True))
            await nursery.start(runtime.run)
            await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()
    assert logged(caplog) == [
        f"unsent push notifications not sent: {DOWN}",
        f"push notifications of 1 task recovered not taken over: {DOWN}",
    ]
    failed = await store.load_task(ANONYMOUS, left.id)
    assert failed is not None and failed.task.status.state is m.TaskState.FAILED


async def test_a_scheme_without_credentials_sends_no_authorization_and_says_so(
    hook: Webhook, caplog: pytest.LogCaptureFixture
) -> None:
    """v0.3's own example registers ``{"schemes": ["Bearer"]}`` alone: accepted, delivered
    without an Authorization header (the server cannot make credentials up), and the log
    says so once, which is what its webhook's 401s would need explained."""
    store = MemoryTaskStore()
    gate = "push-no-credentials"
    with caplog.at_level(logging.WARNING, logger="a2a_trio.push"):
        async with trio.open_nursery() as nursery:
            runtime, sender = await started(nursery, store)
            bearer = m.AuthenticationInfo("Bearer")
            task_id = await watched_task(runtime, sender, gate, hook.url, authentication=bearer)
            open_gate(gate)
            await finished(hook, sender)
            nursery.cancel_scope.cancel()
    await sent_as_logged(store, hook, task_id)
    assert not any("authorization" in d.headers for d in hook.received)
    (config,) = await store.list_push_configs(ANONYMOUS, task_id)
    assert logged(caplog) == [
        f"push config {config.id} of task {task_id} names the Bearer scheme but no"
        " credentials: its webhook gets no Authorization header"
    ]
