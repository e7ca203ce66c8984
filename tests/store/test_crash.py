"""Crash safety end to end: SIGKILL a real server mid-load, restart it, every acknowledged task
is there and consistent, and the tasks that were in flight are failed by the restart recovery.

The server is ``hypercorn -k trio a2a_trio.app:app`` in a subprocess with the store selected by
``A2A_TRIO_STORE``, serving the built-in demo agent (whose echo skill completes a task with the
message text as its artifact).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
import trio.lowlevel

from .conftest import Backend

HEADERS = {"A2A-Version": "1.0"}
SENDERS = 8
KILL_AFTER = 120  # acknowledged tasks before the SIGKILL
RUNNING_ON = re.compile(rb"Running on (http://127\.0\.0\.1:\d+)")


@asynccontextmanager
async def running_server(store_url: str) -> AsyncIterator[tuple[str, trio.Process]]:
    """A server process on a free port; yields its base URL and the process (killed at exit)."""
    env = {**os.environ, "A2A_TRIO_STORE": store_url}
    # --workers 0: serve in this very process (with workers hypercorn forks a child that a
    # SIGKILL of the parent would leave running).
    command = [sys.executable, "-m", "hypercorn", "-k", "trio", "-w", "0", "-b", "127.0.0.1:0"]
    process = await trio.lowlevel.open_process(
        [*command, "a2a_trio.app:app"], env=env, stderr=subprocess.PIPE
    )
    assert process.stderr is not None
    stderr = process.stderr
    ready = trio.Event()
    found: list[str] = []

    async def drain() -> None:  # keep reading so the server never blocks on a full pipe
        seen = b""
        async for chunk in stderr:
            seen += chunk
            match = RUNNING_ON.search(seen)
            if match and not ready.is_set():
                found.append(match[1].decode())
                ready.set()
        ready.set()  # the process ended: let the waiter see it failed

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drain)
            with trio.fail_after(60):  # generous: CI machines can be busy
                await ready.wait()
            assert found, "the server exited before it was ready"
            yield found[0], process
            process.kill()
    finally:
        process.kill()
        with trio.CancelScope(shield=True):
            await process.wait()


def send_message(number: int) -> dict[str, Any]:
    message = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": f"n{number}"}],
    }
    return {"jsonrpc": "2.0", "id": number, "method": "SendMessage", "params": {"message": message}}


def get_task(task_id: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}


async def load_until_killed(base_url: str, process: trio.Process) -> list[dict[str, Any]]:
    """Send messages from several clients; SIGKILL the server after ``KILL_AFTER`` answers."""
    acknowledged: list[dict[str, Any]] = []
    counter = iter(range(1_000_000))

    async def sender(client: httpx.AsyncClient) -> None:
        while True:
            try:
                response = await client.post("/", json=send_message(next(counter)))
            except httpx.TransportError:
                return  # the server is gone
            task = response.json()["result"]["task"]
            acknowledged.append(task)
            if len(acknowledged) >= KILL_AFTER and process.returncode is None:
                process.send_signal(signal.SIGKILL)

    async with (
        httpx.AsyncClient(base_url=base_url, headers=HEADERS, timeout=10) as client,
        trio.open_nursery() as nursery,
    ):
        for _ in range(SENDERS):
            nursery.start_soon(sender, client)
    return acknowledged


@pytest.mark.timeout(180)
async def test_every_acknowledged_task_survives_a_sigkill(sql_backend: Backend) -> None:
    async with running_server(sql_backend.url) as (base_url, process):
        acknowledged = await load_until_killed(base_url, process)
        assert await process.wait() == -signal.SIGKILL
    assert len(acknowledged) >= KILL_AFTER
    async with (
        running_server(sql_backend.url) as (base_url, _process),
        httpx.AsyncClient(base_url=base_url, headers=HEADERS, timeout=10) as client,
    ):
        for task in acknowledged:
            found = (await client.post("/", json=get_task(task["id"]))).json()
            assert "result" in found, found
            stored = found["result"]
            assert stored["status"]["state"] == task["status"]["state"] == "TASK_STATE_COMPLETED"
            assert stored["artifacts"] == task["artifacts"]
            assert stored["contextId"] == task["contextId"]
            assert [msg["messageId"] for msg in stored["history"]] == [
                msg["messageId"] for msg in task["history"]
            ]
        listed = await all_tasks(client)
    assert {task["id"] for task in acknowledged} <= set(listed)
    for task in listed.values():  # the ones in flight at the kill are whole too
        text = task["history"][0]["parts"][0]["text"]
        if task["status"]["state"] == "TASK_STATE_COMPLETED":
            assert task["artifacts"][0]["parts"] == [{"text": text}]
        else:  # recovery at start fails what the killed process left running
            assert task["status"]["state"] == "TASK_STATE_FAILED"
            assert "restarted" in task["status"]["message"]["parts"][0]["text"]


async def all_tasks(client: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    """Every task ListTasks reports, by id, following page tokens."""
    found: dict[str, dict[str, Any]] = {}
    params: dict[str, Any] = {"pageSize": 100, "includeArtifacts": True}
    while True:
        body = {"jsonrpc": "2.0", "id": 2, "method": "ListTasks", "params": params}
        page = (await client.post("/", json=body)).json()["result"]
        found |= {task["id"]: task for task in page["tasks"]}
        if not page["nextPageToken"]:
            return found
        params = {**params, "pageToken": page["nextPageToken"]}
