"""The python examples in docs/model.md run as written (their asserts are the checks)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

MODEL_MD = Path(__file__).parent.parent.parent / "docs" / "model.md"
BLOCKS = re.findall(r"```python\n(.*?)```", MODEL_MD.read_text(), re.S)


def test_docs_have_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs(index: int) -> None:
    exec(compile(BLOCKS[index], f"docs/model.md[{index}]", "exec"), {})
