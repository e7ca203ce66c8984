"""A2A v1.0 ProtoJSON: the one place that decides every v1.0 wire shape.

Rules (A2A v1.0 §5.5, §8.4.1; ProtoJSON): camelCase keys; enums as names (numbers accepted on
input); REQUIRED fields always written; ``optional`` fields written when set; other fields
omitted at their zero value; bytes as standard base64; timestamps as RFC 3339 UTC with ``Z`` and
milliseconds; unknown keys ignored on input.  Proto oneofs are inline keys (``Part``) or wrapper
keys (``StreamResponse``, ``SecurityScheme``, ``OAuthFlows``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import attrs
import cattrs

from .. import model as m
from ..errors import InvalidParamsError, Value
from ._common import (
    artifacts_listed,
    camel_decoder,
    camel_encoder,
    check_json_value,
    expect_object,
    install_json_value_hooks,
    install_scalar_hooks,
    structure_or_raise,
)

ENUMS: Final = ((m.TaskState, "task state"), (m.Role, "role"))
"""Written by their proto names (``m.proto_name``); a value naming no member is refused as an
unknown "task state" or "role", in the words every other codec and binding uses."""

PART_KEYS: Final = {m.TextPart: "text", m.RawPart: "raw", m.UrlPart: "url", m.DataPart: "data"}

SCHEME_KEYS: Final[dict[type, str]] = {
    m.APIKeySecurityScheme: "apiKeySecurityScheme",
    m.HTTPAuthSecurityScheme: "httpAuthSecurityScheme",
    m.OAuth2SecurityScheme: "oauth2SecurityScheme",
    m.OpenIdConnectSecurityScheme: "openIdConnectSecurityScheme",
    m.MutualTlsSecurityScheme: "mtlsSecurityScheme",
}

FLOW_KEYS: Final[dict[type, str]] = {
    m.AuthorizationCodeOAuthFlow: "authorizationCode",
    m.ClientCredentialsOAuthFlow: "clientCredentials",
    m.ImplicitOAuthFlow: "implicit",
    m.PasswordOAuthFlow: "password",
    m.DeviceCodeOAuthFlow: "deviceCode",
}

STREAM_KEYS: Final[dict[type, str]] = {
    m.Task: "task",
    m.Message: "message",
    m.TaskStatusUpdateEvent: "statusUpdate",
    m.TaskArtifactUpdateEvent: "artifactUpdate",
}


def _enum_hooks(
    cls: type[m.TaskState | m.Role], what: str
) -> tuple[Callable[[Any], str], Callable[[Any, Any], Any]]:
    names = {m.proto_name(member): member for member in cls}
    numbers = {member.value: member for member in cls}
    # A lookup, not ``proto_name``: every event written has a state, and an enum's ``name`` is
    # a Python property (two calls, on top of the function's own).
    encode = {member: name for name, member in names.items()}.__getitem__

    def decode(value: Any, _type: Any) -> m.TaskState | m.Role:
        found = names.get(value) if isinstance(value, str) else None
        if found is None and isinstance(value, int) and not isinstance(value, bool):
            found = numbers.get(value)
        if found is None:
            # the zero value (TASK_STATE_UNSPECIFIED) is the field left out, not a choice
            allowed = ", ".join(name for name, member in names.items() if member)
            raise InvalidParamsError(f"unknown {what} {str(value)[:40]!r} (one of {allowed})")
        return found

    return encode, decode


def _oneof_key(data: dict[str, Any], keys: dict[type, str], what: str) -> tuple[type, Any]:
    """Find the one arm of a oneof that is set; refuse zero or several."""
    present = [(cls, data[key]) for cls, key in keys.items() if key in data]
    if len(present) != 1:
        names = ", ".join(keys.values())
        raise InvalidParamsError(f"exactly one of {names} must be set in {what}")
    return present[0]


class V1Codec:
    """The v1.0 converter: ``encode(value) -> JSON-ready dict``, ``decode(data, cls) -> value``."""

    def __init__(self) -> None:
        conv = cattrs.Converter(detailed_validation=True)
        install_scalar_hooks(conv)
        for cls, what in ENUMS:
            encode, decode = _enum_hooks(cls, what)
            conv.register_unstructure_hook(cls, encode)
            conv.register_structure_hook(cls, decode)
        install_json_value_hooks(conv)
        conv.register_structure_hook_func(lambda t: t is m.Part, self._decode_part)
        conv.register_unstructure_hook_func(lambda t: t is m.Part, self.encode)  # its arm's
        conv.register_structure_hook_func(lambda t: t is m.SecurityScheme, self._decode_scheme)
        conv.register_unstructure_hook_func(
            lambda t: t is m.SecurityScheme, self._wrapped_encoder(SCHEME_KEYS)
        )
        conv.register_structure_hook_func(lambda t: t is m.OAuthFlow, self._decode_flow)
        conv.register_unstructure_hook_func(
            lambda t: t is m.OAuthFlow, self._wrapped_encoder(FLOW_KEYS)
        )
        conv.register_structure_hook(m.SecurityRequirement, self._decode_requirement)
        conv.register_unstructure_hook(m.SecurityRequirement, self._encode_requirement)
        conv.register_unstructure_hook_factory(attrs.has, lambda cls: camel_encoder(conv, cls))
        conv.register_structure_hook_factory(attrs.has, lambda cls: camel_decoder(conv, cls))
        self._conv = conv
        self._encoders: dict[type, Callable[[Any], Any]] = {}
        """The converter's unstructure hook by class, looked up inline: an encode is one
        Python call, not two (``Converter.unstructure`` is one of its own)."""

    # --- oneofs ---------------------------------------------------------------------------

    def _wrapped_encoder(self, keys: dict[type, str]) -> Callable[[Any], dict[str, Any]]:
        def encode(value: Any) -> dict[str, Any]:
            return {keys[type(value)]: self.encode(value)}

        return encode

    def _decode_part(self, data: Any, _type: Any) -> m.Part:
        obj = expect_object(data)
        # ``"data": null`` is a data part holding JSON null; other nulls mean "unset".
        present = [
            cls
            for cls, key in PART_KEYS.items()
            if key in obj and (cls is m.DataPart or obj[key] is not None)
        ]
        if len(present) != 1:
            raise InvalidParamsError("exactly one of text, raw, url, data must be set")
        cls = present[0]
        if cls is m.DataPart:
            rest = self._conv.structure({**obj, "data": 0}, m.DataPart)
            return attrs.evolve(rest, data=check_json_value(obj["data"], path="$.data"))
        return self._conv.structure(obj, cls)

    def _decode_scheme(self, data: Any, _type: Any) -> m.SecurityScheme:
        cls, inner = _oneof_key(expect_object(data), SCHEME_KEYS, "a security scheme")
        return self._conv.structure(inner, cls)

    def _decode_flow(self, data: Any, _type: Any) -> m.OAuthFlow:
        cls, inner = _oneof_key(expect_object(data), FLOW_KEYS, "OAuth flows")
        return self._conv.structure(inner, cls)

    def _encode_requirement(self, value: m.SecurityRequirement) -> dict[str, Any]:
        if not value.schemes:
            return {}
        return {"schemes": {name: {"list": list(s)} for name, s in value.schemes.items()}}

    def _decode_requirement(self, data: Any, _type: Any) -> m.SecurityRequirement:
        schemes = expect_object(expect_object(data).get("schemes") or {})
        raw = {name: expect_object(v).get("list") or [] for name, v in schemes.items()}
        return m.SecurityRequirement(self._conv.structure(raw, dict[str, tuple[str, ...]]))

    # --- public ---------------------------------------------------------------------------

    def spell(self, value: Value) -> str:
        """A state or role as v1.0 writes it (``TASK_STATE_WORKING``), for error messages."""
        return m.proto_name(value)

    def encode(self, value: Any) -> dict[str, Any]:
        """Any model value -> a dict ready for ``orjson.dumps``."""
        cls = type(value)
        return (self._encoders.get(cls) or self._encoder(cls))(value)  # type: ignore[no-any-return]

    def _encoder(self, cls: type) -> Callable[[Any], Any]:
        """``cls``'s unstructure hook, remembered in ``_encoders``."""
        hook = self._encoders[cls] = self._conv.get_unstructure_hook(cls)
        return hook

    def decode[T](self, data: Any, cls: type[T], *, path: str = "$") -> T:
        """Wire JSON -> a model value; bad input raises ``InvalidParamsError`` with its path."""
        return structure_or_raise(self._conv, data, cls, path=path)

    def encode_task_list(
        self, page: m.ListTasksResponse, *, include_artifacts: bool
    ) -> dict[str, Any]:
        """A ``ListTasksResponse``; with ``include_artifacts`` (the request's), a task without
        artifacts is written with ``artifacts: []``, not without the key."""
        out = self.encode(page)
        return artifacts_listed(out) if include_artifacts else out

    def encode_stream_response(self, event: m.StreamEvent) -> dict[str, Any]:
        """A ``StreamResponse``: the event under its oneof key (``task``, ``statusUpdate``, ...)."""
        return {STREAM_KEYS[type(event)]: self.encode(event)}

    def decode_stream_response(self, data: Any, *, path: str = "$") -> m.StreamEvent:
        """A ``StreamResponse`` (also accepts a ``SendMessageResponse``, a subset of it)."""
        try:
            cls, inner = _oneof_key(expect_object(data), STREAM_KEYS, "a stream response")
        except InvalidParamsError as exc:
            raise exc.under(path) from None
        return self.decode(inner, cls, path=f"{path}.{STREAM_KEYS[cls]}")

    def encode_send_result(self, result: m.SendMessageResult) -> dict[str, Any]:
        """A ``SendMessageResponse``: ``{"task": ...}`` or ``{"message": ...}``."""
        return self.encode_stream_response(result)

    def decode_send_result(self, data: Any, *, path: str = "$") -> m.SendMessageResult:
        event = self.decode_stream_response(data, path=path)
        if not isinstance(event, m.Task | m.Message):
            raise InvalidParamsError("expected task or message", path=path)
        return event


V1: Final = V1Codec()
