"""Error messages name states, roles, calls and fields as the client's own binding writes them.

The runtime raises one error for every binding; each binding sends it spelled as its bodies
are: v1.0 ``TASK_STATE_WORKING``, v0.3 JSON-RPC ``working``, v0.3 HTTP+JSON the v0.3 proto's
``TASK_STATE_CANCELLED``.  Codes and HTTP statuses stay those of the error.  The legacy dialect
meets only one of these errors, an agent's message from a client (it has no follow-ups, an
idempotent cancel, a resubscribe that replays a finished task): its spelling is checked sans-IO.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import trio

from a2a_trio import model as m
from a2a_trio.wire import _legacy as legacy_wire

from .agents import gates
from .drivers import V1_HEADERS, CallFailed, Driver, V03JsonRpc, V03Rest, V1JsonRpc, V1Rest

NAMES: dict[str, dict[str, str]] = {
    V1JsonRpc.name: {
        "completed": "TASK_STATE_COMPLETED",
        "canceled": "TASK_STATE_CANCELED",
        "working": "TASK_STATE_WORKING",
        "input-required": "TASK_STATE_INPUT_REQUIRED",
    },
    V03JsonRpc.name: {
        "completed": "completed",
        "canceled": "canceled",
        "working": "working",
        "input-required": "input-required",
    },
    V03Rest.name: {
        "completed": "TASK_STATE_COMPLETED",
        "canceled": "TASK_STATE_CANCELLED",
        "working": "TASK_STATE_WORKING",
        "input-required": "TASK_STATE_INPUT_REQUIRED",
    },
}
NAMES[V1Rest.name] = NAMES[V1JsonRpc.name]
"""The states each binding's bodies carry (literal here, not computed by the codecs)."""

RPC_STATUS = {V1JsonRpc.name: 200, V03JsonRpc.name: 200}
"""JSON-RPC answers errors with HTTP 200; REST with the error's own status."""


@pytest.fixture(params=[V1JsonRpc, V1Rest, V03JsonRpc, V03Rest], ids=lambda cls: cls.name)
def driver(request: pytest.FixtureRequest, http: httpx.AsyncClient) -> Driver:
    cls: type[Driver] = request.param
    return cls(http)


def refusal(
    failed: pytest.ExceptionInfo[CallFailed], driver: Driver, kind: str, status: int
) -> str:
    """The message of a refusal, after checking it is the error ``kind`` with its status."""
    assert failed.value.kind == kind
    assert failed.value.status == RPC_STATUS.get(driver.name, status)
    message: str = failed.value.body["error"]["message"]
    return message


@pytest.fixture
async def running(driver: Driver) -> AsyncIterator[str]:
    """A task of the ``gated`` skill, WORKING until the test ends."""
    gate = str(uuid.uuid4())
    yield await driver.start("gated", gate)
    gates.setdefault(gate, trio.Event()).set()


async def test_a_message_to_a_finished_task(driver: Driver) -> None:
    task_id, _outcome = await driver.send("echo", "done")
    with pytest.raises(CallFailed) as failed:
        await driver.send("echo", "more", task_id=task_id)
    completed = NAMES[driver.name]["completed"]
    assert refusal(failed, driver, "UnsupportedOperationError", 400) == (
        f"Task {task_id} is {completed} and accepts no more messages; start a new task (same "
        "contextId to keep the conversation)"
    )


async def test_a_follow_up_to_a_task_not_waiting_for_input(driver: Driver, running: str) -> None:
    with pytest.raises(CallFailed) as failed:
        await driver.send("echo", "too soon", task_id=running)
    names = NAMES[driver.name]
    assert refusal(failed, driver, "UnsupportedOperationError", 400) == (
        f"Task {running} is {names['working']}, not waiting for input; wait for it to ask "
        f"({names['input-required']}) or cancel it"
    )


async def test_a_cancel_of_a_canceled_task(driver: Driver, running: str) -> None:
    await driver.cancel(running)
    with pytest.raises(CallFailed) as failed:
        await driver.cancel(running)
    canceled = NAMES[driver.name]["canceled"]
    message = refusal(failed, driver, "TaskNotCancelableError", 409)
    assert message == f"Task {running} is already {canceled}"


async def test_a_subscription_to_a_finished_task(driver: Driver) -> None:
    task_id, _outcome = await driver.send("echo", "done")
    with pytest.raises(CallFailed) as failed:
        await driver.subscribe(task_id, lambda: None)
    completed = NAMES[driver.name]["completed"]
    assert refusal(failed, driver, "UnsupportedOperationError", 400) == (
        f"Task {task_id} is {completed}: a terminal task has no updates to subscribe to; get "
        "the task instead"
    )


def rpc(method: str, params: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


V1_AGENT = {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}
V03_AGENT = {"kind": "message", "messageId": "m", "role": "agent", "parts": [{"text": "x"}]}
PROTO_AGENT = {"messageId": "m", "role": "ROLE_AGENT", "content": [{"text": "x"}]}
LEGACY_AGENT = {"role": "agent", "parts": [{"type": "text", "text": "x"}]}


@pytest.mark.parametrize(
    ("path", "headers", "body", "where", "user"),
    [
        (
            "/",
            V1_HEADERS,
            rpc("SendMessage", {"message": V1_AGENT}),
            "$.params.message",
            "ROLE_USER",
        ),
        ("/message:send", V1_HEADERS, {"message": V1_AGENT}, "$.message", "ROLE_USER"),
        ("/", {}, rpc("message/send", {"message": V03_AGENT}), "$.params.message", "user"),
        ("/v1/message:send", {}, {"request": PROTO_AGENT}, "$.request", "ROLE_USER"),
        ("/echo", {}, rpc("tasks/send", {"message": LEGACY_AGENT}), "$.params.message", "user"),
        (
            "/echo",
            {},
            rpc("tasks/sendSubscribe", {"message": LEGACY_AGENT}),
            "$.params.message",
            "user",
        ),
    ],
    ids=[
        "v1.0 JSON-RPC",
        "v1.0 HTTP+JSON",
        "v0.3 JSON-RPC",
        "v0.3 HTTP+JSON",
        "legacy tasks/send",
        "legacy tasks/sendSubscribe",
    ],
)
async def test_an_agent_message_from_a_client(
    http: httpx.AsyncClient,
    path: str,
    headers: dict[str, str],
    body: dict[str, Any],
    where: str,
    user: str,
) -> None:
    """Before: ``ROLE_USER`` to every binding, a role the v0.3 JSON-RPC client cannot send;
    the legacy dialect took an agent's message as the user's."""
    response = await http.post(path, json=body, headers=headers)
    error = response.json()["error"]
    reason = f"a client's message must have role {user}"
    assert error["message"] == f"{where}.role: {reason}"
    if "jsonrpc" in response.json():
        assert (response.status_code, error["code"]) == (200, -32602)
        data = error["data"] if "A2A-Version" not in headers else error["data"][0]["metadata"]
    else:
        assert (response.status_code, error["status"]) == (400, "INVALID_ARGUMENT")
        data = error["details"][0]["metadata"]
    assert data == {"path": f"{where}.role", "reason": reason}


@pytest.mark.parametrize(
    ("path", "headers", "states"),
    [
        ("/tasks", V1_HEADERS, "TASK_STATE_CANCELED"),
        ("/v1/tasks", {}, "TASK_STATE_CANCELLED"),
    ],
)
async def test_an_unknown_state_filter_is_refused_as_sent(
    http: httpx.AsyncClient, path: str, headers: dict[str, str], states: str
) -> None:
    """Before: v1.0 echoed ``TASK_STATE_SLEEPING`` (a value never sent), v0.3 listed the
    JSON-RPC spellings (``input-required``) its HTTP+JSON bodies never carry."""
    response = await http.get(path, params={"status": "sleeping"}, headers=headers)
    error = response.json()["error"]
    assert (response.status_code, error["status"]) == (400, "INVALID_ARGUMENT")
    listed = (
        f"TASK_STATE_SUBMITTED, TASK_STATE_WORKING, TASK_STATE_COMPLETED, TASK_STATE_FAILED, "
        f"{states}, TASK_STATE_INPUT_REQUIRED, TASK_STATE_REJECTED, TASK_STATE_AUTH_REQUIRED"
    )
    assert error["message"] == f"$.query.status: unknown task state 'sleeping' (one of {listed})"
    for accepted in ("working", "input-required", "TASK_STATE_WORKING", "task_state_working"):
        served = await http.get(path, params={"status": accepted}, headers=headers)
        assert served.status_code == 200, accepted


def test_the_legacy_dialect_spells_states_and_roles_as_its_frames_do() -> None:
    spelled = [legacy_wire.spell(state) for state in m.TaskState]
    assert spelled == [
        "working",  # UNSPECIFIED: the dialect knows no other non-terminal state
        "working",
        "working",
        "completed",
        "failed",
        "canceled",
        "working",
        "failed",
        "working",
    ]
    assert [legacy_wire.spell(role) for role in (m.Role.USER, m.Role.AGENT)] == ["user", "agent"]


def error_message(response: httpx.Response) -> str:
    """The message of an error body in any binding's shape (JSON-RPC, v1.0 or v0.3 REST)."""
    message: str = response.json()["error"]["message"]
    return message


type Call = tuple[str, str, dict[str, str], dict[str, Any] | None]
"""A request: verb, path, headers and JSON body."""


async def refused(http: httpx.AsyncClient, call: Call) -> str:
    """The message of the error ``call`` is answered with."""
    verb, path, headers, body = call
    return error_message(await http.request(verb, path, json=body, headers=headers))


PUSH = "This agent does not support push notifications (capabilities.pushNotifications is false)"
LEGACY_SEND = {"message": LEGACY_AGENT | {"role": "user"}, "pushNotification": {"url": "x"}}


@pytest.mark.parametrize(
    ("call", "advice"),
    [
        (
            ("POST", "/", V1_HEADERS, rpc("ListTaskPushNotificationConfigs", {"taskId": "t"})),
            "SendStreamingMessage or SubscribeToTask",
        ),
        (
            ("GET", "/tasks/t/pushNotificationConfigs", V1_HEADERS, None),
            "POST /message:stream or GET /tasks/{id}:subscribe",
        ),
        (
            ("POST", "/", {}, rpc("tasks/pushNotificationConfig/list", {"id": "t"})),
            "message/stream or tasks/resubscribe",
        ),
        (
            ("GET", "/v1/tasks/t/pushNotificationConfigs", {}, None),
            "POST /v1/message:stream or POST /v1/tasks/{id}:subscribe",
        ),
        (
            ("POST", "/echo", {}, rpc("tasks/send", LEGACY_SEND)),
            "tasks/sendSubscribe or tasks/resubscribe",
        ),
    ],
    ids=["v1.0 JSON-RPC", "v1.0 HTTP+JSON", "v0.3 JSON-RPC", "v0.3 HTTP+JSON", "legacy"],
)
async def test_the_push_refusal_points_to_the_clients_own_streaming_calls(
    http: httpx.AsyncClient, call: Call, advice: str
) -> None:
    """Before: every binding was told to use ``SendStreamingMessage or SubscribeToTask``,
    v1.0 JSON-RPC method names no v0.3, REST or legacy client can call."""
    assert await refused(http, call) == f"{PUSH}; use {advice}"


V1_CARD = ("capabilities.extendedAgentCard", "/.well-known/agent-card.json")
V03_CARD = ("supportsAuthenticatedExtendedCard", "/.well-known/agent.json")


@pytest.mark.parametrize(
    ("call", "card"),
    [
        (("POST", "/", V1_HEADERS, rpc("GetExtendedAgentCard", {})), V1_CARD),
        (("GET", "/extendedAgentCard", V1_HEADERS, None), V1_CARD),
        (("POST", "/", {}, rpc("agent/getAuthenticatedExtendedCard", {})), V03_CARD),
        (("GET", "/v1/card", {}, None), V03_CARD),
    ],
    ids=["v1.0 JSON-RPC", "v1.0 HTTP+JSON", "v0.3 JSON-RPC", "v0.3 HTTP+JSON"],
)
async def test_the_extended_card_refusal_names_the_clients_card_field(
    http: httpx.AsyncClient, call: Call, card: tuple[str, str]
) -> None:
    """Before: v0.3 clients were told of ``capabilities.extendedAgentCard`` and the v1.0 card,
    where their card has ``supportsAuthenticatedExtendedCard`` and is at ``agent.json``."""
    flag, public = card
    assert await refused(http, call) == (
        f"This agent has no extended agent card ({flag} is false); its public card is at {public}"
    )
    assert (await http.get(public)).status_code == 200


async def test_a_reason_names_the_field_as_the_v03_rest_client_sent_it(
    http: httpx.AsyncClient,
) -> None:
    """Before: the path said ``history_length`` (as sent) but the reason ``historyLength``."""
    message = {"message_id": "m1", "role": "ROLE_USER", "content": [{"text": "x"}]}
    body = {"request": message, "configuration": {"history_length": -1}}
    response = await http.post("/v1/message:send", json=body)
    assert error_message(response) == (
        "$.configuration.history_length: history_length must not be negative"
    )
    done = await http.post("/v1/message:send", json={"request": message | {"message_id": "m2"}})
    task_id = done.json()["task"]["id"]
    follow_up = {"request": message | {"message_id": "m3", "task_id": task_id, "context_id": "c"}}
    response = await http.post("/v1/message:send", json=follow_up)
    assert error_message(response).startswith(
        f"$.request.context_id: context_id 'c' does not match task {task_id}'s context "
    )


PAGE_SIZE = "pageSize must be between 1 and 100, got {}"
HISTORY = "historyLength must not be negative"
V1_SEND = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}}
V03_SEND = {"message": {"messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "x"}]}}
NO_HISTORY = {"configuration": {"historyLength": -1}}


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (
            ("POST", "/", V1_HEADERS, rpc("ListTasks", {"pageSize": 0})),
            "$.params.pageSize: " + PAGE_SIZE.format(0),
        ),
        (
            ("GET", "/tasks?pageSize=101", V1_HEADERS, None),
            "$.query.pageSize: " + PAGE_SIZE.format(101),
        ),
        (
            ("POST", "/", {}, rpc("tasks/list", {"pageSize": 0})),
            "$.params.pageSize: " + PAGE_SIZE.format(0),
        ),
        (("GET", "/v1/tasks?pageSize=0", {}, None), "$.query.pageSize: " + PAGE_SIZE.format(0)),
        (
            ("POST", "/", V1_HEADERS, rpc("ListTasks", {"historyLength": -1})),
            f"$.params.historyLength: {HISTORY}",
        ),
        (("GET", "/v1/tasks?historyLength=-1", {}, None), f"$.query.historyLength: {HISTORY}"),
        (
            ("POST", "/", V1_HEADERS, rpc("GetTask", {"id": "t", "historyLength": -1})),
            f"$.params.historyLength: {HISTORY}",
        ),
        (
            ("GET", "/tasks/t?historyLength=-1", V1_HEADERS, None),
            f"$.query.historyLength: {HISTORY}",
        ),
        (
            ("POST", "/", {}, rpc("tasks/get", {"id": "t", "historyLength": -1})),
            f"$.params.historyLength: {HISTORY}",
        ),
        (("GET", "/v1/tasks/t?historyLength=-1", {}, None), f"$.query.historyLength: {HISTORY}"),
        (
            ("POST", "/", V1_HEADERS, rpc("SendMessage", V1_SEND | NO_HISTORY)),
            f"$.params.configuration.historyLength: {HISTORY}",
        ),
        (
            ("POST", "/message:send", V1_HEADERS, V1_SEND | NO_HISTORY),
            f"$.configuration.historyLength: {HISTORY}",
        ),
        (
            ("POST", "/", {}, rpc("message/send", V03_SEND | NO_HISTORY)),
            f"$.params.configuration.historyLength: {HISTORY}",
        ),
    ],
    ids=[
        "ListTasks pageSize, v1.0 JSON-RPC",
        "ListTasks pageSize, v1.0 HTTP+JSON",
        "ListTasks pageSize, v0.3 JSON-RPC",
        "ListTasks pageSize, v0.3 HTTP+JSON",
        "ListTasks historyLength, v1.0 JSON-RPC",
        "ListTasks historyLength, v0.3 HTTP+JSON",
        "GetTask historyLength, v1.0 JSON-RPC",
        "GetTask historyLength, v1.0 HTTP+JSON",
        "GetTask historyLength, v0.3 JSON-RPC",
        "GetTask historyLength, v0.3 HTTP+JSON",
        "SendMessage historyLength, v1.0 JSON-RPC",
        "SendMessage historyLength, v1.0 HTTP+JSON",
        "SendMessage historyLength, v0.3 JSON-RPC",
    ],
)
async def test_a_range_refusal_has_one_wording_at_the_clients_path(
    http: httpx.AsyncClient, call: Call, said: str
) -> None:
    """The store's bounds (``check_query``, ``check_history_length``) word every refusal, at
    the field as each binding's client sent it (the legacy dialect carries neither field).
    Before: the runtime had its own page size check, whose refusal left out the size given."""
    assert await refused(http, call) == said
