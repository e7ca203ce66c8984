"""Hypothesis strategies for every model class, in two profiles.

``Profile.V1`` covers everything the v1.0 model can hold.  ``Profile.V03`` stays inside what the
v0.3 wire form can express (see the lossy spots in ``docs/model.md``), so a v0.3 round trip must be
exact.  Sizes are kept small: these feed round-trip tests that run on every CI build.
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import attrs
from hypothesis import strategies as st

from a2a_trio import model as m


class Profile(enum.Enum):
    V1 = "v1"
    V03 = "v03"


text = st.text(max_size=12)
ids = st.text(min_size=1, max_size=12)
int32 = st.integers(-(2**31), 2**31 - 1)
nonzero_int32 = int32.filter(bool)  # v0.3 reads historyLength 0 as "no limit" (docs/model.md)
json_leaves = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)  # exact in a protobuf double
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)
json_values: st.SearchStrategy[m.JsonValue] = st.recursive(
    json_leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=6,
)
json_objects = st.dictionaries(text, json_values, max_size=3)
metadata = st.none() | json_objects
string_lists = st.lists(text, max_size=3).map(tuple)
scopes = st.dictionaries(text, text, max_size=2)
# Millisecond precision (the wire form's); any offset (the wire form writes UTC, the same instant).
timestamps = st.builds(
    lambda d, offset: d.replace(microsecond=d.microsecond // 1000 * 1000).astimezone(offset),
    st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    ),
    st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))]),
)


def _parts(profile: Profile) -> st.SearchStrategy[m.Part]:
    v1 = profile is Profile.V1
    media = text if v1 else st.just("")
    file_meta = {"media_type": text, "filename": text, "metadata": metadata}
    return st.one_of(
        st.builds(m.TextPart, text, media_type=media, filename=media, metadata=metadata),
        st.builds(m.RawPart, st.binary(max_size=24), **file_meta),
        st.builds(m.UrlPart, text, **file_meta),
        st.builds(m.DataPart, json_objects, media_type=media, filename=media, metadata=metadata),
        # v0.3 wraps non-object data and flags it in metadata: an empty object would not survive.
        st.builds(
            m.DataPart,
            json_values.filter(lambda v: not isinstance(v, dict)),
            media_type=media,
            filename=media,
            metadata=metadata if v1 else st.none() | json_objects.filter(bool),
        ),
    )


class Strategies:
    """One strategy per model class for a profile: ``Strategies(Profile.V1).of(m.Task)``."""

    def __init__(self, profile: Profile) -> None:
        v1 = profile is Profile.V1
        self.profile = profile
        tenant = text if v1 else st.just("")
        roles = st.sampled_from(m.Role) if v1 else st.sampled_from([m.Role.USER, m.Role.AGENT])
        parts = st.lists(_parts(profile), max_size=3).map(tuple)
        message = st.builds(
            m.Message,
            message_id=ids,
            role=roles,
            parts=parts,
            context_id=text,
            task_id=text,
            metadata=metadata,
            extensions=string_lists,
            reference_task_ids=string_lists,
        )
        artifact = st.builds(
            m.Artifact,
            artifact_id=ids,
            parts=parts,
            name=text,
            description=text,
            metadata=metadata,
            extensions=string_lists,
        )
        status = st.builds(
            m.TaskStatus,
            state=st.sampled_from(m.TaskState),
            message=st.none() | message,
            timestamp=st.none() | timestamps,
        )
        task = st.builds(
            m.Task,
            id=ids,
            status=status,
            context_id=text,
            artifacts=st.lists(artifact, max_size=2).map(tuple),
            history=st.lists(message, max_size=2).map(tuple),
            metadata=metadata,
        )
        auth = st.builds(m.AuthenticationInfo, scheme=text, credentials=text)
        push = st.builds(
            m.TaskPushNotificationConfig,
            url=text,
            tenant=tenant,
            id=text,
            task_id=text,
            token=text,
            authentication=st.none() | auth,
        )
        # Inside a send, v0.3 has no place for the config's task id.
        send_push = push if v1 else push.map(lambda p: attrs.evolve(p, task_id=""))
        send_config = st.builds(
            m.SendMessageConfiguration,
            accepted_output_modes=string_lists,
            task_push_notification_config=st.none() | send_push,
            history_length=st.none() | (int32 if v1 else nonzero_int32),
            return_immediately=st.booleans(),
        )
        flow_choices = [
            st.builds(
                m.AuthorizationCodeOAuthFlow,
                authorization_url=text,
                token_url=text,
                scopes=scopes,
                refresh_url=text,
                pkce_required=st.booleans() if v1 else st.just(False),
            ),
            st.builds(
                m.ClientCredentialsOAuthFlow, token_url=text, scopes=scopes, refresh_url=text
            ),
            st.builds(m.ImplicitOAuthFlow, authorization_url=text, refresh_url=text, scopes=scopes),
            st.builds(m.PasswordOAuthFlow, token_url=text, refresh_url=text, scopes=scopes),
        ]
        if v1:  # v0.3 has no device code flow (a2a_trio writes it; other v0.3 readers drop it)
            flow_choices.append(
                st.builds(
                    m.DeviceCodeOAuthFlow,
                    device_authorization_url=text,
                    token_url=text,
                    scopes=scopes,
                    refresh_url=text,
                )
            )
        flows = st.one_of(flow_choices)
        schemes = st.one_of(
            st.builds(
                m.APIKeySecurityScheme,
                location=text if v1 else st.sampled_from(["header", "query", "cookie"]),
                name=text,
                description=text,
            ),
            st.builds(m.HTTPAuthSecurityScheme, scheme=text, description=text, bearer_format=text),
            st.builds(
                m.OAuth2SecurityScheme,
                flows=flows,
                description=text,
                oauth2_metadata_url=text,
            ),
            st.builds(m.OpenIdConnectSecurityScheme, open_id_connect_url=text, description=text),
            st.builds(m.MutualTlsSecurityScheme, description=text),
        )
        requirement = st.builds(
            m.SecurityRequirement, schemes=st.dictionaries(text, string_lists, max_size=2)
        )
        requirements = st.lists(requirement, max_size=2).map(tuple)
        extension = st.builds(
            m.AgentExtension,
            uri=text,
            description=text,
            required=st.booleans(),
            params=metadata,
        )
        optional_bool = st.none() | st.booleans()
        capabilities = st.builds(
            m.AgentCapabilities,
            streaming=optional_bool,
            push_notifications=optional_bool,
            extensions=st.lists(extension, max_size=2).map(tuple),
            extended_agent_card=optional_bool,
        )
        skill = st.builds(
            m.AgentSkill,
            id=text,
            name=text,
            description=text,
            tags=string_lists,
            examples=string_lists,
            input_modes=string_lists,
            output_modes=string_lists,
            security_requirements=requirements,
        )
        provider = st.builds(m.AgentProvider, url=text, organization=text)
        signature = st.builds(m.AgentCardSignature, protected=text, signature=text, header=metadata)
        interface = st.builds(
            m.AgentInterface,
            url=text,
            protocol_binding=text,
            protocol_version=text,
            tenant=text,
        )
        if v1:
            interfaces = st.lists(interface, max_size=3).map(tuple)
        else:
            # v0.3 has one protocol version per card and lists (url, transport) pairs once.
            interfaces = st.builds(
                lambda pairs, version: tuple(
                    m.AgentInterface(url, binding, version) for url, binding in pairs
                ),
                st.lists(
                    st.tuples(text, st.sampled_from(["JSONRPC", "GRPC", "HTTP+JSON"])),
                    min_size=1,
                    max_size=3,
                    unique=True,
                ),
                st.sampled_from(["0.3.0", "0.3"]),
            )
        card = st.builds(
            m.AgentCard,
            name=text,
            description=text,
            version=text,
            supported_interfaces=interfaces,
            capabilities=capabilities,
            default_input_modes=string_lists,
            default_output_modes=string_lists,
            skills=st.lists(skill, max_size=2).map(tuple),
            provider=st.none() | provider,
            documentation_url=st.none() | text,
            security_schemes=st.dictionaries(text, schemes, max_size=2),
            security_requirements=requirements,
            signatures=st.lists(signature, max_size=2).map(tuple),
            icon_url=st.none() | text,
        )
        self._by_class: dict[type, st.SearchStrategy[Any]] = {
            m.Message: message,
            m.Artifact: artifact,
            m.TaskStatus: status,
            m.Task: task,
            m.TaskStatusUpdateEvent: st.builds(
                m.TaskStatusUpdateEvent,
                task_id=text,
                context_id=text,
                status=status,
                metadata=metadata,
            ),
            m.TaskArtifactUpdateEvent: st.builds(
                m.TaskArtifactUpdateEvent,
                task_id=text,
                context_id=text,
                artifact=artifact,
                append=st.booleans(),
                last_chunk=st.booleans(),
                metadata=metadata,
            ),
            m.AuthenticationInfo: auth,
            m.TaskPushNotificationConfig: push,
            m.SendMessageConfiguration: send_config,
            m.SendMessageRequest: st.builds(
                m.SendMessageRequest,
                message=message,
                configuration=st.none() | send_config,
                metadata=metadata,
                tenant=tenant,
            ),
            m.GetTaskRequest: st.builds(
                m.GetTaskRequest,
                id=text,
                history_length=st.none() | (int32 if v1 else nonzero_int32),
                tenant=tenant,
            ),
            m.ListTasksRequest: st.builds(
                m.ListTasksRequest,
                context_id=text,
                status=st.sampled_from(m.TaskState),
                page_size=st.none() | int32,
                page_token=text,
                history_length=st.none() | int32,
                status_timestamp_after=st.none() | timestamps,
                include_artifacts=optional_bool,
                tenant=tenant,
            ),
            m.ListTasksResponse: st.builds(
                m.ListTasksResponse,
                tasks=st.lists(task, max_size=2).map(tuple),
                next_page_token=text,
                page_size=int32,
                total_size=int32,
            ),
            m.CancelTaskRequest: st.builds(
                m.CancelTaskRequest, id=text, metadata=metadata, tenant=tenant
            ),
            m.SubscribeToTaskRequest: st.builds(m.SubscribeToTaskRequest, id=text, tenant=tenant),
            m.GetTaskPushNotificationConfigRequest: st.builds(
                m.GetTaskPushNotificationConfigRequest, task_id=text, id=text, tenant=tenant
            ),
            m.DeleteTaskPushNotificationConfigRequest: st.builds(
                m.DeleteTaskPushNotificationConfigRequest, task_id=text, id=text, tenant=tenant
            ),
            m.ListTaskPushNotificationConfigsRequest: st.builds(
                m.ListTaskPushNotificationConfigsRequest,
                task_id=text,
                page_size=int32 if v1 else st.just(0),
                page_token=text if v1 else st.just(""),
                tenant=tenant,
            ),
            m.ListTaskPushNotificationConfigsResponse: st.builds(
                m.ListTaskPushNotificationConfigsResponse,
                configs=st.lists(push, max_size=2).map(tuple),
                next_page_token=text if v1 else st.just(""),
            ),
            m.GetExtendedAgentCardRequest: st.builds(m.GetExtendedAgentCardRequest, tenant=tenant),
            m.AgentInterface: interface,
            m.AgentProvider: provider,
            m.AgentExtension: extension,
            # v0.3 keeps this flag on the card (``supportsAuthenticatedExtendedCard``).
            m.AgentCapabilities: capabilities
            if v1
            else capabilities.map(lambda c: attrs.evolve(c, extended_agent_card=None)),
            m.SecurityRequirement: requirement,
            m.AgentSkill: skill,
            m.AgentCardSignature: signature,
            m.AgentCard: card,
        }
        self.parts = _parts(profile)
        self.security_schemes = schemes
        self.oauth_flows = flows

    def of(self, cls: type) -> st.SearchStrategy[Any]:
        """The strategy for one model class (every class a wire message can be)."""
        return self._by_class[cls]

    @property
    def classes(self) -> list[type]:
        return list(self._by_class)


V1_STRATEGIES = Strategies(Profile.V1)
V03_STRATEGIES = Strategies(Profile.V03)
