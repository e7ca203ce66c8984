"""What the command shows: a task folded from its events, rendered with rich.

``TaskView`` is plain state (no I/O): feed it the events of a stream, or a whole task, and it
keeps the latest status, the progress an agent reports (``metadata.progress`` of the status
message, as a2a_trio agents send it) and each artifact's text as its chunks arrive.
``render()`` turns that into a rich renderable, used both for the live view of ``stream`` and
for one-shot output.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from .. import model as m
from ..wire import dumps

STATE_STYLES = {
    m.TaskState.COMPLETED: "bold green",
    m.TaskState.FAILED: "bold red",
    m.TaskState.REJECTED: "bold red",
    m.TaskState.CANCELED: "bold yellow",
    m.TaskState.INPUT_REQUIRED: "bold magenta",
    m.TaskState.AUTH_REQUIRED: "bold magenta",
}


def part_text(part: m.Part) -> str:
    """A part as one line of text: text as is, data as JSON, files by name and size or URL."""
    match part:
        case m.TextPart(text=text):
            return text
        case m.DataPart(data=data):
            return dumps(data).decode()
        case m.RawPart(raw=raw, media_type=media_type, filename=filename):
            return f"[{filename or 'file'}: {len(raw)} bytes {media_type}]".replace(" ]", "]")
        case m.UrlPart(url=url):
            return url
    raise TypeError(f"not a part: {part!r}")


def parts_text(parts: tuple[m.Part, ...]) -> str:
    return "".join(part_text(p) for p in parts)


@attrs.define
class ArtifactView:
    name: str
    text: str = ""
    done: bool = False


@attrs.define
class TaskView:
    """The state of one task as seen through its events."""

    task_id: str = ""
    context_id: str = ""
    state: m.TaskState | None = None
    status_text: str = ""
    progress: float | None = None
    """Fraction done (0..1), from the status message's ``metadata.progress`` when numeric."""
    artifacts: dict[str, ArtifactView] = attrs.field(factory=dict)
    replies: list[str] = attrs.field(factory=list)

    def apply(self, event: m.StreamEvent) -> None:
        """Fold one event (or a whole task, or a message) into the view."""
        match event:
            case m.Task():
                self.task_id, self.context_id = event.id, event.context_id
                self._status(event.status)
                self.artifacts = {
                    a.artifact_id: ArtifactView(a.name or a.artifact_id, parts_text(a.parts), True)
                    for a in event.artifacts
                }
            case m.TaskStatusUpdateEvent():
                self.task_id = self.task_id or event.task_id
                self._status(event.status)
            case m.TaskArtifactUpdateEvent(artifact=artifact):
                self.task_id = self.task_id or event.task_id
                text = parts_text(artifact.parts)
                view = self.artifacts.get(artifact.artifact_id)
                if view is None or not event.append:
                    name = artifact.name or (view.name if view else artifact.artifact_id)
                    self.artifacts[artifact.artifact_id] = view = ArtifactView(name)
                view.text += text
                view.done = event.last_chunk
            case m.Message():
                self.replies.append(parts_text(event.parts))

    def is_empty(self) -> bool:
        """Nothing to show yet: no task, artifact or reply has arrived."""
        return self.state is None and not self.artifacts and not self.replies

    def _status(self, status: m.TaskStatus) -> None:
        """Take a new status whole: its message (or none) replaces the previous one's text."""
        self.state = status.state
        self.status_text = parts_text(status.message.parts) if status.message else ""
        if status.message is not None:
            value = (status.message.metadata or {}).get("progress")
            if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
                self.progress = min(value if value <= 1 else value / 100, 1.0)
        if m.is_terminal(status.state):
            self.progress = None

    def render(self) -> RenderableType:
        """The view as rich renderables: a status line, artifact panels, agent replies."""
        items: list[RenderableType] = []
        if self.state is not None:
            line = Text.assemble(
                ("task ", "dim"),
                (self.task_id, "cyan"),
                " ",
                (self.state.name, STATE_STYLES.get(self.state, "bold blue")),
            )
            if self.status_text:
                line.append(f"  {self.status_text}", "italic")
            items.append(line)
        if self.progress is not None:
            bar = Table.grid(padding=(0, 1))
            bar.add_row(
                ProgressBar(total=1.0, completed=self.progress, width=30),
                Text(f"{self.progress:.0%}"),
            )
            items.append(bar)
        for view in self.artifacts.values():
            title = view.name + ("" if view.done else " …")
            items.append(Panel(Text(view.text), title=title, title_align="left", expand=False))
        items.extend(Text(reply) for reply in self.replies)
        return Group(*items)


SHORTEST_CONTEXT = 9
"""A shortened context id keeps 8 characters and an ellipsis, enough to tell tasks apart."""
GAP = 2
"""Spaces between two columns of a table (rich's padding of one on each side, no edges)."""


def tasks_table(tasks: Sequence[m.Task], *, width: int | None = None) -> Table:
    """Tasks as a table (task, context, state, updated) fitting ``width`` when it can.

    Task ids are never shortened or wrapped: they are what ``get`` and ``cancel`` take.  When
    ``width`` is too narrow, the context id is shortened with an ellipsis, then the update time
    is left out, then the context; below task and state the table is wider than ``width``
    rather than cut an id.  ``width=None`` (a pipe) keeps every value whole.
    """
    updated = [
        t.status.timestamp.isoformat(timespec="seconds") if t.status.timestamp else ""
        for t in tasks
    ]
    task_w = max([len("task"), *(len(t.id) for t in tasks)])
    context_w = max([len("context"), *(len(t.context_id) for t in tasks)])
    state_w = max([len("state"), *(len(t.status.state.name) for t in tasks)])
    updated_w = max([len("updated"), *map(len, updated)])
    show_updated, context_room = True, context_w
    if width is not None:
        room = width - task_w - state_w - 2 * GAP  # what is left for the context, with its gap
        context_room = min(context_w, room - updated_w - GAP)
        if context_room < SHORTEST_CONTEXT:
            show_updated, context_room = False, min(context_w, room)
    show_context = context_room >= min(SHORTEST_CONTEXT, context_w)

    table = Table(box=None, header_style="bold", pad_edge=False)
    table.add_column("task", no_wrap=True, min_width=task_w)
    if show_context:
        table.add_column("context", no_wrap=True, overflow="ellipsis", max_width=context_room)
    table.add_column("state", no_wrap=True, min_width=state_w)
    if show_updated:
        table.add_column("updated", no_wrap=True, min_width=updated_w)
    for task, stamp in zip(tasks, updated, strict=True):
        state = task.status.state
        cells: list[RenderableType] = [task.id]
        if show_context:
            cells.append(task.context_id)
        cells.append(Text(state.name, STATE_STYLES.get(state, "blue")))
        if show_updated:
            cells.append(stamp)
        table.add_row(*cells)
    return table


def card_view(card: m.AgentCard) -> RenderableType:
    head = Text.assemble((card.name, "bold"), " ", (card.version, "dim"), "\n", card.description)
    interfaces = Table("binding", "version", "url", box=None, header_style="bold")
    for iface in card.supported_interfaces:
        interfaces.add_row(iface.protocol_binding, iface.protocol_version, iface.url)
    skills = Table("skill", "name", "description", box=None, header_style="bold")
    for skill in card.skills:
        skills.add_row(skill.id, skill.name, skill.description)
    caps = card.capabilities
    flags = ", ".join(
        name
        for name, on in (
            ("streaming", caps.streaming),
            ("push notifications", caps.push_notifications),
            ("extended card", caps.extended_agent_card),
        )
        if on
    )
    return Group(head, Text(f"capabilities: {flags or 'none'}"), interfaces, skills)
