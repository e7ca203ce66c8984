"""A2A v0.3 HTTP+JSON: ProtoJSON of the v0.3 proto (``a2a-v0.3.proto``, package ``a2a.v1``).

The v0.3 REST binding carries the v0.3 *proto* messages in ProtoJSON, which is what the official
SDK's v0.3 REST client and server speak, and what the spec's REST wrappers (``{message?|task?}``,
``{statusUpdate?|artifactUpdate?}``) are.  It differs from v0.3 JSON-RPC (:mod:`._v03`) in the
objects themselves: no ``kind`` tags, ``content`` for a message's parts, ``ROLE_USER`` and
``TASK_STATE_CANCELLED`` enum names, file parts as ``file: {fileWithUri|fileWithBytes}``, data
parts as ``data: {data: {...}}``, push configs named ``tasks/{id}/pushNotificationConfigs/{id}``.

Output uses the ``json_name`` of each field (camelCase; ``message`` for ``request``/``msg``/
``update``).  Input accepts, as ProtoJSON readers must, the proto field names too (the SDK sends
``message_id``, ``request``); a message in the v0.3 JSON-RPC shape (``parts``, ``kind``) is read
as well, so a client following the spec text's TypeScript shapes is served.  Everything v0.3
JSON-RPC and this form share (cards, push-config objects, the send configuration) is the
``V03`` codec's, which this one extends.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final

import attrs

from .. import model as m
from ..errors import InvalidParamsError
from ._common import (
    camel,
    camel_decoder,
    camel_encoder,
    expect_object,
    json_type,
    parse_timestamp,
)
from ._v03 import (
    ROLES,
    STATES,
    V03,
    V03Codec,
    _DataPart03,
    _encode_part,
    _File03,
    _FilePart03,
    _part_from03,
    _push_from03,
    _push_to03,
    _PushAuth03,
    _PushConfig03,
    _SendConfig03,
    _SendParams03,
    _TextPart03,
)

PROTO_STATES: Final[dict[m.TaskState, str]] = {
    state: "TASK_STATE_" + name.upper().replace("-", "_") for state, name in STATES.items()
} | {
    m.TaskState.UNSPECIFIED: "TASK_STATE_UNSPECIFIED",
    m.TaskState.CANCELED: "TASK_STATE_CANCELLED",
}
PROTO_ROLES: Final[dict[m.Role, str]] = {
    role: "ROLE_" + name.upper() for role, name in ROLES.items()
} | {m.Role.UNSPECIFIED: "ROLE_UNSPECIFIED"}

PAYLOAD_KEYS: Final[dict[type, str]] = {
    m.Task: "task",
    m.Message: "message",
    m.TaskStatusUpdateEvent: "statusUpdate",
    m.TaskArtifactUpdateEvent: "artifactUpdate",
}
"""The ``StreamResponse``/``SendMessageResponse`` oneof arm (``json_name``) of each event."""
_PAYLOAD_ALIASES: Final = {"msg": "message", "status_update": "statusUpdate"} | {
    "artifact_update": "artifactUpdate"
}


_MESSAGE_FIELDS: Final[dict[str, Any]] = {
    "renames": {"parts": "content"},
    "omit": ("reference_task_ids",),  # no place in the v0.3 proto
}

_SENT_AS: Final[dict[str, tuple[str, ...]]] = {
    "parts": ("content", "parts"),  # a proto message reads only ``content``
    "message": ("message", "request"),
    "pushNotificationConfig": ("pushNotificationConfig", "pushNotification"),
}
"""The renames and aliases the decoders below read: the keys a field named in an error path
(by its model name) may have been sent under, in the order the decoders prefer them, the first
also its name where it is missing.  Any key may also be in its proto spelling (``message_id``)."""
_STEP: Final = re.compile(r"\.(\w+)|\[(\d+)\]")


@attrs.frozen
class _FileP:
    file_with_uri: str | None = None
    file_with_bytes: bytes | None = None
    mime_type: str = ""
    name: str = ""


@attrs.frozen
class _DataP:
    data: m.JsonObject


@attrs.frozen
class _PartP:
    text: str | None = None
    file: _FileP | None = None
    data: _DataP | None = None
    metadata: m.JsonObject | None = None


@attrs.frozen
class _TaskPushConfigP:
    push_notification_config: _PushConfig03
    name: str = ""


@attrs.frozen
class _CreatePushP:
    """``CreateTaskPushNotificationConfigRequest`` with the task id from the path as ``id``."""

    id: str
    config: _TaskPushConfigP
    config_id: str = ""


def proto_decoder(
    conv: Any,
    cls: type,
    *,
    renames: Mapping[str, str] | None = None,
    aliases: Mapping[str, str] | None = None,
    omit: tuple[str, ...] = (),
) -> Callable[[Any, Any], Any]:
    """Like :func:`camel_decoder`, also reading proto field names (``message_id``) and
    ``aliases`` (proto name -> the key written on output).

    proto3 leaves zero values out (``""``, ``[]``, an enum's ``…_UNSPECIFIED``): a scalar or
    repeated field the model requires reads as its zero value when absent.
    """
    decode = camel_decoder(conv, cls, renames=renames, omit=omit)
    aliases = aliases or {}
    renames = renames or {}
    hints = typing.get_type_hints(cls)
    zeros = {
        renames.get(f.name, camel(f.name)): zero
        for f in attrs.fields(cls)
        if f.default is attrs.NOTHING and (zero := _zero(hints[f.name])) is not None
    }

    def structure(data: Any, _type: Any) -> Any:
        obj = expect_object(data)
        if any("_" in key or key in aliases for key in obj):
            obj = {aliases.get(key) or camel(key): value for key, value in obj.items()}
        if zeros.keys() - obj.keys():
            obj = zeros | obj
        return decode(obj, cls)

    return structure


def _zero(type_: Any) -> Any:
    """The ProtoJSON zero value of a field type, or None for message fields (no zero)."""
    if typing.get_origin(type_) is tuple:
        return []
    zeros: dict[Any, str] = {
        str: "",
        m.TaskState: PROTO_STATES[m.TaskState.UNSPECIFIED],
        m.Role: PROTO_ROLES[m.Role.UNSPECIFIED],
    }
    return zeros.get(type_)


FILE_KEYS: Final = {"bytes": "fileWithBytes", "uri": "fileWithUri"}
"""A v0.3 JSON file's keys for its content, as this form calls them."""


def _encode_part_proto(part: m.Part) -> dict[str, Any]:
    """The v0.3 JSON part, reshaped: no ``kind``, ``fileWith…`` keys, data nested once more."""
    out = _encode_part(part)
    kind = out.pop("kind")
    if kind == "file":
        file = out["file"]
        out["file"] = {FILE_KEYS.get(key, key): value for key, value in file.items()}
    elif kind == "data":
        out["data"] = {"data": out["data"]}
    return out


def _part_from_proto(wire: _PartP) -> m.Part:
    arms = [arm for arm in (wire.text, wire.file, wire.data) if arm is not None]
    if len(arms) != 1:
        raise InvalidParamsError("exactly one of text, file, data must be set")
    if wire.text is not None:
        return _part_from03(_TextPart03(wire.text, metadata=wire.metadata))
    if wire.data is not None:
        return _part_from03(_DataPart03(wire.data.data, metadata=wire.metadata))
    file = wire.file or _FileP()
    return _part_from03(
        _FilePart03(
            _File03(file.file_with_bytes, file.file_with_uri, file.mime_type, file.name),
            metadata=wire.metadata,
        ),
        (FILE_KEYS["bytes"], FILE_KEYS["uri"]),
    )


def _in_jsonrpc_shape(data: dict[str, Any]) -> bool:
    """Whether a message object is in the v0.3 JSON-RPC shape (``parts``, ``kind``)."""
    return "content" not in data and ("parts" in data or "kind" in data)


def _message_either(proto: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """A message in the v0.3 JSON-RPC shape (``parts``, ``kind``) is read as ``V03`` reads it."""

    def structure(data: Any, cls: Any) -> Any:
        if isinstance(data, dict) and _in_jsonrpc_shape(data):
            return V03._conv.structure(data, cls)
        return proto(data, cls)

    return structure


def _unset_blocking_is_false(
    decode: Callable[[Any, Any], _SendConfig03],
) -> Callable[[Any, Any], _SendConfig03]:
    """proto3 does not write ``blocking: false``: a configuration without it is non-blocking
    (as the SDK's own v0.3 REST server reads it); no configuration at all stays blocking."""

    def structure(data: Any, cls: Any) -> _SendConfig03:
        config = decode(data, cls)
        return config if config.blocking is not None else attrs.evolve(config, blocking=False)

    return structure


def _push_name(config: m.TaskPushNotificationConfig) -> str:
    return f"tasks/{config.task_id}/pushNotificationConfigs/{config.id}"


def _push_from_proto(data: Any, conv: Any) -> m.TaskPushNotificationConfig:
    """A create request (``{config, configId}`` plus the path's task ``id``) or a config
    resource (``{name, pushNotificationConfig}``)."""
    obj = expect_object(data)
    if "config" not in obj:
        wire: _TaskPushConfigP = conv.structure(obj, _TaskPushConfigP)
        task_id = wire.name.removeprefix("tasks/").partition("/")[0]
        return _push_from03(wire.push_notification_config, task_id)
    request: _CreatePushP = conv.structure(obj, _CreatePushP)
    config = _push_from03(request.config.push_notification_config, request.id)
    return config if config.id else attrs.evolve(config, id=request.config_id)


class V03ProtoCodec(V03Codec):
    """The v0.3 ProtoJSON converter: ``encode(value)``, ``decode(data, cls)`` as in ``V03``.

    Requests read here: ``SendMessageRequest`` (the ``message:send``/``message:stream`` body)
    and ``TaskPushNotificationConfig`` (a create request or a config resource).  Requests whose
    fields all come from the path and query are read with ``V03`` (same keys).
    """

    _names = (PROTO_STATES, PROTO_ROLES)

    def __init__(self) -> None:
        super().__init__()
        conv = self._conv
        conv.register_structure_hook(datetime, parse_timestamp)  # ProtoJSON: with an offset
        conv.register_unstructure_hook_func(lambda t: t is m.Part, _encode_part_proto)
        conv.register_structure_hook_func(
            lambda t: t is m.Part, lambda data, _t: _part_from_proto(conv.structure(data, _PartP))
        )
        # Results lose their ``kind`` tags; the rest also read proto field names.
        # (``SendMessageRequest`` reads and writes ``_SendParams03``, as in ``V03``.)
        plain: tuple[type, ...] = (m.Task, m.TaskStatusUpdateEvent, m.TaskArtifactUpdateEvent)
        plain += (m.Artifact, _PartP, _FileP, _DataP, _PushConfig03, _PushAuth03)
        for cls in (*plain, _TaskPushConfigP, _CreatePushP):
            self._proto(cls)
        self._lazy(
            m.Message,
            lambda: camel_encoder(conv, m.Message, **_MESSAGE_FIELDS),
            lambda: _message_either(proto_decoder(conv, m.Message, **_MESSAGE_FIELDS)),
        )
        self._proto(m.TaskStatus, aliases={"update": "message"})
        self._proto(_SendParams03, aliases={"request": "message"})
        config_renames = {"push_notification_config": "pushNotification"}
        self._lazy(
            _SendConfig03,
            lambda: camel_encoder(conv, _SendConfig03, renames=config_renames),
            lambda: _unset_blocking_is_false(
                proto_decoder(
                    conv,
                    _SendConfig03,
                    renames=config_renames,
                    aliases={"pushNotificationConfig": "pushNotification"},  # the v0.3 JSON key
                )
            ),
        )
        conv.register_structure_hook(
            m.TaskPushNotificationConfig, lambda data, _t: _push_from_proto(data, conv)
        )
        conv.register_unstructure_hook(
            m.TaskPushNotificationConfig,
            self._unstructure_via(lambda c: _TaskPushConfigP(_push_to03(c), _push_name(c))),
        )
        conv.register_unstructure_hook(
            m.ListTaskPushNotificationConfigsResponse, self._encode_config_list
        )

    def _proto(
        self,
        cls: type,
        *,
        renames: Mapping[str, str] | None = None,
        aliases: Mapping[str, str] | None = None,
        omit: tuple[str, ...] = (),
    ) -> None:
        conv = self._conv
        self._lazy(
            cls,
            lambda: camel_encoder(conv, cls, renames=renames, omit=omit),
            lambda: proto_decoder(conv, cls, renames=renames, aliases=aliases, omit=omit),
        )

    def _encode_config_list(self, response: m.ListTaskPushNotificationConfigsResponse) -> Any:
        out: dict[str, Any] = {
            "configs": [
                self._conv.unstructure(c, m.TaskPushNotificationConfig) for c in response.configs
            ]
        }
        if response.next_page_token:
            out["nextPageToken"] = response.next_page_token
        return out

    # --- public ---------------------------------------------------------------------------

    def decode[T](self, data: Any, cls: type[T], *, path: str = "$") -> T:
        """v0.3 ProtoJSON -> a model value; bad input raises ``InvalidParamsError`` whose path
        names the keys ``data`` used (``request``, ``content``, ``message_id``; see
        :meth:`sent_path`)."""
        try:
            return super().decode(data, cls, path=path)
        except InvalidParamsError as exc:
            relative = self.sent_path("$" + exc.path.removeprefix(path), data)
            raise exc.at(path + relative.removeprefix("$")) from None

    @staticmethod
    def sent_path(path: str, data: Any) -> str:
        """``path``, a JSON path into ``data`` in the model's field names (``$.message.parts``,
        as decoders and the runtime name fields), spelled with the keys ``data`` used: a
        message's parts are its ``content``, ``message`` may be the proto's ``request``, any
        field may be in its proto spelling (``context_id``).  A field ``data`` lacks gets its
        ProtoJSON name; what the path holds past a step it cannot read is kept as is."""
        sent, node, rest = "$", data, path.removeprefix("$")
        while step := _STEP.match(rest):
            rest = rest[step.end() :]
            name, index = step.groups()
            if index is not None:
                sent += f"[{index}]"
                node = (
                    node[int(index)] if isinstance(node, list) and int(index) < len(node) else None
                )
                continue
            key = _sent_key(name, node)
            sent += "." + key
            node = node.get(key) if isinstance(node, dict) else None
        return sent + rest

    def encode_stream_response(
        self, event: m.StreamEvent, *, final: bool | None = None
    ) -> dict[str, Any]:
        """A ``StreamResponse``: the event under its oneof arm (``final`` on status updates, as
        :meth:`encode_stream_event` sets it)."""
        return {PAYLOAD_KEYS[type(event)]: self.encode_stream_event(event, final=final)}

    def encode_send_response(self, result: m.SendMessageResult) -> dict[str, Any]:
        """A ``SendMessageResponse``: ``{task}`` or ``{message}``."""
        return self.encode_stream_response(result)

    def decode_stream_response(self, data: Any, *, path: str = "$") -> tuple[m.StreamEvent, bool]:
        """A ``StreamResponse`` (or ``SendMessageResponse``) -> ``(event, final)``."""
        if not isinstance(data, dict):
            raise InvalidParamsError(f"expected an object, got {json_type(data)}", path=path)
        arms = [(_PAYLOAD_ALIASES.get(k, camel(k)), v) for k, v in data.items() if v is not None]
        found = [(key, value) for key, value in arms if key in PAYLOAD_KEYS.values()]
        if len(found) != 1:
            allowed = ", ".join(PAYLOAD_KEYS.values())
            raise InvalidParamsError(f"exactly one of {allowed} must be set", path=path)
        key, value = found[0]
        cls = next(c for c, k in PAYLOAD_KEYS.items() if k == key)
        event: m.StreamEvent = self.decode(value, cls, path=f"{path}.{key}")
        final = isinstance(value, dict) and value.get("final") is True
        return event, final


def _sent_key(name: str, node: Any) -> str:
    """The key of ``node`` holding the field the model calls ``name`` (see ``sent_path``)."""
    if not isinstance(node, dict):
        return _SENT_AS.get(name, (name,))[0]
    if _in_jsonrpc_shape(node):
        return name  # read as V03 reads it: the model's names
    keys = _SENT_AS.get(name, (name,))
    spellings = (spelling for key in keys for spelling in (key, _snake(key)))
    return next((key for key in spellings if key in node), keys[0])


def _snake(name: str) -> str:
    """lowerCamelCase -> the proto field name (``messageId`` -> ``message_id``)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


V03_PROTO: Final = V03ProtoCodec()
