"""What a handler hands over must be content every wire form and store can carry.

Model objects hold whatever Python allows: bytes or a 2**80 in a data part, a dict with int keys,
a string with a lone surrogate.  Encoding those fails later, in the middle of a store write or a
response.  The runtime checks handler content once, as it is written, and refuses it as the
agent's programming error before anything is stored or published.
"""

from __future__ import annotations

from collections.abc import Iterable

from .. import model as m
from ..errors import AgentMisuseError
from ..store import TaskUpdate


def check_update(update: TaskUpdate) -> None:
    """Raise ``AgentMisuseError`` naming the first value of ``update`` that is not plain JSON,
    or an artifact without the id or the part A2A requires of it."""
    messages = update.messages
    if update.status_message is not None:
        messages += (update.status_message,)
    artifacts = [write.artifact for write in update.artifacts]
    for artifact in artifacts:
        _check_artifact(artifact)
    check_content(messages, artifacts, update.metadata)


def _check_artifact(artifact: m.Artifact) -> None:
    """``artifact`` has what A2A v1.0 requires (``artifactId``, at least one part): without an
    id no client can tell it from another or append to it."""
    if not artifact.artifact_id:
        raise AgentMisuseError(
            "an artifact needs an artifact_id: build it with new_artifact(parts), or hand"
            " emit_artifact the content alone and it picks one"
        )
    if not artifact.parts:
        raise AgentMisuseError(f"artifact {artifact.artifact_id!r} has no parts: give it one")


def check_content(
    messages: Iterable[m.Message] = (),
    artifacts: Iterable[m.Artifact] = (),
    metadata: m.JsonObject | None = None,
) -> None:
    """Raise ``AgentMisuseError`` naming the first value that is not plain JSON.

    Every job write checks its content, so the values are walked together first, as one JSON
    array: one walk, and no names built.  Only when that finds a problem are they walked one
    by one, to name the first that has one.  (The array is one level deeper than the values
    in it: content nested exactly to the limit fails the first walk and passes the second.)
    """
    placed = _placed_values(messages, artifacts, metadata)
    if m.json_problem([value for value, _place in placed]) is None:
        return
    for value, place in placed:
        problem = m.json_problem(value)
        if problem is not None:
            raise AgentMisuseError(f"{_name(place)}: {problem}")


type _Place = tuple[str | m.Artifact, int, str]
"""Where a value sits, named only when it has a problem (:func:`_name`): its owner (the
update, a message or an artifact), the index of its part (-1: the owner's own field) and the
field."""


def _placed_values(
    messages: Iterable[m.Message], artifacts: Iterable[m.Artifact], metadata: m.JsonObject | None
) -> list[tuple[object, _Place]]:
    """Every value of the content a wire form or store must carry, with its place."""
    placed: list[tuple[object, _Place]] = [(metadata, ("the update", -1, "'s metadata"))]
    for message in messages:
        placed.append((message.metadata, ("a message", -1, "'s metadata")))
        _place_parts(placed, "a message", message.parts)
    for artifact in artifacts:
        _check_strings(artifact, -1, (artifact.name, artifact.description), "name and description")
        placed.append((artifact.metadata, (artifact, -1, " metadata")))
        placed.append(
            ([artifact.name, artifact.description], (artifact, -1, " name and description"))
        )
        _place_parts(placed, artifact, artifact.parts)
    return placed


def _place_parts(
    placed: list[tuple[object, _Place]], owner: str | m.Artifact, parts: Iterable[m.Part]
) -> None:
    for index, part in enumerate(parts):
        _check_strings(owner, index, (part.media_type, part.filename), "media_type and filename")
        placed.append((part.metadata, (owner, index, "metadata")))
        if isinstance(part, m.TextPart):
            _check_strings(owner, index, (part.text,), "text")
            placed.append((part.text, (owner, index, "text")))
        elif isinstance(part, m.DataPart):
            placed.append((part.data, (owner, index, "data")))
        elif isinstance(part, m.UrlPart):
            _check_strings(owner, index, (part.url,), "url")
        elif not isinstance(part.raw, bytes):
            raise AgentMisuseError(
                f"{_name((owner, index, 'raw'))}: must be bytes, not {type(part.raw).__name__}"
            )


def _check_strings(
    owner: str | m.Artifact, index: int, values: tuple[object, ...], field: str
) -> None:
    """Raise ``AgentMisuseError`` when one of ``values`` (a text field) is not a ``str``: a
    number there is JSON, but no A2A client reads it (the official SDK's refuses the event)."""
    for value in values:
        if not isinstance(value, str):
            where = _name((owner, index, f" {field}" if index < 0 else field))
            raise AgentMisuseError(
                f"{where}: must be a str, not {type(value).__name__} (convert it with str())"
            )


def _name(place: _Place) -> str:
    """``place`` in words: ``the update's metadata``, ``artifact 'a1' parts[0].data``."""
    owner, index, field = place
    label = f"artifact {owner.artifact_id!r}" if isinstance(owner, m.Artifact) else owner
    return f"{label} parts[{index}].{field}" if index >= 0 else f"{label}{field}"
