"""Create held tasks and poll their states, over one plain connection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from loadbench import payloads
from loadbench.client import A2A_HEADERS, Connection
from loadbench.scenario import FLOOR
from loadbench.servers import Server

POLL = 0.1


async def create_tasks(port: int, count: int, metadata: dict[str, Any]) -> list[str]:
    """Start ``count`` tasks with ``returnImmediately``; return their ids."""
    ids = []
    async with Connection(port) as conn:
        for _ in range(count):
            body = payloads.send_message("hold", metadata=metadata, return_immediately=True)
            _head, reply = await conn.post("/", body, A2A_HEADERS)
            ids.append(str(payloads.task_of(reply)["id"]))
    return ids


def hold_metadata(release: Path) -> dict[str, str]:
    """Metadata of a task the benchmark agent keeps WORKING until ``release`` exists."""
    return {"bench": "hold", "file": str(release)}


async def held_tasks(server: Server, count: int, release: Path) -> list[str]:
    """Ids of ``count`` held tasks to subscribe to; the raw ASGI floor has no tasks and holds a
    stream for any id, so it gets one placeholder."""
    if server.name == FLOOR:
        return ["floor"]
    return await create_tasks(server.port, count, hold_metadata(release))


async def states(port: int, task_ids: list[str]) -> dict[str, str]:
    """Each task's current state name."""
    found = {}
    async with Connection(port) as conn:
        for task_id in task_ids:
            _head, reply = await conn.post("/", payloads.get_task(task_id), A2A_HEADERS)
            found[task_id] = payloads.state_of(payloads.task_of(reply))
    return found


async def wait_completed(port: int, task_ids: list[str], *, within: float) -> dict[str, str]:
    """Poll until every task is COMPLETED or ``within`` seconds pass; return the last states."""
    last: dict[str, str] = {}
    with trio.move_on_after(within):
        for _poll in range(int(within / POLL) + 1):
            last = await states(port, task_ids)
            if all(state == "TASK_STATE_COMPLETED" for state in last.values()):
                break
            await trio.sleep(POLL)
    return last
