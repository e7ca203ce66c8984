"""The configuration example in docs/bindings.md runs as written and does what the text says."""

from __future__ import annotations

from functools import partial
from typing import Any

import httpx
import trio
from doc_examples import python_blocks, runs_examples

from a2a_trio import serve


@runs_examples("docs/bindings.md", 0)
async def test_legacy_configuration_example(nursery: trio.Nursery) -> None:
    (source,) = python_blocks("docs/bindings.md")
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
