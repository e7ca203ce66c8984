"""Errors keep the states and roles they name as values until a binding spells them."""

from __future__ import annotations

from a2a_trio import model as m
from a2a_trio.errors import InvalidParamsError, Phrase, TaskNotCancelableError
from a2a_trio.wire import V03, V03_PROTO, V1

S = m.TaskState


def test_unspelled_messages_use_the_proto_names() -> None:
    error = TaskNotCancelableError(Phrase.of("Task t is already ", S.CANCELED))
    assert error.message == str(error) == "Task t is already TASK_STATE_CANCELED"
    assert error.spelled(V1.spell).message == error.message


def test_each_codec_spells_the_same_error_its_own_way() -> None:
    error = TaskNotCancelableError(Phrase.of("Task t is already ", S.CANCELED))
    assert error.spelled(V03.spell).message == "Task t is already canceled"
    spelled = error.spelled(V03_PROTO.spell)
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
    spelled = error.under("$.params").spelled(V03.spell)
    assert spelled.message == "$.params.message.role: must have role user"
    assert spelled.data == {"path": "$.params.message.role", "reason": "must have role user"}


def test_a_spelled_error_stays_spelled() -> None:
    error = InvalidParamsError(Phrase.of("must have role ", m.Role.USER), path="$.role")
    once = error.spelled(V03.spell)
    assert once.spelled(V1.spell).reason == "must have role user"
    assert once.at("$.request.role").message == "$.request.role: must have role user"


def test_plain_messages_are_left_alone() -> None:
    error = InvalidParamsError("pageSize must be between 1 and 100", path="$.pageSize")
    assert error.spelled(V03.spell) is error
