"""The configuration example in docs/bindings.md runs as written and does what the text says."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import trio

from a2a_trio import serve

DOC = Path(__file__).parent.parent.parent / "docs" / "bindings.md"


async def test_legacy_configuration_example(nursery: trio.Nursery) -> None:
    (source,) = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    namespace: dict[str, Any] = {}
    exec(compile(source, "docs/bindings.md", "exec"), namespace)
    url = await nursery.start(
        partial(serve, namespace["agent"], port=0, config=namespace["config"])
    )
    surface = "/agents/report-generator"
    envelope = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tasks/send",
        "params": {"message": {"role": "user", "parts": [{"type": "text", "text": "coffee"}]}},
    }
    async with httpx.AsyncClient(base_url=url) as http:
        card = (await http.get(surface + "/.well-known/agent.json")).json()
        assert [s["id"] for s in card["skills"]] == ["generate-report"]
        assert card["authentication"] == {"schemes": ["bearer"]}
        assert (await http.post(surface, json=envelope)).status_code == 401
        answer = await http.post(surface, json=envelope, headers={"Authorization": "Bearer t"})
    result = answer.json()["result"]
    assert result["artifacts"][0]["parts"][0]["text"] == "A report on coffee"
