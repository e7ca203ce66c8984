"""JSON-RPC binding errors over raw HTTP (A2A v1.0 §3.3.2, §5.4, §9; JSON-RPC 2.0 §4-§5).

Every error response is checked the same way: a JSON-RPC 2.0 error object, the request's id
echoed whenever the request had a valid one (null otherwise), and nothing internal in the text
(no traceback, no file path, no exception detail).
"""

from __future__ import annotations

import codecs
import re
import uuid
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import httpx
import orjson
import pytest
import trio

from a2a_trio import Agent, ServerConfig, TaskContext, serve
from a2a_trio.runtime import INTERNAL_FAILURE

from .agents import gates
from .conftest import V1_HEADERS, rpc, user_message

MiB = 1024 * 1024
DEFAULT_LIMIT = 10 * MiB  # ServerConfig.max_body_bytes
LEAKS = re.compile(r'Traceback|File "|\.py\b|/etc/passwd|secret|site-packages|/work/|/tmp/')

type Json = dict[str, Any]


def assert_no_leak(response: httpx.Response) -> None:
    """No traceback, source path or exception detail in what the client sees."""
    found = LEAKS.search(response.text)
    assert found is None, f"internal detail {found.group()!r} in {response.text[:300]}"


def error_of(response: httpx.Response, rid: Any, *, status: int = 200) -> Json:
    """The JSON-RPC error object of ``response``, checking the envelope and the echoed id."""
    assert response.status_code == status
    assert response.headers["content-type"].startswith("application/json")
    assert_no_leak(response)
    body = response.json()
    assert body["jsonrpc"] == "2.0"
    assert "result" not in body
    assert body["id"] == rid
    error: Json = body["error"]
    assert isinstance(error["code"], int)
    assert isinstance(error["message"], str) and error["message"]
    if response.request.headers.get("A2A-Version", "0.3") != "0.3":
        assert_error_info(error)
    return error


def assert_error_info(error: Json) -> None:
    """A2A v1.0 §9.5: ``data`` is a list holding a ``google.rpc.ErrorInfo`` with the reason."""
    info = error["data"][0]
    assert info["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    assert info["domain"] == "a2a-protocol.org"
    assert re.fullmatch(r"[A-Z][A-Z_]+[A-Z]", info["reason"])


def result_of(response: httpx.Response, rid: Any) -> Json:
    assert response.status_code == 200
    assert_no_leak(response)
    body = response.json()
    assert body["id"] == rid
    assert "error" not in body
    result: Json = body["result"]
    return result


def invalid_params(response: httpx.Response, rid: Any, path: str) -> Json:
    """A -32602 error whose ``data.path`` names the offending field."""
    error = error_of(response, rid)
    assert error["code"] == -32602
    info = error["data"][0]
    assert info["reason"] == "INVALID_PARAMS"
    assert info["metadata"]["path"] == path
    assert info["metadata"]["reason"]
    return error


async def post_raw(
    http: httpx.AsyncClient, content: bytes, content_type: str = "application/json"
) -> httpx.Response:
    return await http.post("/", content=content, headers={"Content-Type": content_type})


async def call(
    http: httpx.AsyncClient, method: str, params: Json, rid: int | str = 1
) -> httpx.Response:
    return await http.post("/", json=rpc(method, params, rid))


async def new_task(http: httpx.AsyncClient, text: str, skill: str | None = None) -> Json:
    """A task created by a blocking SendMessage (settled: terminal or waiting for input)."""
    response = await call(http, "SendMessage", {"message": user_message(text, skill=skill)})
    task: Json = result_of(response, 1)["task"]
    return task


async def assert_healthy(http: httpx.AsyncClient) -> None:
    task = await new_task(http, "still alive")
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"


# --- the envelope ----------------------------------------------------------------------------


async def test_malformed_json_is_a_parse_error_with_null_id(http: httpx.AsyncClient) -> None:
    for body in (
        b"{not json",
        b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask"',
        b"",
        b"\xff\xfe",
        b'{"jsonrpc": "2.0", "id": 1, "method": "\xff"}',
        b"[" * 100_000,
    ):
        error = error_of(await post_raw(http, body), None)
        assert error["code"] == -32700, body[:40]
    latin1 = b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "caf\xe9"}}'
    assert error_of(await post_raw(http, latin1), None)["message"] == (
        "Parse error: the request body is not valid JSON (not UTF-8 text: byte 0xe9 at offset 70)"
    )


async def test_wrong_or_missing_jsonrpc_version_is_invalid_request(
    http: httpx.AsyncClient,
) -> None:
    for version in ("1.0", 2.0, None, "2", "2.0 "):
        document = {"jsonrpc": version, "id": f"v-{version}", "method": "ListTasks"}
        error = error_of(await http.post("/", json=document), f"v-{version}")
        assert error["code"] == -32600
    missing: Json = {"id": 4, "method": "ListTasks", "params": {}}
    assert error_of(await http.post("/", json=missing), 4)["code"] == -32600


async def test_batches_and_non_object_bodies_are_invalid_request(
    http: httpx.AsyncClient,
) -> None:
    batches: list[object] = [
        [rpc("ListTasks", {}, 1), rpc("ListTasks", {}, 2)],
        [rpc("ListTasks", {}, 1)],
        [],
    ]
    for document in [*batches, "hello", 42, None, True]:
        error = error_of(await post_raw(http, orjson.dumps(document)), None)
        assert error["code"] == -32600, document
    listed = result_of(await call(http, "ListTasks", {}), 1)
    assert listed["totalSize"] == 0


async def test_invalid_id_types_are_invalid_request_answered_with_null_id(
    http: httpx.AsyncClient,
) -> None:
    for rid in (True, False, {}, {"a": 1}, [1], [], ["x"]):
        document = {"jsonrpc": "2.0", "id": rid, "method": "ListTasks", "params": {}}
        error = error_of(await http.post("/", json=document), None)
        assert error["code"] == -32600, rid


async def test_valid_ids_are_echoed_exactly(http: httpx.AsyncClient) -> None:
    for rid in ("abc", "", "ünï", 0, -7, 2**53, 1.5, None):
        document = {"jsonrpc": "2.0", "id": rid, "method": "GetTask", "params": {"id": "none"}}
        assert error_of(await http.post("/", json=document), rid)["code"] == -32001
        result = result_of(await http.post("/", json={**document, "method": "ListTasks"}), rid)
        assert result["tasks"] == []


BIG_IDS = (123456789012345678901234567890, 2**64, -(2**63) - 1, -(10**40))


@pytest.mark.parametrize("rid", BIG_IDS)
@pytest.mark.parametrize(
    ("version", "methods"),
    [("1.0", ("GetTask", "ListTasks")), ("0.3", ("tasks/get", "tasks/list"))],
)
async def test_integer_ids_beyond_64_bits_are_echoed_exactly(
    http: httpx.AsyncClient, rid: int, version: str, methods: tuple[str, str]
) -> None:
    """JSON-RPC 2.0 §5: the response has the same id; orjson reads such a literal as a float."""
    headers = {"A2A-Version": version, "Content-Type": "application/json"}
    failing, listing = methods
    for method, params in ((failing, {"id": "none"}), (listing, {})):
        document = orjson.dumps(rpc(method, params, 0)).replace(b'"id":0', b'"id":%d' % rid)
        response = await http.post("/", content=document, headers=headers)
        assert response.status_code == 200
        assert response.json()["id"] == rid
        assert response.content.startswith(b'{"jsonrpc":"2.0","id":%d,' % rid)


async def test_integer_ids_beyond_64_bits_are_echoed_in_stream_frames(
    http: httpx.AsyncClient,
) -> None:
    rid = BIG_IDS[0]
    document = orjson.dumps(rpc("SendStreamingMessage", {"message": user_message("x")}, 0))
    document = document.replace(b'"id":0', b'"id":%d' % rid)
    headers = {"Content-Type": "application/json"}
    async with http.stream("POST", "/", content=document, headers=headers) as response:
        frames = [line async for line in response.aiter_lines() if line.startswith("data: ")]
    assert frames and all(f'"id":{rid},' in frame for frame in frames)


async def test_floats_are_echoed_as_the_same_number(http: httpx.AsyncClient) -> None:
    for literal, value in ((b"1e30", 1e30), (b"-2.5E+19", -2.5e19), (b"1.5", 1.5)):
        document = orjson.dumps(rpc("ListTasks", {}, 0)).replace(b'"id":0', b'"id":' + literal)
        assert result_of(await post_raw(http, document), value)["tasks"] == []


async def test_missing_or_invalid_method_is_invalid_request(http: httpx.AsyncClient) -> None:
    for method in (None, "", 7, ["GetTask"], {"name": "GetTask"}):
        rid = f"m-{method}"
        document: Json = {"jsonrpc": "2.0", "id": rid, "params": {}}
        if method is not None:
            document["method"] = method
        assert error_of(await http.post("/", json=document), rid)["code"] == -32600


async def test_unknown_method_is_method_not_found(http: httpx.AsyncClient) -> None:
    for name in ("Nope", "message/send", "getTask", "GetTask ", "tasks/get", "x" * 10_000):
        error = error_of(await call(http, name, {}, rid=name[:50]), name[:50])
        assert error["code"] == -32601
        assert len(error["message"]) < 300  # the name is quoted, but bounded


async def test_a_v03_method_asked_for_as_1_0_gets_its_1_0_name(http: httpx.AsyncClient) -> None:
    """A client mixing the versions (v0.3 method names, ``A2A-Version: 1.0``) is told both ways
    out; without the header the same request is served as v0.3."""
    params = {"message": {"messageId": "m1", "role": "user", "parts": [{"text": "hi"}]}}
    error = error_of(await call(http, "tasks/get", {"id": "t1"}, rid="v"), "v")
    assert error["message"] == (
        "Method not found: 'tasks/get' (an A2A v0.3 method; the request's A2A-Version header"
        " asks for 1.0, which calls it 'GetTask': use that name, or send no A2A-Version header"
        " to speak v0.3)"
    )
    as_v03 = await http.post("/", json=rpc("message/send", params), headers={"A2A-Version": ""})
    assert result_of(as_v03, 1)["kind"] == "task"


async def test_params_must_be_an_object(http: httpx.AsyncClient) -> None:
    params: object
    for params in ([], "x", 3, None, True):
        rid = f"p-{params}"
        document: Json = {"jsonrpc": "2.0", "id": rid, "method": "ListTasks", "params": params}
        invalid_params(await http.post("/", json=document), rid, "$.params")


# --- params validation ----------------------------------------------------------------------


async def test_invalid_parts_name_their_path(http: httpx.AsyncClient) -> None:
    cases: list[tuple[list[Json], str]] = [
        ([{"text": "a", "data": {"x": 1}}], "$.params.message.parts[0]"),
        ([{"text": "a", "url": "https://example.com/a"}], "$.params.message.parts[0]"),
        ([{}], "$.params.message.parts[0]"),
        ([{"raw": "!!not base64"}], "$.params.message.parts[0].raw"),
        ([{"text": 5}], "$.params.message.parts[0].text"),
        (
            [{"text": "ok"}, {"text": "ok"}, {"text": "a", "raw": "AAAA"}],
            "$.params.message.parts[2]",
        ),
    ]
    for parts, path in cases:
        message = user_message("x")
        message["parts"] = parts
        rid = orjson.dumps(parts).decode()
        invalid_params(await call(http, "SendMessage", {"message": message}, rid), rid, path)
    assert result_of(await call(http, "ListTasks", {}), 1)["totalSize"] == 0


async def test_wrong_param_types_name_their_path(http: httpx.AsyncClient) -> None:
    bad_role = {"messageId": "m", "role": "ROLE_BOGUS", "parts": [{"text": "x"}]}
    parts_object = {"messageId": "m", "role": "ROLE_USER", "parts": {}}
    cases: list[tuple[str, Json, str]] = [
        ("GetTask", {"id": 5}, "$.params.id"),
        ("GetTask", {}, "$.params.id"),
        ("GetTask", {"id": "t", "historyLength": "ten"}, "$.params.historyLength"),
        ("GetTask", {"id": "t", "historyLength": 1.5}, "$.params.historyLength"),
        ("SendMessage", {}, "$.params.message"),
        ("SendMessage", {"message": "hi"}, "$.params.message"),
        ("SendMessage", {"message": parts_object}, "$.params.message.parts"),
        ("SendMessage", {"message": bad_role}, "$.params.message.role"),
        (
            "SendMessage",
            {"message": user_message("x"), "configuration": {"returnImmediately": "yes"}},
            "$.params.configuration.returnImmediately",
        ),
        ("SendStreamingMessage", {"message": []}, "$.params.message"),
        ("ListTasks", {"pageSize": "ten"}, "$.params.pageSize"),
        ("ListTasks", {"status": "TASK_STATE_RUNNING"}, "$.params.status"),
        ("ListTasks", {"includeArtifacts": "yes"}, "$.params.includeArtifacts"),
        ("CancelTask", {"id": ["t"]}, "$.params.id"),
        ("SubscribeToTask", {"id": None}, "$.params.id"),
    ]
    for method, params, path in cases:
        rid = f"{method} {orjson.dumps(params).decode()}"
        invalid_params(await call(http, method, params, rid), rid, path)


async def test_a_client_message_must_be_from_the_user_with_parts(http: httpx.AsyncClient) -> None:
    for role in ("ROLE_AGENT", "ROLE_UNSPECIFIED"):
        message = user_message("x")
        message["role"] = role
        response = await call(http, "SendMessage", {"message": message}, rid=role)
        invalid_params(response, role, "$.params.message.role")
    message = user_message("x")
    message["role"] = "ROLE_ROBOT"
    error = invalid_params(
        await call(http, "SendMessage", {"message": message}), 1, "$.params.message.role"
    )
    # the roles a message can have, as v0.3 lists user, agent: ROLE_UNSPECIFIED is refused
    assert error["data"][0]["metadata"]["reason"].endswith("(one of ROLE_USER, ROLE_AGENT)")
    message = user_message("x")
    message["parts"] = []
    response = await call(http, "SendStreamingMessage", {"message": message}, rid="np")
    invalid_params(response, "np", "$.params.message.parts")
    listed = result_of(await call(http, "ListTasks", {}), 1)
    assert listed["totalSize"] == 0  # refused before any task was created


async def test_unknown_skill_is_invalid_params_naming_it(http: httpx.AsyncClient) -> None:
    for skill in ("nosuch", 5):
        message = user_message("x")
        message["metadata"] = {"skillId": skill}
        response = await call(http, "SendMessage", {"message": message}, rid=f"s-{skill}")
        error = invalid_params(response, f"s-{skill}", "$.params.message.metadata.skillId")
        assert repr(str(skill)) in error["message"]
        assert "echo" in error["message"]  # and says which skills exist


async def test_unknown_task_id_is_task_not_found(http: httpx.AsyncClient) -> None:
    follow_up: Json = {"message": user_message("x", taskId="no-such-task")}
    cases: list[tuple[str, Json]] = [
        ("GetTask", {"id": "no-such-task"}),
        ("CancelTask", {"id": "no-such-task"}),
        ("SubscribeToTask", {"id": "no-such-task"}),
        ("SendMessage", follow_up),
        ("SendStreamingMessage", follow_up),
    ]
    for method, params in cases:
        error = error_of(await call(http, method, params, rid=method), method)
        assert error["code"] == -32001
        assert "no-such-task" in error["message"]


async def test_negative_history_length_is_invalid_params(http: httpx.AsyncClient) -> None:
    task = await new_task(http, "x")
    response = await call(http, "GetTask", {"id": task["id"], "historyLength": -1}, rid=5)
    invalid_params(response, 5, "$.params.historyLength")
    response = await call(http, "ListTasks", {"historyLength": -1}, rid=6)
    invalid_params(response, 6, "$.params.historyLength")


async def test_negative_send_history_length_names_the_configuration(
    http: httpx.AsyncClient,
) -> None:
    params = {"message": user_message("x"), "configuration": {"historyLength": -1}}
    response = await call(http, "SendMessage", params, rid=7)
    invalid_params(response, 7, "$.params.configuration.historyLength")


async def test_page_size_bounds(http: httpx.AsyncClient) -> None:
    for size in (0, -1, 101, 10_000):
        response = await call(http, "ListTasks", {"pageSize": size}, rid=size)
        invalid_params(response, size, "$.params.pageSize")
    for size in (1, 100):
        result = result_of(await call(http, "ListTasks", {"pageSize": size}, rid=size), size)
        assert result["pageSize"] == size
        assert result["nextPageToken"] == ""


async def test_bad_page_token_is_invalid_params(http: httpx.AsyncClient) -> None:
    await new_task(http, "x")
    # garbage, "x", "m-1", "m" + 20 digits (beyond any order), "m1a"
    for token in ("garbage!!", "eA", "bS0x", "bTk5OTk5OTk5OTk5OTk5OTk5OTk5", "bTFh"):
        response = await call(http, "ListTasks", {"pageToken": token}, rid=token)
        invalid_params(response, token, "$.params.pageToken")


# --- task state errors ----------------------------------------------------------------------


async def test_follow_up_to_a_terminal_task_is_unsupported(http: httpx.AsyncClient) -> None:
    task = await new_task(http, "done")
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    for method in ("SendMessage", "SendStreamingMessage"):
        message = user_message("more", taskId=task["id"])
        error = error_of(await call(http, method, {"message": message}, rid=method), method)
        assert error["code"] == -32004
    stored = result_of(await call(http, "GetTask", {"id": task["id"]}, rid=22), 22)
    assert stored["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(stored["history"]) == len(task["history"])  # the refused messages are not kept


async def test_follow_up_with_another_context_is_invalid_params(http: httpx.AsyncClient) -> None:
    task = await new_task(http, "start", skill="ask")
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    message = user_message("Ada", taskId=task["id"], contextId="some-other-context")
    response = await call(http, "SendMessage", {"message": message}, rid="ctx")
    invalid_params(response, "ctx", "$.params.message.contextId")

    # Nothing changed: the task still waits, and a matching follow-up completes it.
    stored = result_of(await call(http, "GetTask", {"id": task["id"]}, rid=2), 2)
    assert stored["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    message = user_message("Ada", taskId=task["id"], contextId=task["contextId"])
    done = result_of(await call(http, "SendMessage", {"message": message}, rid=3), 3)["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["artifacts"][0]["parts"] == [{"text": "hello Ada"}]


async def wait_state(http: httpx.AsyncClient, task_id: str, state: str) -> Json:
    with trio.fail_after(5):
        while True:
            task = result_of(await call(http, "GetTask", {"id": task_id}, rid="poll"), "poll")
            if task["status"]["state"] == state:
                return task
            await trio.sleep(0.01)


async def test_follow_up_to_a_task_that_is_not_waiting_is_unsupported(
    http: httpx.AsyncClient,
) -> None:
    gate = "gate-" + uuid.uuid4().hex
    gates[gate] = trio.Event()
    params = {
        "message": user_message(gate, skill="gated"),
        "configuration": {"returnImmediately": True},
    }
    task = result_of(await call(http, "SendMessage", params), 1)["task"]
    await wait_state(http, task["id"], "TASK_STATE_WORKING")
    message = user_message("interrupt", taskId=task["id"])
    error = error_of(await call(http, "SendMessage", {"message": message}, rid=4), 4)
    assert error["code"] == -32004
    gates[gate].set()
    done = await wait_state(http, task["id"], "TASK_STATE_COMPLETED")
    assert "interrupt" not in orjson.dumps(done["history"]).decode()


async def test_subscribe_or_cancel_on_a_terminal_task(http: httpx.AsyncClient) -> None:
    task = await new_task(http, "done")
    response = await call(http, "SubscribeToTask", {"id": task["id"]}, rid="s")
    assert error_of(response, "s")["code"] == -32004  # a JSON error, not an event stream
    response = await call(http, "CancelTask", {"id": task["id"]}, rid="c")
    assert error_of(response, "c")["code"] == -32002


async def test_unsupported_optional_features(http: httpx.AsyncClient) -> None:
    task = await new_task(http, "x")
    cases: list[tuple[str, Json, int]] = [
        (
            "CreateTaskPushNotificationConfig",
            {"taskId": task["id"], "url": "https://example.com/hook"},
            -32003,
        ),
        ("GetTaskPushNotificationConfig", {"taskId": task["id"], "id": "c"}, -32003),
        ("ListTaskPushNotificationConfigs", {"taskId": task["id"]}, -32003),
        ("DeleteTaskPushNotificationConfig", {"taskId": task["id"], "id": "c"}, -32003),
    ]
    for method, params, code in cases:
        assert error_of(await call(http, method, params, rid=method), method)["code"] == code


async def test_extended_card_is_unsupported_when_the_card_does_not_declare_it(
    http: httpx.AsyncClient,
) -> None:
    """A2A v1.0 §3.3.4: capabilities.extendedAgentCard false means UnsupportedOperationError
    (-32004), not ExtendedAgentCardNotConfiguredError (-32007); v0.3's method agrees."""
    card = (await http.get("/.well-known/agent-card.json")).json()
    assert card["capabilities"]["extendedAgentCard"] is False
    v03_card = (await http.get("/.well-known/agent.json")).json()
    assert v03_card.get("supportsAuthenticatedExtendedCard") in (False, None)
    error = error_of(await call(http, "GetExtendedAgentCard", {}, rid="x"), "x")
    assert (error["code"], error["data"][0]["reason"]) == (-32004, "UNSUPPORTED_OPERATION")
    request = http.build_request(
        "POST", "/", json=rpc("agent/getAuthenticatedExtendedCard", {}, "y")
    )
    del request.headers["A2A-Version"]
    error = error_of(await http.send(request), "y")
    assert error["code"] == -32004


# --- versions and HTTP framing ---------------------------------------------------------------


async def test_unsupported_a2a_version(http: httpx.AsyncClient) -> None:
    for version in ("9.9", "2.0", "1.1", "abc"):
        for method in ("ListTasks", "SendStreamingMessage"):
            params: Json = {"message": user_message("x")} if method != "ListTasks" else {}
            rid = f"{method} {version}"
            response = await http.post(
                "/", json=rpc(method, params, rid), headers={"A2A-Version": version}
            )
            assert error_of(response, rid)["code"] == -32009
    listed = result_of(await call(http, "ListTasks", {}, rid=41), 41)
    assert listed["totalSize"] == 0  # nothing ran


async def test_missing_a2a_version_still_serves_v1_methods(http: httpx.AsyncClient) -> None:
    request = http.build_request(
        "POST", "/", json=rpc("SendMessage", {"message": user_message("v")})
    )
    del request.headers["A2A-Version"]
    response = await http.send(request)
    task = result_of(response, 1)["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "v"}]


async def test_v03_errors_keep_the_v03_data_shape(http: httpx.AsyncClient) -> None:
    """ErrorInfo lists are 1.0's shape; a 0.3 caller gets the error's own data object."""
    for headers in ({"A2A-Version": "0.3"}, {}):
        request = http.build_request("POST", "/", json=rpc("tasks/get", {"id": 5}, 7))
        del request.headers["A2A-Version"]
        request.headers.update(headers)
        error = error_of(await http.send(request), 7)
        assert error["code"] == -32602
        assert error["data"]["path"] == "$.params.id"
    request = http.build_request("POST", "/", json=rpc("GetTask", {"id": "nope"}, 8))
    del request.headers["A2A-Version"]  # a 1.0 method with no header is served, and errs, as 1.0
    error = (await http.send(request)).json()["error"]
    assert error["code"] == -32001 and error["data"][0]["reason"] == "TASK_NOT_FOUND"


async def test_content_type(http: httpx.AsyncClient) -> None:
    body = orjson.dumps(rpc("ListTasks", {}, 50))
    for wrong in ("text/plain", "application/x-www-form-urlencoded", "application/xml", ""):
        # Not declared JSON, so the body is not interpreted: the error has a null id.
        error = error_of(await post_raw(http, body, wrong), None, status=415)
        assert error["code"] == -32600
    for right in ("application/json; charset=utf-8", "application/a2a+json", "APPLICATION/JSON"):
        assert result_of(await post_raw(http, body, right), 50)["tasks"] == []


async def test_a_byte_order_mark_before_the_body_is_passed_over(http: httpx.AsyncClient) -> None:
    """RFC 8259 §8.1 lets a parser ignore one; Windows PowerShell 5.1 sends one.  Two are
    still a parse error.  Before, one was: orjson refuses it."""
    body = orjson.dumps(rpc("ListTasks", {}, 51))
    assert result_of(await post_raw(http, codecs.BOM_UTF8 + body), 51)["tasks"] == []
    error = error_of(await post_raw(http, codecs.BOM_UTF8 * 2 + body), None)
    assert error["code"] == -32700


async def post_body_in_chunks(
    base_url: str, *, chunks: int, content_length: int | None = None
) -> tuple[httpx.Response, int]:
    """POST ``chunks`` chunks of 64 KiB over a raw connection, reading the response meanwhile.

    Without ``content_length`` the body is sent chunked (no length up front).  Writing stops as
    soon as the response has arrived or the server closes the connection; returns the response
    and how many body bytes were written by then.
    """
    url = httpx.URL(base_url)
    framing = (
        f"Content-Length: {content_length}"
        if content_length is not None
        else "Transfer-Encoding: chunked"
    )
    head = (
        f"POST / HTTP/1.1\r\nHost: {url.host}:{url.port}\r\nA2A-Version: 1.0\r\n"
        f"Content-Type: application/json\r\n{framing}\r\n\r\n"
    ).encode()
    size = 64 * 1024
    total = chunks * size if content_length is None else min(chunks * size, content_length)
    written = 0
    received = bytearray()
    response: httpx.Response | None = None

    async def write() -> None:
        nonlocal written
        try:
            await stream.send_all(head)
            while written < total:
                piece = b" " * min(size, total - written)
                chunked = content_length is None
                await stream.send_all(b"%x\r\n%b\r\n" % (len(piece), piece) if chunked else piece)
                written += len(piece)
            if content_length is None:
                await stream.send_all(b"0\r\n\r\n")
        except trio.BrokenResourceError:
            pass  # the server closed the connection: it has answered

    async def read(cancel: trio.CancelScope) -> None:
        nonlocal response
        while b"\r\n\r\n" not in received:
            data = await stream.receive_some(65536)
            assert data, "connection closed before a response"
            received.extend(data)
        raw_head, _, body = bytes(received).partition(b"\r\n\r\n")
        status_line, *lines = raw_head.decode("latin-1").split("\r\n")
        headers = [
            (name.strip(), value.strip()) for name, value in (h.split(":", 1) for h in lines)
        ]
        length = int(dict((k.lower(), v) for k, v in headers)["content-length"])
        while len(body) < length:
            data = await stream.receive_some(65536)
            assert data, "connection closed mid-response"
            body += data
        sent = httpx.Request("POST", url, headers={"A2A-Version": "1.0"})
        status = int(status_line.split()[1])
        response = httpx.Response(status, headers=headers, content=body, request=sent)
        cancel.cancel()  # stop writing: the answer is in

    with trio.fail_after(10):
        stream = await trio.open_tcp_stream(str(url.host), int(url.port or 80))
        async with stream, trio.open_nursery() as nursery:
            nursery.start_soon(write)
            nursery.start_soon(read, nursery.cancel_scope)
    assert response is not None
    return response, written


async def test_oversize_body_with_content_length_is_413(
    base_url: str, http: httpx.AsyncClient
) -> None:
    # Declared too large: refused from the header, before the body is read.
    response, written = await post_body_in_chunks(
        base_url, chunks=176, content_length=DEFAULT_LIMIT + 1
    )
    assert error_of(response, None, status=413)["code"] == -32600
    assert written < DEFAULT_LIMIT
    await assert_healthy(http)


async def test_body_at_the_limit_is_read(http: httpx.AsyncClient) -> None:
    document = orjson.dumps(rpc("ListTasks", {}, 52))
    body = document + b" " * (DEFAULT_LIMIT - len(document))  # trailing JSON whitespace
    assert result_of(await post_raw(http, body), 52)["tasks"] == []


async def test_oversize_chunked_body_is_413(base_url: str, http: httpx.AsyncClient) -> None:
    response, _written = await post_body_in_chunks(base_url, chunks=176)  # 11 MiB, no length
    assert error_of(response, None, status=413)["code"] == -32600
    await assert_healthy(http)


async def test_oversize_chunked_body_is_refused_without_reading_it_all(
    base_url: str, http: httpx.AsyncClient
) -> None:
    # 64 MiB offered: a server that buffers the whole body reads all of it before answering;
    # one that counts while reading answers soon after the 10 MiB limit (what was written
    # beyond it sits in socket buffers).
    response, written = await post_body_in_chunks(base_url, chunks=1024)
    assert error_of(response, None, status=413)["code"] == -32600
    assert written < 32 * MiB
    await assert_healthy(http)


# --- notifications --------------------------------------------------------------------------


async def test_a_notification_gets_204_and_no_body(http: httpx.AsyncClient) -> None:
    document = {"jsonrpc": "2.0", "method": "SendMessage", "params": {"message": user_message("n")}}
    response = await http.post("/", json=document)
    assert response.status_code == 204
    assert response.content == b""
    listed = result_of(await call(http, "ListTasks", {}, rid=60), 60)
    assert listed["totalSize"] == 1  # it was still processed


async def test_a_failing_notification_gets_no_response_body(http: httpx.AsyncClient) -> None:
    # JSON-RPC 2.0 §4.1: the server MUST NOT reply to a notification, even with an error.
    for method, params in [
        ("NoSuchMethod", {}),
        ("GetTask", {"id": "no-such-task"}),
        ("GetTask", {"id": 5}),
    ]:
        document = {"jsonrpc": "2.0", "method": method, "params": params}
        response = await http.post("/", json=document)
        assert (response.status_code, response.content) == (204, b""), (method, params)


async def test_a_streaming_notification_gets_no_event_stream(http: httpx.AsyncClient) -> None:
    params = {"message": user_message("quiet")}
    document = {"jsonrpc": "2.0", "method": "SendStreamingMessage", "params": params}
    response = await http.post("/", json=document)
    assert response.status_code == 204
    assert response.content == b""
    listed = result_of(await call(http, "ListTasks", {}, rid=61), 61)
    assert listed["totalSize"] == 1  # the message was still taken


# --- handler failures never leak --------------------------------------------------------------


async def test_an_internal_handler_error_fails_the_task_generically(
    http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    task = await new_task(http, "x", skill="boom")
    (logged,) = [r for r in caplog.records if r.name == "a2a_trio.runtime"]
    assert logged.exc_info is not None  # the author's traceback, in the server's log only
    assert logged.getMessage() == (
        f"skill 'boom' failed on task {task['id']}; its client is told only {INTERNAL_FAILURE!r}"
        " (to tell it why, raise TaskFailed('a message for the client'))"
    )
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["status"]["message"]["role"] == "ROLE_AGENT"
    assert task["status"]["message"]["parts"] == [{"text": INTERNAL_FAILURE}]
    assert "artifacts" not in task

    for response in (
        await call(http, "GetTask", {"id": task["id"]}),
        await call(http, "ListTasks", {"includeArtifacts": True}),
        await call(http, "SendStreamingMessage", {"message": user_message("y", skill="boom")}),
    ):
        assert response.status_code == 200
        assert_no_leak(response)
        assert INTERNAL_FAILURE in response.text


async def test_task_failed_carries_the_authors_message(http: httpx.AsyncClient) -> None:
    task = await new_task(http, "x", skill="refuse")
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["status"]["message"]["parts"] == [{"text": "cannot do that"}]


async def test_reject_ends_the_task_rejected(http: httpx.AsyncClient) -> None:
    task = await new_task(http, "reject", skill="refuse")
    assert task["status"]["state"] == "TASK_STATE_REJECTED"
    assert task["status"]["message"]["parts"] == [{"text": "not my job"}]
    stored = result_of(await call(http, "GetTask", {"id": task["id"]}, rid=70), 70)
    assert stored["status"]["state"] == "TASK_STATE_REJECTED"


# --- agent bugs that must stay inside their task or request -----------------------------------

faulty = Agent("faulty agent", "Skills with bugs of their own")


@faulty.skill(default=True)
async def fine(ctx: TaskContext) -> str:
    return "fine"


@faulty.skill()
async def unusable_result(ctx: TaskContext) -> object:
    """Return a value no artifact can hold (an agent bug the runtime notices after the call)."""
    return object()


@faulty.skill()
async def unawaited_result(ctx: TaskContext) -> object:
    """Return another skill's coroutine without awaiting it."""
    return fine(ctx)


@faulty.skill()  # type: ignore[arg-type]
def forgot_async(ctx: TaskContext) -> object:
    """A plain ``def`` that names an ``async def`` and may return its coroutine, so its
    declaration cannot tell, but returns a plain value."""
    if ctx.text == "later":
        return fine(ctx)
    return ctx.text.upper()


@faulty.skill(message_only=True)  # type: ignore[arg-type]
def quick_forgot_async(ctx: TaskContext) -> object:
    """The same, message-only."""
    return fine(ctx) if ctx.text == "later" else ctx.text.upper()


@faulty.skill(message_only=True)
async def quick_set(ctx: TaskContext) -> object:
    return {"a", "b"}


@faulty.skill(message_only=True)
async def quick_boom(ctx: TaskContext) -> str:
    raise RuntimeError("secret internal detail /etc/passwd")


@faulty.skill(message_only=True)
async def quick_nothing(ctx: TaskContext) -> None:
    return None


@pytest.fixture
async def faulty_http(nursery: trio.Nursery) -> AsyncIterator[httpx.AsyncClient]:
    url: str = await nursery.start(
        partial(serve, faulty, port=0, config=ServerConfig(keepalive=0.2))
    )
    async with httpx.AsyncClient(base_url=url, headers=V1_HEADERS, timeout=10) as client:
        yield client


async def assert_fine(http: httpx.AsyncClient) -> None:
    task = result_of(await call(http, "SendMessage", {"message": user_message("x")}), 1)["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "fine"}]


RESULTS = (
    "a skill returns str, bytes, JSON data (dict, list, int, float, bool), a Part or a list of"
    " parts, "
)


@pytest.mark.parametrize(
    ("skill", "returned"), [("unusable_result", "object"), ("unawaited_result", "coroutine")]
)
async def test_an_unusable_result_fails_only_its_task_saying_what_a_skill_returns(
    faulty_http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture, skill: str, returned: str
) -> None:
    """The client and the log are told which values a skill may return (before: the client
    the generic failure, the log a hint to raise ``TaskFailed``, which does not fit)."""
    message = user_message("x", skill=skill)
    response = await call(faulty_http, "SendMessage", {"message": message}, rid="bad")
    task = result_of(response, "bad")["task"]
    awaited = " (an awaitable: await it)" if returned == "coroutine" else ""
    reason = f"the skill returned {returned}{awaited}; {RESULTS}an Artifact, a Message or None"
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["status"]["message"]["parts"] == [
        {"text": f"{INTERNAL_FAILURE.removesuffix('.')}: {reason}."}
    ]
    (logged,) = [r for r in caplog.records if r.name == "a2a_trio.runtime"]
    assert (logged.levelname, logged.exc_info) == ("ERROR", None)
    assert logged.getMessage() == f"skill {skill!r} failed on task {task['id']}: {reason}"
    await assert_fine(faulty_http)  # the runtime (and every other task) lives on


NOTHING_TO_AWAIT = (
    "the skill is a plain function that returned str; declare it `async def` or return an awaitable"
)


async def test_a_plain_function_returning_a_value_fails_saying_what_it_returned(
    faulty_http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A plain ``def`` its declaration could not refuse (it names an ``async def``) returned a
    value: its task failed with the generic message and the log had a traceback of the
    runtime's ``await`` (``TypeError: 'str' object can't be awaited``) with a hint to raise
    ``TaskFailed``.  Now both say what the skill returned and what to do, without a
    traceback; a message-only skill's client gets the same in its internal error."""
    told = f"{INTERNAL_FAILURE.removesuffix('.')}: {NOTHING_TO_AWAIT}."
    response = await call(
        faulty_http, "SendMessage", {"message": user_message("x", skill="forgot_async")}, "t"
    )
    task = result_of(response, "t")["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["status"]["message"]["parts"] == [{"text": told}]
    assert "artifacts" not in task
    for method in ("SendMessage", "SendStreamingMessage"):
        message = user_message("x", skill="quick_forgot_async")
        error = error_of(await call(faulty_http, method, {"message": message}, method), method)
        assert (error["code"], error["message"]) == (-32603, told)
    logged = [r for r in caplog.records if r.name == "a2a_trio.runtime"]
    assert [(r.levelname, r.exc_info, r.getMessage()) for r in logged] == [
        ("ERROR", None, f"skill 'forgot_async' failed on task {task['id']}: {NOTHING_TO_AWAIT}"),
        *2
        * [("ERROR", None, f"message-only skill 'quick_forgot_async' failed: {NOTHING_TO_AWAIT}")],
    ]
    for skill in ("forgot_async", "quick_forgot_async"):  # the coroutine it may return runs
        message = user_message("later", skill=skill)
        result = result_of(await call(faulty_http, "SendMessage", {"message": message}, 2), 2)
        answer = result["task"]["artifacts"][0] if "task" in result else result["message"]
        assert answer["parts"] == [{"text": "fine"}]


async def test_a_message_only_skill_returning_no_reply_is_told_what_it_may_return(
    faulty_http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    expected = []
    for skill, returned in (("quick_set", "set"), ("quick_nothing", "None")):
        reason = f"the skill returned {returned}; {RESULTS}or a Message"
        expected += 2 * [f"message-only skill {skill!r} failed: {reason}"]
        for method in ("SendMessage", "SendStreamingMessage"):
            rid = f"{method}/{skill}"
            message = user_message("x", skill=skill)
            error = error_of(await call(faulty_http, method, {"message": message}, rid), rid)
            assert error["code"] == -32603
            assert error["message"] == f"{INTERNAL_FAILURE.removesuffix('.')}: {reason}."
    logged = [r.getMessage() for r in caplog.records if r.name == "a2a_trio.runtime"]
    assert logged == expected


async def test_a_failing_message_only_skill_is_an_internal_error(
    faulty_http: httpx.AsyncClient,
) -> None:
    for skill in ("quick_boom",):
        for method in ("SendMessage", "SendStreamingMessage"):
            rid = f"{method}/{skill}"
            message = user_message("x", skill=skill)
            error = error_of(await call(faulty_http, method, {"message": message}, rid), rid)
            assert error["code"] == -32603
    await assert_fine(faulty_http)
