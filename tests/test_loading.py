"""Settings read at the edges: agent specs and retention give clear errors, never tracebacks."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from textwrap import dedent

import pytest

from a2a_trio import Agent
from a2a_trio.demo import agent as demo
from a2a_trio.loading import ConfigError, load_agent, retention_from
from a2a_trio.store import DEFAULT_RETENTION

AGENT_MODULE = """\
from a2a_trio import Agent

agent = Agent("Greeter", "Greets people")
helper = Agent("Helper", "Helps")
not_an_agent = 42
"""


def test_load_agent_by_module_and_attribute() -> None:
    assert load_agent("a2a_trio.demo:agent") is demo


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        (
            "a2a_trio.demo",
            "^agent 'a2a_trio.demo' names no attribute: give the module and the Agent's name,"
            " 'a2a_trio.demo:agent'$",
        ),
        (".demo:agent", "must look like 'package.module:attribute'"),
        ("no_such_module_here:agent", "cannot import 'no_such_module_here'"),
        ("a2a_trio.no_such:agent", "cannot import 'a2a_trio.no_such'.*No module named"),
        (
            "a2a_trio.demo:missing",
            r"^module 'a2a_trio.demo' has no attribute 'missing'"
            r" \(its agents: a2a_trio.demo:agent\)$",
        ),
        (
            "a2a_trio.demo:MAX_COUNTDOWN",
            "'a2a_trio.demo:MAX_COUNTDOWN' is int, not an a2a_trio Agent",
        ),
        ("json:loads", r"is function, not an a2a_trio Agent \(it has no Agent\)$"),
    ],
)
def test_bad_agent_specs_say_what_to_fix(spec: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        load_agent(spec)


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A current directory for the user's modules, off ``sys.path`` (as for a console script)."""
    monkeypatch.chdir(tmp_path)
    here = tmp_path.resolve()
    monkeypatch.setattr(sys, "path", [p for p in sys.path if Path(p or ".").resolve() != here])
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:  # the user's modules, imported fresh by each test
        del sys.modules[name]


def write(directory: Path, name: str, source: str) -> None:
    (directory / name).write_text(dedent(source))


def test_a_module_in_the_current_directory_is_found(user_dir: Path) -> None:
    write(user_dir, "cwd_agents.py", AGENT_MODULE)
    loaded = load_agent("cwd_agents:helper")
    assert isinstance(loaded, Agent)
    assert loaded.name == "Helper"
    assert sys.path[0] == str(user_dir)
    load_agent("cwd_agents:agent")
    assert sys.path.count(str(user_dir)) == 1  # added once, not per load


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("cwd_named.py:helper", "agent 'cwd_named.py:helper' is a file name: give its module"),
        ("./cwd_named.py", "agent './cwd_named.py' is a file name: give its module"),
        ("cwd_named", "agent 'cwd_named' names no attribute: give the module and the Agent's name"),
    ],
)
def test_a_file_name_or_a_lone_module_is_answered_with_the_spec_to_give(
    user_dir: Path, spec: str, message: str
) -> None:
    write(user_dir, "cwd_named.py", AGENT_MODULE)
    suggested = (
        "'cwd_named:helper'" if "helper" in spec else "'cwd_named:agent' or 'cwd_named:helper'"
    )
    with pytest.raises(ConfigError) as refused:
        load_agent(spec)
    assert str(refused.value) == f"{message}, {suggested}"


def test_a_file_in_a_subdirectory_is_named_as_its_dotted_module(user_dir: Path) -> None:
    (user_dir / "agents").mkdir()
    with pytest.raises(ConfigError) as refused:
        load_agent("agents/greeter.py:agent")
    assert str(refused.value) == (
        "agent 'agents/greeter.py:agent' is a file name: give its module, 'agents.greeter:agent'"
    )


def test_what_the_module_has_is_listed(user_dir: Path) -> None:
    write(user_dir, "cwd_listed.py", AGENT_MODULE)
    listed = "(its agents: cwd_listed:agent, cwd_listed:helper)"
    with pytest.raises(ConfigError) as missing:
        load_agent("cwd_listed:nope")
    assert str(missing.value) == f"module 'cwd_listed' has no attribute 'nope' {listed}"
    with pytest.raises(ConfigError) as wrong:
        load_agent("cwd_listed:not_an_agent")
    assert str(wrong.value) == f"'cwd_listed:not_an_agent' is int, not an a2a_trio Agent {listed}"


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"cwd_zero.py": "import json\nx = 1\ny = 1 / 0\n"},
            "importing 'cwd_zero' failed: ZeroDivisionError: division by zero"
            " (cwd_zero.py, line 3)",
        ),
        (  # raised inside the standard library: the user's line that called it
            {"cwd_json.py": "import json\n\nSETTINGS = json.loads('{')\n"},
            "importing 'cwd_json' failed: JSONDecodeError: Expecting property name enclosed in"
            " double quotes: line 1 column 2 (char 1) (cwd_json.py, line 3)",
        ),
        (  # raised in a helper module the user's module imports: where it was raised
            {
                "cwd_main.py": "import cwd_helper\n",
                "cwd_helper.py": "def f():\n    raise RuntimeError('no config')\n\nf()\n",
            },
            "importing 'cwd_main' failed: RuntimeError: no config (cwd_helper.py, line 2)",
        ),
        (
            {"cwd_syntax.py": "def f(:\n    pass\n"},
            "importing 'cwd_syntax' failed: SyntaxError: invalid syntax (cwd_syntax.py, line 1)",
        ),
        (  # a skill declared with a plain def: refused at its decorator, not at each task
            {
                "cwd_sync.py": "from a2a_trio import Agent\n\nagent = Agent('x')\n\n\n"
                "@agent.skill()\ndef greet(ctx):\n    return 'hi'\n"
            },
            "importing 'cwd_sync' failed: AgentMisuseError: skill 'greet' is a plain function:"
            " declare it as `async def greet(ctx: TaskContext)` (cwd_sync.py, line 6)",
        ),
        (  # a skill declared without the context parameter
            {
                "cwd_noctx.py": "from a2a_trio import Agent\n\nagent = Agent('x')\n\n\n"
                "@agent.skill\nasync def greet():\n    return 'hi'\n"
            },
            "importing 'cwd_noctx' failed: AgentMisuseError: skill 'greet' cannot take the"
            " task's context as its one argument (it takes ()): declare it as"
            " `async def greet(ctx: TaskContext)` (cwd_noctx.py, line 6)",
        ),
        (  # a dependency of the user's module is missing, not the module itself
            {"cwd_dep.py": "\nimport no_such_dependency_here\n"},
            "importing 'cwd_dep' failed: ModuleNotFoundError: No module named"
            " 'no_such_dependency_here' (cwd_dep.py, line 2)",
        ),
    ],
)
def test_a_module_failing_to_import_is_one_line_pointing_at_user_code(
    user_dir: Path, files: dict[str, str], message: str
) -> None:
    for name, source in files.items():
        write(user_dir, name, source)
    spec = next(iter(files)).removesuffix(".py") + ":agent"
    with pytest.raises(ConfigError) as failed:
        load_agent(spec)
    assert str(failed.value) == message
    assert failed.value.__cause__ is not None  # the user's traceback stays reachable


def test_retention_setting() -> None:
    assert retention_from(None) == DEFAULT_RETENTION
    assert retention_from("") == DEFAULT_RETENTION
    assert retention_from("90").terminal_ttl == timedelta(seconds=90)
    for bad in ("soon", "0", "-5"):
        with pytest.raises(ConfigError, match="positive number of seconds"):
            retention_from(bad)
