"""The python examples in docs/agents.md run as written, and do what the text says."""

from __future__ import annotations

import re

import trio
from doc_examples import python_blocks, run_block, runs_examples

from a2a_trio import model as m
from a2a_trio import serve
from a2a_trio.runtime import Agent, RuntimeConfig, TaskRuntime
from a2a_trio.store import ANONYMOUS, MemoryTaskStore


async def send(agent: Agent, text: str, accepted_output_modes: tuple[str, ...] = ()) -> m.Task:
    config = m.SendMessageConfiguration(accepted_output_modes=accepted_output_modes)
    async with trio.open_nursery() as nursery:
        runtime = TaskRuntime(agent, MemoryTaskStore(), RuntimeConfig(poll_interval=0.001))
        await nursery.start(runtime.run)
        request = m.SendMessageRequest(m.text_message(text), configuration=config)
        result = await runtime.send(ANONYMOUS, request)
        assert isinstance(result, m.Task)
        if result.status.state is m.TaskState.INPUT_REQUIRED:
            follow_up = m.text_message("large", task_id=result.id)
            result = await runtime.send(ANONYMOUS, m.SendMessageRequest(follow_up))
            assert isinstance(result, m.Task)
        nursery.cancel_scope.cancel()
    return result


@runs_examples("docs/agents.md", 0)
async def test_first_agent_serves_and_answers() -> None:
    namespace = run_block("docs/agents.md", 0)
    with trio.fail_after(20):
        await namespace["main"]()


def test_serve_docstring_example_is_the_one_the_first_agent_runs() -> None:
    """``serve``'s docstring shows the call the executed example above makes, so it works."""
    example = re.search(r"``(url = await nursery\.start\(.*?\))``", serve.__doc__ or "", re.S)
    assert example is not None
    assert " ".join(example[1].split()) in python_blocks("docs/agents.md")[0]


@runs_examples("docs/agents.md", 1)
async def test_multi_turn_example_asks_then_completes() -> None:
    task = await send(run_block("docs/agents.md", 1)["agent"], "coffee")
    assert task.artifacts[0].parts == (m.TextPart("One large coffee coming up"),)
    assert task.history[1].parts == (m.TextPart("Which size: small or large?"),)


@runs_examples("docs/agents.md", 2)
async def test_parked_job_example_completes_with_its_result() -> None:
    task = await send(run_block("docs/agents.md", 2)["agent"], "movie")
    assert task.status.state is m.TaskState.COMPLETED
    assert task.artifacts[0].parts[0] == m.DataPart({"frames": 100}, media_type="application/json")


@runs_examples("docs/agents.md", 3)
async def test_output_modes_example_answers_in_an_accepted_form() -> None:
    agent = run_block("docs/agents.md", 3)["agent"]
    as_data = (await send(agent, "Oslo", ("application/*",))).artifacts[0].parts
    assert as_data == (
        m.DataPart({"city": "Oslo", "sky": "snow", "high_c": -2}, media_type="application/json"),
    )
    as_text = (await send(agent, "Oslo", ("Text/Plain",))).artifacts[0].parts
    assert as_text == (m.TextPart("Oslo tomorrow: snow, up to -2 °C"),)
    anything = (await send(agent, "Oslo")).artifacts[0].parts
    assert anything == as_data


@runs_examples("docs/agents.md", 4)
async def test_streaming_example_builds_one_artifact_from_its_chunks() -> None:
    task = await send(run_block("docs/agents.md", 4)["agent"], "a poem")
    assert task.status.state is m.TaskState.COMPLETED
    (poem,) = task.artifacts
    assert poem.name == "poem"
    text = "".join(part.text for part in poem.parts if isinstance(part, m.TextPart))
    assert text == "Roses are red,\nviolets are blue,\ntrio is structured,\nand so are you."
