"""The python examples in docs/client.md run as written against the demo agent, with the output
the text shows; docs/cli.md documents exactly the commands the CLI has."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from a2a_trio import client, serve
from a2a_trio.cli import app
from a2a_trio.demo import agent

DOCS = Path(__file__).parent.parent.parent / "docs"
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
RUN_LINE = re.compile(r"^trio\.run\(main, .*\)$", re.M)


def blocks(name: str) -> list[str]:
    return BLOCK.findall((DOCS / name).read_text())


@pytest.fixture
async def demo_url(nursery: trio.Nursery) -> str:
    url: str = await nursery.start(partial(serve, agent, port=0))
    return url


async def run_block(index: int, url: str, capsys: pytest.CaptureFixture[str]) -> str:
    source = blocks("client.md")[index]
    assert RUN_LINE.search(source), "each example ends by running main()"
    namespace: dict[str, Any] = {}
    exec(compile(RUN_LINE.sub("", source), f"client.md[{index}]", "exec"), namespace)
    with trio.fail_after(30):
        await namespace["main"](url)
    return capsys.readouterr().out


async def test_connecting(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = await run_block(0, demo_url, capsys)
    assert out == "a2a_trio demo via JSONRPC\nCOMPLETED hello\n"


async def test_options(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert await run_block(1, demo_url, capsys) == "HTTP+JSON\n"


async def test_streaming(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = await run_block(2, demo_url, capsys)
    assert out == "status WORKING\nchunk 1\nchunk liftoff\nchunk done\nstatus COMPLETED\n"


async def test_tasks(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = await run_block(3, demo_url, capsys)
    assert out == "INPUT_REQUIRED\nNice to meet you, Ada!\nTrue COMPLETED\n"


async def test_subscribe_and_cancel(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert await run_block(4, demo_url, capsys) == "CANCELED\n"


async def test_errors(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert (await run_block(5, demo_url, capsys)).startswith("-32001 ")


def test_sse_parser_example(capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(blocks("client.md")[6], "client.md[6]", "exec"), {})
    assert capsys.readouterr().out == "[('7', '{\"a\": 1}'), ('7', 'split')] 1\n"


def test_cli_docs_cover_every_command() -> None:
    text = (DOCS / "cli.md").read_text()
    documented = set(re.findall(r"^### `a2a-trio (\w+)", text, re.M))
    commands = {
        c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands
    }
    assert documented == commands


def test_client_docs_name_every_public_name() -> None:
    text = (DOCS / "client.md").read_text()
    missing = [name for name in client.__all__ if f"`{name}" not in text]
    assert missing == []
