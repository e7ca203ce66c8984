"""Push notifications (A2A v1.0 §3.1.7-3.1.10, §4.3): configs created, read, listed and
deleted on every binding, and each task event POSTed to a real webhook on 127.0.0.1."""

from __future__ import annotations

import logging
import signal
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

import a2a.types as t
import httpx
import pytest
import trio
from a2a.client import ClientConfig, create_client
from a2a.utils.errors import TaskNotFoundError
from doc_examples import run_block, runs_examples
from push_backlog import lagging
from serve_process import run_server

from a2a_trio import PushSettings, ServerConfig, serve
from a2a_trio import model as m
from a2a_trio.runtime import RuntimeConfig, TaskRuntime
from a2a_trio.server._push import PushSender
from a2a_trio.store import ANONYMOUS, MemoryTaskStore, open_store
from a2a_trio.wire import V1

from .agents import agent, gates, open_gate
from .conftest import V1_HEADERS, rpc, user_message
from .test_sdk_interop import message, new_gate, request, send_task
from .webhook import Delivery, Webhook

FAST_RETRIES = PushSettings(retry_wait=0.05, timeout=2, allow_private_networks=True)


async def _serving(nursery: trio.Nursery, push: PushSettings | None) -> str:
    config = ServerConfig(keepalive=0.2, runtime=RuntimeConfig(poll_interval=0.01), push=push)
    url: str = await nursery.start(partial(serve, agent, port=0, config=config))
    return url


@pytest.fixture
async def http(nursery: trio.Nursery) -> AsyncIterator[httpx.AsyncClient]:
    """A client of a server with push notifications on (private webhooks allowed)."""
    base = await _serving(nursery, FAST_RETRIES)
    async with httpx.AsyncClient(base_url=base, headers=V1_HEADERS, timeout=10) as client:
        yield client


async def call(http: httpx.AsyncClient, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The JSON-RPC response document of one call."""
    response = await http.post("/", json=rpc(method, params))
    assert response.status_code == 200
    document: dict[str, Any] = response.json()
    return document


async def start(http: httpx.AsyncClient, text: str, skill: str, **configuration: Any) -> str:
    """Start a task without waiting for it; its id."""
    params = {
        "message": user_message(text, skill=skill),
        "configuration": {"returnImmediately": True, **configuration},
    }
    document = await call(http, "SendMessage", params)
    return str(document["result"]["task"]["id"])


def states(deliveries: list[Delivery]) -> list[str | None]:
    return [d.state for d in deliveries]


async def test_the_card_says_push_notifications_when_they_are_on(http: httpx.AsyncClient) -> None:
    card = (await http.get("/.well-known/agent-card.json")).json()
    assert card["capabilities"]["pushNotifications"] is True
    v03 = (await http.get("/.well-known/agent.json")).json()
    assert v03["capabilities"]["pushNotifications"] is True


async def test_a_send_with_a_config_delivers_every_event_in_order(
    http: httpx.AsyncClient, hook: Webhook
) -> None:
    config = {
        "url": hook.url,
        "token": "client-token",
        "authentication": {"scheme": "Bearer", "credentials": "webhook-secret"},
    }
    task_id = await start(http, "3", "many", taskPushNotificationConfig=config)
    got = await hook.wait_for_state("TASK_STATE_COMPLETED")
    kinds = [d.kind for d in got]
    assert kinds[0] == "task" and kinds.count("artifactUpdate") == 3
    assert len({d.client for d in got}) == 1  # one connection, kept alive from event to event
    assert states(got)[-1] == "TASK_STATE_COMPLETED"
    chunks = [d.body["artifactUpdate"]["artifact"]["parts"][0]["text"] for d in got[1:-1]]
    assert chunks == ["0 ", "1 ", "2 "]
    for delivery in got:
        event = V1.decode_stream_response(delivery.body)  # a v1.0 StreamResponse
        assert (event.id if isinstance(event, m.Task) else event.task_id) == task_id
        assert delivery.headers["x-a2a-notification-token"] == "client-token"
        assert delivery.headers["authorization"] == "Bearer webhook-secret"
        assert delivery.headers["content-type"] == "application/json"
    # The config was stored for the task the send created, under a new id.
    listed = await call(http, "ListTaskPushNotificationConfigs", {"taskId": task_id})
    (stored,) = listed["result"]["configs"]
    assert stored["taskId"] == task_id and stored["url"] == hook.url and stored["id"]


async def test_configs_are_created_read_listed_and_deleted(
    http: httpx.AsyncClient, hook: Webhook
) -> None:
    gate = "push-crud"
    task_id = await start(http, gate, "gated")
    created = await call(
        http, "CreateTaskPushNotificationConfig", {"taskId": task_id, "url": hook.url, "id": "a"}
    )
    assert created["result"] == {"url": hook.url, "id": "a", "taskId": task_id}
    second = await call(
        http, "CreateTaskPushNotificationConfig", {"taskId": task_id, "url": hook.url + "/2"}
    )
    second_id = second["result"]["id"]
    assert second_id and second_id != "a"

    got = await call(http, "GetTaskPushNotificationConfig", {"taskId": task_id, "id": "a"})
    assert got["result"] == created["result"]
    listed = await call(http, "ListTaskPushNotificationConfigs", {"taskId": task_id})
    assert [c["id"] for c in listed["result"]["configs"]] == ["a", second_id]
    page = await call(http, "ListTaskPushNotificationConfigs", {"taskId": task_id, "pageSize": 1})
    assert [c["id"] for c in page["result"]["configs"]] == ["a"]
    assert page["result"]["nextPageToken"] == "a"
    rest = await call(
        http,
        "ListTaskPushNotificationConfigs",
        {"taskId": task_id, "pageSize": 1, "pageToken": "a"},
    )
    assert [c["id"] for c in rest["result"]["configs"]] == [second_id]
    assert "nextPageToken" not in rest["result"]

    deleted = await call(http, "DeleteTaskPushNotificationConfig", {"taskId": task_id, "id": "a"})
    assert deleted["result"] == {}
    again = await call(http, "DeleteTaskPushNotificationConfig", {"taskId": task_id, "id": "a"})
    assert again["result"] == {}  # idempotent (A2A v1.0 §3.1.10)
    gone = await call(http, "GetTaskPushNotificationConfig", {"taskId": task_id, "id": "a"})
    assert gone["error"]["code"] == -32001
    assert f"Task {task_id} has no push notification config 'a'" in gone["error"]["message"]

    # Only the config left is called for the events from here on.
    open_gate(gate)
    got = await hook.wait_for_state("TASK_STATE_COMPLETED", path="/hook/2")
    assert {d.path for d in got} == {"/hook/2"}
    assert [d.kind for d in got][-2:] == ["artifactUpdate", "statusUpdate"]


async def test_bad_config_calls_get_spec_errors(http: httpx.AsyncClient, hook: Webhook) -> None:
    task_id = await start(http, "x", "echo")
    unknown = await call(
        http, "CreateTaskPushNotificationConfig", {"taskId": "nope", "url": hook.url}
    )
    assert unknown["error"]["code"] == -32001
    for params in (
        {"taskId": task_id, "url": "ftp://example.com/hook"},
        {"taskId": task_id, "url": "/relative/hook"},
        {"taskId": task_id, "url": "http://[::1/hook"},
    ):
        refused = await call(http, "CreateTaskPushNotificationConfig", params)
        assert refused["error"]["code"] == -32602, params
        assert "absolute http(s) URL" in refused["error"]["message"]
        assert refused["error"]["data"][0]["metadata"]["path"] == "$.params.url"
    for field, config in (
        ("$.params.token", {"token": "line\nbreak"}),
        (
            "$.params.authentication.credentials",
            {"authentication": {"scheme": "Bearer", "credentials": "clé"}},
        ),
        (
            "$.params.authentication.scheme",
            {"authentication": {"scheme": "Bear er", "credentials": "k"}},
        ),
    ):
        params = {"taskId": task_id, "url": hook.url, **config}
        refused = await call(http, "CreateTaskPushNotificationConfig", params)
        assert refused["error"]["code"] == -32602, field
        assert refused["error"]["data"][0]["metadata"]["path"] == field
    missing = await call(http, "CreateTaskPushNotificationConfig", {"url": hook.url})
    assert missing["error"]["code"] == -32602
    bad_token = await call(
        http, "ListTaskPushNotificationConfigs", {"taskId": task_id, "pageToken": "zz"}
    )
    assert bad_token["error"]["code"] == -32602
    negative = await call(
        http, "ListTaskPushNotificationConfigs", {"taskId": task_id, "pageSize": -1}
    )
    assert negative["error"]["code"] == -32602
    not_there = await call(http, "DeleteTaskPushNotificationConfig", {"taskId": "nope", "id": "a"})
    assert not_there["error"]["code"] == -32001
    listed = await call(http, "ListTaskPushNotificationConfigs", {"taskId": task_id})
    assert listed["result"] == {}  # nothing refused was stored


async def test_a_webhook_that_fails_for_a_while_is_tried_again(
    http: httpx.AsyncClient, hook: Webhook
) -> None:
    hook.answers = [503, 500]  # the first event's first two tries fail
    await start(http, "hi", "echo", taskPushNotificationConfig={"url": hook.url})
    got = await hook.wait_for_state("TASK_STATE_COMPLETED")
    assert got[0].kind == "task"  # delivered on the third try, and first
    assert hook.attempts == len(got) + 2


async def test_a_webhook_answering_at_length_gets_a_connection_per_event(
    http: httpx.AsyncClient, hook: Webhook
) -> None:
    """An answer longer than the sender reads is left unread, and its connection closed."""
    hook.answer_body = b"x" * 100_000
    await start(http, "3", "many", taskPushNotificationConfig={"url": hook.url})
    got = await hook.wait_for_state("TASK_STATE_COMPLETED")
    assert len(got) == 5 and len({d.client for d in got}) == 5


async def test_a_webhook_that_refuses_an_event_is_not_asked_again(
    http: httpx.AsyncClient, hook: Webhook, caplog: pytest.LogCaptureFixture
) -> None:
    hook.answers = [400]
    with caplog.at_level(logging.WARNING, logger="a2a_trio.push"):
        secret_url = hook.url.replace("http://", "http://user:pw@") + "?k=s"
        await start(http, "hi", "echo", taskPushNotificationConfig={"url": secret_url})
        got = await hook.wait_for_state("TASK_STATE_COMPLETED")
    assert got[0].kind != "task"  # the refused event is not sent again ...
    assert got[0].headers["authorization"] == "Basic dXNlcjpwdw=="  # user:pw, as clients do
    assert hook.attempts == len(got) + 1  # ... and the next ones still go out
    (line,) = [r.getMessage() for r in caplog.records if r.name == "a2a_trio.push"]
    assert "not delivered to http://127.0.0.1:" in line and "it answered HTTP 400" in line
    assert "k=s" not in line and "pw" not in line  # a query or user info may be secret


async def test_webhooks_on_private_networks_are_refused_unless_allowed(
    nursery: trio.Nursery, hook: Webhook
) -> None:
    base = await _serving(nursery, PushSettings())
    async with httpx.AsyncClient(base_url=base, headers=V1_HEADERS, timeout=10) as http:
        params = {
            "message": user_message("hi", skill="echo"),
            "configuration": {"taskPushNotificationConfig": {"url": hook.url}},
        }
        refused = (await http.post("/", json=rpc("SendMessage", params))).json()
        error = refused["error"]
        assert error["code"] == -32602
        assert "127.0.0.1, a loopback address" in error["message"]
        assert "allow_private_networks=True" in error["message"]
        path = error["data"][0]["metadata"]["path"]
        assert path == "$.params.configuration.taskPushNotificationConfig.url"
        listed = (await http.post("/", json=rpc("ListTasks", {}))).json()
        assert listed["result"]["tasks"] == []  # refused before the task was created
        task_id = await http.post("/", json=rpc("SendMessage", {**params, "configuration": {}}))
        created = task_id.json()["result"]["task"]["id"]
        for url in ("http://localhost:1/hook", "http://169.254.169.254/latest/meta-data/"):
            answer = await http.post(
                "/", json=rpc("CreateTaskPushNotificationConfig", {"taskId": created, "url": url})
            )
            assert answer.json()["error"]["code"] == -32602, url
        unresolvable = await http.post(
            "/",
            json=rpc(
                "CreateTaskPushNotificationConfig",
                {"taskId": created, "url": "http://no-such-host.invalid/hook"},
            ),
        )
        assert "does not resolve" in unresolvable.json()["error"]["message"]
        # v0.3 names the fields where its params hold them.
        v03 = {"A2A-Version": "0.3"}
        v03_message = {
            "kind": "message",
            "messageId": "m1",
            "role": "user",
            "parts": [{"kind": "text", "text": "hi"}],
        }
        for method, params, path in (
            (
                "message/send",
                {
                    "message": v03_message,
                    "configuration": {"pushNotificationConfig": {"url": hook.url}},
                },
                "$.params.configuration.pushNotificationConfig.url",
            ),
            (
                "tasks/pushNotificationConfig/set",
                {"taskId": created, "pushNotificationConfig": {"url": hook.url}},
                "$.params.pushNotificationConfig.url",
            ),
            (
                "tasks/pushNotificationConfig/set",
                {
                    "taskId": created,
                    "pushNotificationConfig": {"url": "https://example.com/h", "token": "a\nb"},
                },
                "$.params.pushNotificationConfig.token",
            ),
            ("tasks/pushNotificationConfig/list", {"id": ""}, "$.params.id"),
        ):
            answer = await http.post("/", headers=v03, json=rpc(method, params))
            error = answer.json()["error"]
            assert (error["code"], error["data"]["path"]) == (-32602, path), method
    assert hook.received == []


async def test_push_is_off_by_default(nursery: trio.Nursery, hook: Webhook) -> None:
    base = await _serving(nursery, None)
    async with httpx.AsyncClient(base_url=base, headers=V1_HEADERS, timeout=10) as http:
        card = (await http.get("/.well-known/agent-card.json")).json()
        assert card["capabilities"]["pushNotifications"] is False
        params = {"taskId": "t", "url": hook.url}
        answer = await http.post("/", json=rpc("CreateTaskPushNotificationConfig", params))
        assert answer.json()["error"]["code"] == -32003


async def test_a_task_waiting_for_input_goes_on_being_delivered(
    http: httpx.AsyncClient, hook: Webhook
) -> None:
    task_id = await start(http, "?", "ask", taskPushNotificationConfig={"url": hook.url})
    await hook.wait_for_state("TASK_STATE_INPUT_REQUIRED")
    reply = user_message("Ada", taskId=task_id)
    await call(http, "SendMessage", {"message": reply})
    got = await hook.wait_for_state("TASK_STATE_COMPLETED")
    assert states(got).count("TASK_STATE_INPUT_REQUIRED") == 1
    (completed,) = [d for d in got if d.state == "TASK_STATE_COMPLETED"]
    assert completed.body["statusUpdate"]["taskId"] == task_id


async def test_the_rest_and_v03_bindings_manage_configs(
    http: httpx.AsyncClient, hook: Webhook
) -> None:
    task_id = await start(http, "push-bindings", "gated")
    created = await http.post(
        f"/tasks/{task_id}/pushNotificationConfigs", json={"url": hook.url, "id": "r"}
    )
    assert created.status_code == 200
    assert created.json() == {"url": hook.url, "id": "r", "taskId": task_id}
    listed = await http.get(f"/tasks/{task_id}/pushNotificationConfigs")
    assert [c["id"] for c in listed.json()["configs"]] == ["r"]
    assert (await http.get(f"/tasks/{task_id}/pushNotificationConfigs/r")).json()["id"] == "r"
    missing = await http.get(f"/tasks/{task_id}/pushNotificationConfigs/zz")
    assert missing.status_code == 404
    v03 = {"A2A-Version": "0.3"}
    got = await http.post(
        "/",
        headers=v03,
        json=rpc(
            "tasks/pushNotificationConfig/get", {"id": task_id, "pushNotificationConfigId": "r"}
        ),
    )
    assert got.json()["result"] == {
        "taskId": task_id,
        "pushNotificationConfig": {"url": hook.url, "id": "r"},
    }
    set_v03 = await http.post(
        "/",
        headers=v03,
        json=rpc(
            "tasks/pushNotificationConfig/set",
            {"taskId": task_id, "pushNotificationConfig": {"url": hook.url + "/3", "id": "v"}},
        ),
    )
    assert set_v03.json()["result"]["pushNotificationConfig"]["id"] == "v"
    deleted = await http.delete(f"/tasks/{task_id}/pushNotificationConfigs/r")
    assert deleted.status_code == 200
    open_gate("push-bindings")
    got_v03 = await hook.wait_for_state("TASK_STATE_COMPLETED", path="/hook/3")
    assert {d.path for d in got_v03} == {"/hook/3"}


async def test_shutdown_still_delivers_the_final_events(hook: Webhook) -> None:
    """A task the shutdown stops ends FAILED, and that event reaches its webhook before the
    server is gone."""
    async with trio.open_nursery() as nursery:
        config = ServerConfig(push=FAST_RETRIES, shutdown_grace=0.2)
        stop = trio.Event()
        base = await nursery.start(
            partial(serve, agent, port=0, config=config, shutdown_trigger=stop.wait)
        )
        async with httpx.AsyncClient(base_url=base, headers=V1_HEADERS, timeout=10) as http:
            push = {"url": hook.url}
            await start(http, "push-shutdown", "gated", taskPushNotificationConfig=push)
            await hook.wait_for(lambda got: any(d.state == "TASK_STATE_WORKING" for d in got))
        stop.set()
    assert states(hook.received)[-1] == "TASK_STATE_FAILED"


def test_push_settings_refuse_nonsense() -> None:
    with pytest.raises(ValueError, match="attempts must be a whole number of at least 1"):
        PushSettings(attempts=0)
    with pytest.raises(ValueError, match="timeout must be a positive number of seconds"):
        PushSettings(timeout=0)


async def test_the_official_sdk_client_registers_webhooks_and_they_are_called(
    http: httpx.AsyncClient, hook: Webhook
) -> None:
    """a2a-sdk's client (JSON-RPC) as the interop peer: a send carrying a config, then the
    four config calls on a running task, each answered in the shapes it parses."""
    sdk = await create_client(str(http.base_url), ClientConfig(httpx_client=http, streaming=False))
    config = t.TaskPushNotificationConfig(url=hook.url, token="sdk-token")
    sent = request(message("hello", "echo"), return_immediately=True)
    sent.configuration.task_push_notification_config.CopyFrom(config)
    task = await send_task(sdk, sent)
    got = await hook.wait_for_state("TASK_STATE_COMPLETED")
    assert {d.headers["x-a2a-notification-token"] for d in got} == {"sdk-token"}

    gate = new_gate()
    running = await send_task(sdk, request(message(gate, "gated"), return_immediately=True))
    created = await sdk.create_task_push_notification_config(
        t.TaskPushNotificationConfig(task_id=running.id, url=hook.url + "/sdk", id="s")
    )
    assert (created.task_id, created.id, created.url) == (running.id, "s", hook.url + "/sdk")
    fetched = await sdk.get_task_push_notification_config(
        t.GetTaskPushNotificationConfigRequest(task_id=running.id, id="s")
    )
    assert fetched == created
    listed = await sdk.list_task_push_notification_configs(
        t.ListTaskPushNotificationConfigsRequest(task_id=running.id)
    )
    assert [c.id for c in listed.configs] == ["s"]
    gates[gate].set()
    on_sdk = [
        d
        for d in await hook.wait_for_state("TASK_STATE_COMPLETED", path="/hook/sdk")
        if d.path == "/hook/sdk"
    ]
    assert {d.body["statusUpdate"]["taskId"] for d in on_sdk if d.kind == "statusUpdate"} == {
        running.id
    }
    await sdk.delete_task_push_notification_config(
        t.DeleteTaskPushNotificationConfigRequest(task_id=running.id, id="s")
    )
    with pytest.raises(TaskNotFoundError):
        await sdk.get_task_push_notification_config(
            t.GetTaskPushNotificationConfigRequest(task_id=running.id, id="s")
        )
    assert task.id != running.id


@runs_examples("docs/push.md", 0)
async def test_the_docs_example_delivers_every_update_to_its_webhook(
    capsys: pytest.CaptureFixture[str],
) -> None:
    namespace = run_block("docs/push.md", 0)
    with trio.fail_after(20):
        await namespace["main"]()
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        "sent; the client has gone, the task SUBMITTED",
        "the webhook got ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']",
    ]


async def test_a_config_the_server_cannot_send_to_does_not_stop_the_others(
    hook: Webhook, caplog: pytest.LogCaptureFixture
) -> None:
    """Configs written to the store by other means than the checked calls (here: directly)
    are tried, logged, and passed over; the task's other webhooks still get every event."""
    store = MemoryTaskStore()
    runtime = TaskRuntime(agent, store, RuntimeConfig(stall_warning=None))
    sender = PushSender(runtime, FAST_RETRIES)
    gate = "push-unsendable"
    with caplog.at_level(logging.WARNING, logger="a2a_trio.push"):
        async with trio.open_nursery() as nursery:
            await nursery.start(sender.run)
            await nursery.start(runtime.run)
            sent = m.SendMessageRequest(
                m.text_message(gate, metadata={"skillId": "gated"}),
                configuration=m.SendMessageConfiguration(return_immediately=True),
            )
            task = await runtime.send(ANONYMOUS, sent)
            assert isinstance(task, m.Task)
            for url in ("not a url", "http://127.0.0.1:1/closed", hook.url):
                config = m.TaskPushNotificationConfig(url=url, task_id=task.id)
                await store.set_push_config(ANONYMOUS, config, delivered_through=0)
            sender.watch(ANONYMOUS, task.id, after=0)
            open_gate(gate)
            got = await hook.wait_for_state("TASK_STATE_COMPLETED")
            await sender.drain(5)
            assert sender.watcher_count == 0  # it ended with the task
            nursery.cancel_scope.cancel()
    assert got[0].kind == "task" and got[-1].state == "TASK_STATE_COMPLETED"
    lines = {r.getMessage().split(": ", 1)[0] for r in caplog.records}
    assert lines == {
        f"push notification for task {task.id} not delivered to 'not a url'",
        f"push notification for task {task.id} not delivered to http://127.0.0.1:1/closed",
    }


async def test_a_restart_goes_on_delivering_the_tasks_it_recovers(
    hook: Webhook, tmp_path: Path
) -> None:
    """A resumable task left running by one server is re-run by the next on the same store,
    and its webhook hears the rest of it from that next server."""
    store = f"sqlite:///{tmp_path / 'tasks.db'}"
    config = ServerConfig(push=FAST_RETRIES, shutdown_grace=0)
    gate = "push-restart"
    async with trio.open_nursery() as nursery:
        stop = trio.Event()
        serving = partial(serve, agent, port=0, store=store, config=config)
        base = await nursery.start(partial(serving, shutdown_trigger=stop.wait))
        async with httpx.AsyncClient(base_url=base, headers=V1_HEADERS, timeout=10) as http:
            push = {"url": hook.url}
            task_id = await start(http, gate, "gated_redo", taskPushNotificationConfig=push)
            await hook.wait_for_state("TASK_STATE_WORKING")
        stop.set()
    assert "TASK_STATE_COMPLETED" not in states(hook.received)  # left running, not failed
    assert "TASK_STATE_FAILED" not in states(hook.received)
    open_gate(gate)  # the re-run goes straight through
    async with trio.open_nursery() as nursery:
        await nursery.start(serving)
        got = await hook.wait_for_state("TASK_STATE_COMPLETED")
        nursery.cancel_scope.cancel()
    completed = [d for d in got if d.state == "TASK_STATE_COMPLETED"]
    assert [d.body["statusUpdate"]["taskId"] for d in completed] == [task_id]


async def test_a_task_that_waited_across_a_restart_is_delivered_once_answered(
    hook: Webhook, tmp_path: Path
) -> None:
    """A task waiting for input when the server stopped is not polled for by the next one,
    which watches it again when the answer comes."""
    store = f"sqlite:///{tmp_path / 'tasks.db'}"
    config = ServerConfig(push=FAST_RETRIES, shutdown_grace=0)
    serving = partial(serve, agent, port=0, store=store, config=config)
    async with trio.open_nursery() as nursery:
        stop = trio.Event()
        base = await nursery.start(partial(serving, shutdown_trigger=stop.wait))
        async with httpx.AsyncClient(base_url=base, headers=V1_HEADERS, timeout=10) as http:
            push = {"url": hook.url}
            task_id = await start(http, "?", "ask", taskPushNotificationConfig=push)
            await hook.wait_for_state("TASK_STATE_INPUT_REQUIRED")
        stop.set()
    async with trio.open_nursery() as nursery:
        base = await nursery.start(serving)
        async with httpx.AsyncClient(base_url=base, headers=V1_HEADERS, timeout=10) as http:
            # Its skill runs again from the answer, and here asks again (docs/agents.md).
            again = await call(
                http, "SendMessage", {"message": user_message("Ada", taskId=task_id)}
            )
            assert again["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            await hook.wait_for(lambda got: states(got).count("TASK_STATE_INPUT_REQUIRED") == 2)
            done = await call(http, "SendMessage", {"message": user_message("Ada", taskId=task_id)})
            assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            got = await hook.wait_for_state("TASK_STATE_COMPLETED")
        nursery.cancel_scope.cancel()
    (completed,) = [d for d in got if d.state == "TASK_STATE_COMPLETED"]
    assert completed.body["statusUpdate"]["taskId"] == task_id


async def check_sent_as_logged(hook: Webhook, store_url: str, paths: dict[str, str]) -> None:
    """Each task's webhook (by its path, per task id) was sent exactly the task's logged
    events, each once, in order."""
    async with open_store(store_url) as store:
        for task_id, path in paths.items():
            logged = await store.load_events(ANONYMOUS, task_id)
            sent = [d.body for d in hook.received if d.path == path]
            assert sent == [V1.encode_stream_response(event) for _seq, event in logged]


async def test_events_a_stopped_server_left_unsent_go_out_from_the_next(
    hook: Webhook, tmp_path: Path
) -> None:
    """The webhook is down while one task finishes, one works and one asks for input, and the
    server stops before trying again.  The next server on the store sends each task's events
    from the first one not sent: the finished and the waiting task's from the store, the
    re-run task's as it goes on, each event once, in order.  Then nothing is left to send."""
    store_url = f"sqlite:///{tmp_path / 'tasks.db'}"
    down = PushSettings(retry_wait=60, timeout=2, allow_private_networks=True)
    gate = "push-unsent"
    hook.answers = [503] * 3  # each task's first event; its retry would come in a minute
    async with trio.open_nursery() as nursery:
        config = ServerConfig(push=down, shutdown_grace=0.2)
        stop = trio.Event()
        serving = partial(serve, agent, port=0, store=store_url)
        base = await nursery.start(partial(serving, config=config, shutdown_trigger=stop.wait))
        async with httpx.AsyncClient(base_url=base, headers=V1_HEADERS, timeout=10) as http:
            done = await start(
                http, "hi", "echo", taskPushNotificationConfig={"url": hook.url + "/done"}
            )
            running = await start(
                http, gate, "gated_redo", taskPushNotificationConfig={"url": hook.url + "/running"}
            )
            asked = await call(  # blocking: answered once the task waits for input
                http,
                "SendMessage",
                {
                    "message": user_message("?", skill="ask"),
                    "configuration": {"taskPushNotificationConfig": {"url": hook.url + "/asking"}},
                },
            )
            asking = asked["result"]["task"]["id"]
            assert asked["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            await hook.wait_for(lambda _: hook.attempts == 3)
        stop.set()
    assert hook.received == []
    open_gate(gate)  # the re-run goes straight through
    async with trio.open_nursery() as nursery:
        stop = trio.Event()  # (a shutdown waits for a delivery under way to be marked sent)
        config = ServerConfig(push=FAST_RETRIES)
        await nursery.start(partial(serving, config=config, shutdown_trigger=stop.wait))
        await hook.wait_for_state("TASK_STATE_COMPLETED", path="/hook/done")
        await hook.wait_for_state("TASK_STATE_COMPLETED", path="/hook/running")
        await hook.wait_for_state("TASK_STATE_INPUT_REQUIRED", path="/hook/asking")
        stop.set()
    paths = {done: "/hook/done", running: "/hook/running", asking: "/hook/asking"}
    await check_sent_as_logged(hook, store_url, paths)
    async with open_store(store_url) as store:
        assert await lagging(store) == ()


async def test_events_a_killed_server_left_unsent_go_out_from_the_next(
    hook: Webhook, tmp_path: Path
) -> None:
    """``a2a-trio serve`` killed (SIGKILL) while the webhook refuses a finished task's first
    event, a second before trying again: the next process on the SQLite file sends them all."""
    store_url = f"sqlite:///{tmp_path / 'tasks.db'}"
    hook.answers = [503]
    serving = partial(run_server, "a2a_trio.demo:agent", store_url, "--push", "private")
    async with trio.open_nursery() as nursery:
        server = await nursery.start(serving)
        async with httpx.AsyncClient(base_url=server.url, headers=V1_HEADERS, timeout=10) as http:
            task_id = await start(http, "hi", "echo", taskPushNotificationConfig={"url": hook.url})
            await hook.wait_for(lambda _: hook.attempts == 1)
        server.process.send_signal(signal.SIGKILL)
        assert await server.process.wait() == -signal.SIGKILL
    assert hook.received == []
    async with trio.open_nursery() as nursery:
        server = await nursery.start(serving)
        await hook.wait_for_state("TASK_STATE_COMPLETED")
        nursery.cancel_scope.cancel()
    await check_sent_as_logged(hook, store_url, {task_id: "/hook"})
    assert not [line for line in server.stderr if "Traceback" in line or "ERROR" in line]
