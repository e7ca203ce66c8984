"""The python examples in docs/model.md run as written (their asserts are the checks)."""

from __future__ import annotations

import pytest
from doc_examples import python_blocks, runs_examples

BLOCKS = python_blocks("docs/model.md")


def test_docs_have_examples() -> None:
    assert len(BLOCKS) >= 2


@runs_examples("docs/model.md", *range(len(BLOCKS)))
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs(index: int) -> None:
    exec(compile(BLOCKS[index], f"docs/model.md[{index}]", "exec"), {})
