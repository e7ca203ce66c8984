"""Running one command: trio per command, failures mapped to exit codes and one-line errors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import trio
import typer

from ..client import ClientError
from ..errors import A2AError, AuthenticationRequiredError


class UsageProblem(Exception):
    """A command line or setting that cannot work (exit code 1)."""


class RuntimeProblem(Exception):
    """Something the command needs is unavailable (exit code 2)."""


def parse_headers(values: Sequence[str] | None) -> dict[str, str]:
    """``--header "Name: value"`` options as a dict; a malformed one is a usage problem."""
    headers: dict[str, str] = {}
    for value in values or ():
        name, colon, content = value.partition(":")
        if not colon or not name.strip():
            raise UsageProblem(f"--header {value!r} must look like 'Name: value'")
        headers[name.strip()] = content.strip()
    return headers


def run_command(fn: Callable[[], Awaitable[None]]) -> None:
    """Run one command under trio; map its failures to exit codes and one-line messages.

    Failures may arrive wrapped in exception groups (trio nurseries), hence ``except*``.
    """
    failure: tuple[int, str] | None = None
    try:
        trio.run(fn)
    except* UsageProblem as group:
        failure = (1, str(first_error(group)))
    except* A2AError as group:
        error = first_error(group)
        failure = (2, f"{type(error).__name__} ({error.code}): {error.message}")
        if isinstance(error, AuthenticationRequiredError):
            failure = (2, failure[1] + " (pass credentials with --token or --header)")
    except* (ClientError, RuntimeProblem) as group:
        failure = (2, str(first_error(group)))
    except* OSError as group:
        os_error = first_error(group)
        failure = (2, os_error.strerror or str(os_error))
    if failure is not None:
        message = " ".join(failure[1].split())  # one line, whatever the agent's text holds
        typer.echo(f"error: {message}", err=True)
        raise typer.Exit(failure[0])


def first_error[E: BaseException](group: BaseExceptionGroup[E]) -> E:
    """The first error in a (possibly nested) group: the one the message is about."""
    first: E | BaseExceptionGroup[E] = group
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    return first
