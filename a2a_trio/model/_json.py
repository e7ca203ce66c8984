"""Plain JSON values: what ``google.protobuf.Struct`` and ``Value`` carry in A2A."""

from __future__ import annotations

type JsonValue = bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None
type JsonObject = dict[str, JsonValue]
