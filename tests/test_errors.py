"""Errors keep the states and roles they name as values until a binding spells them."""

from __future__ import annotations

from a2a_trio import model as m
from a2a_trio.errors import (
    FIELD,
    InvalidParamsError,
    Mention,
    Phrase,
    TaskNotCancelableError,
    UnsupportedOperationError,
    Vocabulary,
)
from a2a_trio.wire import V03, V03_PROTO, V1

S = m.TaskState


def test_unspelled_messages_use_the_proto_names() -> None:
    error = TaskNotCancelableError(Phrase.of("Task t is already ", S.CANCELED))
    assert error.message == str(error) == "Task t is already TASK_STATE_CANCELED"
    assert error.spelled(Vocabulary(V1.spell)).message == error.message


def test_each_codec_spells_the_same_error_its_own_way() -> None:
    error = TaskNotCancelableError(Phrase.of("Task t is already ", S.CANCELED))
    assert error.spelled(Vocabulary(V03.spell)).message == "Task t is already canceled"
    spelled = error.spelled(Vocabulary(V03_PROTO.spell))
    assert spelled.message == "Task t is already TASK_STATE_CANCELLED"
    assert (type(spelled), spelled.code, spelled.http_status) == (
        TaskNotCancelableError,
        -32002,
        409,
    )
    assert error.message == "Task t is already TASK_STATE_CANCELED"  # the original is unchanged


def test_a_reason_keeps_its_role_when_its_path_is_rerooted() -> None:
    """The runtime's paths are re-rooted (``under``, REST's ``as_sent``) before a binding
    spells the error; the role must still be a value by then."""
    error = InvalidParamsError(Phrase.of("must have role ", m.Role.USER), path="$.message.role")
    spelled = error.under("$.params").spelled(Vocabulary(V03.spell))
    assert spelled.message == "$.params.message.role: must have role user"
    assert spelled.data == {"path": "$.params.message.role", "reason": "must have role user"}


def test_a_spelled_error_stays_spelled() -> None:
    error = InvalidParamsError(Phrase.of("must have role ", m.Role.USER), path="$.role")
    once = error.spelled(Vocabulary(V03.spell))
    assert once.spelled(Vocabulary(V1.spell)).reason == "must have role user"
    assert once.at("$.request.role").message == "$.request.role: must have role user"


def test_plain_messages_are_left_alone() -> None:
    error = InvalidParamsError("pageSize must be between 1 and 100", path="$.pageSize")
    assert error.spelled(Vocabulary(V03.spell)) is error


def test_a_reason_names_its_field_as_its_path_does_after_any_respelling() -> None:
    error = InvalidParamsError(Phrase.of(FIELD, " must not be negative"), path="$.historyLength")
    assert error.message == "$.historyLength: historyLength must not be negative"
    sent = error.under("$.params").at("$.configuration.history_length")
    assert sent.data == {
        "path": "$.configuration.history_length",
        "reason": "history_length must not be negative",
    }
    role = InvalidParamsError(Phrase.of(FIELD, " must be ", m.Role.USER), path="$.role")
    assert role.spelled(Vocabulary(V03.spell)).at("$.message.role").reason == "role must be user"


def test_a_vocabulary_names_methods_its_own_way_or_as_v1_does() -> None:
    error = UnsupportedOperationError(Phrase.of("use ", Mention.STREAM))
    assert error.message == "use SendStreamingMessage"
    legacy = Vocabulary(V03.spell, {Mention.STREAM: "tasks/sendSubscribe"})
    assert error.spelled(legacy).message == "use tasks/sendSubscribe"
    assert error.spelled(Vocabulary(V03.spell)).message == "use SendStreamingMessage"
