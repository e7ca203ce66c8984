"""Cross-check the v0.3 codec with the official SDK's v0.3 compatibility layer.

a2a-sdk 1.3 reads v0.3 JSON into its pydantic v0.3 types (``a2a.compat.v0_3.types``) and converts
them to its v1.0 protobuf types; it goes the other way for v0.3 clients.  Both directions must
agree with a2a_trio's ``V03`` on every value the v0.3 form can express.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import a2a.types as sdk
import attrs
import pytest
from a2a.compat.v0_3 import conversions as conv
from a2a.compat.v0_3 import types as v03
from cards import card_at
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from strategies import V03_STRATEGIES

from a2a_trio import model as m
from a2a_trio.wire import V03, V1

CHECK = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _sdk_normal(value: Any) -> Any:
    """What the SDK's conversions lose on their own, whichever codec is on the other side.

    They drop empty ``metadata``/``params``/``header`` objects and empty card URLs, list the
    main interface of a card twice when ``additionalInterfaces`` repeats it (as the v0.3 spec
    recommends, §5.6.2), and give the other interfaces their own protocol version.
    """
    if isinstance(value, tuple):
        return tuple(_sdk_normal(v) for v in value)
    if not attrs.has(type(value)):
        return value
    changes = {f.name: _sdk_normal(getattr(value, f.name)) for f in attrs.fields(type(value))}
    for name in ("metadata", "params", "header"):
        if changes.get(name) == {}:
            changes[name] = None
    if isinstance(value, m.AgentCard):
        changes["icon_url"] = value.icon_url or None
        changes["documentation_url"] = value.documentation_url or None
        pairs = dict.fromkeys((i.url, i.protocol_binding) for i in value.supported_interfaces)
        changes["supported_interfaces"] = tuple(m.AgentInterface(u, b, "") for u, b in pairs)
    return attrs.evolve(value, **changes)


def _same(a: Any, b: Any) -> bool:
    return bool(_sdk_normal(a) == _sdk_normal(b))


# model class -> (SDK v0.3 pydantic type, v0.3 -> v1.0 proto, v1.0 proto -> v0.3, proto type)
CASES: dict[type, tuple[Any, Callable[[Any], Any], Callable[[Any], Any], Any]] = {
    m.Task: (v03.Task, conv.to_core_task, conv.to_compat_task, sdk.Task),
    m.Message: (v03.Message, conv.to_core_message, conv.to_compat_message, sdk.Message),
    m.Artifact: (v03.Artifact, conv.to_core_artifact, conv.to_compat_artifact, sdk.Artifact),
    m.TaskStatusUpdateEvent: (
        v03.TaskStatusUpdateEvent,
        conv.to_core_task_status_update_event,
        conv.to_compat_task_status_update_event,
        sdk.TaskStatusUpdateEvent,
    ),
    m.TaskArtifactUpdateEvent: (
        v03.TaskArtifactUpdateEvent,
        conv.to_core_task_artifact_update_event,
        conv.to_compat_task_artifact_update_event,
        sdk.TaskArtifactUpdateEvent,
    ),
    m.TaskPushNotificationConfig: (
        v03.TaskPushNotificationConfig,
        conv.to_core_task_push_notification_config,
        conv.to_compat_task_push_notification_config,
        sdk.TaskPushNotificationConfig,
    ),
    m.AgentCard: (
        v03.AgentCard,
        conv.to_core_agent_card,
        conv.to_compat_agent_card,
        sdk.AgentCard,
    ),
}


def _v1_content(proto: Any) -> dict[str, Any]:
    return json_format.MessageToDict(proto, always_print_fields_with_no_presence=True)


@pytest.mark.parametrize("cls", list(CASES), ids=lambda c: c.__name__)
def test_sdk_reads_what_a2a_trio_writes(cls: type) -> None:
    pydantic_type, to_core, _to_compat, _proto = CASES[cls]

    @CHECK
    @given(V03_STRATEGIES.of(cls))
    def check(value: Any) -> None:
        theirs = to_core(pydantic_type.model_validate(V03.encode(value)))
        assert _same(V1.decode(_v1_content(theirs), cls), value)

    check()


@pytest.mark.parametrize("cls", list(CASES), ids=lambda c: c.__name__)
def test_a2a_trio_reads_what_sdk_writes(cls: type) -> None:
    _pydantic_type, _to_core, to_compat, proto = CASES[cls]

    @CHECK
    @given(V03_STRATEGIES.of(cls))
    def check(value: Any) -> None:
        compat = to_compat(json_format.ParseDict(V1.encode(value), proto()))
        wire = compat.model_dump(mode="json", by_alias=True, exclude_none=True)
        assert _same(V03.decode(wire, cls), value)

    check()


@CHECK
@given(V03_STRATEGIES.of(m.SendMessageRequest))
def test_send_params_agree(request: m.SendMessageRequest) -> None:
    params = v03.MessageSendParams.model_validate(V03.encode(request))
    core = conv.to_core_send_message_request(v03.SendMessageRequest(id=1, params=params))
    assert _same(V1.decode(_v1_content(core), m.SendMessageRequest), request)
    back = conv.to_compat_send_message_request(
        json_format.ParseDict(V1.encode(request), sdk.SendMessageRequest()), 1
    )
    wire = back.params.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert _same(V03.decode(wire, m.SendMessageRequest), request)


def test_a_mixed_card_in_v03_form_lists_what_the_sdk_lists() -> None:
    """A card mixing v1.0 and v0.3 interfaces: its v0.3 form keeps the v0.3 ones, as the SDK's
    own conversion does (a v0.3 interface has no version of its own)."""
    card = card_at(
        ("https://a/rpc1", "JSONRPC", "1.0"),
        ("https://a/rpc03", "JSONRPC", "0.3"),
        ("https://a/rest1", "HTTP+JSON", "1.0"),
        ("https://a/rest03", "HTTP+JSON", "0.3"),
    )
    ours = v03.AgentCard.model_validate(V03.encode(card))
    theirs = conv.to_compat_agent_card(json_format.ParseDict(V1.encode(card), sdk.AgentCard()))

    def interfaces(card03: v03.AgentCard) -> list[tuple[str, str, str]]:
        listed = [(i.url, i.transport) for i in card03.additional_interfaces or []]
        pairs = dict.fromkeys([(card03.url, card03.preferred_transport or ""), *listed])
        return [(url, binding, card03.protocol_version or "") for url, binding in pairs]

    assert (
        interfaces(ours)
        == interfaces(theirs)
        == [
            ("https://a/rpc03", "JSONRPC", "0.3"),
            ("https://a/rest03", "HTTP+JSON", "0.3"),
        ]
    )
