"""Real third-party clients against a2a_trio, each on the binding it speaks.

* the official ``a2a-sdk`` client over HTTP+JSON (v1.0) and through its v0.3 compatibility
  transports (JSON-RPC and HTTP+JSON, chosen from the v0.3 card at ``/.well-known/agent.json``);
* ``apcore-a2a``'s client, which speaks v0.3 JSON-RPC without a version header;
* ``mcp-mesh``'s consumer-side parsers (``A2AStream``, ``A2AClient._build_response``) reading
  the legacy dialect.  mcp-mesh cannot be installed with its dependencies into this venv (it pins
  rich 13 against our 15 and pulls in LLM SDKs), so the test loads its standalone consumer
  module from a ``pip install --no-deps mcp-mesh``; it skips, saying so, when that is absent
  (and fails in CI, where scripts/test.sh installs it).
"""

from __future__ import annotations

import functools
import importlib.util
import sys
import uuid
from contextlib import aclosing
from types import ModuleType
from typing import Any

import httpx
import pytest
import trio
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.card_resolver import parse_agent_card
from a2a.client.errors import A2AClientError
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError
from apcore_a2a.client import A2AClient as ApcoreClient
from apcore_a2a.client import TaskNotFoundError as ApcoreTaskNotFound
from prerequisites import missing_prerequisite

from a2a_trio import model as m
from a2a_trio.wire import V03

from .agents import gates


def sdk_message(text: str, skill: str = "echo") -> SendMessageRequest:
    message = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])
    message.metadata.update({"skillId": skill})
    return SendMessageRequest(message=message)


async def sdk_client(
    base_url: str, binding: str, card_path: str | None, *, streaming: bool = True
) -> Any:
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, base_url).get_agent_card(relative_card_path=card_path)
    config = ClientConfig(supported_protocol_bindings=[binding], streaming=streaming)
    return ClientFactory(config).create(card)


@pytest.mark.parametrize(
    ("binding", "card_path", "transport"),
    [
        ("HTTP+JSON", None, "RestTransport"),
        ("JSONRPC", None, "JsonRpcTransport"),
        ("JSONRPC", "/.well-known/agent.json", "CompatJsonRpcTransport"),
        ("HTTP+JSON", "/.well-known/agent.json", "CompatRestTransport"),
    ],
)
async def test_official_sdk_client(
    base_url: str, binding: str, card_path: str | None, transport: str
) -> None:
    client = await sdk_client(base_url, binding, card_path)
    try:
        assert type(client._transport).__name__ == transport
        events = [event async for event in client.send_message(sdk_message("peer", "parked"))]
        final = events[-1]
        assert final.status_update.status.state == TaskState.TASK_STATE_COMPLETED
        task_id = final.status_update.task_id
        artifacts = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
        assert [p.text for a in artifacts for p in a.parts] == ["reep"]
        task = await client.get_task(GetTaskRequest(id=task_id))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        with pytest.raises((TaskNotFoundError, A2AClientError)) as failed:
            await client.get_task(GetTaskRequest(id="no-such-task"))
        assert "not found" in str(failed.value).lower()
    finally:
        await client.close()


async def test_official_sdk_v03_rest_client(base_url: str) -> None:
    """The SDK's v0.3 REST transport (ProtoJSON of the v0.3 proto under /v1/): blocking and
    non-blocking sends, get, cancel, and a subscription followed to the task's end."""
    client = await sdk_client(base_url, "HTTP+JSON", "/.well-known/agent.json", streaming=False)
    follower = await sdk_client(base_url, "HTTP+JSON", "/.well-known/agent.json")
    try:
        assert type(client._transport).__name__ == "CompatRestTransport"
        [sent] = [event async for event in client.send_message(sdk_message("blocking"))]
        assert sent.task.status.state == TaskState.TASK_STATE_COMPLETED
        assert [p.text for a in sent.task.artifacts for p in a.parts] == ["blocking"]

        async def start(gate: str) -> str:
            request = sdk_message(gate, "gated")
            request.configuration.CopyFrom(SendMessageConfiguration(return_immediately=True))
            [started] = [event async for event in client.send_message(request)]
            assert started.task.status.state != TaskState.TASK_STATE_COMPLETED
            return str(started.task.id)

        doomed = await start(str(uuid.uuid4()))
        canceled = await client.cancel_task(CancelTaskRequest(id=doomed))
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
        with pytest.raises(TaskNotCancelableError):  # raised by the body's v0.3 ``type``
            await client.cancel_task(CancelTaskRequest(id=doomed))

        gate = str(uuid.uuid4())
        followed = await start(gate)
        states: list[int] = []
        with trio.fail_after(5):
            subscription = follower.subscribe(SubscribeToTaskRequest(id=followed))
            async with aclosing(subscription) as events:
                async for event in events:
                    if event.HasField("task"):  # the current snapshot comes first
                        states.append(event.task.status.state)
                    elif event.HasField("status_update"):
                        states.append(event.status_update.status.state)
                    gates.setdefault(gate, trio.Event()).set()
        assert (states[0], states[-1]) == (
            TaskState.TASK_STATE_WORKING,
            TaskState.TASK_STATE_COMPLETED,
        )
        task = await client.get_task(GetTaskRequest(id=followed, history_length=1))
        assert [p.text for a in task.artifacts for p in a.parts] == ["opened"]
        assert len(task.history) == 1
    finally:
        await client.close()
        await follower.close()


async def test_v03_card_shape(http: httpx.AsyncClient) -> None:
    card = (await http.get("/.well-known/agent.json")).json()
    base = str(http.base_url).rstrip("/")
    assert card["url"] == base + "/"
    assert (card["preferredTransport"], card["protocolVersion"]) == ("JSONRPC", "0.3")
    assert card["additionalInterfaces"] == [
        {"url": base + "/", "transport": "JSONRPC"},
        {"url": base, "transport": "HTTP+JSON"},  # the v0.3 paths start with /v1/
    ]
    v1 = (await http.get("/.well-known/agent-card.json")).json()
    served = [(i["protocolBinding"], i["protocolVersion"]) for i in v1["supportedInterfaces"]]
    assert served == [
        ("JSONRPC", "1.0"),  # preferred: what v1.0 clients pick first
        ("HTTP+JSON", "1.0"),
        ("JSONRPC", "0.3"),
        ("HTTP+JSON", "0.3"),
    ]


async def test_v03_card_repeats_its_main_interface_and_sdk_clients_use_it(base_url: str) -> None:
    """v0.3 §5.6.2/§5.6.4: ``additionalInterfaces`` SHOULD list the main ``url`` and
    ``preferredTransport`` too, and the card does.  The SDK's own v0.3 cards list only the
    others, and its resolver puts the main interface before every additional one, so it reads
    a2a_trio's main interface twice: harmless, its client still talks to the main ``url``."""
    base = base_url.rstrip("/")
    async with httpx.AsyncClient() as http:
        resolver = A2ACardResolver(http, base_url)
        card = await resolver.get_agent_card(relative_card_path="/.well-known/agent.json")
    assert [(i.protocol_binding, i.url) for i in card.supported_interfaces] == [
        ("JSONRPC", base + "/"),  # the main url
        ("JSONRPC", base + "/"),  # additionalInterfaces, main first
        ("HTTP+JSON", base),
    ]
    client = await sdk_client(base_url, "JSONRPC", "/.well-known/agent.json")
    try:
        assert client._transport.url == base + "/"
    finally:
        await client.close()


async def test_sdk_v03_client_reading_a_mixed_card_talks_v03_only_to_v03_interfaces(
    base_url: str,
) -> None:
    """A card whose interfaces mix versions, in its v0.3 form, read by the SDK's v0.3 client,
    which prefers HTTP+JSON: the card lists only the v0.3 interfaces, so the client picks the
    v0.3 JSON-RPC one.  Before: the v1.0 HTTP+JSON interface was listed with no version, the
    client gave it the card's 0.3 and sent v0.3 requests to it (``/acme/v1/message:send``)."""
    base = base_url.rstrip("/")
    mixed = m.AgentCard(
        name="mixed",
        description="v1.0 and v0.3 interfaces at different URLs",
        version="1",
        supported_interfaces=[
            m.AgentInterface(base + "/acme", "HTTP+JSON", "1.0"),  # a v1.0 tenant's root
            m.AgentInterface(base + "/", "JSONRPC", "0.3"),
        ],
    )
    card = parse_agent_card(V03.encode(mixed))
    config = ClientConfig(
        supported_protocol_bindings=["HTTP+JSON", "JSONRPC"], use_client_preference=True
    )
    client = ClientFactory(config).create(card)
    try:
        assert (type(client._transport).__name__, client._transport.url) == (
            "CompatJsonRpcTransport",
            base + "/",
        )
        events = [event async for event in client.send_message(sdk_message("mixed"))]
        assert events[-1].task.status.state == TaskState.TASK_STATE_COMPLETED
    finally:
        await client.close()


async def test_apcore_a2a_client_speaks_v03(base_url: str) -> None:
    message = {
        "kind": "message",
        "messageId": str(uuid.uuid4()),
        "role": "user",
        "parts": [{"kind": "text", "text": "apcore"}],
    }
    async with ApcoreClient(base_url) as client:
        task = await client.send_message(message, metadata={"skillId": "echo"})
        assert (task["kind"], task["status"]["state"]) == ("task", "completed")
        assert task["artifacts"][0]["parts"] == [{"kind": "text", "text": "apcore"}]
        again = await client.get_task(task["id"])
        assert again["status"]["state"] == "completed"
        with pytest.raises(ApcoreTaskNotFound):
            await client.get_task("no-such-task")
        events = [event async for event in client.stream_message(message)]
        assert events[-1]["status"]["state"] == "completed" and events[-1]["final"] is True
        listed = await client.list_tasks()  # it sends the v1.0 ListTasks with A2A-Version: 1.0
        assert task["id"] in {t["id"] for t in listed["tasks"]}


@functools.cache
def mesh_consumer() -> ModuleType:
    """mcp-mesh's consumer module, loaded alone (its package ``__init__`` needs its deps)."""
    spec = importlib.util.find_spec("mesh")
    if spec is None or not spec.submodule_search_locations:
        missing = (
            "mcp-mesh is not installed (pip install --no-deps mcp-mesh); its full dependency "
            "set conflicts with this venv"
        )
        ci_reason = "CI must run the interop tests (scripts/test.sh installs it)"
        missing_prerequisite(missing, in_ci=f"{missing}: {ci_reason}")
    path = f"{next(iter(spec.submodule_search_locations))}/_a2a_consumer.py"
    module_spec = importlib.util.spec_from_file_location("mesh_a2a_consumer", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_spec.name] = module  # its dataclasses look themselves up there
    module_spec.loader.exec_module(module)
    return module


async def test_mcp_mesh_stream_parser_reads_legacy_streams(http: httpx.AsyncClient) -> None:
    consumer = mesh_consumer()
    envelope = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tasks/sendSubscribe",
        "params": {"id": "m-1", "message": {"role": "user", "parts": [{"text": "abc"}]}},
    }
    async with http.stream("POST", "/parked", json=envelope) as response:
        stream = consumer.A2AStream(response=response, task_id="m-1")
        events = [event async for event in stream]
    assert [(e.kind, e.state, e.progress, e.final) for e in events] == [
        ("status", "working", 0.25, False),
        ("status", "working", 0.75, False),
        ("artifact", None, None, False),
        ("status", "completed", None, True),
    ]
    assert events[2].artifact_text == "cba"


async def test_mcp_mesh_client_reads_legacy_task_envelopes(http: httpx.AsyncClient) -> None:
    consumer = mesh_consumer()
    params = {"id": "m-2", "message": {"role": "user", "parts": [{"type": "text", "text": "hi"}]}}
    envelope = {"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": params}
    result: dict[str, Any] = (await http.post("/data", json=envelope)).json()["result"]
    client = consumer.A2AClient(str(http.base_url), "data")
    parsed = client._build_response("m-2", result)
    assert (parsed.state, parsed.task_id) == ("completed", "m-2")
    assert consumer._maybe_json_loads(parsed.artifact_text) == {"length": 2}
    assert consumer._is_terminal(parsed.state)
