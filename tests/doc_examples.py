"""The python examples of README.md and docs/*.md, and the record of which tests run them.

A test that executes an example is decorated with ``@runs_examples(doc, index, ...)``;
``tests/test_docs_coverage.py`` fails when an example is run by no test, so a new example
cannot stay untested.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parent.parent
PYTHON_BLOCK = re.compile(r"^```(?:python|py)\n(.*?)^```", re.S | re.M)

RUN: set[tuple[str, int]] = set()
"""(doc, index) of every example a test imported so far declares it runs."""


def example_docs() -> list[str]:
    """README.md and every docs/*.md, relative to the repository root."""
    return ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]


def python_blocks(doc: str) -> list[str]:
    """The python examples of ``doc`` (``"README.md"``, ``"docs/agents.md"``), in order."""
    return PYTHON_BLOCK.findall((ROOT / doc).read_text())


def runs_examples[F: Callable[..., object]](doc: str, *indexes: int) -> Callable[[F], F]:
    """Record that the decorated test executes these examples of ``doc`` (which must exist)."""
    count = len(python_blocks(doc))
    missing = [index for index in indexes if index >= count]
    assert not missing, f"{doc} has {count} python examples, not {missing}"
    RUN.update((doc, index) for index in indexes)
    return lambda test: test


def run_block(doc: str, index: int) -> dict[str, Any]:
    """Execute an example as written, but for ``trio.run(main)``: the test awaits ``main()``.

    Returns the example's namespace (its ``main``, ``agent``...).
    """
    source = python_blocks(doc)[index]
    namespace: dict[str, Any] = {}
    exec(compile(source.replace("trio.run(main)", ""), f"{doc}[{index}]", "exec"), namespace)
    return namespace
