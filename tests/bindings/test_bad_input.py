"""Bad input on every binding gets a clear, spec-shaped error: right code and status, no leaks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial

import httpx
import pytest
import trio

from a2a_trio import ServerConfig, serve
from a2a_trio.errors import AgentMisuseError
from a2a_trio.server import create_app

from .agents import agent
from .drivers import V1_HEADERS

SEND = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}}


def reason(response: httpx.Response) -> str:
    body = response.json()
    assert "Traceback" not in response.text and "/work/" not in response.text
    assert body["error"]["code"] == response.status_code
    (info,) = body["error"]["details"]
    assert info["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    return str(info["reason"])


@pytest.mark.parametrize(
    ("verb", "path", "status", "why"),
    [
        ("GET", "/no/such/resource", 404, "METHOD_NOT_FOUND"),
        ("GET", "/tasks/missing", 404, "TASK_NOT_FOUND"),
        ("GET", "/tasks?pageSize=0", 400, "INVALID_PARAMS"),
        ("GET", "/tasks?pageSize=ten", 400, "INVALID_PARAMS"),
        ("GET", "/tasks?pageSize=1_0", 400, "INVALID_PARAMS"),
        ("GET", "/tasks?pageSize=%2B5", 400, "INVALID_PARAMS"),
        ("GET", "/tasks?pageSize=%205", 400, "INVALID_PARAMS"),
        ("GET", "/tasks?pageSize=%EF%BC%95", 400, "INVALID_PARAMS"),
        ("GET", "/tasks?historyLength=1_0", 400, "INVALID_PARAMS"),
        ("GET", "/tasks/missing?historyLength=%2B1", 400, "INVALID_PARAMS"),
        ("GET", "/tasks?status=sleeping", 400, "INVALID_PARAMS"),
        ("GET", "/tasks?includeArtifacts=maybe", 400, "INVALID_PARAMS"),
        ("GET", "/tasks?statusTimestampAfter=yesterday", 400, "INVALID_PARAMS"),
        ("GET", "/tasks?colour=red", 400, "INVALID_PARAMS"),
        ("GET", "/tasks/missing?historyLength=-1", 400, "INVALID_PARAMS"),
        ("DELETE", "/tasks/missing", 405, "METHOD_NOT_FOUND"),
        ("PUT", "/message:send", 405, "METHOD_NOT_FOUND"),
        ("GET", "/message:send", 405, "METHOD_NOT_FOUND"),
        ("GET", "/extendedAgentCard", 400, "UNSUPPORTED_OPERATION"),  # A2A v1.0 §3.3.4
        ("GET", "/tenant/extendedAgentCard", 400, "UNSUPPORTED_OPERATION"),
        ("GET", "/tasks/t/pushNotificationConfigs", 400, "PUSH_NOTIFICATION_NOT_SUPPORTED"),
    ],
)
async def test_rest_errors(
    http: httpx.AsyncClient, verb: str, path: str, status: int, why: str
) -> None:
    response = await http.request(verb, path, headers=V1_HEADERS)
    assert response.status_code == status
    assert reason(response) == why
    if status == 405:
        assert response.headers["allow"]


async def test_rest_bodies(http: httpx.AsyncClient) -> None:
    bad_json = await http.post(
        "/message:send",
        content=b"{nope",
        headers={**V1_HEADERS, "Content-Type": "application/json"},
    )
    assert (bad_json.status_code, reason(bad_json)) == (400, "JSON_PARSE")
    text = await http.post(
        "/message:send", content=b"hello", headers={**V1_HEADERS, "Content-Type": "text/plain"}
    )
    assert (text.status_code, reason(text)) == (415, "CONTENT_TYPE_NOT_SUPPORTED")
    not_object = await http.post("/message:send", json=[1], headers=V1_HEADERS)
    assert (not_object.status_code, reason(not_object)) == (400, "INVALID_PARAMS")
    no_message = await http.post("/message:send", json={}, headers=V1_HEADERS)
    assert (no_message.status_code, reason(no_message)) == (400, "INVALID_PARAMS")
    a2a_json = await http.post(
        "/message:send",
        content=httpx.Request("POST", "/", json=SEND).content,
        headers={**V1_HEADERS, "Content-Type": "application/a2a+json"},
    )
    assert a2a_json.status_code == 200
    marked = await http.post(  # a UTF-8 byte-order mark first, as PowerShell 5.1 sends
        "/message:send",
        content=b"\xef\xbb\xbf" + httpx.Request("POST", "/", json=SEND).content,
        headers={**V1_HEADERS, "Content-Type": "application/json"},
    )
    assert marked.status_code == 200


@pytest.mark.parametrize(("version", "status"), [("2.0", 400), ("0.3", 400), ("1.0", 200)])
async def test_rest_versions(http: httpx.AsyncClient, version: str, status: int) -> None:
    response = await http.post("/message:send", json=SEND, headers={"A2A-Version": version})
    assert response.status_code == status
    if status != 200:
        assert reason(response) == "VERSION_NOT_SUPPORTED"


async def test_rest_without_a_version_header_is_served_as_1_0(http: httpx.AsyncClient) -> None:
    response = await http.post("/message:send", json=SEND, headers={"OPVS-Version": ""})
    assert response.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def rpc(method: str, params: object, rid: object = 1) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


@pytest.mark.parametrize(
    ("headers", "method", "code"),
    [
        ({"A2A-Version": "9.9"}, "message/send", -32009),
        ({"A2A-Version": "1.0"}, "message/send", -32601),  # a 0.3 name asked as 1.0
        ({}, "tasks/sendSubscribe", -32601),  # a legacy name is not v0.3
        ({"OPVS-Version": "0.3"}, "tasks/get", -32602),  # no id
    ],
)
async def test_v03_errors(
    http: httpx.AsyncClient, headers: dict[str, str], method: str, code: int
) -> None:
    response = await http.post("/", json=rpc(method, {}), headers=headers)
    assert response.json()["error"]["code"] == code
    assert response.json()["id"] == 1


@pytest.mark.parametrize(
    ("headers", "method"),
    [
        (V1_HEADERS, "GetTask"),
        (V1_HEADERS, "CancelTask"),
        (V1_HEADERS, "SubscribeToTask"),
        ({}, "tasks/get"),
        ({}, "tasks/cancel"),
        ({}, "tasks/resubscribe"),
    ],
)
async def test_an_empty_task_id_is_invalid_params_not_an_unknown_task(
    http: httpx.AsyncClient, headers: dict[str, str], method: str
) -> None:
    """``id`` is REQUIRED (A2A v1.0 §5.7: present and set) and ProtoJSON reads ``""`` as not
    set: refused as a missing ``id`` is (before: TaskNotFoundError, -32001)."""
    response = await http.post("/", json=rpc(method, {"id": ""}), headers=headers)
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert (error["code"], error["message"]) == (-32602, "$.params.id: id must not be empty")
    data = error["data"] if method.startswith("tasks/") else error["data"][0]["metadata"]
    assert (data["path"], data["reason"]) == ("$.params.id", "id must not be empty")


async def test_v03_shapes_in_and_out(http: httpx.AsyncClient) -> None:
    v1_shaped = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}}
    refused = await http.post("/", json=rpc("message/send", v1_shaped))
    assert refused.json()["error"]["code"] == -32602
    message = {"kind": "message", "messageId": "m", "role": "user", "parts": [{"text": "x"}]}
    task = (await http.post("/", json=rpc("message/send", {"message": message}))).json()["result"]
    assert (task["kind"], task["status"]["state"]) == ("task", "completed")
    missing = await http.post("/", json=rpc("tasks/get", {"id": "nope"}))
    assert missing.json()["error"]["code"] == -32001


async def test_legacy_envelope_errors(http: httpx.AsyncClient) -> None:
    not_json = await http.post("/echo", content=b"{nope")
    assert not_json.status_code == 400
    assert not_json.json()["error"]["code"] == -32700
    unknown = await http.post("/echo", json=rpc("tasks/frobnicate", {}, rid={"odd": "id"}))
    assert unknown.status_code == 200  # the dialect's ids are any JSON value (§4.1)
    assert (unknown.json()["id"], unknown.json()["error"]["code"]) == ({"odd": "id"}, -32601)
    unknown = await http.post("/echo", json=rpc("tasks/frobnicate", {}, rid="r7"))
    assert (unknown.status_code, unknown.json()["id"]) == (200, "r7")
    assert unknown.json()["error"]["code"] == -32601
    assert unknown.json()["error"]["message"].startswith("Method not implemented")
    for method in ("tasks/get", "tasks/cancel", "tasks/resubscribe"):
        missing = await http.post("/echo", json=rpc(method, {}, rid=3))
        assert missing.headers["content-type"] == "application/json"
        assert (missing.json()["id"], missing.json()["error"]["code"]) == (3, -32602)
        assert "'id' is required" in missing.json()["error"]["message"]
    bad_id = await http.post("/echo", json=rpc("tasks/send", {"id": 5, "message": {}}))
    assert bad_id.json()["error"]["code"] == -32602


async def test_unknown_legacy_skill_paths_are_not_served(http: httpx.AsyncClient) -> None:
    response = await http.get("/nobody/.well-known/agent.json")
    assert response.status_code == 404


@pytest.mark.parametrize(
    "config",
    [
        ServerConfig(legacy_prefixes={"nope": "/nope"}),
        ServerConfig(legacy_prefixes={"echo": "/"}),
        ServerConfig(legacy_prefixes={"echo": "/same", "data": "/same/"}),
    ],
)
def test_bad_legacy_configuration_is_refused_when_the_app_is_built(config: ServerConfig) -> None:
    with pytest.raises(AgentMisuseError):
        create_app(agent, config=config)


@pytest.mark.parametrize("verb", ["GET", "PUT", "DELETE", "OPTIONS", "TRACE", "FROB"])
async def test_legacy_surface_wrong_verb(http: httpx.AsyncClient, verb: str) -> None:
    for path in ("/echo", "/echo/"):
        response = await http.request(verb, path)
        assert (response.status_code, response.headers["allow"]) == (405, "POST")
        assert response.json()["error"] == {
            "code": -32600,
            "message": f"{verb} is not allowed here: POST a JSON-RPC request, or GET"
            " /echo/.well-known/agent.json for the agent card",
        }


@pytest.mark.parametrize("verb", ["GET", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "FROB"])
@pytest.mark.parametrize("headers", [V1_HEADERS, {}])
async def test_jsonrpc_path_wrong_verb_is_405_json(
    http: httpx.AsyncClient, verb: str, headers: dict[str, str]
) -> None:
    """Any verb but POST on the JSON-RPC path: 405, ``Allow: POST``, a JSON-RPC error (the
    legacy surfaces' answer), not an HTML page."""
    response = await http.request(verb, "/", headers=headers)
    assert (response.status_code, response.headers["allow"]) == (405, "POST")
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert (body["jsonrpc"], body["id"], body["error"]["code"]) == ("2.0", None, -32600)
    assert body["error"]["message"] == (  # a browser opening the agent's URL: where the card is
        f"{verb} is not allowed here: POST a JSON-RPC request, or GET"
        " /.well-known/agent-card.json for the agent card"
    )
    if headers:  # 1.0's error shape: an ErrorInfo in data
        assert body["error"]["data"][0]["reason"] == "INVALID_REQUEST"
    head = await http.head("/", headers=headers)
    assert (head.status_code, head.headers["allow"], head.content) == (405, "POST", b"")


@pytest.mark.parametrize(
    ("verb", "path", "allow"),
    [
        ("OPTIONS", "/tasks/t", "GET"),
        ("TRACE", "/tasks/t", "GET"),
        ("FROB", "/message:send", "POST"),
        ("OPTIONS", "/acme/tasks/t:subscribe", "GET, POST"),
        ("FROB", "/v1/tasks/t:cancel", "POST"),
    ],
)
async def test_rest_verbs_quart_does_not_route_are_405_json(
    http: httpx.AsyncClient, verb: str, path: str, allow: str
) -> None:
    response = await http.request(verb, path, headers=V1_HEADERS if path[:3] != "/v1" else {})
    assert (response.status_code, response.headers["allow"]) == (405, allow)
    assert reason(response) == "METHOD_NOT_FOUND"


@pytest.fixture
async def rpc_elsewhere(nursery: trio.Nursery) -> AsyncIterator[httpx.AsyncClient]:
    """A server whose JSON-RPC endpoint is not at ``/``, so ``/`` is nobody's path."""
    config = ServerConfig(jsonrpc_path="/rpc", legacy_mount_all=True)
    url = await nursery.start(partial(serve, agent, port=0, config=config))
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        yield client


@pytest.mark.parametrize("verb", ["GET", "POST", "PUT", "DELETE", "OPTIONS", "FROB"])
async def test_unknown_paths_are_404_json(rpc_elsewhere: httpx.AsyncClient, verb: str) -> None:
    for path in ("/", "/no/such/resource", "/tasks/a/b/c"):
        response = await rpc_elsewhere.request(verb, path, headers=V1_HEADERS)
        assert response.status_code == 404, path
        assert reason(response) == "METHOD_NOT_FOUND"
    moved = await rpc_elsewhere.request(verb, "/rpc")
    if verb == "POST":
        assert moved.status_code == 415  # it is the endpoint: it wants a JSON body
    else:
        assert (moved.status_code, moved.headers["allow"]) == (405, "POST")
        assert moved.json()["error"]["code"] == -32600


@pytest.mark.parametrize("value", ["1_0", "+5", " 5", "5 ", "\uff15", "5.0"])
@pytest.mark.parametrize("name", ["pageSize", "historyLength"])
async def test_integer_query_parameters_are_digits_only(
    http: httpx.AsyncClient, name: str, value: str
) -> None:
    for path, headers in (("/tasks", V1_HEADERS), ("/v1/tasks", {})):
        response = await http.get(path, params={name: value}, headers=headers)
        assert (response.status_code, reason(response)) == (400, "INVALID_PARAMS")
        error = response.json()["error"]
        assert error["status"] == "INVALID_ARGUMENT"
        assert error["details"][0]["metadata"]["path"] == f"$.query.{name}"
        assert f"{name} must be a decimal integer (digits only)" in error["message"]
    served = await http.get("/tasks", params={name: "5"}, headers=V1_HEADERS)
    assert served.status_code == 200


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("/tasks/t?historyLength=-1", "historyLength"),
        ("/tasks/t?historyLength=99999999999", "historyLength"),
        ("/tasks/t?historyLength=abc", "historyLength"),
        ("/tasks?historyLength=-1", "historyLength"),
        ("/tasks?historyLength=99999999999", "historyLength"),
        ("/tasks?pageSize=0", "pageSize"),
        ("/tasks?pageSize=101", "pageSize"),
        ("/tasks?pageSize=99999999999", "pageSize"),
        ("/tasks?pageSize=ten", "pageSize"),
        ("/tasks?pageToken=zzz", "pageToken"),
        ("/tasks?status=sleeping", "status"),
        ("/tasks?statusTimestampAfter=yesterday", "statusTimestampAfter"),
        ("/tasks?statusTimestampAfter=2024-01-01%2000:00:00Z", "statusTimestampAfter"),
        ("/tasks?statusTimestampAfter=2024-01-01T00:00:00.1234567891Z", "statusTimestampAfter"),
        ("/tasks?includeArtifacts=maybe", "includeArtifacts"),
        ("/acme/tasks?pageSize=0", "pageSize"),
        ("/acme/tasks/t?historyLength=-1", "historyLength"),
    ],
)
async def test_v1_rest_query_errors_name_the_query_parameter(
    http: httpx.AsyncClient, query: str, name: str
) -> None:
    """Whether the REST decoder or, after it, the runtime or the store refuses the value, the
    client is told the query parameter it sent (before: ``$.params.{name}`` from the latter)."""
    response = await http.get(query, headers=V1_HEADERS)
    assert (response.status_code, reason(response)) == (400, "INVALID_PARAMS")
    error = response.json()["error"]
    assert error["details"][0]["metadata"]["path"] == f"$.query.{name}"
    assert error["message"].startswith(f"$.query.{name}: ")


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({}, "$.message"),
        ({"message": {**SEND["message"], "parts": [{}]}}, "$.message.parts[0]"),
        ({"message": {**SEND["message"], "parts": [{"text": 5}]}}, "$.message.parts[0].text"),
        ({"message": {**SEND["message"], "parts": []}}, "$.message.parts"),
        ({"message": {**SEND["message"], "role": "ROLE_AGENT"}}, "$.message.role"),
        ({**SEND, "configuration": {"historyLength": -1}}, "$.configuration.historyLength"),
        ({**SEND, "configuration": {"historyLength": "x"}}, "$.configuration.historyLength"),
    ],
)
async def test_v1_rest_body_errors_name_the_body_field(
    http: httpx.AsyncClient, body: dict[str, object], where: str
) -> None:
    """The decoder and the runtime name fields of the JSON-RPC ``params`` a REST request
    becomes; a REST client sent a body, and is told its field, as on v0.3 HTTP+JSON (before:
    ``$.params.message.parts[0]``)."""
    for path in ("/message:send", "/message:stream", "/acme/message:send"):
        response = await http.post(path, json=body, headers=V1_HEADERS)
        assert (response.status_code, reason(response)) == (400, "INVALID_PARAMS")
        error = response.json()["error"]
        assert error["details"][0]["metadata"]["path"] == where
        assert error["message"].startswith(f"{where}: ")


V03_MESSAGE = {"kind": "message", "messageId": "m", "role": "user", "parts": [{"text": "x"}]}
PROTO_MESSAGE = {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "x"}]}
NO_SKILL = {"skillId": "nosuch"}


@pytest.mark.parametrize(
    ("path", "headers", "body", "where"),
    [
        ("/", V1_HEADERS, rpc("SendMessage", {**SEND, "metadata": NO_SKILL}), "$.params"),
        ("/", {}, rpc("message/send", {"message": V03_MESSAGE, "metadata": NO_SKILL}), "$.params"),
        ("/message:send", V1_HEADERS, {**SEND, "metadata": NO_SKILL}, "$"),
        ("/v1/message:send", {}, {"request": PROTO_MESSAGE, "metadata": NO_SKILL}, "$"),
    ],
)
async def test_an_unknown_skill_in_the_request_metadata_is_reported_there(
    http: httpx.AsyncClient, path: str, headers: dict[str, str], body: dict[str, object], where: str
) -> None:
    """``skillId`` is read from the message's metadata, else the request's: the error names
    the one the client used (before: always the message's, which it had not sent)."""
    response = await http.post(path, json=body, headers=headers)
    error = response.json()["error"]
    info = error["data"] if "jsonrpc" in response.json() else error["details"][0]["metadata"]
    if isinstance(info, list):  # v1.0 JSON-RPC: an ErrorInfo
        info = info[0]["metadata"]
    assert info["path"] == f"{where}.metadata.skillId"
    assert "unknown skill 'nosuch'" in info["reason"]


PNG_URL = "https://example.com/a.png"
V1_PNG = {"url": PNG_URL, "mediaType": "image/png"}
V03_PNG = {"kind": "file", "file": {"uri": PNG_URL, "mimeType": "image/png"}}
PROTO_PNG = {"file": {"file_with_uri": PNG_URL, "mime_type": "image/png"}}
V1_PICTURE = {**SEND["message"], "parts": [{"text": "x"}, V1_PNG]}
V03_PICTURE = {**V03_MESSAGE, "parts": [{"kind": "text", "text": "x"}, V03_PNG]}
PROTO_PICTURE = {**PROTO_MESSAGE, "content": [{"text": "x"}, PROTO_PNG]}


@pytest.mark.parametrize(
    ("path", "headers", "body", "where"),
    [
        ("/", V1_HEADERS, rpc("SendMessage", {"message": V1_PICTURE}), "$.params.message.parts[1]"),
        ("/message:send", V1_HEADERS, {"message": V1_PICTURE}, "$.message.parts[1]"),
        ("/", {}, rpc("message/send", {"message": V03_PICTURE}), "$.params.message.parts[1]"),
        ("/v1/message:send", {}, {"message": PROTO_PICTURE}, "$.message.content[1]"),
        ("/v1/message:send", {}, {"request": PROTO_PICTURE}, "$.request.content[1]"),
        ("/v1/message:send", {}, {"message": V03_PICTURE}, "$.message.parts[1]"),
    ],
)
async def test_a_part_of_a_refused_media_type_is_named_as_sent(
    http: httpx.AsyncClient, path: str, headers: dict[str, str], body: dict[str, object], where: str
) -> None:
    """Before: every binding said ``parts[1]`` in the message text and nowhere else, a name
    the v0.3 HTTP+JSON client (which sends a message's parts as ``content``) never used."""
    response = await http.post(path, json=body, headers=headers)
    error = response.json()["error"]
    why = "media type 'image/png' is not accepted by skill 'echo' (it accepts text/plain, "
    why += "application/json)"
    assert error["message"] == f"{where}: {why}"
    if "jsonrpc" in response.json():
        assert (response.status_code, error["code"]) == (200, -32005)
        info = error["data"] if "A2A-Version" not in headers else error["data"][0]["metadata"]
    else:
        assert (response.status_code, reason(response)) == (415, "CONTENT_TYPE_NOT_SUPPORTED")
        info = error["details"][0]["metadata"]
    assert info == {"path": where, "reason": why}


@pytest.mark.parametrize("method", ["tasks/send", "tasks/sendSubscribe"])
@pytest.mark.parametrize("key", ["id", "sessionId"])
async def test_legacy_nul_in_an_id_is_reported_where_it_was_sent(
    http: httpx.AsyncClient, method: str, key: str
) -> None:
    params = {key: "a\x00b", "message": {"parts": [{"type": "text", "text": "x"}]}}
    response = await http.post("/echo", json=rpc(method, params, rid="nul"))
    body = response.json()
    assert (response.status_code, body["id"], body["error"]["code"]) == (200, "nul", -32602)
    assert body["error"]["data"]["path"] == f"$.params.{key}"
    listed = await http.get("/tasks", headers=V1_HEADERS)
    assert listed.json()["totalSize"] == 0


@pytest.mark.parametrize(
    ("role", "reason"),
    [
        ("agent", "a client's message must have role user"),
        ("assistant", "unknown role 'assistant' (one of user, agent)"),
        (5, "unknown role '5' (one of user, agent)"),
    ],
)
async def test_legacy_message_from_no_user_is_refused_and_its_id_kept_free(
    http: httpx.AsyncClient, role: object, reason: str
) -> None:
    """Before: the dialect took any ``role`` as the user's; v1.0 and v0.3 refuse an agent's."""
    parts = [{"type": "text", "text": "x"}]
    params = {"id": "who", "message": {"role": role, "parts": parts}}
    refused = (await http.post("/echo", json=rpc("tasks/send", params))).json()["error"]
    assert refused["code"] == -32602
    assert refused["data"] == {"path": "$.params.message.role", "reason": reason}
    params = {"id": "who", "message": {"role": "user", "parts": parts}}
    sent = (await http.post("/echo", json=rpc("tasks/send", params))).json()["result"]
    assert (sent["id"], sent["status"]["state"]) == ("who", "completed")


NUL_CONTEXT = {**SEND["message"], "contextId": "c\x00"}


@pytest.mark.parametrize(
    ("path", "params", "where"),
    [
        ("/", {"message": NUL_CONTEXT}, "$.params.message.contextId"),
        ("/", {**SEND, "tenant": "t\x00"}, "$.params.tenant"),
        ("/message:send", {"message": NUL_CONTEXT}, "$.message.contextId"),
        ("/message:stream", {"message": NUL_CONTEXT}, "$.message.contextId"),
        ("/message:send", {**SEND, "tenant": "t\x00"}, "$.tenant"),
        ("/t%00/message:send", SEND, "$.tenant"),
    ],
)
async def test_v1_nul_in_a_new_task_key_is_reported_where_it_was_sent(
    http: httpx.AsyncClient, path: str, params: dict[str, object], where: str
) -> None:
    """The store refuses a NUL under its own field names (``$.contextId``); the client is told
    the field of its request (REST: of its body, the ``/{tenant}`` prefix its ``tenant``)."""
    for method in ("SendMessage", "SendStreamingMessage") if path == "/" else ("",):
        if method:
            response = await http.post(path, json=rpc(method, params), headers=V1_HEADERS)
            error = response.json()["error"]
            assert (response.status_code, error["code"]) == (200, -32602)
            info = error["data"][0]
        else:
            response = await http.post(path, json=params, headers=V1_HEADERS)
            assert (response.status_code, reason(response)) == (400, "INVALID_PARAMS")
            info = response.json()["error"]["details"][0]
        assert info["metadata"] == {"path": where, "reason": "must not contain a NUL character"}
    listed = await http.get("/tasks", headers=V1_HEADERS)
    assert listed.json()["totalSize"] == 0


@pytest.mark.parametrize("method", ["message/send", "message/stream"])
async def test_v03_nul_in_a_context_id_is_reported_where_it_was_sent(
    http: httpx.AsyncClient, method: str
) -> None:
    message = {"kind": "message", "messageId": "m", "role": "user", "contextId": "c\x00"}
    params = {"message": {**message, "parts": [{"kind": "text", "text": "x"}]}}
    response = await http.post("/", json=rpc(method, params, rid="nul"))
    body = response.json()
    assert (response.status_code, body["id"], body["error"]["code"]) == (200, "nul", -32602)
    assert body["error"]["data"]["path"] == "$.params.message.contextId"
