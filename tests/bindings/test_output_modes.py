"""A handler sees the media types the client accepts (``acceptedOutputModes``), on every binding
that carries them, for the send that started the task and for the answer to ``ctx.ask``."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import Any

import attrs
import httpx
import pytest
import trio

from a2a_trio import Agent, TaskContext, serve
from a2a_trio import model as m
from a2a_trio.wire import V03, V03_PROTO, V1

agent = Agent("Tailor", "says which output modes its handler saw")


def seen(ctx: TaskContext) -> m.JsonObject:
    return {
        "modes": list(ctx.accepted_output_modes),
        "json": ctx.accepts("application/json"),
        "markdown": ctx.accepts("text/markdown"),
    }


@agent.skill(default=True)
async def tell(ctx: TaskContext) -> m.JsonObject:
    first = seen(ctx)
    if ctx.text == "ask":
        await ctx.ask("and now?")
    return {"first": first, "now": seen(ctx)}


@agent.skill(message_only=True)
async def quick(ctx: TaskContext) -> m.JsonObject:
    return seen(ctx)


@agent.skill(output_modes=["image/png"])
async def draw(ctx: TaskContext) -> m.JsonObject:
    """Declares PNG output only, but a client accepting none of it is not refused."""
    return seen(ctx)


@attrs.frozen
class Binding:
    name: str
    path: str
    headers: dict[str, str]
    method: str  # the JSON-RPC method, "" on HTTP+JSON
    encode: Callable[[m.SendMessageRequest], Any]
    decode: Callable[[Any], m.StreamEvent]

    async def send(
        self, http: httpx.AsyncClient, text: str, modes: list[str], **ids: str
    ) -> m.Task | m.Message:
        skill = ids.pop("skill", "")
        message = m.Message(
            str(uuid.uuid4()),
            m.Role.USER,
            (m.TextPart(text),),
            metadata={"skillId": skill} if skill else None,
            **ids,
        )
        config = m.SendMessageConfiguration(accepted_output_modes=modes)
        body = self.encode(m.SendMessageRequest(message, configuration=config))
        if modes:
            assert body["configuration"]["acceptedOutputModes"] == modes  # the wire name
        if self.method:
            body = {"jsonrpc": "2.0", "id": 1, "method": self.method, "params": body}
        response = await http.post(self.path, json=body, headers=self.headers)
        assert response.status_code == 200, response.text
        result = response.json()
        event = self.decode(result["result"] if self.method else result)
        assert isinstance(event, m.Task | m.Message)
        return event


V1_HEADERS = {"A2A-Version": "1.0"}
BINDINGS = [
    Binding("v1.0 JSON-RPC", "/", V1_HEADERS, "SendMessage", V1.encode, V1.decode_stream_response),
    Binding(
        "v1.0 HTTP+JSON", "/message:send", V1_HEADERS, "", V1.encode, V1.decode_stream_response
    ),
    Binding(
        "v0.3 JSON-RPC",
        "/",
        {},
        "message/send",
        V03.encode,
        lambda result: V03.decode_stream_event(result)[0],
    ),
    Binding(
        "v0.3 HTTP+JSON",
        "/v1/message:send",
        {},
        "",
        V03_PROTO.encode,
        lambda result: V03_PROTO.decode_stream_response(result)[0],
    ),
]


@pytest.fixture
async def http(nursery: trio.Nursery) -> AsyncIterator[httpx.AsyncClient]:
    url: str = await nursery.start(partial(serve, agent, port=0))
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        yield client


def answer(task: m.Task | m.Message) -> m.JsonValue:
    assert isinstance(task, m.Task) and task.status.state is m.TaskState.COMPLETED, task
    part = task.artifacts[0].parts[0]
    assert isinstance(part, m.DataPart)
    return part.data


@pytest.mark.parametrize("binding", BINDINGS, ids=lambda binding: binding.name)
async def test_the_handler_sees_the_modes_of_the_send_then_of_the_answer(
    binding: Binding, http: httpx.AsyncClient
) -> None:
    with trio.fail_after(10):
        waiting = await binding.send(http, "ask", ["Text/*"])
        assert isinstance(waiting, m.Task)
        assert waiting.status.state is m.TaskState.INPUT_REQUIRED
        done = await binding.send(http, "json", ["application/json"], task_id=waiting.id)
    assert answer(done) == {
        "first": {"modes": ["Text/*"], "json": False, "markdown": True},
        "now": {"modes": ["application/json"], "json": True, "markdown": False},
    }


@pytest.mark.parametrize("binding", BINDINGS, ids=lambda binding: binding.name)
async def test_no_modes_means_anything(binding: Binding, http: httpx.AsyncClient) -> None:
    with trio.fail_after(10):
        done = await binding.send(http, "hi", [])
    now = {"modes": [], "json": True, "markdown": True}
    assert answer(done) == {"first": now, "now": now}


@pytest.mark.parametrize("binding", BINDINGS, ids=lambda binding: binding.name)
async def test_a_message_only_skill_sees_them_too(
    binding: Binding, http: httpx.AsyncClient
) -> None:
    with trio.fail_after(10):
        reply = await binding.send(http, "hi", ["*/*"], skill="quick")
    assert isinstance(reply, m.Message)
    assert [part.data for part in reply.parts if isinstance(part, m.DataPart)] == [
        {"modes": ["*/*"], "json": True, "markdown": True}
    ]


@pytest.mark.parametrize("binding", BINDINGS, ids=lambda binding: binding.name)
async def test_modes_the_skill_cannot_produce_are_not_refused(
    binding: Binding, http: httpx.AsyncClient
) -> None:
    """Accepted output modes are advice for the agent (A2A: it SHOULD tailor its output);
    ContentTypeNotSupportedError is about the request's own parts.  The skill decides."""
    with trio.fail_after(10):
        done = await binding.send(http, "hi", ["text/plain"], skill="draw")
    assert answer(done) == {"modes": ["text/plain"], "json": False, "markdown": False}
