"""The smallest valid agent-card documents, for tests that vary one field of a card."""

from __future__ import annotations

from typing import Any

from a2a_trio import model as m


def card_at(*where: tuple[str, ...], **fields: Any) -> m.AgentCard:
    """A model card whose interfaces are ``where`` (url, binding, version[, tenant]), plus
    ``fields``."""
    interfaces = [m.AgentInterface(*interface) for interface in where]
    return m.AgentCard(
        name="n", description="d", version="1", supported_interfaces=interfaces, **fields
    )


def v03_card(**fields: Any) -> dict[str, Any]:
    """A v0.3 agent card as JSON (camelCase keys), with ``fields`` added or replaced."""
    return {
        "name": "n",
        "description": "d",
        "url": "u",
        "version": "1",
        "protocolVersion": "0.3.0",
        "capabilities": {},
        "defaultInputModes": [],
        "defaultOutputModes": [],
        "skills": [],
        **fields,
    }
