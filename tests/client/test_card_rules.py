"""Rules without I/O: where cards are looked for, cache freshness, interface choice, backoff."""

from __future__ import annotations

import pytest
from cards import v03_card

from a2a_trio import model as m
from a2a_trio.client import HTTP_JSON, JSONRPC, AgentCardError, Reconnect
from a2a_trio.client._card import card_urls, choose_binding, decode_card, freshness


def test_card_urls() -> None:
    assert card_urls("http://h:1/agent/") == [
        "http://h:1/agent/.well-known/agent-card.json",
        "http://h:1/agent/.well-known/agent.json",
    ]
    assert card_urls("http://h/cards/a.json?v=2") == ["http://h/cards/a.json?v=2"]


@pytest.mark.parametrize(
    ("cache_control", "expected"),
    [
        ("", 300.0),
        ("max-age=60", 60.0),
        ("public, max-age=3600", 3600.0),
        ('max-age="5"', 5.0),
        ("no-cache", 0.0),
        ("max-age=60, no-store", None),
        ("max-age=soon", 300.0),
    ],
)
def test_freshness(cache_control: str, expected: float | None) -> None:
    headers = {"cache-control": cache_control} if cache_control else {}
    assert freshness(headers, 300.0) == expected


CARD = m.AgentCard(
    name="multi",
    description="offers several interfaces",
    version="1",
    supported_interfaces=(
        m.AgentInterface("http://h/v03", JSONRPC, "0.3.0"),
        m.AgentInterface("http://h/grpc", "GRPC", "1.0"),
        m.AgentInterface("http://h/rest", HTTP_JSON, "1.0"),
        m.AgentInterface("http://h/rpc", JSONRPC, "1.0"),
    ),
)


def test_choice_prefers_v1_then_the_card_order() -> None:
    """A2A v1.0 §8.3.2: the first supported interface, earlier entries preferred."""
    assert choose_binding(CARD)[0].url == "http://h/rest"
    rpc_first = m.AgentCard(
        name="rpc first",
        description="",
        version="1",
        supported_interfaces=tuple(reversed(CARD.supported_interfaces)),
    )
    assert choose_binding(rpc_first)[0].url == "http://h/rpc"
    assert choose_binding(CARD, versions=["0.3", "1.0"])[0].url == "http://h/v03"


def test_an_explicit_binding_order_wins_over_the_card() -> None:
    assert choose_binding(CARD, [JSONRPC, HTTP_JSON])[0].url == "http://h/rpc"
    assert choose_binding(CARD, [HTTP_JSON, JSONRPC])[0].url == "http://h/rest"
    assert choose_binding(CARD, [JSONRPC], versions=["0.3"])[0].url == "http://h/v03"


def test_choice_fails_clearly() -> None:
    with pytest.raises(AgentCardError, match="unsupported binding 'GRPC'"):
        choose_binding(CARD, ["GRPC"])
    only_grpc = m.AgentCard(
        name="g",
        description="",
        version="1",
        supported_interfaces=(m.AgentInterface("http://h/grpc", "GRPC", "1.0"),),
    )
    with pytest.raises(AgentCardError, match=r"offered: GRPC 1\.0"):
        choose_binding(only_grpc, [JSONRPC, HTTP_JSON])
    # v0.3 is JSON-RPC only here: the choice would work without the binding asked for
    with pytest.raises(AgentCardError) as narrowed:
        choose_binding(CARD, [HTTP_JSON], versions=["0.3"])
    assert str(narrowed.value) == (
        "the agent offers none of the bindings asked for (HTTP+JSON; offered: JSONRPC 0.3.0,"
        " GRPC 1.0, HTTP+JSON 1.0, JSONRPC 1.0)"
    )


def test_decode_card_reads_both_versions_and_refuses_junk() -> None:
    v03 = decode_card(
        v03_card(
            url="http://h/",
            additionalInterfaces=[{"url": "http://h/rest", "transport": "HTTP+JSON"}],
        ),
        source="test",
    )
    assert [(i.url, i.protocol_binding, i.protocol_version) for i in v03.supported_interfaces] == [
        ("http://h/", "JSONRPC", "0.3.0"),
        ("http://h/rest", "HTTP+JSON", "0.3.0"),
    ]
    with pytest.raises(AgentCardError, match=r"invalid agent card at test: \$\.name"):
        decode_card({"name": 5, "supportedInterfaces": []}, source="test")
    with pytest.raises(AgentCardError):
        decode_card(["not", "a", "card"], source="test")


def test_reconnect_backoff() -> None:
    policy = Reconnect(attempts=4, initial_delay=0.5, max_delay=3)
    assert [policy.delay(n, None) for n in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, 3.0]
    assert policy.delay(1, 2000) == 2.0  # the server's retry: is a floor...
    assert policy.delay(1, 60_000) == 3.0  # ...capped by max_delay
    with pytest.raises(ValueError):
        Reconnect(attempts=-1)
