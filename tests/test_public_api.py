"""The public namespace and its documentation do not drift apart."""

import re
from pathlib import Path

import a2a_trio

API_DOC = Path(__file__).parent.parent / "docs" / "api.md"


def test_all_is_sorted_and_resolvable() -> None:
    assert a2a_trio.__all__ == sorted(a2a_trio.__all__)
    for name in a2a_trio.__all__:
        assert hasattr(a2a_trio, name), name


def test_every_public_name_is_documented_and_nothing_else() -> None:
    documented = set(re.findall(r"^\| `([A-Za-z0-9_]+)` \|", API_DOC.read_text(), re.M))
    assert documented == set(a2a_trio.__all__)
