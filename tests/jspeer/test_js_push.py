"""The official A2A JavaScript SDK's client (``push.mjs``) asks a2a_trio for push notifications
on each binding the two share, and a real webhook on 127.0.0.1 gets the task's updates."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest
import trio
from bindings.agents import agent
from server.webhook import webhook_server

from a2a_trio import PushSettings, ServerConfig, serve

from .js_peer import HERE

PUSH = ServerConfig(push=PushSettings(allow_private_networks=True, retry_wait=0.05))


@pytest.mark.parametrize(
    ("binding", "version"),
    [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "0.3")],
)
async def test_js_client_registers_webhooks(
    node_path: str, nursery: trio.Nursery, binding: str, version: str
) -> None:
    url = await nursery.start(partial(serve, agent, port=0, config=PUSH))
    async with webhook_server() as hook:
        command = [node_path, str(HERE / "push.mjs"), url, binding, version, hook.url]
        with trio.fail_after(30):
            done = await trio.run_process(
                command, capture_stdout=True, capture_stderr=True, check=False
            )
        assert done.returncode == 0, done.stderr.decode()
        seen: dict[str, Any] = json.loads(done.stdout)
        got = await hook.wait_for_state("TASK_STATE_COMPLETED", path="/hook/send")
    assert seen["capabilities"]["pushNotifications"] is True
    task_id = seen["task"]
    sent = [d for d in got if d.path == "/hook/send"]
    assert {d.headers["x-a2a-notification-token"] for d in sent} == {"js-token"}
    assert sent[-1].body["statusUpdate"]["taskId"] == task_id
    created = seen["create"]["returned"]
    assert (created["taskId"], created["id"], created["url"]) == (
        task_id,
        "js1",
        hook.url + "/crud",
    )
    assert seen["get"]["returned"]["id"] == "js1"
    listed = seen["list"]["returned"]["configs"]  # the send's config, then the created one
    assert [(c["url"], c["token"]) for c in listed] == [
        (hook.url + "/send", "js-token"),
        (hook.url + "/crud", "t"),
    ]
    assert listed[1]["id"] == "js1"
    assert "error" not in seen["delete"], seen["delete"]  # (it returns nothing)
    assert seen["getDeleted"]["name"] == "TaskNotFoundError", seen["getDeleted"]
