"""Error messages of the command: an error that does not say why is completed by its cause."""

from __future__ import annotations

import ssl
from itertools import pairwise

import pytest
import trio
import typer

from a2a_trio._cli._running import INTERRUPTED, describe, in_cli_terms, run_command
from a2a_trio.client import AgentCardError


def chained(*errors: BaseException) -> BaseException:
    """``errors[0]`` raised from ``errors[1]``, raised from ``errors[2]``..."""
    for outer, inner in pairwise(errors):
        outer.__cause__ = inner
    return errors[0]


def test_a_message_that_says_why_is_kept() -> None:
    assert describe(chained(RuntimeError("no route"), OSError("ignored"))) == "no route"


def test_an_empty_reason_is_taken_from_the_causes() -> None:
    error = chained(RuntimeError("fetching x: "), ConnectionError(""), TimeoutError("slow peer"))
    assert describe(error) == "fetching x: TimeoutError: slow peer"
    assert describe(chained(RuntimeError(""), ConnectionError(""))) == "ConnectionError"
    assert describe(RuntimeError("fetching x:")) == "fetching x: RuntimeError"


def test_tls_failures_are_named() -> None:
    tls = ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number (_ssl.c:1020)")
    tls.reason = "WRONG_VERSION_NUMBER"  # set by the ssl module on real failures
    assert describe(chained(RuntimeError("fetching x: "), ConnectionError(""), tls)) == (
        "fetching x: TLS handshake failed: [SSL: WRONG_VERSION_NUMBER] wrong version number"
        " (is it a plain http:// server?)"
    )


def test_the_trust_origin_advice_is_built_from_the_error_not_from_its_text() -> None:
    """Before: the command found ``trusted_origins=[...]`` in the client's message and replaced
    it; an error carrying the origin in another wording got no advice at all."""
    reason = "the agent offers JSONRPC 1.0 only at https://api.example.com/rpc: not used"
    error = AgentCardError(reason, untrusted_origin="https://api.example.com")
    assert error.reason == reason
    assert str(error) == f"{reason} (to use it, pass trusted_origins=['https://api.example.com'])"
    assert in_cli_terms(error, credentials=False) == (
        f"{reason} (to use it, pass --trust-origin https://api.example.com)"
    )
    assert in_cli_terms(AgentCardError(reason), credentials=False) == reason


def test_ctrl_c_inside_a_nursery_exits_130_without_a_traceback() -> None:
    """A KeyboardInterrupt reaching the command wrapped in a nursery's exception group was a
    traceback; bare, typer already made it 130."""

    async def interrupted() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.sleep_forever)
            raise KeyboardInterrupt

    with pytest.raises(typer.Exit) as stopped:
        run_command(interrupted)
    assert stopped.value.exit_code == INTERRUPTED == 130
