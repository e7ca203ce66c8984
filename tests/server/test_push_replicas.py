"""Push notifications with several replicas on one store: one sender at a time delivers a
task's notifications (it holds the task's push claim), and a live replica takes over the
deliveries of one that stopped or crashed, finished tasks and followed ones included."""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from functools import partial
from pathlib import Path

import attrs
import httpx
import pytest
import trio
from push_backlog import lagging
from serve_process import run_server
from store.conftest import SQL_BACKENDS, make_backend

from a2a_trio import ServerConfig, serve
from a2a_trio import model as m
from a2a_trio.runtime import RuntimeConfig
from a2a_trio.store import ANONYMOUS, open_store
from a2a_trio.wire import V1

from .agents import agent, open_gate
from .conftest import V1_HEADERS, user_message
from .test_push import FAST_RETRIES, call, check_sent_as_logged, start
from .webhook import Webhook

LEASE = 0.5
REPLICA = ServerConfig(
    push=FAST_RETRIES,
    runtime=RuntimeConfig(poll_interval=0.01, follow_interval=0.05, recovery_lease=LEASE),
)
STEADY = attrs.evolve(REPLICA, runtime=attrs.evolve(REPLICA.runtime, recovery_lease=30.0))
"""Replicas whose claims cannot lapse during a test, however loaded the machine."""


@pytest.fixture(params=SQL_BACKENDS)
async def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    async with make_backend(request.param, tmp_path) as made:
        yield made.url


async def at_its_gate(store_url: str, task_id: str) -> int:
    """Once the ``gated`` task waits at its gate (its progress update stored): its last
    logged event's number, which stays so until the gate opens."""
    async with open_store(store_url) as store:
        with trio.fail_after(10):
            while True:
                stored = await store.load_task(ANONYMOUS, task_id, history_length=0)
                if stored is not None and stored.task.status.message is not None:
                    return await store.last_event_seq(ANONYMOUS, task_id)
                await trio.sleep(0.01)


async def marked_sent(store_url: str, task_id: str) -> None:
    """Once each of the task's webhooks is marked sent its last logged event.  The mark
    follows the POST: a replica stopped between the two leaves the event to be sent again,
    so a test that stops its replicas waits for this first."""
    async with open_store(store_url) as store:
        with trio.fail_after(5):
            while True:
                last = await store.last_event_seq(ANONYMOUS, task_id)
                targets = await store.list_push_targets(ANONYMOUS, task_id)
                if all(target.delivered_through >= last for target in targets):
                    return
                await trio.sleep(0.02)


async def check_sent_after(
    hook: Webhook, store_url: str, path: str, task_id: str, after: int
) -> None:
    """The webhook at ``path`` was sent exactly the task's logged events after event ``after``,
    each once, in order, and nothing is left unsent."""
    async with open_store(store_url) as store:
        logged = await store.load_events(ANONYMOUS, task_id, after_seq=after)
        assert await lagging(store) == ()
    sent = [d.body for d in hook.received if d.path == path]
    assert sent == [V1.encode_stream_response(event) for _seq, event in logged]
    assert logged and sent[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def crashed_replica(
    hook: Webhook,
    store_url: str,
    agent_spec: str,
    send: Callable[[httpx.AsyncClient], Awaitable[str]],
) -> str:
    """Replica A, ``a2a-trio serve`` for ``agent_spec`` on ``store_url`` with a recovery
    lease, gets ``send``, and is killed (SIGKILL) once the webhook has refused its first POST
    (its retry would come a second later); the id of the task ``send`` started."""
    lease = ("--recovery-lease", str(LEASE))
    serving = partial(run_server, agent_spec, store_url, "--push", "private", *lease)
    hook.answers = [503]
    async with trio.open_nursery() as nursery:
        server = await nursery.start(serving)
        async with httpx.AsyncClient(base_url=server.url, headers=V1_HEADERS) as http:
            task_id = await send(http)
            await hook.wait_for(lambda _: hook.attempts == 1)
        server.process.send_signal(signal.SIGKILL)
    assert hook.received == []
    return task_id


async def test_a_crashed_replicas_running_task_is_sent_by_the_replica_that_recovers_it(
    hook: Webhook, store_url: str
) -> None:
    """A takes a resumable task and crashes.  B re-runs the task once A's lease is over, and
    sends its webhook every event from the first A left unsent, A's then its own, each once,
    in order."""
    gate = f"push-takeover {m.new_id()}"  # the gates outlive a test
    push = {"url": hook.url}
    async with trio.open_nursery() as nursery:
        await nursery.start(partial(serve, agent, port=0, store=store_url, config=REPLICA))
        send = partial(start, text=gate, skill="gated_redo", taskPushNotificationConfig=push)
        task_id = await crashed_replica(hook, store_url, "server.agents:agent", send)
        open_gate(gate)  # B's re-run goes straight through
        await hook.wait_for_state("TASK_STATE_COMPLETED")
        nursery.cancel_scope.cancel()
    await check_sent_as_logged(hook, store_url, {task_id: "/hook"})
    # A's first event, then B's re-run's (the task as A left it, SUBMITTED or WORKING)
    assert [d.kind for d in hook.received].count("task") == 2
    assert hook.received[0].state == "TASK_STATE_SUBMITTED"


async def test_a_crashed_replicas_finished_task_is_sent_by_a_live_replica(
    hook: Webhook, store_url: str
) -> None:
    """A finishes a task and crashes before its webhook had an event.  No recovery takes a
    finished task over, but A's push claim lapses with its lease: live replica B claims the
    task's unsent events and sends them all from the store, each once, in order."""
    params = {
        "message": user_message("hi", skill="echo"),
        "configuration": {"taskPushNotificationConfig": {"url": hook.url}},
    }

    async def send(http: httpx.AsyncClient) -> str:
        done = await call(http, "SendMessage", params)
        assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        return str(done["result"]["task"]["id"])

    async with trio.open_nursery() as nursery:
        await nursery.start(partial(serve, agent, port=0, store=store_url, config=REPLICA))
        task_id = await crashed_replica(hook, store_url, "a2a_trio.demo:agent", send)
        await hook.wait_for_state("TASK_STATE_COMPLETED")
        await marked_sent(store_url, task_id)
        nursery.cancel_scope.cancel()
    await check_sent_as_logged(hook, store_url, {task_id: "/hook"})
    async with open_store(store_url) as store:
        assert await lagging(store) == ()


async def someone_holds_the_claim(store_url: str, task_id: str) -> bool:
    """Whether a sender holds the task's push claim now: a probe's claim, lapsed as soon as
    it is made, is refused (it takes nothing from a sender claiming the task next)."""
    async with open_store(store_url) as store:
        lapsed = m.utcnow() - timedelta(seconds=1)
        key = (ANONYMOUS, task_id)
        return key not in await store.claim_push_deliveries("probe", [key], until=lapsed)


async def test_a_stopped_replicas_followed_task_is_sent_by_the_replica_running_it(
    hook: Webhook, store_url: str
) -> None:
    """Replica A accepts a config for a task replica B runs, follows it through the store and
    holds the task's push claim; then A stops, and gives the claim up.  B, whose job goes on,
    takes the task's deliveries over at its next tick, not once the claim would have lapsed (a
    lease, 9 s, later): the webhook gets every event after the config's creation, each once,
    in order."""
    gate = f"push-followed {m.new_id()}"  # the gates outlive a test
    config = attrs.evolve(REPLICA, runtime=attrs.evolve(REPLICA.runtime, recovery_lease=9.0))
    async with trio.open_nursery() as nursery:
        base_b = await nursery.start(partial(serve, agent, port=0, store=store_url, config=config))
        async with httpx.AsyncClient(base_url=base_b, headers=V1_HEADERS) as http:
            task_id = await start(http, gate, "gated")
        after = await at_its_gate(store_url, task_id)
        async with trio.open_nursery() as replica_a:
            stop_a = trio.Event()
            serving_a = partial(serve, agent, port=0, store=store_url, config=config)
            base_a = await replica_a.start(partial(serving_a, shutdown_trigger=stop_a.wait))
            async with httpx.AsyncClient(base_url=base_a, headers=V1_HEADERS) as http:
                params = {"taskId": task_id, "url": hook.url}
                created = await call(http, "CreateTaskPushNotificationConfig", params)
                assert created["result"]["taskId"] == task_id
            with trio.fail_after(10):  # A's watcher claims the task
                while not await someone_holds_the_claim(store_url, task_id):  # noqa: ASYNC110
                    await trio.sleep(0.01)
            stop_a.set()
        assert not await someone_holds_the_claim(store_url, task_id)
        open_gate(gate)
        await hook.wait_for_state("TASK_STATE_COMPLETED")
        await marked_sent(store_url, task_id)
        nursery.cancel_scope.cancel()
    await check_sent_after(hook, store_url, "/hook", task_id, after)


async def test_a_config_created_at_another_replica_is_not_sent_twice(
    hook: Webhook, store_url: str
) -> None:
    """B runs a task and delivers its config's notifications; a second config is created at A.
    B, holding the task's claim, sends each later event to both webhooks, and A sends
    nothing: each webhook gets each event once."""
    gate = f"push-second {m.new_id()}"
    async with trio.open_nursery() as nursery:
        serving = partial(serve, agent, port=0, store=store_url, config=STEADY)
        base_a, base_b = await nursery.start(serving), await nursery.start(serving)
        async with httpx.AsyncClient(base_url=base_b, headers=V1_HEADERS) as http:
            first = {"url": hook.url + "/b"}
            task_id = await start(http, gate, "gated", taskPushNotificationConfig=first)
        after = await at_its_gate(store_url, task_id)
        await hook.wait_for(lambda got: len(got) == after)  # B is at the gate too
        async with httpx.AsyncClient(base_url=base_a, headers=V1_HEADERS) as http:
            params = {"taskId": task_id, "url": hook.url + "/a"}
            await call(http, "CreateTaskPushNotificationConfig", params)
        await trio.sleep(0.2)  # A's sender gave way at once: its claim was refused
        open_gate(gate)
        await hook.wait_for_state("TASK_STATE_COMPLETED", path="/hook/a")
        await hook.wait_for_state("TASK_STATE_COMPLETED", path="/hook/b")
        await trio.sleep(0.5)  # time for a second POST of any event, if one came
        await marked_sent(store_url, task_id)
        nursery.cancel_scope.cancel()
    await check_sent_after(hook, store_url, "/hook/b", task_id, 0)
    await check_sent_after(hook, store_url, "/hook/a", task_id, after)
