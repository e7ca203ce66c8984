"""``hypercorn a2a_trio.app:app``: serves the demo under the trio worker, refuses asyncio."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import trio

HYPERCORN = str(Path(sys.executable).with_name("hypercorn"))


async def test_trio_worker_serves_the_demo_agent() -> None:
    env = {**os.environ, "A2A_TRIO_STORE": "memory"}
    command = [HYPERCORN, "-k", "trio", "--bind", "127.0.0.1:0", "a2a_trio.app:app"]
    proc = await trio.lowlevel.open_process(command, stderr=subprocess.PIPE, env=env)
    try:
        assert proc.stderr is not None
        output = b""
        with trio.fail_after(30):
            while (found := re.search(rb"http://127\.0\.0\.1:\d+", output)) is None:
                output += await proc.stderr.receive_some()
        message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "yo"}]}
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
        async with httpx.AsyncClient(base_url=found[0].decode(), timeout=10) as client:
            card = (await client.get("/.well-known/agent-card.json")).json()
            assert [s["id"] for s in card["skills"]] == ["echo", "countdown", "ask"]
            reply = await client.post("/", json=body, headers={"A2A-Version": "1.0"})
            task = reply.json()["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"
            assert task["artifacts"][0]["parts"] == [{"text": "yo"}]
    finally:
        proc.terminate()
        with trio.fail_after(10):
            await proc.wait()


async def test_asyncio_worker_fails_at_once_saying_what_to_do() -> None:
    command = [HYPERCORN, "--bind", "127.0.0.1:0", "a2a_trio.app:app"]
    with trio.fail_after(60):
        result = await trio.run_process(
            command, capture_stdout=True, capture_stderr=True, check=False, env={**os.environ}
        )
    assert "hypercorn -k trio a2a_trio.app:app" in result.stderr.decode()
