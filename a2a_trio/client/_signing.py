"""Verifying signed agent cards (A2A v1.0 §8.4): JWS over the RFC 8785 canonical card.

The signed payload is the card's ProtoJSON without ``signatures``, canonicalized by RFC 8785.
Two canonical forms are tried, since signers differ on one detail: the spec's (REQUIRED fields
kept even when empty) and the official SDK's (every empty string, list and object dropped).
Both are functions of the card's content only, so accepting either trusts nothing extra.  Keys
come from the caller (a trusted key store), never from a ``jku`` URL the card names.
"""

from __future__ import annotations

import binascii
from collections.abc import Mapping
from typing import Any

import attrs
import jwt
import rfc8785
from jwt.utils import base64url_decode, base64url_encode

from .. import model as m
from ..errors import A2AError
from ..wire import V1, loads
from ._errors import AgentCardError

DEFAULT_ALGORITHMS = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "EdDSA")


def _drop_empty(value: Any) -> Any:
    """The SDK's cleaning: remove empty strings, lists and objects, bottom up."""
    if isinstance(value, dict):
        kept = {k: v for k, v in ((k, _drop_empty(v)) for k, v in value.items()) if v is not None}
        return kept or None
    if isinstance(value, list):
        items = [v for v in (_drop_empty(v) for v in value) if v is not None]
        return items or None
    if value == "":
        return None
    return value


def canonical_payloads(card: m.AgentCard) -> list[bytes]:
    """The canonical bytes a signature on ``card`` may cover (spec form first)."""
    body = V1.encode(attrs.evolve(card, signatures=()))
    forms = [rfc8785.dumps(body), rfc8785.dumps(_drop_empty(body) or {})]
    return list(dict.fromkeys(forms))


def _header(signature: m.AgentCardSignature) -> dict[str, Any]:
    try:
        header = loads(base64url_decode(signature.protected))
    except (binascii.Error, A2AError):
        return {}
    return header if isinstance(header, dict) else {}


@attrs.frozen
class CardVerifier:
    """Which keys may sign an agent's card, by key id, and with which JWS algorithms.

    ``keys`` maps a ``kid`` to a public key: PEM text or bytes, a ``cryptography`` key or a
    ``jwt.PyJWK``.  :meth:`from_jwks` builds one from a JWKS document you trust.
    """

    keys: Mapping[str, Any]
    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS

    @classmethod
    def from_jwks(
        cls, jwks: Mapping[str, Any], *, algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS
    ) -> CardVerifier:
        """A verifier trusting every key (with a ``kid``) of a JWKS document."""
        try:
            key_set = jwt.PyJWKSet.from_dict(dict(jwks))
        except jwt.PyJWTError as exc:
            raise AgentCardError(f"unusable JWKS: {exc}") from None
        return cls({key.key_id: key for key in key_set.keys if key.key_id}, algorithms)

    def verify(self, card: m.AgentCard) -> m.AgentCardSignature:
        """Return the first signature that verifies with a trusted key.

        Raises:
            AgentCardError: the card is unsigned, or no signature verifies.
        """
        if not card.signatures:
            raise AgentCardError(f"the agent card of {card.name!r} is not signed")
        payloads = [base64url_encode(p).decode() for p in canonical_payloads(card)]
        for signature in card.signatures:
            header = _header(signature)
            key = self.keys.get(str(header.get("kid")))
            algorithm = header.get("alg")
            if key is None or algorithm not in self.algorithms:
                continue
            for payload in payloads:
                token = f"{signature.protected}.{payload}.{signature.signature}"
                try:
                    jwt.api_jws.decode(token, key=key, algorithms=[algorithm])
                except jwt.PyJWTError:
                    continue
                return signature
        raise AgentCardError(
            f"no signature on the agent card of {card.name!r} verifies with a trusted key"
        )
