"""The task lifecycle as data: which state may follow which.

Invariants:
- COMPLETED, FAILED, CANCELED and REJECTED are terminal: nothing follows them.
- INPUT_REQUIRED and AUTH_REQUIRED are interrupted: the task waits for the client, then resumes
  (WORKING) or ends.
- UNSPECIFIED is never a state a task is put into.
- A state may "follow" itself (a repeated WORKING with a new progress message is a status update).

Every module that needs to know asks this table; ``check_transition`` raises and changes nothing.
"""

from __future__ import annotations

from typing import Final

from ._core import TaskState, proto_name

S = TaskState

TERMINAL_STATES: Final = frozenset({S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED})
INTERRUPTED_STATES: Final = frozenset({S.INPUT_REQUIRED, S.AUTH_REQUIRED})
_ENDINGS: Final = TERMINAL_STATES

ALLOWED_TRANSITIONS: Final[dict[TaskState, frozenset[TaskState]]] = {
    S.SUBMITTED: frozenset({S.SUBMITTED, S.WORKING} | INTERRUPTED_STATES | _ENDINGS),
    S.WORKING: frozenset({S.WORKING} | INTERRUPTED_STATES | _ENDINGS),
    S.INPUT_REQUIRED: frozenset({S.INPUT_REQUIRED, S.SUBMITTED, S.WORKING, S.AUTH_REQUIRED})
    | _ENDINGS,
    S.AUTH_REQUIRED: frozenset({S.AUTH_REQUIRED, S.SUBMITTED, S.WORKING, S.INPUT_REQUIRED})
    | _ENDINGS,
    S.COMPLETED: frozenset(),
    S.FAILED: frozenset(),
    S.CANCELED: frozenset(),
    S.REJECTED: frozenset(),
    S.UNSPECIFIED: frozenset(),
}


def is_terminal(state: TaskState) -> bool:
    return state in TERMINAL_STATES


def is_interrupted(state: TaskState) -> bool:
    return state in INTERRUPTED_STATES


def is_settled(state: TaskState) -> bool:
    """Terminal, or waiting for the client (input, auth): where a blocking send returns and a
    v0.3 stream ends."""
    return state in TERMINAL_STATES or state in INTERRUPTED_STATES


def transition_error(old: TaskState, new: TaskState) -> str | None:
    """Why ``old -> new`` is not allowed, or ``None`` when it is.  A store's refusal, seen by
    the runtime and in logs, never by a client: states go by their proto names, as in every
    message no binding spells."""
    if new is S.UNSPECIFIED:
        return f"a task cannot be put into {proto_name(new)}"
    if new in ALLOWED_TRANSITIONS[old]:
        return None
    if old in TERMINAL_STATES:
        return f"the task is already {proto_name(old)} (a terminal state)"
    return f"a task cannot go from {proto_name(old)} to {proto_name(new)}"
