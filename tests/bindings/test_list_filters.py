"""ListTasks' ``status`` filter and ``includeArtifacts`` on every binding that lists: v1.0
JSON-RPC (``params``), v1.0 HTTP+JSON and v0.3 HTTP+JSON (the query string), v0.3 JSON-RPC
(``tasks/list``).

A value naming no state is refused as invalid params listing the states, whatever sent it:
``UNRECOGNIZED`` is what the official JavaScript SDK's JSON-RPC transport writes for a status
it cannot name (a caller's ``status: undefined`` among them), not a state of the A2A enum, and
taking it as "no filter" would widen any filter the client failed to encode to every task.
The enum's zero value (``TASK_STATE_UNSPECIFIED``; v0.3 JSON-RPC's ``unknown``) is a field left
at its default in ProtoJSON, the same as no filter.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from a2a_trio import model as m
from a2a_trio.wire import V03, V03_PROTO, V1

from .drivers import V1_HEADERS

V1_RPC, V1_REST, V03_RPC, V03_REST = (
    "v1.0 JSON-RPC",
    "v1.0 HTTP+JSON",
    "v0.3 JSON-RPC",
    "v0.3 HTTP+JSON",
)
BINDINGS = (V1_RPC, V1_REST, V03_RPC, V03_REST)

# How each binding writes the states in its bodies, which an error lists.
WORKING = {V1_RPC: "TASK_STATE_WORKING", V1_REST: "TASK_STATE_WORKING", V03_RPC: "working"}
WORKING[V03_REST] = "TASK_STATE_WORKING"
ZERO = {V1_RPC: "TASK_STATE_UNSPECIFIED", V1_REST: "TASK_STATE_UNSPECIFIED", V03_RPC: "unknown"}
ZERO[V03_REST] = "TASK_STATE_UNSPECIFIED"


async def list_tasks(http: httpx.AsyncClient, binding: str, **query: Any) -> httpx.Response:
    """One ListTasks call on ``binding`` with ``query`` as its parameters."""
    if binding == V1_REST:
        return await http.get("/tasks", params=query, headers=V1_HEADERS)
    if binding == V03_REST:
        return await http.get("/v1/tasks", params=query)
    method, headers = ("ListTasks", V1_HEADERS) if binding == V1_RPC else ("tasks/list", {})
    envelope = {"jsonrpc": "2.0", "id": 1, "method": method, "params": query}
    return await http.post("/", json=envelope, headers=headers)


async def finished_task(http: httpx.AsyncClient, skill: str = "echo") -> str:
    """A task of ``skill`` run to its end: ``echo`` completes with an artifact, ``refuse``
    fails without one."""
    message = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": "hi"}],
        "metadata": {"skillId": skill},
    }
    envelope = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    task = (await http.post("/", json=envelope, headers=V1_HEADERS)).json()["result"]["task"]
    assert task["status"]["state"] in ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED")
    return str(task["id"])


def tasks_of(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    body = response.json()
    return list(body.get("result", body)["tasks"])


def listed(response: httpx.Response) -> list[str]:
    return [task["id"] for task in tasks_of(response)]


def refusal(response: httpx.Response) -> str:
    """The message of an invalid-params answer, checked to be one in the binding's shape."""
    body = response.json()
    if "jsonrpc" in body:
        assert (response.status_code, body["error"]["code"]) == (200, -32602), body
    else:
        assert (response.status_code, body["error"]["status"]) == (400, "INVALID_ARGUMENT")
        assert body["error"]["details"][0]["reason"] == "INVALID_PARAMS"
    return str(body["error"]["message"])


@pytest.mark.parametrize("value", ["UNRECOGNIZED", "sleeping", "TASK_STATE_PAUSED", ""])
@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_status_naming_no_state_is_invalid_params_listing_the_states(
    http: httpx.AsyncClient, binding: str, value: str
) -> None:
    response = await list_tasks(http, binding, status=value)
    message = refusal(response)
    assert f"unknown task state {value!r} (one of " in message
    assert WORKING[binding] in message


# The states a refusal lists, as each binding writes them: the same eight on every binding.
LISTED = {
    V1_RPC: [V1.spell(state) for state in m.TaskState if state],
    V1_REST: [V1.spell(state) for state in m.TaskState if state],
    V03_RPC: [V03.spell(state) for state in m.TaskState if state],
    V03_REST: [V03_PROTO.spell(state) for state in m.TaskState if state],
}


@pytest.mark.parametrize("binding", BINDINGS)
async def test_every_binding_lists_the_same_states(http: httpx.AsyncClient, binding: str) -> None:
    """The states a filter can select, without the zero value: it selects none (it is the
    filter left out, which is how to list every task).  v1.0 JSON-RPC listed
    ``TASK_STATE_UNSPECIFIED`` and v0.3 JSON-RPC ``unknown`` among them, unlike both
    HTTP+JSON bindings."""
    message = refusal(await list_tasks(http, binding, status="sleeping"))
    listed = message.partition(" (one of ")[2].removesuffix(")").split(", ")
    assert listed == LISTED[binding]
    assert len(listed) == 8
    assert ZERO[binding] not in listed


@pytest.mark.parametrize("binding", BINDINGS)
async def test_the_zero_state_lists_tasks_in_every_state(
    http: httpx.AsyncClient, binding: str
) -> None:
    """v0.3 HTTP+JSON refused ``TASK_STATE_UNSPECIFIED``, its proto's zero value, which every
    other binding (and ProtoJSON) reads as the field left out."""
    task_id = await finished_task(http)
    assert listed(await list_tasks(http, binding)) == [task_id]
    assert listed(await list_tasks(http, binding, status=ZERO[binding])) == [task_id]
    assert listed(await list_tasks(http, binding, status=WORKING[binding])) == []


@pytest.mark.parametrize("binding", BINDINGS)
async def test_included_artifacts_are_a_list_even_when_empty(
    http: httpx.AsyncClient, binding: str
) -> None:
    """A2A v1.0 §3.1.4 (v0.3 §7.4.1 alike): with ``includeArtifacts`` true the field is
    included with its content, "which may be an empty array"; false (the default) leaves it
    out.  A task without artifacts came without the key either way (ProtoJSON's default for
    an empty list), so a client could not tell "none" from "not asked for"."""
    refused = await finished_task(http, "refuse")
    echoed = await finished_task(http)
    included = {
        t["id"]: t for t in tasks_of(await list_tasks(http, binding, includeArtifacts=True))
    }
    assert included[refused]["artifacts"] == []
    assert len(included[echoed]["artifacts"]) == 1
    for query in ({}, {"includeArtifacts": False}):
        left_out = tasks_of(await list_tasks(http, binding, **query))
        assert [sorted(t) for t in left_out if "artifacts" in t] == []
