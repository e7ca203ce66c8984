"""Golden tests: the JSON examples of the two specification texts, decoded and written back.

Each fixture under ``golden/`` names the section it comes from.  ``expected`` lists the documented
normalisations (``docs/model.md``) between the example and what a2a_trio writes; without it the
re-encoded JSON must equal the example exactly.  ``golden/rejected`` holds examples the texts get
wrong (a REQUIRED field left out, a v0.3 name in a v1.0 example, ...): they must fail with a clear
``InvalidParamsError``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from a2a_trio import model as m
from a2a_trio.errors import InvalidParamsError
from a2a_trio.wire import V03, V1, dumps, loads

GOLDEN = Path(__file__).parent / "golden"

Codec = tuple[Callable[[Any], Any], Callable[[Any], Any]]


def _v1_codec(kind: str) -> Codec:
    if kind == "send_result":
        return V1.decode_send_result, V1.encode_send_result
    if kind == "stream_response":
        return V1.decode_stream_response, V1.encode_stream_response
    cls = getattr(m, kind)
    return (lambda data: V1.decode(data, cls)), V1.encode


def _v03_codec(kind: str) -> Codec:
    if kind == "send_result":
        return V03.decode_send_result, V03.encode_send_result
    if kind == "stream_event":

        def decode(data: Any) -> tuple[m.StreamEvent, bool]:
            return V03.decode_stream_event(data)

        def encode(pair: tuple[m.StreamEvent, bool]) -> dict[str, Any]:
            return V03.encode_stream_event(pair[0], final=pair[1])

        return decode, encode
    cls = getattr(m, kind)
    return (lambda data: V03.decode(data, cls)), V03.encode


CODECS = {"v1": _v1_codec, "v03": _v03_codec}


def _steps(path: str) -> list[str | int]:
    return [int(i) if i else k for k, i in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path)]


def _apply(wire: Any, edits: dict[str, Any]) -> Any:
    """The example with the documented normalisations applied (dotted paths, ``[i]`` indexes)."""
    out = copy.deepcopy(wire)
    for path in edits.get("drop", []):
        *parents, last = _steps(path)
        node = out
        for step in parents:
            node = node[step]
        del node[last]
    for path, value in edits.get("set", {}).items():
        *parents, last = _steps(path)
        node = out
        for step in parents:
            node = node[step]
        node[last] = value
    return out


def _fixtures(folder: str) -> list[Path]:
    return sorted((GOLDEN / folder).glob("*.json"))


@pytest.mark.parametrize(
    "fixture", _fixtures("v1") + _fixtures("v03"), ids=lambda p: f"{p.parent.name}/{p.stem}"
)
def test_example_round_trips(fixture: Path) -> None:
    spec = json.loads(fixture.read_text())
    decode, encode = CODECS[fixture.parent.name](spec["type"])
    value = decode(spec["wire"])
    written = loads(dumps(encode(value)))
    assert written == _apply(spec["wire"], spec.get("expected", {}))
    # What a2a_trio writes is a fixed point (sub-millisecond digits are cut on the first write).
    assert loads(dumps(encode(decode(written)))) == written


@pytest.mark.parametrize("fixture", _fixtures("rejected"), ids=lambda p: p.stem)
def test_wrong_example_is_refused_clearly(fixture: Path) -> None:
    spec = json.loads(fixture.read_text())
    decode, _encode = CODECS[spec["codec"]](spec["type"])
    with pytest.raises(InvalidParamsError) as caught:
        decode(spec["wire"])
    assert caught.value.path == spec["path"]
    assert caught.value.reason.startswith(spec["reason"])


def test_every_fixture_names_its_source() -> None:
    fixtures = _fixtures("v1") + _fixtures("v03") + _fixtures("rejected")
    assert len(fixtures) >= 30
    for fixture in fixtures:
        assert json.loads(fixture.read_text())["source"].startswith("a2a-v"), fixture
