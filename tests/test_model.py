"""The model's own invariants: immutability, lifecycle table, convenience constructors."""

import uuid

import attrs
import pytest

from a2a_trio import model as m


def test_text_message_has_fresh_ids() -> None:
    a, b = m.text_message("hi"), m.text_message("hi")
    assert a.message_id != b.message_id
    assert a.parts == (m.TextPart("hi"),)
    assert a.role is m.Role.USER


def test_new_ids_are_random_uuid4_text() -> None:
    ids = [m.new_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for text in ids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text  # canonical lower-case 8-4-4-4-12 form
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
    # every variant nibble (8, 9, a, b) and the random bits around the fixed ones do occur
    assert {text[19] for text in ids} == set("89ab")
    assert len({text[14:18] for text in ids}) > 1000


def test_repeated_fields_are_tuples() -> None:
    msg = m.Message(message_id="1", role=m.Role.USER, parts=[m.TextPart("a")])
    assert isinstance(msg.parts, tuple)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        msg.message_id = "2"  # type: ignore[misc]


def test_naive_timestamp_is_refused() -> None:
    from datetime import datetime

    with pytest.raises(ValueError, match="timezone-aware"):
        m.TaskStatus(m.TaskState.WORKING, timestamp=datetime(2024, 1, 1))


def test_new_task_binds_ids_into_first_message() -> None:
    task = m.new_task(m.text_message("hi"))
    assert task.status.state is m.TaskState.SUBMITTED
    assert task.history[0].task_id == task.id
    assert task.history[0].context_id == task.context_id


@pytest.mark.parametrize("state", sorted(m.TERMINAL_STATES))
def test_terminal_states_are_final(state: m.TaskState) -> None:
    for new in m.TaskState:
        assert m.transition_error(state, new) is not None


def test_interrupted_task_can_resume() -> None:
    assert m.transition_error(m.TaskState.INPUT_REQUIRED, m.TaskState.WORKING) is None
    assert m.transition_error(m.TaskState.WORKING, m.TaskState.SUBMITTED) is not None
