"""The v0.3 <-> v1.0 mapping decisions one by one (the lossy spots of docs/model.md)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from cards import card_at, v03_card

from a2a_trio import model as m
from a2a_trio.wire import V03

MSG = {"kind": "message", "messageId": "m", "role": "user", "parts": []}


def test_states_and_roles_use_v03_names() -> None:
    names = {s: V03.encode(m.TaskStatus(s))["state"] for s in m.TaskState}
    assert names[m.TaskState.INPUT_REQUIRED] == "input-required"
    assert names[m.TaskState.AUTH_REQUIRED] == "auth-required"
    assert names[m.TaskState.UNSPECIFIED] == "unknown"
    assert len(set(names.values())) == len(m.TaskState)
    for state, name in names.items():
        assert V03.decode({"state": name}, m.TaskStatus).state is state
    agent = m.Message(message_id="m", role=m.Role.AGENT, parts=[])
    assert V03.encode(agent)["role"] == "agent"


def test_unspecified_role_has_no_v03_form() -> None:
    with pytest.raises(ValueError, match=r"no v0\.3 form"):
        V03.encode(m.Message(message_id="m", role=m.Role.UNSPECIFIED, parts=[]))


def test_file_parts_map_to_raw_and_url() -> None:
    parts = [
        {"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain", "name": "a.txt"}},
        {"kind": "file", "file": {"uri": "https://x/y.png", "mimeType": "image/png"}},
    ]
    message = V03.decode({**MSG, "parts": parts}, m.Message)
    assert message.parts == (
        m.RawPart(b"hi", media_type="text/plain", filename="a.txt"),
        m.UrlPart("https://x/y.png", media_type="image/png"),
    )
    assert V03.encode(message)["parts"] == parts


def test_text_and_data_parts_drop_what_v03_cannot_say() -> None:
    parts = [m.TextPart("t", media_type="text/markdown", filename="f.md"), m.data_part({"a": 1})]
    wire = V03.encode(m.Message(message_id="m", role=m.Role.USER, parts=parts))
    assert wire["parts"] == [{"kind": "text", "text": "t"}, {"kind": "data", "data": {"a": 1}}]


@pytest.mark.parametrize("data", [[1, 2], "s", 3.5, True, None])
def test_non_object_data_uses_the_sdk_wrapping(data: m.JsonValue) -> None:
    part = m.DataPart(data, metadata={"source": "x"})
    wire = V03.encode(m.Message(message_id="m", role=m.Role.USER, parts=[part]))["parts"][0]
    assert wire == {
        "kind": "data",
        "data": {"value": data},
        "metadata": {"source": "x", "data_part_compat": True},
    }
    assert V03.decode({**MSG, "parts": [wire]}, m.Message).parts == (part,)


def test_kind_may_be_left_out_on_input() -> None:
    message = V03.decode(
        {"messageId": "m", "role": "user", "parts": [{"text": "a"}, {"data": {}}]}, m.Message
    )
    assert message.parts == (m.TextPart("a"), m.DataPart({}))
    task, final = V03.decode_stream_event(
        {"id": "t", "contextId": "c", "status": {"state": "working"}}
    )
    assert isinstance(task, m.Task) and final is False
    update, final = V03.decode_stream_event(
        {"taskId": "t", "contextId": "c", "status": {"state": "completed"}, "final": True}
    )
    assert isinstance(update, m.TaskStatusUpdateEvent) and final is True


@pytest.mark.parametrize(
    ("state", "final"),
    [
        (m.TaskState.WORKING, False),
        (m.TaskState.COMPLETED, True),
        (m.TaskState.INPUT_REQUIRED, True),
        (m.TaskState.REJECTED, True),
    ],
)
def test_final_follows_the_state_unless_given(state: m.TaskState, final: bool) -> None:
    event = m.TaskStatusUpdateEvent("t", "c", m.TaskStatus(state))
    assert V03.encode(event)["final"] is final
    assert V03.encode_stream_event(event, final=not final)["final"] is (not final)


def test_blocking_is_the_inverse_of_return_immediately() -> None:
    def send(config: dict[str, object]) -> m.SendMessageRequest:
        return V03.decode({"message": MSG, "configuration": config}, m.SendMessageRequest)

    assert send({}).configuration == m.SendMessageConfiguration(return_immediately=False)
    assert send({"blocking": True}).configuration == m.SendMessageConfiguration()
    assert send({"blocking": False}).configuration == m.SendMessageConfiguration(
        return_immediately=True
    )
    request = m.SendMessageRequest(
        m.Message(message_id="m", role=m.Role.USER, parts=[]),
        configuration=m.SendMessageConfiguration(history_length=2),
    )
    assert V03.encode(request)["configuration"] == {"blocking": True, "historyLength": 2}


def test_push_config_nesting_and_ids() -> None:
    config = m.TaskPushNotificationConfig(
        url="https://hook",
        id="p1",
        task_id="t1",
        token="tok",
        authentication=m.AuthenticationInfo("Bearer", credentials="c"),
    )
    wire = V03.encode(config)
    assert wire == {
        "taskId": "t1",
        "pushNotificationConfig": {
            "url": "https://hook",
            "id": "p1",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "c"},
        },
    }
    assert V03.decode(wire, m.TaskPushNotificationConfig) == config
    two = {
        "taskId": "t",
        "pushNotificationConfig": {"url": "u", "authentication": {"schemes": ["Basic", "Bearer"]}},
    }
    assert V03.decode(two, m.TaskPushNotificationConfig).authentication == m.AuthenticationInfo(
        "Basic"
    )
    get = V03.decode(
        {"id": "t1", "pushNotificationConfigId": "p1"}, m.GetTaskPushNotificationConfigRequest
    )
    assert get == m.GetTaskPushNotificationConfigRequest(task_id="t1", id="p1")
    assert V03.decode({"id": "t1"}, m.GetTaskPushNotificationConfigRequest).id == ""
    listing = m.ListTaskPushNotificationConfigsResponse(configs=[config])
    assert V03.encode(listing) == [wire]
    assert V03.decode([wire], m.ListTaskPushNotificationConfigsResponse) == listing


def test_last_updated_after_is_exact_milliseconds() -> None:
    when = datetime(2024, 3, 15, 10, 15, 0, 123000, tzinfo=UTC)
    wire = V03.encode(m.ListTasksRequest(status=m.TaskState.WORKING, status_timestamp_after=when))
    assert wire == {"status": "working", "lastUpdatedAfter": 1710497700123}
    assert V03.decode(wire, m.ListTasksRequest).status_timestamp_after == when


def test_a_v03_card_lists_only_the_interfaces_of_its_version() -> None:
    """v0.3 interfaces carry no version: a v0.3 client gives them all the card's and talks it
    to any of them.  Before: the v1.0 interfaces of a mixed card were listed too."""
    card = card_at(
        ("https://a/v1", "JSONRPC", "1.0"),
        ("https://a/v03", "JSONRPC", "0.3"),
        ("https://a/rest", "HTTP+JSON", "1.0", "t"),
        ("https://a/old", "JSONRPC", "0.2.9"),
        ("https://a/v03rest", "HTTP+JSON", "0.3.0"),
        capabilities=m.AgentCapabilities(streaming=True, extended_agent_card=True),
    )
    wire = V03.encode(card)
    assert (wire["url"], wire["preferredTransport"], wire["protocolVersion"]) == (
        "https://a/v03",
        "JSONRPC",
        "0.3",
    )
    assert wire["additionalInterfaces"] == [
        {"url": "https://a/v03", "transport": "JSONRPC"},
        {"url": "https://a/v03rest", "transport": "HTTP+JSON"},
    ]
    assert wire["supportsAuthenticatedExtendedCard"] is True
    assert wire["capabilities"] == {"streaming": True}
    back = V03.decode(wire, m.AgentCard)
    assert back.supported_interfaces == (
        m.AgentInterface("https://a/v03", "JSONRPC", "0.3"),
        m.AgentInterface("https://a/v03rest", "HTTP+JSON", "0.3"),
    )
    old = V03.encode(card_at(("https://a/old", "JSONRPC", "0.2.9")))
    assert (old["url"], old["protocolVersion"]) == ("https://a/old", "0.2.9")


def test_a_card_without_a_v0_interface_has_no_v03_form() -> None:
    """Before: a v1.0-only card came out as a v0.3 card sending v0.3 clients to its v1.0 URL."""
    for card in (card_at(("https://a/v1", "JSONRPC", "1.0")), card_at()):
        with pytest.raises(ValueError, match=r"needs an interface of protocol version 0\.x"):
            V03.encode(card)


def test_security_in_v03_shape() -> None:
    card = v03_card(
        securitySchemes={
            "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
            "oauth": {
                "type": "oauth2",
                "flows": {
                    "clientCredentials": {"tokenUrl": "https://t", "scopes": {}},
                    "authorizationCode": {
                        "authorizationUrl": "https://a",
                        "tokenUrl": "https://t",
                        "scopes": {"r": "read"},
                    },
                },
            },
        },
        security=[{"oauth": ["r"]}, {"key": []}],
    )
    decoded = V03.decode(card, m.AgentCard)
    assert decoded.security_schemes["key"] == m.APIKeySecurityScheme(
        location="header", name="X-Key"
    )
    # several flows in v0.3, one in v1.0: authorization code comes first
    oauth = decoded.security_schemes["oauth"]
    assert isinstance(oauth, m.OAuth2SecurityScheme)
    assert oauth.flows == m.AuthorizationCodeOAuthFlow("https://a", "https://t", {"r": "read"})
    assert decoded.security_requirements == (
        m.SecurityRequirement({"oauth": ("r",)}),
        m.SecurityRequirement({"key": ()}),
    )
    assert V03.encode(decoded)["security"] == card["security"]
    device = m.OAuth2SecurityScheme(m.DeviceCodeOAuthFlow("https://d", "https://t", {}))
    with_device = card_at(("u", "JSONRPC", "0.3"), security_schemes={"dev": device})
    assert V03.decode(V03.encode(with_device), m.AgentCard).security_schemes == {"dev": device}


def test_history_length_zero_means_no_limit_in_v03() -> None:
    get = V03.decode({"id": "t", "historyLength": 0}, m.GetTaskRequest)
    assert get.history_length is None
    assert V03.decode({"id": "t", "historyLength": 3}, m.GetTaskRequest).history_length == 3
    send = V03.decode({"message": MSG, "configuration": {"historyLength": 0}}, m.SendMessageRequest)
    assert send.configuration is not None and send.configuration.history_length is None
    assert V03.encode(m.GetTaskRequest(id="t", history_length=0)) == {"id": "t", "historyLength": 0}
