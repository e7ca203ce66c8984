"""Field helpers shared by the model classes.

``REQUIRED`` marks a field the proto declares ``field_behavior = REQUIRED``: the wire layer always
emits it, even at its default (A2A v1.0 §8.4.1).  Fields with ``optional`` presence default to
``None``; all other fields default to their proto zero value and are omitted on output when unset.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import attrs

REQUIRED: dict[str, Any] = {"a2a_required": True}


def is_required(field: attrs.Attribute[Any]) -> bool:
    """True when the proto marks this field REQUIRED."""
    return bool(field.metadata.get("a2a_required", False))


def check_aware(_instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """Timestamps must carry a timezone: A2A timestamps are instants, not wall-clock times."""
    if isinstance(value, datetime) and value.utcoffset() is None:
        raise ValueError(f"{attribute.name} must be a timezone-aware datetime")


def to_tuple(items: Iterable[Any]) -> tuple[Any, ...]:
    """Store repeated fields as tuples so frozen values stay immutable and compare equal."""
    return items if isinstance(items, tuple) else tuple(items)
