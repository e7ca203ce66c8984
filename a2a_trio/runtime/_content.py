"""What a handler hands over must be content every wire form and store can carry.

Model objects hold whatever Python allows: bytes or a 2**80 in a data part, a dict with int keys,
a string with a lone surrogate.  Encoding those fails later, in the middle of a store write or a
response.  The runtime checks handler content once, as it is written, and refuses it as the
agent's programming error before anything is stored or published.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator

from .. import model as m
from ..errors import AgentMisuseError
from ..store import TaskUpdate


def check_update(update: TaskUpdate) -> None:
    """Raise ``AgentMisuseError`` naming the first value of ``update`` that is not plain JSON."""
    messages = update.messages
    if update.status_message is not None:
        messages += (update.status_message,)
    check_content(messages, [write.artifact for write in update.artifacts], update.metadata)


def check_content(
    messages: Collection[m.Message] = (),
    artifacts: Collection[m.Artifact] = (),
    metadata: m.JsonObject | None = None,
) -> None:
    """Raise ``AgentMisuseError`` naming the first value that is not plain JSON.

    Every job write checks its content, so the values are walked together first, as one JSON
    array: one walk, and no names built.  Only when that finds a problem are they walked one
    by one, to name the first that has one.  (The array is one level deeper than the values
    in it: content nested exactly to the limit fails the first walk and passes the second.)
    """
    if m.json_problem(_all_values(messages, artifacts, metadata)) is None:
        return
    for where, value in _values(messages, artifacts, metadata):
        problem = m.json_problem(value)
        if problem is not None:
            raise AgentMisuseError(f"{where}: {problem}")


def _all_values(
    messages: Iterable[m.Message], artifacts: Iterable[m.Artifact], metadata: m.JsonObject | None
) -> list[object]:
    """The values :func:`_values` names, unnamed."""
    values: list[object] = [metadata]
    for artifact in artifacts:
        values += (artifact.name, artifact.description)
    contents: tuple[m.Message | m.Artifact, ...] = (*messages, *artifacts)
    for content in contents:
        values.append(content.metadata)
        for part in content.parts:
            values.append(part.metadata)
            if isinstance(part, m.TextPart):
                values.append(part.text)
            elif isinstance(part, m.DataPart):
                values.append(part.data)
    return values


def _values(
    messages: Iterable[m.Message], artifacts: Iterable[m.Artifact], metadata: m.JsonObject | None
) -> Iterator[tuple[str, object]]:
    yield "the update's metadata", metadata
    for message in messages:
        yield "a message's metadata", message.metadata
        yield from _part_values("a message", message.parts)
    for artifact in artifacts:
        name = f"artifact {artifact.artifact_id!r}"
        yield f"{name} metadata", artifact.metadata
        yield f"{name} name and description", [artifact.name, artifact.description]
        yield from _part_values(name, artifact.parts)


def _part_values(owner: str, parts: Iterable[m.Part]) -> Iterator[tuple[str, object]]:
    for index, part in enumerate(parts):
        where = f"{owner} parts[{index}]"
        yield f"{where}.metadata", part.metadata
        if isinstance(part, m.TextPart):
            yield f"{where}.text", part.text
        elif isinstance(part, m.DataPart):
            yield f"{where}.data", part.data
