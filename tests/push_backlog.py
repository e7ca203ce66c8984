"""The push backlog as the tests look at it, without holding any of it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

from a2a_trio.store import PushBacklog, TaskStore

LAPSED: Final = datetime(2000, 1, 1, tzinfo=UTC)
"""A claim's end long past: a claim until then leaves the task free for the next claimant."""


async def lagging(store: TaskStore) -> tuple[PushBacklog, ...]:
    """The tasks whose webhooks were not sent every logged event, as a sender holding none of
    them sees them (its claims lapse at once)."""
    return await store.claim_push_backlog("onlooker", until=LAPSED)
