"""The smallest valid agent-card documents, for tests that vary one field of a card."""

from __future__ import annotations

from typing import Any


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
