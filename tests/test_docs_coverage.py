"""Every python example in README.md and docs/ is executed by some test, and every command the
README shows exists with the options it shows."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
from doc_examples import ROOT, RUN, example_docs, python_blocks

from a2a_trio.cli import app

TESTS = Path(__file__).parent
A2A_TRIO = str(Path(sys.executable).with_name("a2a-trio"))


def test_every_python_example_is_run_by_a_test() -> None:
    for path in sorted(TESTS.rglob("test_*.py")):
        if "runs_examples(" in path.read_text():
            importlib.import_module(".".join(path.relative_to(TESTS).with_suffix("").parts))
    examples = {(doc, index) for doc in example_docs() for index in range(len(python_blocks(doc)))}
    assert sorted(examples - RUN) == []


COMMAND = re.compile(
    r"(a2a-trio [^`\n]+|scripts/[\w.]+(?: [^`\n)#]*)?|benchmarks/\w+\.py(?: [^`\n#]*)?)"
)
README_COMMANDS = sorted(
    {found.strip() for found in COMMAND.findall((ROOT / "README.md").read_text())}
)
ENV = {"COLUMNS": "200", "NO_COLOR": "1", "PATH": ""}


def test_the_readme_shows_commands() -> None:
    assert {"a2a-trio serve mymodule:agent", "scripts/postgres.sh start"} <= set(README_COMMANDS)


def test_the_readme_says_where_to_save_the_agent_it_serves() -> None:
    """``a2a-trio serve mymodule:agent`` imports ``mymodule.py``: the line before the README's
    agent must say to save it there, or a new user has a module to guess."""
    readme = (ROOT / "README.md").read_text()
    before_agent = readme[: readme.index(python_blocks("README.md")[0])].splitlines()
    assert before_agent[-3].startswith("Save this as `mymodule.py` ")


@pytest.mark.parametrize("command", README_COMMANDS)
def test_readme_command_exists_with_its_options(command: str) -> None:
    """``a2a-trio`` commands by their ``--help``; scripts by their source (case labels, flags)."""
    program, *words = command.split()
    options = [word.split("=")[0] for word in words if word.startswith("-")]
    if program == "a2a-trio":
        names = {c.name or getattr(c.callback, "__name__", "") for c in app.registered_commands}
        assert words[0] in names
        help_text = subprocess.run(
            [A2A_TRIO, words[0], "--help"], capture_output=True, text=True, check=True, env=ENV
        ).stdout
        assert [option for option in options if option not in help_text] == []
        return
    source = (ROOT / program).read_text()
    assert [option for option in options if option not in source] == []
    subcommands = [word for word in words if not word.startswith("-")]
    assert [word for word in subcommands if f"{word})" not in source] == []
