"""Settings read at the edges: agent specs and retention give clear errors, never tracebacks."""

from datetime import timedelta

import pytest

from a2a_trio.demo import agent as demo
from a2a_trio.loading import ConfigError, load_agent, retention_from
from a2a_trio.store import DEFAULT_RETENTION


def test_load_agent_by_module_and_attribute() -> None:
    assert load_agent("a2a_trio.demo:agent") is demo


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("a2a_trio.demo", "must look like 'package.module:attribute'"),
        ("no_such_module_here:agent", "cannot import 'no_such_module_here'"),
        ("a2a_trio.demo:missing", "is nothing, not an a2a_trio Agent"),
        ("a2a_trio.demo:MAX_COUNTDOWN", "is int, not an a2a_trio Agent"),
    ],
)
def test_bad_agent_specs_say_what_to_fix(spec: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        load_agent(spec)


def test_retention_setting() -> None:
    assert retention_from(None) == DEFAULT_RETENTION
    assert retention_from("") == DEFAULT_RETENTION
    assert retention_from("90").terminal_ttl == timedelta(seconds=90)
    for bad in ("soon", "0", "-5"):
        with pytest.raises(ConfigError, match="positive number of seconds"):
            retention_from(bad)
