"""The task view the CLI renders, fed events synchronously (no terminal, no server)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from rich.console import Console

from a2a_trio import model as m
from a2a_trio._cli._view import TaskView, card_view, part_text, tasks_table


def shown(view: TaskView) -> str:
    console = Console(record=True, width=100, color_system=None)
    console.print(view.render())
    return console.export_text()


def status(state: m.TaskState, text: str = "", progress: float | None = None) -> m.TaskStatus:
    if not text and progress is None:
        return m.TaskStatus(state)
    metadata: m.JsonObject | None = {"progress": progress} if progress is not None else None
    message = m.text_message(text, role=m.Role.AGENT, metadata=metadata)
    return m.TaskStatus(state, message=message)


def chunk(text: str, *, append: bool, last: bool, name: str = "") -> m.TaskArtifactUpdateEvent:
    artifact = m.Artifact("a1", (m.TextPart(text),), name=name)
    return m.TaskArtifactUpdateEvent("t1", "c1", artifact, append=append, last_chunk=last)


def test_events_fold_into_status_progress_and_growing_artifacts() -> None:
    view = TaskView()
    view.apply(m.Task("t1", status(m.TaskState.SUBMITTED), context_id="c1"))
    view.apply(m.TaskStatusUpdateEvent("t1", "c1", status(m.TaskState.WORKING, "halfway", 0.5)))
    view.apply(chunk("one ", append=False, last=False, name="story"))
    text = shown(view)
    assert "task t1 WORKING  halfway" in text
    assert "50%" in text
    assert "story …" in text  # still growing
    assert "one" in text
    view.apply(chunk("two", append=True, last=True))
    view.apply(m.TaskStatusUpdateEvent("t1", "c1", status(m.TaskState.COMPLETED)))
    text = shown(view)
    assert "COMPLETED" in text
    assert "one two" in text
    assert "story …" not in text
    assert "%" not in text  # progress ends with the task


def test_a_status_without_message_clears_the_previous_text() -> None:
    view = TaskView()
    assert view.is_empty()
    view.apply(m.TaskStatusUpdateEvent("t1", "c1", status(m.TaskState.WORKING, "1...", 0.9)))
    assert not view.is_empty()
    view.apply(m.TaskStatusUpdateEvent("t1", "c1", status(m.TaskState.COMPLETED)))
    assert shown(view).strip() == "task t1 COMPLETED"


def test_progress_as_a_percentage_and_a_new_chunk_replaces() -> None:
    view = TaskView()
    view.apply(m.TaskStatusUpdateEvent("t1", "c1", status(m.TaskState.WORKING, "", 40)))
    assert view.progress == 0.4
    view.apply(chunk("old", append=False, last=True))
    view.apply(chunk("new", append=False, last=True))
    assert view.artifacts["a1"].text == "new"


def test_a_message_reply_is_shown_as_text() -> None:
    view = TaskView()
    view.apply(m.text_message("hello back", role=m.Role.AGENT))
    assert shown(view).strip() == "hello back"


def test_parts_as_text() -> None:
    assert part_text(m.DataPart({"a": [1, 2]})) == '{"a":[1,2]}'
    assert part_text(m.RawPart(b"12345", media_type="image/png", filename="x.png")) == (
        "[x.png: 5 bytes image/png]"
    )
    assert part_text(m.UrlPart("https://example.com/f")) == "https://example.com/f"


def test_tables_for_tasks_and_cards() -> None:
    console = Console(record=True, width=120, color_system=None)
    task = m.Task("t-1", m.TaskStatus(m.TaskState.FAILED), context_id="c-1")
    console.print(tasks_table([task]))
    card = m.AgentCard(
        name="Agent",
        description="does things",
        version="3",
        supported_interfaces=(m.AgentInterface("http://h/", "JSONRPC", "1.0"),),
        capabilities=m.AgentCapabilities(streaming=True),
        skills=(m.AgentSkill("s1", "Skill one", "first skill"),),
    )
    console.print(card_view(card))
    text = console.export_text()
    assert "t-1" in text
    assert "FAILED" in text
    assert "capabilities: streaming" in text
    assert "http://h/" in text
    assert "Skill one" in text


def listed(width: int | None) -> list[str]:
    """Two tasks with uuid-long ids as the table shows them for ``width`` (rich never cuts)."""
    stamp = datetime(2026, 11, 26, 2, 40, 12, tzinfo=UTC)
    tasks = [
        m.Task(
            f"{n}a4c1e3f-5e8b-4c6a-9d3e-2b1f0a9c8d7e",
            m.TaskStatus(state, timestamp=stamp),
            context_id=f"{n}c0ffee0-1111-4222-8333-944445555666",
        )
        for n, state in ((1, m.TaskState.COMPLETED), (2, m.TaskState.INPUT_REQUIRED))
    ]
    console = Console(record=True, width=1000, color_system=None)
    console.print(tasks_table(tasks, width=width))
    return [line.rstrip() for line in console.export_text().splitlines()]


@pytest.mark.parametrize(
    ("width", "columns", "context"),
    [
        (None, "task context state updated", "1c0ffee0-1111-4222-8333-944445555666"),
        (117, "task context state updated", "1c0ffee0-1111-4222-8333-944445555666"),
        (116, "task context state updated", "1c0ffee0-1111-4222-8333-9444455556…"),
        (90, "task context state updated", "1c0ffee0…"),
        (89, "task context state", "1c0ffee0-1111-4222-8333-9444455556…"),
        (70, "task context state", "1c0ffee0-1111-4…"),
        (63, "task context state", "1c0ffee0…"),
        (62, "task state", None),
        (20, "task state", None),
    ],
)
def test_task_ids_stay_whole_as_the_table_narrows(
    width: int | None, columns: str, context: str | None
) -> None:
    head, first, second = listed(width)
    assert " ".join(head.split()) == columns
    assert first.startswith("1a4c1e3f-5e8b-4c6a-9d3e-2b1f0a9c8d7e  ")
    assert second.startswith("2a4c1e3f-5e8b-4c6a-9d3e-2b1f0a9c8d7e  ")
    if context is not None:
        assert first.split()[1] == context
    if width is not None and width >= 52:  # an id, a state and the gap fit: so does the table
        assert max(len(head), len(first), len(second)) <= width
