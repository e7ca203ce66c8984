"""The public namespace and its documentation do not drift apart."""

import re
from pathlib import Path

import a2a_trio
from a2a_trio import TaskContext, text_message
from a2a_trio.runtime._job import Incoming
from a2a_trio.store import ANONYMOUS

API_DOC = Path(__file__).parent.parent / "docs" / "api.md"


def test_all_is_sorted_and_resolvable() -> None:
    assert a2a_trio.__all__ == sorted(a2a_trio.__all__)
    for name in a2a_trio.__all__:
        assert hasattr(a2a_trio, name), name


def test_every_public_name_is_documented_and_nothing_else() -> None:
    documented = set(re.findall(r"^\| `([A-Za-z0-9_]+)` \|", API_DOC.read_text(), re.M))
    assert documented == set(a2a_trio.__all__)


def test_the_task_context_row_names_its_whole_public_api() -> None:
    """The row named ``message``, ``task``, ``update``, ``emit_artifact``, ``ask`` and
    ``reject`` only: ``accepted_output_modes`` and ``accepts`` (docs/agents.md) were added
    without it, as were the reading helpers.  Every public attribute of a context (its
    properties, its methods and what it sets itself) is named there, and nothing else."""
    [row] = re.findall(r"^\| `TaskContext` \|(.*)$", API_DOC.read_text(), re.M)
    named = set(re.findall(r"`([a-z_]+)", row))
    incoming = Incoming(text_message("hi"), accepted_output_modes=("text/plain",))
    ctx = TaskContext(None, incoming, caller=ANONYMOUS)
    public = {name for name in (*dir(TaskContext), *vars(ctx)) if not name.startswith("_")}
    assert named == public
