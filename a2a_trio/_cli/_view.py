"""What the command shows: a task folded from its events, rendered with rich.

``TaskView`` is plain state (no I/O): feed it the events of a stream, or a whole task, and it
keeps the latest status, the progress an agent reports (``metadata.progress`` of the status
message, as a2a_trio agents send it) and each artifact's text as its chunks arrive.
``render()`` turns that into a rich renderable, used both for the live view of ``stream`` and
for one-shot output.
"""

from __future__ import annotations

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

    def _status(self, status: m.TaskStatus) -> None:
        self.state = status.state
        if status.message is not None:
            self.status_text = parts_text(status.message.parts)
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


def tasks_table(tasks: tuple[m.Task, ...] | list[m.Task]) -> Table:
    table = Table("task", "context", "state", "updated", box=None, header_style="bold")
    for task in tasks:
        stamp = task.status.timestamp
        table.add_row(
            task.id,
            task.context_id,
            Text(task.status.state.name, STATE_STYLES.get(task.status.state, "blue")),
            stamp.isoformat(timespec="seconds") if stamp else "",
        )
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
