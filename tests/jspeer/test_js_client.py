"""The official A2A JavaScript SDK's client (``client.mjs``) against a served a2a_trio.

One ``node`` run per binding the two share (JSON-RPC and HTTP+JSON, each in A2A v1.0 and
through the SDK's v0.3 compatibility transports; the SDK's gRPC transport has no a2a_trio
counterpart) goes through every operation the JS client offers and prints what it saw; the test
holds that against what a2a_trio's store holds.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import Any

import attrs
import pytest
import trio
from bindings.agents import agent

from a2a_trio import ServerConfig, serve
from a2a_trio import model as m
from a2a_trio.runtime import RuntimeConfig
from a2a_trio.store import CallerScope, TaskStore, open_store

from .js_peer import HERE

CONFIG = ServerConfig(runtime=RuntimeConfig(poll_interval=0.01))  # the parked skill's steps


@attrs.frozen
class Served:
    url: str
    store: TaskStore

    async def task(self, task_id: str) -> m.Task:
        stored = await self.store.load_task(CallerScope(), task_id)
        assert stored is not None
        return stored.task


@pytest.fixture
async def served(nursery: trio.Nursery) -> Served:
    opened: list[TaskStore] = []

    @asynccontextmanager
    async def kept_store() -> AsyncIterator[TaskStore]:
        async with open_store("memory") as store:
            opened.append(store)
            yield store

    factory: Callable[[], AbstractAsyncContextManager[TaskStore]] = kept_store
    url = await nursery.start(partial(serve, agent, port=0, store=factory, config=CONFIG))
    return Served(url, opened[0])


async def js_client(node: str, url: str, binding: str, version: str) -> dict[str, Any]:
    """What the JS SDK's client saw, as ``client.mjs`` reports it."""
    command = [node, str(HERE / "client.mjs"), url, binding, version]
    with trio.fail_after(30):
        done = await trio.run_process(
            command, capture_stdout=True, capture_stderr=True, check=False
        )
    assert done.returncode == 0, done.stderr.decode()
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def texts(artifacts: tuple[m.Artifact, ...]) -> list[str]:
    return ["".join(p.text for p in a.parts if isinstance(p, m.TextPart)) for a in artifacts]


def summary(task: m.Task) -> dict[str, Any]:
    """A task as ``client.mjs`` summarizes one."""
    return {
        "id": task.id,
        "contextId": task.context_id,
        "state": f"TASK_STATE_{task.status.state.name}",
        "artifacts": texts(task.artifacts),
        "history": len(task.history),
    }


# What ``listTasks`` gives over each: the v1.0 transports list; the v0.3 ones fail by themselves,
# with no request sent, although v0.3 §7.4 defines ListTasks (``tasks/list``, ``GET /v1/tasks``
# over HTTP+JSON) and a2a_trio serves both (tests/bindings/test_rest_v03.py, test_peers.py).
V03_JSONRPC_LIST = {"error": "JsonRpcTransportError", "message": "Method not found: tasks/list"}
V03_REST_LIST = {
    "error": "UnsupportedOperationError",
    "message": "tasks/list has no equivalent in v0.3 HTTP+JSON",
}


@pytest.mark.parametrize(
    ("binding", "version", "transport", "errors", "v03_list"),
    [
        ("JSONRPC", "1.0", "JsonRpcTransport", "JsonRpc", None),
        ("HTTP+JSON", "1.0", "_RestTransport", "Rest", None),
        ("JSONRPC", "0.3", "_LegacyJsonRpcTransport", "JsonRpc", V03_JSONRPC_LIST),
        ("HTTP+JSON", "0.3", "_LegacyRestTransport", "", V03_REST_LIST),
    ],
)
async def test_js_client_drives_a2a_trio(
    node_path: str,
    served: Served,
    binding: str,
    version: str,
    transport: str,
    errors: str,
    v03_list: dict[str, str] | None,
) -> None:
    seen = await js_client(node_path, served.url, binding, version)
    assert (seen["transport"], seen["protocolVersion"]) == (transport, version)
    assert seen["card"] == {"name": agent.name, "skills": [s.id for s in agent.skills]}
    base = served.url.rstrip("/")
    main, rest = ["JSONRPC", base + "/"], ["HTTP+JSON", base]
    # The v0.3 card repeats its main interface in additionalInterfaces (v0.3 §5.6.2), and the
    # SDK reads it twice: harmless, it talks to the URL its card gives for the binding.
    assert seen["interfaces"] == ([main, main, rest] if version == "0.3" else [main, rest] * 2)
    assert seen["endpoint"] == (main if binding == "JSONRPC" else rest)[1]

    sent = await served.task(seen["send"]["id"])
    assert seen["send"] == summary(sent) | {"artifacts": ["blocking"]}
    assert seen["get"] == seen["send"]  # historyLength 1: the one message
    assert seen["quick"] == {"role": "ROLE_AGENT", "text": "quick hi"}
    if v03_list is None:
        assert seen["list"] == {"returned": [sent.id]}  # listed by the sent task's context
    else:
        assert {"error": seen["list"]["error"], "message": seen["list"]["message"]} == v03_list
    # The status left out: over JSON-RPC the SDK sends "UNRECOGNIZED", which names no state
    # and is refused as invalid params (-32602) listing them; the HTTP+JSON query leaves it out.
    unset = seen["listUnset"]
    if (binding, version) == ("JSONRPC", "1.0"):
        assert unset["error"] == "JsonRpcRequestMalformedError", unset
        assert unset["message"].startswith("$.params.status: unknown task state 'UNRECOGNIZED'")
        assert "TASK_STATE_WORKING" in unset["message"]
    else:
        assert unset == seen["list"]

    streamed = seen["stream"]
    assert [e["kind"] for e in streamed] == ["task", "status", "status", "artifact", "status"]
    assert (streamed[3]["text"], streamed[-1]["state"]) == ("cba", "TASK_STATE_COMPLETED")
    assert texts((await served.task(streamed[0]["id"])).artifacts) == ["cba"]

    canceled = await served.task(seen["running"]["id"])
    assert canceled.status.state is m.TaskState.CANCELED
    assert seen["cancel"] == summary(canceled)
    if v03_list is None:  # an empty artifacts list read as one
        assert seen["listArtifacts"] == {"returned": [seen["cancel"]]}
        assert seen["cancel"]["artifacts"] == []
    else:
        assert seen["listArtifacts"]["error"] == v03_list["error"]
    followed = seen["resubscribe"]  # the task as it was when subscribed, then its updates
    assert followed[0]["kind"] == "task" and followed[0]["id"] == canceled.id
    assert followed[-1] == {"kind": "status", "state": "TASK_STATE_CANCELED"}

    assert seen["asked"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    answered = await served.task(seen["asked"]["id"])
    assert seen["answered"] == summary(answered) | {"artifacts": ["hello Ada"], "history": 3}

    for case, name in [
        ("getUnknown", "TaskNotFoundError"),
        ("cancelFinished", "TaskNotCancelableError"),
        ("resubscribeFinished", "UnsupportedOperationError"),
    ]:
        error = seen["errors"][case]
        assert (error["error"], error["name"]) == (errors + name, name), error
    assert (await served.task(sent.id)).status.state is m.TaskState.COMPLETED

    # No push notifications here: the SDK refuses create, get and list itself, from the card;
    # delete it asks for, and a2a_trio's refusal arrives as the same typed error.
    push = seen["push"]
    assert {e["name"] for e in push.values()} == {"PushNotificationNotSupportedError"}
    assert "capabilities.pushNotifications is false" in push["delete"]["message"]
