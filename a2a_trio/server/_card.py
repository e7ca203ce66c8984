"""The agent card route's logic: interfaces from the served bindings, ETag and caching."""

from __future__ import annotations

import hashlib

import attrs

from .. import model as m
from ..runtime import Agent
from ..wire import V03, V1, dumps
from ._config import ServerConfig
from ._versions import V0_3, V1_0


@attrs.frozen
class CardResponse:
    body: bytes
    etag: str


def interfaces(config: ServerConfig, base_url: str) -> tuple[m.AgentInterface, ...]:
    """What this server serves, preferred first (REST lives at the root paths beside JSON-RPC;
    v0.3 clients use the same JSON-RPC URL, and v0.3 HTTP+JSON appends its ``/v1/...`` paths
    to the base URL)."""
    base = base_url.rstrip("/")
    return (
        m.AgentInterface(
            url=base + config.jsonrpc_path, protocol_binding="JSONRPC", protocol_version=V1_0
        ),
        m.AgentInterface(url=base, protocol_binding="HTTP+JSON", protocol_version=V1_0),
        m.AgentInterface(
            url=base + config.jsonrpc_path, protocol_binding="JSONRPC", protocol_version=V0_3
        ),
        m.AgentInterface(url=base, protocol_binding="HTTP+JSON", protocol_version=V0_3),
    )


class CardCache:
    """Renders the card once per base URL; the ETag is a hash of the exact bytes served."""

    def __init__(self, agent: Agent, config: ServerConfig) -> None:
        self._agent = agent
        self._config = config
        self._rendered: dict[str, CardResponse] = {}

    def card(self, base_url: str) -> m.AgentCard:
        return self._agent.card(
            interfaces(self._config, self._config.public_url or base_url),
            capabilities=m.AgentCapabilities(
                streaming=True,
                push_notifications=self._config.push is not None,
                extended_agent_card=False,
            ),
            security_schemes=dict(self._config.security_schemes),
            security_requirements=self._config.security_requirements,
        )

    def render(self, base_url: str, *, v03: bool = False) -> CardResponse:
        """The card's bytes: v1.0 ProtoJSON, or with ``v03`` the v0.3 shape (agent.json)."""
        key = ("0.3 " if v03 else "") + (self._config.public_url or base_url)
        cached = self._rendered.get(key)
        if cached is None:
            if len(self._rendered) > 64:  # Host headers are client-chosen: bound the cache
                self._rendered.clear()
            # the v0.3 codec lists only the v0.3 interfaces, the ones v0.3 clients can use
            body = dumps((V03 if v03 else V1).encode(self.card(base_url)))
            cached = CardResponse(body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"')
            self._rendered[key] = cached
        return cached
