"""a2a_trio's client and the ``a2a-trio`` command against the JS SDK's agent (``agent.mjs``).

The agent serves JSON-RPC (A2A v1.0, and v0.3 at the same URL through the SDK's compatibility
layer) and HTTP+JSON (v1.0); the message's ``metadata.skillId`` picks echo, stream, ask or wait.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from client.test_sdk_interop import follow_then_cancel

from a2a_trio import model as m
from a2a_trio.client import HTTP_JSON, JSONRPC, Client, open_client
from a2a_trio.errors import MethodNotFoundError, TaskNotCancelableError, TaskNotFoundError

CLI = str(Path(sys.executable).with_name("a2a-trio"))


def to(skill: str, text: str) -> m.Message:
    """A message for one of the agent's skills."""
    return m.text_message(text, metadata={"skillId": skill})


def texts(parts: tuple[m.Part, ...]) -> str:
    return "".join(p.text for p in parts if isinstance(p, m.TextPart))


@pytest.fixture(params=[(JSONRPC, "1.0"), (HTTP_JSON, "1.0"), (JSONRPC, "0.3")], ids=str)
async def client(js_agent: str, request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    binding, version = request.param
    async with open_client(js_agent, bindings=[binding], versions=[version]) as client:
        assert (client.interface.protocol_binding, client.interface.protocol_version) == (
            binding,
            version,
        )
        yield client


async def test_send_get_and_errors(client: Client) -> None:
    task = await client.send("hello js")
    assert isinstance(task, m.Task)
    for seen in (task, await client.get_task(task.id)):  # as sent back, then as fetched
        assert (seen.id, seen.status.state) == (task.id, m.TaskState.COMPLETED)
        assert [texts(a.parts) for a in seen.artifacts] == ["hello js"]
    with pytest.raises(TaskNotFoundError):
        await client.get_task("no-such-task")
    with pytest.raises(TaskNotCancelableError):
        await client.cancel_task(task.id)


async def test_stream(client: Client) -> None:
    async with client.stream(to("stream", "abcdef")) as events:
        seen = [event async for event in events]
    assert isinstance(seen[0], m.Task)
    chunks = [e for e in seen if isinstance(e, m.TaskArtifactUpdateEvent)]
    assert [(texts(c.artifact.parts), c.append, c.last_chunk) for c in chunks] == [
        ("abc", False, False),
        ("def", True, True),
    ]
    last = seen[-1]
    assert isinstance(last, m.TaskStatusUpdateEvent)
    assert last.status.state is m.TaskState.COMPLETED
    task = await client.get_task(events.task_id)
    assert [texts(a.parts) for a in task.artifacts] == ["abcdef"]


async def test_multi_turn(client: Client) -> None:
    asked = await client.send(to("ask", "start"))
    assert isinstance(asked, m.Task)
    assert asked.status.state is m.TaskState.INPUT_REQUIRED
    assert asked.status.message is not None
    assert texts(asked.status.message.parts) == "What is your name?"
    answered = await client.send("Ada", task_id=asked.id, context_id=asked.context_id)
    assert isinstance(answered, m.Task)
    assert (answered.id, answered.status.state) == (asked.id, m.TaskState.COMPLETED)
    assert [texts(a.parts) for a in answered.artifacts] == ["hello Ada"]


async def test_subscribe_then_cancel(client: Client) -> None:
    await follow_then_cancel(client, to("wait", "wait"))


async def test_list(client: Client) -> None:
    sent = await client.send("listed")
    assert isinstance(sent, m.Task)
    if client.interface.protocol_version == "0.3":
        # The JS SDK's server does not serve v0.3 tasks/list, which v0.3 §7.4 defines.
        with pytest.raises(MethodNotFoundError):
            await client.list_tasks(context_id=sent.context_id)
        return
    page = await client.list_tasks(context_id=sent.context_id)
    assert [t.id for t in page.tasks] == [sent.id]


async def test_js_server_departures_from_the_spec(js_agent: str) -> None:
    """Where the JS SDK's server answers otherwise than A2A v1.0 says (docs/bindings.md lists
    these); a2a_trio's client reads each of these answers right, as the tests above show."""
    v1 = {"A2A-Version": "1.0"}
    async with httpx.AsyncClient(base_url=js_agent, headers=v1, timeout=10) as http:
        finished = (await http.post("/a2a/rest/message:send", json={"message": user("hi")})).json()
        task_id = finished["task"]["id"]
        # §5.4: TaskNotCancelableError is HTTP 409; §11.1: the answers are application/json.
        canceled = await http.post(f"/a2a/rest/tasks/{task_id}:cancel", json={})
        assert (canceled.status_code, canceled.headers["content-type"]) == (
            400,
            "application/a2a+json; charset=utf-8",
        )
        # §5.4: UnsupportedOperationError is UNIMPLEMENTED (a finished task has no updates).
        subscribed = await http.post(f"/a2a/rest/tasks/{task_id}:subscribe")
        assert subscribed.json()["error"]["status"] == "FAILED_PRECONDITION"
        assert subscribed.json()["error"]["details"][0]["reason"] == "UNSUPPORTED_OPERATION"
        # JSON-RPC 2.0 §4.1: a notification (no id) gets no answer.
        get = {"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "nope"}}
        notified = await http.post("/a2a/jsonrpc", json=get)
        assert notified.json()["id"] is None and notified.json()["error"]["code"] == -32001
        # §9.1: a JSON-RPC body must be application/json (a2a_trio: 415 with -32600); the SDK
        # answers 200 with -32005 and loses the request's id.
        typed = await http.post(
            "/a2a/jsonrpc",
            content=orjson.dumps(get | {"id": 7}),
            headers={"Content-Type": "text/plain"},
        )
        assert typed.status_code == 200
        assert (typed.json()["id"], typed.json()["error"]["code"]) == (None, -32005)


def user(text: str) -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60, check=False)


def cli_json(*args: str) -> Any:
    done = cli(*args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_cli_card_send_stream_get(js_agent: str) -> None:
    card = cli_json("card", js_agent)
    assert card["name"] == "js echo agent"
    assert [s["id"] for s in card["skills"]] == ["echo", "stream", "ask", "wait"]
    sent = cli_json("send", js_agent, "from the cli")["task"]
    assert sent["status"]["state"] == "TASK_STATE_COMPLETED"
    assert sent["artifacts"][0]["parts"] == [{"text": "from the cli"}]
    got = cli_json("get", js_agent, sent["id"])["task"]
    assert (got["id"], got["artifacts"]) == (sent["id"], sent["artifacts"])
    streamed = cli("stream", js_agent, "abcd", "--skill", "stream")
    assert streamed.returncode == 0, streamed.stderr
    assert "COMPLETED" in streamed.stdout and "abcd" in streamed.stdout
    missing = cli("get", js_agent, "no-such-task")
    assert missing.returncode == 2 and "TaskNotFoundError (-32001)" in missing.stderr


def test_cli_subscribe_and_cancel(js_agent: str) -> None:
    running = cli_json("send", js_agent, "wait", "--skill", "wait", "--no-wait")["task"]
    with subprocess.Popen(
        [CLI, "subscribe", js_agent, running["id"], "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as follower:
        assert follower.stdout is not None
        first = json.loads(follower.stdout.readline())  # subscribed: the task comes first
        assert first["task"]["id"] == running["id"]
        canceled = cli_json("cancel", js_agent, running["id"])["task"]
        rest = [json.loads(line) for line in follower.stdout]
        assert follower.wait(timeout=30) == 3  # it followed the task to its end: canceled
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    last = rest[-1].get("statusUpdate") or rest[-1].get("task")
    assert last["status"]["state"] == "TASK_STATE_CANCELED"
