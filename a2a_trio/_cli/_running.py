"""Running one command: trio per command, failures mapped to exit codes and one-line errors."""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable, Sequence

import httpx
import trio
import typer

from .._trust import tls_failure
from ..client import AgentCardError, ClientError, TransportError
from ..errors import A2AError, AuthenticationRequiredError, TrustStoreError
from . import INTERRUPTED


class UsageProblem(Exception):
    """A command line or setting that cannot work (exit code 1)."""


class RuntimeProblem(Exception):
    """Something the command needs is unavailable (exit code 2)."""


TASK_DID_NOT_COMPLETE = 3
"""The exit code of ``send``, ``stream`` and ``subscribe`` when the task they showed ended failed,
rejected or canceled: the call worked, the task did not."""


def parse_headers(values: Sequence[str] | None) -> dict[str, str]:
    """``--header "Name: value"`` options as a dict; a malformed one is a usage problem."""
    headers: dict[str, str] = {}
    for value in values or ():
        name, colon, content = value.partition(":")
        if not colon or not name.strip():
            raise UsageProblem(f"--header {value!r} must look like 'Name: value'")
        headers[name.strip()] = content.strip()
    return headers


def run_command(fn: Callable[[], Awaitable[None]], *, credentials: bool = False) -> None:
    """Run one command under trio; map its failures to exit codes and one-line messages.

    ``credentials`` says whether the command sends any, so a refusal says to pass them or to
    check them.  Ctrl-C exits 130 without a traceback.  Failures may arrive wrapped in exception
    groups (trio nurseries), hence ``except*``.
    """
    failure: tuple[int, str] | None = None
    interrupted = False
    try:
        trio.run(fn)
    except* KeyboardInterrupt:  # Ctrl-C, also from inside a nursery: 130, as a shell says
        interrupted = True
    except* (UsageProblem, TrustStoreError) as group:
        failure = (1, str(first_error(group)))
    except* A2AError as group:
        error = first_error(group)
        failure = (2, f"{type(error).__name__} ({error.code}): {error.message}{_notes(error)}")
        if isinstance(error, AuthenticationRequiredError):
            failure = (2, f"{failure[1]} ({credentials_hint(credentials)})")
    except* (ClientError, RuntimeProblem) as group:
        problem = first_error(group)
        failure = (2, in_cli_terms(problem, credentials=credentials) + _notes(problem))
    except* OSError as group:
        os_error = first_error(group)
        failure = (2, os_error.strerror or describe(os_error))
    if interrupted:
        raise typer.Exit(INTERRUPTED)
    if failure is not None:
        message = " ".join(failure[1].split())  # one line, whatever the agent's text holds
        typer.echo(f"error: {message}", err=True)
        raise typer.Exit(failure[0])


def _notes(error: BaseException) -> str:
    """What the command added to an error on its way out (``add_note``), to print after it."""
    return "".join(f" {note}" for note in getattr(error, "__notes__", ()))


def credentials_hint(given: bool) -> str:
    """What to do when the agent refuses a call for its credentials."""
    if given:
        return "check the credentials given with --token, $A2A_TOKEN or --header"
    return "pass credentials with --token or --header"


def in_cli_terms(error: ClientError | RuntimeProblem, *, credentials: bool) -> str:
    """The error's message, with what to do said in the command's options."""
    if isinstance(error, AgentCardError) and error.untrusted_origin:
        return f"{error.reason} (to use it, pass --trust-origin {error.untrusted_origin})"
    message = describe(error)
    if isinstance(error, TransportError | AgentCardError) and error.status_code == 403:
        return f"{message} (access denied: {credentials_hint(credentials)})"
    if isinstance(error.__cause__, httpx.TimeoutException):
        return f"{message} (to wait longer, pass --timeout SECONDS)"
    return message


def first_error[E: BaseException](group: BaseExceptionGroup[E]) -> E:
    """The first error in a (possibly nested) group: the one the message is about."""
    first: E | BaseExceptionGroup[E] = group
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    return first


def describe(error: BaseException) -> str:
    """The error's message, completed by its cause when it does not say why it failed.

    httpx raises some connection failures with an empty message (a TLS handshake with a plain
    HTTP server): the client then names only the exception's type (``fetching ...:
    ConnectError``), and the reason is further down the cause chain.
    """
    message = str(error).strip()
    cause = error.__cause__
    bare = type(cause).__name__ if cause is not None and not str(cause).strip() else ""
    if bare and message.endswith(bare):
        message = message.removesuffix(bare).rstrip()
    elif message and not message.endswith(":"):
        return message
    reason = _reason(error)
    return f"{message} {reason}" if message else reason


def _reason(error: BaseException) -> str:
    """The first cause (or context) that says something: TLS failures named as such."""
    seen: set[int] = set()
    cause: BaseException | None = error.__cause__ or error.__context__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ssl.SSLError):
            return tls_failure(cause)
        if str(cause).strip():
            return f"{type(cause).__name__}: {str(cause).strip()}"
        cause = cause.__cause__ or cause.__context__
    root = error.__cause__ or error.__context__ or error
    return type(root).__name__
