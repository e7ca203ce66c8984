"""A2A v0.3 JSON as a second wire form of the v1.0 model (the model itself stays v1.0-only).

v0.3 differs from v1.0 ProtoJSON in shape, not in meaning: ``kind`` discriminators on parts and
results, lowercase states (``input-required``), ``role: "user"|"agent"``, file parts nested as
``file: {bytes|uri, mimeType, name}``, a ``final`` flag on status updates, a card with a main
``url`` + ``preferredTransport``, and push configs nested one level deeper.  Where v0.3 has no
place for a v1.0 field the field is dropped on output; ``docs/model.md`` lists every such spot.

Private ``_…03`` classes mirror the v0.3 shapes that differ structurally, so cattrs reports errors
with the paths a v0.3 client sent; small functions map them to and from the model classes.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Final

import attrs
import cattrs

from .. import model as m
from ..errors import InvalidParamsError, Value
from ._common import (
    artifacts_listed,
    camel_decoder,
    camel_encoder,
    encode_bytes,
    expect_object,
    install_json_value_hooks,
    install_scalar_hooks,
    json_type,
    parse_timestamp,
    structure_or_raise,
)

STATES: Final[dict[m.TaskState, str]] = {
    m.TaskState.UNSPECIFIED: "unknown",
    m.TaskState.SUBMITTED: "submitted",
    m.TaskState.WORKING: "working",
    m.TaskState.COMPLETED: "completed",
    m.TaskState.FAILED: "failed",
    m.TaskState.CANCELED: "canceled",
    m.TaskState.INPUT_REQUIRED: "input-required",
    m.TaskState.REJECTED: "rejected",
    m.TaskState.AUTH_REQUIRED: "auth-required",
}
ROLES: Final[dict[m.Role, str]] = {m.Role.USER: "user", m.Role.AGENT: "agent"}

RESULT_KINDS: Final[dict[type, str]] = {
    m.Task: "task",
    m.Message: "message",
    m.TaskStatusUpdateEvent: "status-update",
    m.TaskArtifactUpdateEvent: "artifact-update",
}
SCHEME_TYPES: Final[dict[type, str]] = {
    m.APIKeySecurityScheme: "apiKey",
    m.HTTPAuthSecurityScheme: "http",
    m.OAuth2SecurityScheme: "oauth2",
    m.OpenIdConnectSecurityScheme: "openIdConnect",
    m.MutualTlsSecurityScheme: "mutualTLS",
}
# v0.3 ``OAuthFlows`` may list several flows; the v1.0 model holds one, the first in this order.
# ``deviceCode`` is v1.0-only: written under its v1.0 key, which v0.3 readers ignore.
FLOW_KEYS: Final[dict[type, str]] = {
    m.AuthorizationCodeOAuthFlow: "authorizationCode",
    m.ClientCredentialsOAuthFlow: "clientCredentials",
    m.DeviceCodeOAuthFlow: "deviceCode",
    m.ImplicitOAuthFlow: "implicit",
    m.PasswordOAuthFlow: "password",
}
# The SDK's convention for a data part whose content is not an object (v0.3 only allows objects).
DATA_WRAP_FLAG: Final = "data_part_compat"
EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)

# --- v0.3 shapes that differ structurally from v1.0 -------------------------------------------


@attrs.frozen
class _TextPart03:
    text: str
    metadata: m.JsonObject | None = None


@attrs.frozen
class _File03:
    bytes: builtins.bytes | None = None
    uri: str | None = None
    mime_type: str = ""
    name: str = ""


@attrs.frozen
class _FilePart03:
    file: _File03
    metadata: m.JsonObject | None = None


@attrs.frozen
class _DataPart03:
    data: m.JsonObject
    metadata: m.JsonObject | None = None


@attrs.frozen
class _PushAuth03:
    schemes: tuple[str, ...]
    credentials: str = ""


@attrs.frozen
class _PushConfig03:
    url: str
    id: str = ""
    token: str = ""
    authentication: _PushAuth03 | None = None


@attrs.frozen
class _TaskPushConfig03:
    task_id: str
    push_notification_config: _PushConfig03


@attrs.frozen
class _SendConfig03:
    accepted_output_modes: tuple[str, ...] = ()
    blocking: bool | None = None
    history_length: int | None = None
    push_notification_config: _PushConfig03 | None = None


@attrs.frozen
class _SendParams03:
    message: m.Message
    configuration: _SendConfig03 | None = None
    metadata: m.JsonObject | None = None


@attrs.frozen
class _PushConfigQuery03:
    id: str
    push_notification_config_id: str = ""


@attrs.frozen
class _Interface03:
    url: str
    transport: str


@attrs.frozen
class _Card03:
    name: str
    description: str
    url: str
    version: str
    protocol_version: str
    capabilities: m.AgentCapabilities
    default_input_modes: tuple[str, ...]
    default_output_modes: tuple[str, ...]
    skills: tuple[m.AgentSkill, ...]
    preferred_transport: str = "JSONRPC"
    additional_interfaces: tuple[_Interface03, ...] = ()
    provider: m.AgentProvider | None = None
    icon_url: str | None = None
    documentation_url: str | None = None
    security_schemes: dict[str, m.SecurityScheme] = attrs.field(factory=dict)
    security: tuple[m.SecurityRequirement, ...] = ()
    supports_authenticated_extended_card: bool | None = None
    signatures: tuple[m.AgentCardSignature, ...] = ()


# --- mapping between v0.3 shapes and the model --------------------------------------------------


def _part_from03(
    wire: _TextPart03 | _FilePart03 | _DataPart03, file_keys: tuple[str, str] = ("bytes", "uri")
) -> m.Part:
    """``file_keys``: what the client calls a file's ``bytes`` and ``uri``, for a refusal."""
    if isinstance(wire, _TextPart03):
        return m.TextPart(wire.text, metadata=wire.metadata)
    if isinstance(wire, _DataPart03):
        metadata = wire.metadata
        if metadata is not None and metadata.get(DATA_WRAP_FLAG) is True:
            metadata = {k: v for k, v in metadata.items() if k != DATA_WRAP_FLAG} or None
            return m.DataPart(wire.data.get("value"), metadata=metadata)
        return m.DataPart(wire.data, metadata=metadata)
    file = wire.file
    if (file.bytes is None) == (file.uri is None):
        raise InvalidParamsError(f"file: exactly one of {', '.join(file_keys)} must be set")
    if file.bytes is not None:
        return m.RawPart(
            file.bytes, media_type=file.mime_type, filename=file.name, metadata=wire.metadata
        )
    return m.UrlPart(
        file.uri or "", media_type=file.mime_type, filename=file.name, metadata=wire.metadata
    )


def _encode_part(part: m.Part) -> dict[str, Any]:
    """Parts are small and hot: written by hand rather than through generated functions."""
    out: dict[str, Any]
    metadata = part.metadata
    if isinstance(part, m.TextPart):
        out = {"kind": "text", "text": part.text}
    elif isinstance(part, m.DataPart):
        data = part.data
        if not isinstance(data, dict):
            data = {"value": data}
            metadata = {**(metadata or {}), DATA_WRAP_FLAG: True}
        out = {"kind": "data", "data": data}
    else:
        file: dict[str, Any] = (
            {"bytes": encode_bytes(part.raw)} if isinstance(part, m.RawPart) else {"uri": part.url}
        )
        if part.media_type:
            file["mimeType"] = part.media_type
        if part.filename:
            file["name"] = part.filename
        out = {"kind": "file", "file": file}
    if metadata is not None:
        out["metadata"] = metadata
    return out


def _push_from03(wire: _PushConfig03, task_id: str = "") -> m.TaskPushNotificationConfig:
    auth = wire.authentication
    return m.TaskPushNotificationConfig(
        url=wire.url,
        id=wire.id,
        task_id=task_id,
        token=wire.token,
        authentication=None
        if auth is None
        else m.AuthenticationInfo(
            scheme=auth.schemes[0] if auth.schemes else "", credentials=auth.credentials
        ),
    )


def _push_to03(config: m.TaskPushNotificationConfig) -> _PushConfig03:
    auth = config.authentication
    return _PushConfig03(
        url=config.url,
        id=config.id,
        token=config.token,
        authentication=None
        if auth is None
        else _PushAuth03(
            schemes=(auth.scheme,) if auth.scheme else (), credentials=auth.credentials
        ),
    )


def _send_from03(wire: _SendParams03) -> m.SendMessageRequest:
    config = wire.configuration
    return m.SendMessageRequest(
        message=wire.message,
        metadata=wire.metadata,
        configuration=None
        if config is None
        else m.SendMessageConfiguration(
            accepted_output_modes=config.accepted_output_modes,
            history_length=config.history_length or None,  # see _get_task_hooks
            return_immediately=config.blocking is False,
            task_push_notification_config=None
            if config.push_notification_config is None
            else _push_from03(config.push_notification_config),
        ),
    )


def _send_to03(request: m.SendMessageRequest) -> _SendParams03:
    config = request.configuration
    push = None if config is None else config.task_push_notification_config
    return _SendParams03(
        message=request.message,
        metadata=request.metadata,
        configuration=None
        if config is None
        else _SendConfig03(
            accepted_output_modes=config.accepted_output_modes,
            # Written always: v0.3 servers disagree on the default.
            blocking=not config.return_immediately,
            history_length=config.history_length,
            push_notification_config=None if push is None else _push_to03(push),
        ),
    )


def _card_from03(wire: _Card03) -> m.AgentCard:
    main = m.AgentInterface(wire.url, wire.preferred_transport, wire.protocol_version)
    interfaces = [main]
    for extra in wire.additional_interfaces:
        interface = m.AgentInterface(extra.url, extra.transport, wire.protocol_version)
        if interface not in interfaces:
            interfaces.append(interface)
    capabilities = attrs.evolve(
        wire.capabilities, extended_agent_card=wire.supports_authenticated_extended_card
    )
    return m.AgentCard(
        name=wire.name,
        description=wire.description,
        version=wire.version,
        supported_interfaces=interfaces,
        capabilities=capabilities,
        default_input_modes=wire.default_input_modes,
        default_output_modes=wire.default_output_modes,
        skills=wire.skills,
        provider=wire.provider,
        documentation_url=wire.documentation_url,
        icon_url=wire.icon_url,
        security_schemes=wire.security_schemes,
        security_requirements=wire.security,
        signatures=wire.signatures,
    )


def _card_to03(card: m.AgentCard) -> _Card03:
    """The main ``url`` is the first v0.x interface; the others listed are those of its version.

    A v0.3 interface carries no version: a v0.3 client gives every listed one the card's
    ``protocolVersion`` and talks that version to it, so an interface of another version (a
    v1.0 one beside the v0.3 ones) has no place on the card.
    """
    interfaces = card.supported_interfaces
    legacy = [i for i in interfaces if i.protocol_version.split(".")[0] == "0"]
    if not legacy:
        versions = ", ".join(dict.fromkeys(i.protocol_version for i in interfaces)) or "none"
        raise ValueError(
            f"a v0.3 card needs an interface of protocol version 0.x; this card's are: {versions}"
        )
    main = legacy[0]
    major_minor = main.protocol_version.split(".")[:2]
    listed = dict.fromkeys(
        _Interface03(i.url, i.protocol_binding)
        for i in legacy
        if i.protocol_version.split(".")[:2] == major_minor
    )
    return _Card03(
        name=card.name,
        description=card.description,
        url=main.url,
        version=card.version,
        protocol_version=main.protocol_version,
        preferred_transport=main.protocol_binding,
        capabilities=card.capabilities,
        default_input_modes=card.default_input_modes,
        default_output_modes=card.default_output_modes,
        skills=card.skills,
        additional_interfaces=tuple(listed),
        provider=card.provider,
        icon_url=card.icon_url,
        documentation_url=card.documentation_url,
        security_schemes=card.security_schemes,
        security=card.security_requirements,
        supports_authenticated_extended_card=card.capabilities.extended_agent_card,
        signatures=card.signatures,
    )


def _millis_to_datetime(value: Any) -> datetime:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidParamsError(
            f"expected Unix time in milliseconds, got {json_type(value)}",
            path="$.lastUpdatedAfter",
        )
    try:
        return EPOCH + timedelta(milliseconds=value)
    except OverflowError:
        raise InvalidParamsError("out of range", path="$.lastUpdatedAfter") from None


def _parse_timestamp03(value: Any, _type: Any = datetime) -> datetime:
    """RFC 3339; v0.3 peers often omit the offset (the spec's own examples do): read as UTC."""
    parsed = parse_timestamp(value, offset_required=False)
    return parsed if parsed.utcoffset() is not None else parsed.replace(tzinfo=UTC)


def _lookup_hooks(
    table: Mapping[Any, str], what: str
) -> tuple[Callable[[Any], str], Callable[[Any, Any], Any]]:
    back = {name: value for value, name in table.items()}

    def encode(value: Any) -> str:
        name = table.get(value)
        if name is None:
            raise ValueError(f"{value!r} has no v0.3 form")
        return name

    def decode(value: Any, _type: Any) -> Any:
        found = back.get(value) if isinstance(value, str) else None
        if found is None:
            # the zero value (``unknown``) is the field left out, not a choice
            allowed = ", ".join(name for name, member in back.items() if member)
            raise InvalidParamsError(f"unknown {what} {str(value)[:40]!r} (one of {allowed})")
        return found

    return encode, decode


def _kind_of(obj: dict[str, Any]) -> str | None:
    """Infer a result's ``kind`` when a lenient v0.3 peer left it out (the spec's examples do)."""
    if "artifact" in obj:
        return "artifact-update"
    if "status" in obj:
        return "status-update" if "taskId" in obj else "task"
    if "messageId" in obj:
        return "message"
    return None


class V03Codec:
    """The v0.3 converter: ``encode(value) -> JSON-ready value``, ``decode(data, cls) -> value``.

    ``cls`` is always a v1.0 model class; request classes read and write the v0.3 ``params`` of
    the matching method (see :attr:`PARAMS_BY_METHOD`).
    """

    PARAMS_BY_METHOD: Final[Mapping[str, type]] = {
        "message/send": m.SendMessageRequest,
        "message/stream": m.SendMessageRequest,
        "tasks/get": m.GetTaskRequest,
        "tasks/list": m.ListTasksRequest,
        "tasks/cancel": m.CancelTaskRequest,
        "tasks/resubscribe": m.SubscribeToTaskRequest,
        "tasks/pushNotificationConfig/set": m.TaskPushNotificationConfig,
        "tasks/pushNotificationConfig/get": m.GetTaskPushNotificationConfigRequest,
        "tasks/pushNotificationConfig/list": m.ListTaskPushNotificationConfigsRequest,
        "tasks/pushNotificationConfig/delete": m.DeleteTaskPushNotificationConfigRequest,
        "agent/getAuthenticatedExtendedCard": m.GetExtendedAgentCardRequest,
    }
    """v0.3 JSON-RPC method -> the model class its ``params`` decode to."""

    _names: ClassVar[tuple[Mapping[m.TaskState, str], Mapping[m.Role, str]]] = (STATES, ROLES)
    """How states and roles are written (``spell``; the hooks ``__init__`` registers)."""

    def __init__(self) -> None:
        conv = cattrs.Converter(detailed_validation=True)
        self._conv = conv
        install_scalar_hooks(conv)
        conv.register_structure_hook(datetime, _parse_timestamp03)
        install_json_value_hooks(conv)
        states, roles = self._names
        for enum_cls, table, what in ((m.TaskState, states, "task state"), (m.Role, roles, "role")):
            encode, decode = _lookup_hooks(table, what)
            conv.register_unstructure_hook(enum_cls, encode)
            conv.register_structure_hook(enum_cls, decode)
        conv.register_unstructure_hook_factory(attrs.has, lambda cls: camel_encoder(conv, cls))
        conv.register_structure_hook_factory(attrs.has, lambda cls: camel_decoder(conv, cls))
        conv.register_unstructure_hook_func(lambda t: t is m.Part, _encode_part)
        conv.register_structure_hook_func(lambda t: t is m.Part, self._decode_part)
        self._security_hooks()

        # Same shape as v1.0 apart from a ``kind`` tag, fields v0.3 lacks, or renamed keys.
        for cls in RESULT_KINDS:
            self._tagged(cls, always=("context_id",) if cls is m.Task else ())
        self._both(m.AgentSkill, renames={"security_requirements": "security"})
        self._both(m.AgentCapabilities, omit=("extended_agent_card",))
        self._both(m.AgentExtension, always=("uri",))
        self._both(m.ImplicitOAuthFlow, always=("authorization_url", "scopes"))
        self._both(m.PasswordOAuthFlow, always=("token_url", "scopes"))
        self._both(m.APIKeySecurityScheme, renames={"location": "in"})
        self._both(m.CancelTaskRequest, omit=("tenant",))
        self._both(m.SubscribeToTaskRequest, omit=("tenant",))
        self._both(m.GetExtendedAgentCardRequest, omit=("tenant",))
        self._both(
            m.DeleteTaskPushNotificationConfigRequest,
            renames={"task_id": "id", "id": "pushNotificationConfigId"},
            omit=("tenant",),
        )
        self._both(
            m.ListTaskPushNotificationConfigsRequest,
            renames={"task_id": "id"},
            omit=("tenant", "page_size", "page_token"),
        )

        # Different shapes: through a v0.3 mirror class, or by hand.
        self._mirrored(
            m.SendMessageRequest, _SendParams03, _send_from03, self._unstructure_via(_send_to03)
        )
        self._mirrored(
            m.TaskPushNotificationConfig,
            _TaskPushConfig03,
            lambda w: _push_from03(w.push_notification_config, w.task_id),
            self._unstructure_via(lambda c: _TaskPushConfig03(c.task_id, _push_to03(c))),
        )
        self._mirrored(
            m.GetTaskPushNotificationConfigRequest,
            _PushConfigQuery03,
            lambda w: m.GetTaskPushNotificationConfigRequest(
                task_id=w.id, id=w.push_notification_config_id
            ),
            self._unstructure_via(lambda r: _PushConfigQuery03(r.task_id, r.id)),
        )
        self._both(_Card03, always=("preferred_transport",))
        self._mirrored(m.AgentCard, _Card03, _card_from03, self._unstructure_via(_card_to03))
        conv.register_structure_hook(
            m.ListTaskPushNotificationConfigsResponse, self._decode_config_list
        )
        conv.register_unstructure_hook(
            m.ListTaskPushNotificationConfigsResponse,
            lambda r: [conv.unstructure(c, m.TaskPushNotificationConfig) for c in r.configs],
        )
        self._list_tasks_hooks()
        self._get_task_hooks()

    # --- registration helpers -------------------------------------------------------------

    def _lazy(
        self,
        cls: type,
        make_encode: Callable[[], Callable[[Any], Any]],
        make_decode: Callable[[], Callable[[Any, Any], Any]],
    ) -> None:
        """Hooks for ``cls`` built on first use: a generated function binds the hooks of its
        field types when it is made, so it must be made after every hook is registered."""
        conv = self._conv
        conv.register_unstructure_hook_factory(lambda t: t is cls, lambda _t: make_encode())
        conv.register_structure_hook_factory(lambda t: t is cls, lambda _t: make_decode())

    def _both(
        self,
        cls: type,
        *,
        renames: Mapping[str, str] | None = None,
        always: tuple[str, ...] = (),
        omit: tuple[str, ...] = (),
    ) -> None:
        conv = self._conv
        self._lazy(
            cls,
            lambda: camel_encoder(conv, cls, renames=renames, always=always, omit=omit),
            lambda: camel_decoder(conv, cls, renames=renames, omit=omit),
        )

    def _tagged(self, cls: type, *, always: tuple[str, ...]) -> None:
        """A result class: written with its ``kind``; on input a ``kind`` must match if given."""
        conv, kind = self._conv, RESULT_KINDS[cls]

        def make_encode() -> Callable[[Any], dict[str, Any]]:
            encode = camel_encoder(conv, cls, always=always)

            def encode_tagged(value: Any) -> dict[str, Any]:
                out = encode(value)
                out["kind"] = kind
                return out

            return encode_tagged

        def make_decode() -> Callable[[Any, Any], Any]:
            decode = camel_decoder(conv, cls)

            def decode_tagged(data: Any, _type: Any) -> Any:
                given = expect_object(data).get("kind", kind)
                if given != kind:
                    raise InvalidParamsError(f"kind must be {kind!r}, got {str(given)[:40]!r}")
                return decode(data, cls)

            return decode_tagged

        self._lazy(cls, make_encode, make_decode)

    def _unstructure_via(self, to03: Callable[[Any], Any]) -> Callable[[Any], Any]:
        conv = self._conv

        def unstructure(value: Any) -> Any:
            wire = to03(value)
            return conv.unstructure(wire, type(wire))

        return unstructure

    def _mirrored(
        self,
        cls: type,
        mirror: type,
        from03: Callable[[Any], Any],
        unstructure: Callable[[Any], Any],
    ) -> None:
        conv = self._conv
        conv.register_structure_hook(cls, lambda data, _t: from03(conv.structure(data, mirror)))
        conv.register_unstructure_hook(cls, unstructure)

    def _list_tasks_hooks(self) -> None:
        """``tasks/list``: ``lastUpdatedAfter`` is Unix milliseconds, a v1.0 timestamp."""
        conv, cls = self._conv, m.ListTasksRequest
        omit = ("tenant", "status_timestamp_after")

        def make_encode() -> Callable[[Any], dict[str, Any]]:
            encode = camel_encoder(conv, cls, omit=omit)

            def encode_list(request: m.ListTasksRequest) -> dict[str, Any]:
                out = encode(request)
                if request.status_timestamp_after is not None:
                    after = request.status_timestamp_after - EPOCH
                    out["lastUpdatedAfter"] = after // timedelta(milliseconds=1)
                return out

            return encode_list

        def make_decode() -> Callable[[Any, Any], m.ListTasksRequest]:
            decode = camel_decoder(conv, cls, omit=omit)

            def decode_list(data: Any, _type: Any) -> m.ListTasksRequest:
                request: m.ListTasksRequest = decode(data, cls)
                after = expect_object(data).get("lastUpdatedAfter")
                if after is None:
                    return request
                return attrs.evolve(request, status_timestamp_after=_millis_to_datetime(after))

            return decode_list

        self._lazy(cls, make_encode, make_decode)

    def _get_task_hooks(self) -> None:
        """``tasks/get``: deployed v0.3 servers (the SDK's) read ``historyLength: 0`` as "no
        limit", so it decodes as unset; v1.0 gives 0 the meaning "no history"."""
        conv, cls = self._conv, m.GetTaskRequest

        def make_decode() -> Callable[[Any, Any], m.GetTaskRequest]:
            decode = camel_decoder(conv, cls, omit=("tenant",))

            def decode_get(data: Any, _type: Any) -> m.GetTaskRequest:
                request: m.GetTaskRequest = decode(data, cls)
                if request.history_length == 0:
                    return attrs.evolve(request, history_length=None)
                return request

            return decode_get

        self._lazy(cls, lambda: camel_encoder(conv, cls, omit=("tenant",)), make_decode)

    def _security_hooks(self) -> None:
        conv = self._conv
        by_type = {name: cls for cls, name in SCHEME_TYPES.items()}

        def encode_scheme(scheme: m.SecurityScheme) -> dict[str, Any]:
            out: dict[str, Any] = {"type": SCHEME_TYPES[type(scheme)]}
            out.update(conv.unstructure(scheme, type(scheme)))
            return out

        def decode_scheme(data: Any, _type: Any) -> m.SecurityScheme:
            name = expect_object(data).get("type")
            cls = by_type.get(name) if isinstance(name, str) else None
            if cls is None:
                allowed = ", ".join(by_type)
                raise InvalidParamsError(
                    f"unknown security scheme type {str(name)[:40]!r} (one of {allowed})"
                )
            return conv.structure(data, cls)

        def encode_flows(flow: m.OAuthFlow) -> dict[str, Any]:
            return {FLOW_KEYS[type(flow)]: conv.unstructure(flow, type(flow))}

        def decode_flows(data: Any, _type: Any) -> m.OAuthFlow:
            obj = expect_object(data)
            for cls, key in FLOW_KEYS.items():
                if obj.get(key) is not None:
                    return conv.structure(obj[key], cls)
            raise InvalidParamsError(f"one of {', '.join(FLOW_KEYS.values())} must be set")

        def encode_requirement(requirement: m.SecurityRequirement) -> dict[str, Any]:
            return {name: list(scopes) for name, scopes in requirement.schemes.items()}

        def decode_requirement(data: Any, _type: Any) -> m.SecurityRequirement:
            return m.SecurityRequirement(conv.structure(data, dict[str, tuple[str, ...]]))

        conv.register_unstructure_hook_func(lambda t: t is m.SecurityScheme, encode_scheme)
        conv.register_structure_hook_func(lambda t: t is m.SecurityScheme, decode_scheme)
        conv.register_unstructure_hook_func(lambda t: t is m.OAuthFlow, encode_flows)
        conv.register_structure_hook_func(lambda t: t is m.OAuthFlow, decode_flows)
        conv.register_unstructure_hook(m.SecurityRequirement, encode_requirement)
        conv.register_structure_hook(m.SecurityRequirement, decode_requirement)

    # --- hooks with their own dispatch ---------------------------------------------------

    def _decode_part(self, data: Any, _type: Any) -> m.Part:
        obj = expect_object(data)
        kind = obj.get("kind")
        if kind is None:  # lenient: infer from the content key
            present = [key for key in ("text", "file", "data") if key in obj]
            if len(present) != 1:
                raise InvalidParamsError("exactly one of text, file, data must be set")
            kind = present[0]
        mirror = {"text": _TextPart03, "file": _FilePart03, "data": _DataPart03}.get(kind)
        if mirror is None:
            raise InvalidParamsError(
                f"unknown part kind {str(kind)[:40]!r} (one of text, file, data)"
            )
        return _part_from03(self._conv.structure(obj, mirror))

    def _decode_config_list(
        self, data: Any, _type: Any
    ) -> m.ListTaskPushNotificationConfigsResponse:
        configs = self._conv.structure(data, tuple[m.TaskPushNotificationConfig, ...])
        return m.ListTaskPushNotificationConfigsResponse(configs=configs)

    # --- public ---------------------------------------------------------------------------

    def spell(self, value: Value) -> str:
        """A state or role as this wire form writes it (``input-required``, ``user``), for
        error messages."""
        states, roles = self._names
        names: Mapping[Any, str] = states if isinstance(value, m.TaskState) else roles
        return names.get(value) or value.name.lower()

    def encode(self, value: Any) -> Any:
        """Any model value -> its v0.3 JSON value (a dict; a list for a push-config list).

        A status update is written with ``final`` set when its state ends the stream (terminal
        or interrupted); use :meth:`encode_stream_event` to say so explicitly.

        Raises:
            ValueError: the value holds something v0.3 cannot say (``Role.UNSPECIFIED``, a
                card without a v0.x interface).
        """
        if isinstance(value, m.TaskStatusUpdateEvent):
            return self.encode_stream_event(value)
        return self._conv.unstructure(value, type(value))

    def decode[T](self, data: Any, cls: type[T], *, path: str = "$") -> T:
        """v0.3 JSON -> a model value; bad input raises ``InvalidParamsError`` with its path."""
        return structure_or_raise(self._conv, data, cls, path=path)

    def encode_task_list(
        self, page: m.ListTasksResponse, *, include_artifacts: bool
    ) -> dict[str, Any]:
        """A ``tasks/list`` result; with ``include_artifacts`` (the request's), a task without
        artifacts is written with ``artifacts: []``, not without the key."""
        out: dict[str, Any] = self.encode(page)
        return artifacts_listed(out) if include_artifacts else out

    def encode_stream_event(
        self, event: m.StreamEvent, *, final: bool | None = None
    ) -> dict[str, Any]:
        """A ``message/stream`` result: the event with its ``kind`` (and ``final`` for a status).

        ``final=None`` derives the flag from the state: terminal and interrupted states end a
        v0.3 stream.
        """
        out: dict[str, Any] = self._conv.unstructure(event, type(event))
        if isinstance(event, m.TaskStatusUpdateEvent):
            state = event.status.state
            out["final"] = m.is_settled(state) if final is None else final
        return out

    def decode_stream_event(self, data: Any, *, path: str = "$") -> tuple[m.StreamEvent, bool]:
        """A ``message/stream`` result -> ``(event, final)``; ``final`` is only ever true for a
        status update that says so."""
        if not isinstance(data, dict):
            raise InvalidParamsError(f"expected an object, got {json_type(data)}", path=path)
        kind = data.get("kind", _kind_of(data))
        cls = next((c for c, k in RESULT_KINDS.items() if k == kind), None)
        if cls is None:
            allowed = ", ".join(RESULT_KINDS.values())
            raise InvalidParamsError(f"kind must be one of {allowed}", path=path)
        event: m.StreamEvent = self.decode(data, cls, path=path)
        final = data.get("final", False)
        if not isinstance(final, bool):
            raise InvalidParamsError(
                f"expected a boolean, got {json_type(final)}", path=f"{path}.final"
            )
        return event, final

    def encode_send_result(self, result: m.SendMessageResult) -> dict[str, Any]:
        """A ``message/send`` result: the task or message with its ``kind``."""
        return self.encode_stream_event(result)

    def decode_send_result(self, data: Any, *, path: str = "$") -> m.SendMessageResult:
        event, _final = self.decode_stream_event(data, path=path)
        if not isinstance(event, m.Task | m.Message):
            raise InvalidParamsError("kind must be one of task, message", path=path)
        return event


V03: Final = V03Codec()
