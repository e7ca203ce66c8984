"""The python examples in docs/stores.md run as written, on real databases, and do what the text
says: the SQLite one stores a task in ./tasks.db that a later open finds; the PostgreSQL one
serves an agent whose tasks land in the database ``A2A_TRIO_STORE`` names."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from doc_examples import run_block, runs_examples

from a2a_trio import model as m
from a2a_trio.store import ANONYMOUS, TaskQuery, open_store

from .conftest import pg_schema_url


async def stored_tasks(url: str) -> list[m.Task]:
    async with open_store(url) as store:
        return list((await store.list_tasks(ANONYMOUS, TaskQuery(include_artifacts=True))).tasks)


@runs_examples("docs/stores.md", 0)
async def test_open_store_example_keeps_the_task_in_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # the example's relative sqlite:///tasks.db
    with trio.fail_after(20):
        await run_block("docs/stores.md", 0)["main"]()
    assert capsys.readouterr().out == "1 SUBMITTED hello\n"
    (task,) = await stored_tasks(f"sqlite:///{tmp_path / 'tasks.db'}")
    assert task.history[0].parts == (m.TextPart("hello"),)


@pytest.mark.postgres
@runs_examples("docs/stores.md", 1)
async def test_postgres_example_serves_with_its_timeouts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async with pg_schema_url() as url:
        monkeypatch.setenv("A2A_TRIO_STORE", url)
        namespace = run_block("docs/stores.md", 1)
        with trio.fail_after(30):
            await namespace["main"]()
        assert capsys.readouterr().out == "COMPLETED A report on sales\n"
        (task,) = await stored_tasks(url)
    assert task.status.state is m.TaskState.COMPLETED
    assert task.artifacts[0].parts == (m.TextPart("A report on sales"),)
