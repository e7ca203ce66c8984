"""Plain JSON values: what ``google.protobuf.Struct`` and ``Value`` carry in A2A."""

from __future__ import annotations

import math

type JsonValue = bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None
type JsonObject = dict[str, JsonValue]

MAX_JSON_DEPTH = 64
"""How deeply ``Struct``/``Value`` content may nest: the codecs refuse deeper input, so deeper
content could not be read back once stored either."""

_INT_RANGE = range(-(2**63), 2**64)
"""The integers a JSON encoder (orjson) writes exactly."""


def json_problem(value: object) -> str | None:
    """Why ``value`` is not a plain JSON value that every wire form and store can carry, or
    ``None`` when it is one: objects with string keys, arrays, strings (no lone surrogates),
    64-bit integers, finite floats, booleans and null, nested at most :data:`MAX_JSON_DEPTH` deep.

    Walks one level at a time, without recursion: cheap for the small, flat values metadata
    usually holds, and safe for hostile depth.
    """
    level, depth = [value], 0
    while level:
        below: list[object] = []
        containers = 0
        for item in level:
            if item is None:  # the most common value (metadata left out): one test, not six
                continue
            if isinstance(item, dict):
                containers += 1
                if not all(isinstance(key, str) for key in item):
                    return "object keys must be strings"
                below.extend(item)
                below.extend(item.values())
            elif isinstance(item, list):
                containers += 1
                below.extend(item)
            elif isinstance(item, str):
                if not item.isascii() and not _utf8_encodable(item):
                    return "a string holds a lone surrogate, which is not valid Unicode text"
            elif isinstance(item, int) and not isinstance(item, bool):
                if item not in _INT_RANGE:
                    return f"integer {item} is beyond 64 bits"
            elif isinstance(item, float) and not math.isfinite(item):
                return f"{item} is not a JSON number (an encoder would write null)"
            elif not isinstance(item, float | bool):
                return f"not a JSON value: {type(item).__name__}"
        if containers and depth >= MAX_JSON_DEPTH:
            return f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
        level, depth = below, depth + 1
    return None


def _utf8_encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def copy_json(value: JsonValue) -> JsonValue:
    """``value`` sharing no object or array with the original (scalars are immutable, so they
    are shared).  Without recursion, as :func:`json_problem`, and free for a scalar."""
    if isinstance(value, dict):
        return copy_json_object(value)
    if isinstance(value, list):
        copy = list(value)
        _unshare(copy)
        return copy
    return value


def copy_json_object(value: JsonObject) -> JsonObject:
    """:func:`copy_json` for an object (a ``metadata`` dict)."""
    copy = dict(value)
    _unshare(copy)
    return copy


def _unshare(top: JsonObject | list[JsonValue]) -> None:
    """Replace every object and array inside ``top``, a fresh shallow copy, by a fresh shallow
    copy, one container at a time."""
    pending = [top]
    while pending:
        container = pending.pop()
        if isinstance(container, dict):
            for key, item in container.items():  # only values are replaced: the keys stay
                if isinstance(item, dict | list):
                    container[key] = inner = _shallow_copy(item)
                    pending.append(inner)
        else:
            for index, item in enumerate(container):
                if isinstance(item, dict | list):
                    container[index] = inner = _shallow_copy(item)
                    pending.append(inner)


def _shallow_copy(item: JsonObject | list[JsonValue]) -> JsonObject | list[JsonValue]:
    return dict(item) if isinstance(item, dict) else list(item)
