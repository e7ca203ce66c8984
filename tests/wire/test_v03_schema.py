"""What ``V03`` writes validates against the official v0.3 JSON schema.

``schemas/a2a-v0.3-schema.json`` is the v0.3.0 schema shipped with the specification
(``/work/shared/spec/a2a-v0.3-schema.json``), kept here so the test runs on a clean checkout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from strategies import V03_STRATEGIES

from a2a_trio import model as m
from a2a_trio.wire import V03

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "a2a-v0.3-schema.json").read_text())

# model class -> the v0.3 schema definition its V03 form is an instance of
DEFINITIONS = {
    m.Task: "Task",
    m.Message: "Message",
    m.Artifact: "Artifact",
    m.TaskStatus: "TaskStatus",
    m.TaskStatusUpdateEvent: "TaskStatusUpdateEvent",
    m.TaskArtifactUpdateEvent: "TaskArtifactUpdateEvent",
    m.AgentCard: "AgentCard",
    m.AgentSkill: "AgentSkill",
    m.SendMessageRequest: "MessageSendParams",
    m.GetTaskRequest: "TaskQueryParams",
    m.CancelTaskRequest: "TaskIdParams",
    m.SubscribeToTaskRequest: "TaskIdParams",
    m.TaskPushNotificationConfig: "TaskPushNotificationConfig",
    m.GetTaskPushNotificationConfigRequest: "GetTaskPushNotificationConfigParams",
    m.DeleteTaskPushNotificationConfigRequest: "DeleteTaskPushNotificationConfigParams",
    m.ListTaskPushNotificationConfigsRequest: "ListTaskPushNotificationConfigParams",
}
CHECK = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _validator(definition: str) -> Any:
    schema = {"$ref": f"#/definitions/{definition}", "definitions": SCHEMA["definitions"]}
    return jsonschema.Draft7Validator(schema)


@pytest.mark.parametrize("cls", list(DEFINITIONS), ids=lambda c: c.__name__)
def test_v03_output_matches_the_schema(cls: type) -> None:
    validator = _validator(DEFINITIONS[cls])

    @CHECK
    @given(V03_STRATEGIES.of(cls))
    def check(value: Any) -> None:
        validator.validate(V03.encode(value))

    check()


def test_push_config_list_matches_the_schema() -> None:
    result = SCHEMA["definitions"]["ListTaskPushNotificationConfigSuccessResponse"]["properties"]
    validator = jsonschema.Draft7Validator(
        {**result["result"], "definitions": SCHEMA["definitions"]}
    )
    configs = m.ListTaskPushNotificationConfigsResponse(
        configs=[m.TaskPushNotificationConfig(url="https://hook", task_id="t", id="p")]
    )
    validator.validate(V03.encode(configs))
