"""The agent card and everything it holds: interfaces, skills, security (A2A v1.0 §4.4, §4.5)."""

from __future__ import annotations

import attrs

from ._fields import REQUIRED, to_tuple
from ._json import JsonObject


@attrs.frozen
class AgentInterface:
    """One URL + protocol binding + protocol version at which the agent is reachable."""

    url: str = attrs.field(metadata=REQUIRED)
    protocol_binding: str = attrs.field(metadata=REQUIRED)
    protocol_version: str = attrs.field(metadata=REQUIRED)
    tenant: str = ""


@attrs.frozen
class AgentProvider:
    """The organization that provides the agent."""

    url: str = attrs.field(metadata=REQUIRED)
    organization: str = attrs.field(metadata=REQUIRED)


@attrs.frozen
class AgentExtension:
    """A protocol extension the agent supports."""

    uri: str = ""
    description: str = ""
    required: bool = False
    params: JsonObject | None = None


@attrs.frozen
class AgentCapabilities:
    """Optional protocol features the agent supports."""

    streaming: bool | None = None
    push_notifications: bool | None = None
    extensions: tuple[AgentExtension, ...] = attrs.field(default=(), converter=to_tuple)
    extended_agent_card: bool | None = None


@attrs.frozen
class SecurityRequirement:
    """Scheme name -> the scopes that scheme needs; all entries must be satisfied together."""

    schemes: dict[str, tuple[str, ...]] = attrs.field(factory=dict)


@attrs.frozen
class AgentSkill:
    """A focused capability of the agent."""

    id: str = attrs.field(metadata=REQUIRED)
    name: str = attrs.field(metadata=REQUIRED)
    description: str = attrs.field(metadata=REQUIRED)
    tags: tuple[str, ...] = attrs.field(default=(), metadata=REQUIRED, converter=to_tuple)
    examples: tuple[str, ...] = attrs.field(default=(), converter=to_tuple)
    input_modes: tuple[str, ...] = attrs.field(default=(), converter=to_tuple)
    output_modes: tuple[str, ...] = attrs.field(default=(), converter=to_tuple)
    security_requirements: tuple[SecurityRequirement, ...] = attrs.field(
        default=(), converter=to_tuple
    )


@attrs.frozen
class AgentCardSignature:
    """A JWS (RFC 7515) signature over the canonical agent card."""

    protected: str = attrs.field(metadata=REQUIRED)
    signature: str = attrs.field(metadata=REQUIRED)
    header: JsonObject | None = None


# --- security schemes (a oneof on the wire: one class per arm) --------------------------------


@attrs.frozen
class APIKeySecurityScheme:
    """An API key sent in a header, query parameter or cookie."""

    location: str = attrs.field(metadata=REQUIRED)
    name: str = attrs.field(metadata=REQUIRED)
    description: str = ""


@attrs.frozen
class HTTPAuthSecurityScheme:
    """HTTP authentication (``Bearer``, ``Basic``, ...)."""

    scheme: str = attrs.field(metadata=REQUIRED)
    description: str = ""
    bearer_format: str = ""


@attrs.frozen
class AuthorizationCodeOAuthFlow:
    """OAuth 2.0 authorization code flow."""

    authorization_url: str = attrs.field(metadata=REQUIRED)
    token_url: str = attrs.field(metadata=REQUIRED)
    scopes: dict[str, str] = attrs.field(factory=dict, metadata=REQUIRED)
    refresh_url: str = ""
    pkce_required: bool = False


@attrs.frozen
class ClientCredentialsOAuthFlow:
    """OAuth 2.0 client credentials flow."""

    token_url: str = attrs.field(metadata=REQUIRED)
    scopes: dict[str, str] = attrs.field(factory=dict, metadata=REQUIRED)
    refresh_url: str = ""


@attrs.frozen
class ImplicitOAuthFlow:
    """OAuth 2.0 implicit flow (deprecated by the spec, still representable)."""

    authorization_url: str = ""
    refresh_url: str = ""
    scopes: dict[str, str] = attrs.field(factory=dict)


@attrs.frozen
class PasswordOAuthFlow:
    """OAuth 2.0 resource owner password flow (deprecated by the spec, still representable)."""

    token_url: str = ""
    refresh_url: str = ""
    scopes: dict[str, str] = attrs.field(factory=dict)


@attrs.frozen
class DeviceCodeOAuthFlow:
    """OAuth 2.0 device authorization flow (RFC 8628)."""

    device_authorization_url: str = attrs.field(metadata=REQUIRED)
    token_url: str = attrs.field(metadata=REQUIRED)
    scopes: dict[str, str] = attrs.field(factory=dict, metadata=REQUIRED)
    refresh_url: str = ""


type OAuthFlow = (
    AuthorizationCodeOAuthFlow
    | ClientCredentialsOAuthFlow
    | ImplicitOAuthFlow
    | PasswordOAuthFlow
    | DeviceCodeOAuthFlow
)


@attrs.frozen
class OAuth2SecurityScheme:
    """OAuth 2.0 with one flow."""

    flows: OAuthFlow = attrs.field(metadata=REQUIRED)
    description: str = ""
    oauth2_metadata_url: str = ""


@attrs.frozen
class OpenIdConnectSecurityScheme:
    """OpenID Connect discovery."""

    open_id_connect_url: str = attrs.field(metadata=REQUIRED)
    description: str = ""


@attrs.frozen
class MutualTlsSecurityScheme:
    """Mutual TLS."""

    description: str = ""


type SecurityScheme = (
    APIKeySecurityScheme
    | HTTPAuthSecurityScheme
    | OAuth2SecurityScheme
    | OpenIdConnectSecurityScheme
    | MutualTlsSecurityScheme
)


@attrs.frozen
class AgentCard:
    """The self-description an agent publishes at ``/.well-known/agent-card.json``."""

    name: str = attrs.field(metadata=REQUIRED)
    description: str = attrs.field(metadata=REQUIRED)
    version: str = attrs.field(metadata=REQUIRED)
    supported_interfaces: tuple[AgentInterface, ...] = attrs.field(
        default=(), metadata=REQUIRED, converter=to_tuple
    )
    capabilities: AgentCapabilities = attrs.field(factory=AgentCapabilities, metadata=REQUIRED)
    default_input_modes: tuple[str, ...] = attrs.field(
        default=(), metadata=REQUIRED, converter=to_tuple
    )
    default_output_modes: tuple[str, ...] = attrs.field(
        default=(), metadata=REQUIRED, converter=to_tuple
    )
    skills: tuple[AgentSkill, ...] = attrs.field(default=(), metadata=REQUIRED, converter=to_tuple)
    provider: AgentProvider | None = None
    documentation_url: str | None = None
    security_schemes: dict[str, SecurityScheme] = attrs.field(factory=dict)
    security_requirements: tuple[SecurityRequirement, ...] = attrs.field(
        default=(), converter=to_tuple
    )
    signatures: tuple[AgentCardSignature, ...] = attrs.field(default=(), converter=to_tuple)
    icon_url: str | None = None
