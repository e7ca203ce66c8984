"""The python examples in docs/client.md run as written against the demo agent, with the output
the text shows; docs/cli.md documents exactly the commands the CLI has."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
from doc_examples import python_blocks, runs_examples

from a2a_trio import client, serve
from a2a_trio.cli import app
from a2a_trio.demo import agent

from .test_signed_card import PUBLIC

DOCS = Path(__file__).parent.parent.parent / "docs"
RUN_LINE = re.compile(r"^trio\.run\(main, .*\)$", re.M)


@pytest.fixture
async def demo_url(nursery: trio.Nursery) -> str:
    url: str = await nursery.start(partial(serve, agent, port=0))
    return url


async def run_block(index: int, url: str, capsys: pytest.CaptureFixture[str]) -> str:
    source = python_blocks("docs/client.md")[index]
    assert RUN_LINE.search(source), "each example ends by running main()"
    namespace: dict[str, Any] = {}
    exec(compile(RUN_LINE.sub("", source), f"client.md[{index}]", "exec"), namespace)
    with trio.fail_after(30):
        await namespace["main"](url)
    return capsys.readouterr().out


@runs_examples("docs/client.md", 0)
async def test_connecting(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = await run_block(0, demo_url, capsys)
    assert out == "a2a_trio demo via JSONRPC\nCOMPLETED hello\n"


@runs_examples("docs/client.md", 1)
async def test_options(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert await run_block(1, demo_url, capsys) == "HTTP+JSON\n"


@runs_examples("docs/client.md", 2)
async def test_streaming(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = await run_block(2, demo_url, capsys)
    assert out == "status WORKING\nchunk 1\nchunk liftoff\nchunk done\nstatus COMPLETED\n"


@runs_examples("docs/client.md", 3)
async def test_tasks(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = await run_block(3, demo_url, capsys)
    assert out == "INPUT_REQUIRED\nNice to meet you, Ada!\nTrue COMPLETED\n"


@runs_examples("docs/client.md", 4)
async def test_subscribe_and_cancel(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert await run_block(4, demo_url, capsys) == "CANCELED\n"


@runs_examples("docs/client.md", 5)
async def test_signed_card_example_refuses_an_unsigned_card(
    demo_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "agent-key.pem").write_text(PUBLIC)
    monkeypatch.chdir(tmp_path)
    out = await run_block(5, demo_url, capsys)
    assert out.startswith("refused: ") and "not signed" in out


@runs_examples("docs/client.md", 6)
async def test_errors(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert (await run_block(6, demo_url, capsys)).startswith("-32001 ")


@runs_examples("docs/client.md", 7)
def test_sse_parser_example(capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(python_blocks("docs/client.md")[7], "client.md[7]", "exec"), {})
    assert capsys.readouterr().out == "[('7', '{\"a\": 1}'), ('7', 'split')] 1\n"


@runs_examples("docs/client.md", 8)
async def test_official_sdk_example_streams_the_echo(
    demo_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The a2a-sdk example, run as written but for its ``asyncio.run`` line (the SDK's client
    runs under trio too, as in tests/server/test_sdk_interop.py)."""
    source = python_blocks("docs/client.md")[8]
    run_line = 'asyncio.run(main("http://127.0.0.1:8000"))\n'
    assert source.endswith(run_line)
    namespace: dict[str, Any] = {}
    exec(compile(source.removesuffix(run_line), "client.md[8]", "exec"), namespace)
    with trio.fail_after(30):
        await namespace["main"](demo_url)
    assert capsys.readouterr().out == "artifact: hi\nstatus: TASK_STATE_COMPLETED\n"


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
