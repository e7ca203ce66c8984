"""Signed agent cards: cards signed by the official SDK and by the spec's recipe verify; tampered,
unsigned or foreign-key cards are refused."""

from __future__ import annotations

import attrs
import jwt
import pytest
import rfc8785
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from a2a.utils.signing import create_agent_card_signer
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from a2a_trio import model as m
from a2a_trio.client import AgentCardError, CardVerifier, open_client
from a2a_trio.client._card import decode_card
from a2a_trio.wire import V1


def keypair() -> tuple[str, str]:
    private = ec.generate_private_key(ec.SECP256R1())
    private_pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public_pem = (
        private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private_pem, public_pem


PRIVATE, PUBLIC = keypair()
OTHER_PRIVATE, OTHER_PUBLIC = keypair()


def sdk_signed_card(private_pem: str = PRIVATE, kid: str = "key-1") -> m.AgentCard:
    """A card built and signed by the a2a-sdk, read back through its JSON form."""
    card = AgentCard(
        name="Signed echo",
        description="Echoes, with a signed card",
        version="2.0.0",
        supported_interfaces=[
            AgentInterface(
                url="http://127.0.0.1:9/", protocol_binding="JSONRPC", protocol_version="1.0"
            )
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])],
    )
    signer = create_agent_card_signer(private_pem, {"alg": "ES256", "kid": kid, "typ": "JOSE"})
    document = agent_card_to_dict(signer(card))
    return decode_card(document, source="sdk")


def spec_signed_card(card: m.AgentCard) -> m.AgentCard:
    """Sign by the letter of §8.4.2: JWS over RFC 8785 of the card minus ``signatures``."""
    payload = rfc8785.dumps(V1.encode(attrs.evolve(card, signatures=())))
    token = jwt.api_jws.encode(payload, PRIVATE, algorithm="ES256", headers={"kid": "key-1"})
    protected, _, signature = token.split(".")
    return attrs.evolve(card, signatures=(m.AgentCardSignature(protected, signature),))


VERIFIER = CardVerifier({"key-1": PUBLIC})


def test_sdk_signed_card_verifies() -> None:
    card = sdk_signed_card()
    assert VERIFIER.verify(card) == card.signatures[0]


def test_spec_signed_card_with_empty_required_fields_verifies() -> None:
    bare = m.AgentCard(name="bare", description="", version="1")  # empty REQUIRED lists kept
    card = spec_signed_card(bare)
    assert VERIFIER.verify(card) == card.signatures[0]


def test_tampered_card_is_refused() -> None:
    card = sdk_signed_card()
    forged = attrs.evolve(card, name="Evil echo")
    with pytest.raises(AgentCardError, match=r"no signature .* verifies"):
        VERIFIER.verify(forged)
    moved = attrs.evolve(
        card, supported_interfaces=(m.AgentInterface("http://evil.example/", "JSONRPC", "1.0"),)
    )
    with pytest.raises(AgentCardError):
        VERIFIER.verify(moved)


def test_untrusted_key_unknown_kid_and_refused_algorithm() -> None:
    with pytest.raises(AgentCardError):
        VERIFIER.verify(sdk_signed_card(private_pem=OTHER_PRIVATE))
    with pytest.raises(AgentCardError):
        VERIFIER.verify(sdk_signed_card(kid="key-2"))
    with pytest.raises(AgentCardError):
        CardVerifier({"key-1": PUBLIC}, algorithms=("RS256",)).verify(sdk_signed_card())


def test_garbage_signature_is_refused_not_crashed() -> None:
    card = attrs.evolve(
        sdk_signed_card(), signatures=(m.AgentCardSignature("!!not base64!!", "x"),)
    )
    with pytest.raises(AgentCardError):
        VERIFIER.verify(card)


def test_jwks_verifier() -> None:
    jwk = jwt.algorithms.ECAlgorithm.to_jwk(
        serialization.load_pem_public_key(PUBLIC.encode()), as_dict=True
    )
    verifier = CardVerifier.from_jwks({"keys": [{**jwk, "kid": "key-1", "alg": "ES256"}]})
    assert verifier.verify(sdk_signed_card()).protected
    with pytest.raises(AgentCardError, match="unusable JWKS"):
        CardVerifier.from_jwks({"keys": "nope"})


async def test_open_client_verifies_the_card(sdk_agent: str) -> None:
    async with open_client(sdk_signed_card(), verifier=VERIFIER) as client:
        assert client.card.name == "Signed echo"
    with pytest.raises(AgentCardError, match="not signed"):
        async with open_client(sdk_agent, verifier=VERIFIER):
            pass
