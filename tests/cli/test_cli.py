"""The ``a2a-trio`` command, run for real in subprocesses against real agents.

Exit codes: 0 ok, 1 usage/config error, 2 remote/runtime error, 3 the task shown did not
complete; errors are one line on stderr.
Usage errors are also checked in-process through ``main()`` (fast, same code path).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pexpect
import pytest
import trio
from client.stub_agent import (
    Reply,
    Request,
    open_stub_agent,
    rpc_error,
    rpc_result,
    stream_result,
)
from doc_examples import python_blocks, runs_examples
from open_files import (
    CONNECTIONS,
    SOFT_LIMIT,
    answered_together,
    open_files_limits,
    with_soft_limit,
)
from prerequisites import missing_prerequisite
from server.webhook import webhook_server

from a2a_trio import model as m
from a2a_trio._cli._input import TYPING_HINT
from a2a_trio.cli import app, main
from a2a_trio.store import ANONYMOUS, open_store
from a2a_trio.wire import V1

SCRIPT = str(Path(sys.executable).with_name("a2a-trio"))
ENV = {k: v for k, v in os.environ.items() if k != "A2A_TOKEN"} | {"COLUMNS": "120"}
ENV["NO_COLOR"] = "1"
WITHOUT_PYTHONPATH = {k: v for k, v in ENV.items() if k != "PYTHONPATH"}
MEMORY = ("--store", "memory")  # the default store is a file in the working directory
QUIET = ("--log-level", "warning")


def run(
    *args: str, module: bool = False, cwd: Path | None = None, env: dict[str, str] = ENV
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "a2a_trio"] if module else [SCRIPT]
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=60, env=env, cwd=cwd, check=False
    )


def started(*args: str) -> subprocess.Popen[str]:
    """The command running in the background, its output piped, for a test to read as it
    goes (use it as a context manager)."""
    return subprocess.Popen(
        [SCRIPT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV
    )


def ok_json(*args: str) -> Any:
    result = run(*args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def assert_one_line_error(result: subprocess.CompletedProcess[str], code: int, text: str) -> None:
    assert result.returncode == code
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
    assert text in result.stderr
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


def in_process(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the command's ``main()`` here (same code, no process start) and capture output."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    version = run("--version", module=True)
    assert version.returncode == 0
    assert version.stdout.startswith("a2a-trio ")
    code, out, _ = in_process(capsys, "--help")
    assert code == 0
    listed = dict(re.findall(r"^  (\w+) +(.*)$", out.split("Commands:")[1], re.MULTILINE))
    commands = {"card", "send", "stream", "get", "list", "cancel", "subscribe", "serve", "webhook"}
    assert set(listed) == commands
    # Whole sentences, none cut short with "..." at 80 columns (click's shortening).
    cut = [text for text in listed.values() if text.endswith("...") or not text.endswith(".")]
    assert cut == []


COMMANDS = [c.name or getattr(c.callback, "__name__", "") for c in app.registered_commands]


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_names_values_by_what_they_mean_not_their_type(command: str) -> None:
    """Every argument and option is shown by a plain metavar (``URL``, ``SECONDS``), a flag by
    its name alone.  Before, typer printed Python types: ``{url}`` in the usage line,
    ``--timeout <float>``, ``--header -H <list[str]>``, even ``--json <bool>``."""
    result = run(*[command] if command else [], "--help")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert re.findall(r"<[^>\s]*>|\{[^}\s]*\}", out) == []
    metavars = re.findall(r"^ +(?:-\w, )?--[\w-]+ (\S.*?)(?:  |$)", out, re.MULTILINE)
    assert [m for m in metavars if m != m.upper()] == []  # no type, nor a name in lowercase
    flags = re.findall(r"^ +(--(?:json|no-wait|all|version|help))(.*)$", out, re.MULTILINE)
    assert flags, out
    assert [(flag, rest) for flag, rest in flags if not rest.startswith("  ")] == []
    if command in ("send", "stream"):
        assert f"Usage: a2a-trio {command} [OPTIONS] URL [TEXT]\n" in out
        assert "  --text-file PATH  " in out
        assert "  --timeout SECONDS  " in out
        assert "  -H, --header 'NAME: VALUE'  " in out


def test_card(sdk_agent: str, capsys: pytest.CaptureFixture[str]) -> None:
    card = ok_json("card", sdk_agent)
    assert card["name"] == "SDK echo"
    code, out, _ = in_process(capsys, "card", sdk_agent)
    assert code == 0
    assert "SDK echo" in out
    assert "HTTP+JSON" in out


def test_send_prints_the_task_or_the_reply(
    sdk_agent: str, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = ok_json("send", sdk_agent, "hello world")
    assert answer["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert answer["task"]["artifacts"][0]["parts"] == [{"text": "hello"}, {"text": " world"}]
    code, out, _ = in_process(capsys, "send", sdk_agent, "hello world", "--binding", "HTTP+JSON")
    assert code == 0
    assert "COMPLETED" in out
    assert "hello world" in out
    assert in_process(capsys, "send", sdk_agent, "hello") == (0, "hello back\n", "")


def test_stream_json_lines(sdk_agent: str) -> None:
    lines = run("stream", sdk_agent, "abcd", "--json")
    assert lines.returncode == 0, lines.stderr
    events = [json.loads(line) for line in lines.stdout.splitlines()]
    assert list(events[0]) == ["task"]
    assert [next(iter(e)) for e in events[1:]] == [
        "statusUpdate",
        "artifactUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_get_list_cancel(sdk_agent: str, capsys: pytest.CaptureFixture[str]) -> None:
    def ok(*args: str) -> Any:
        code, out, err = in_process(capsys, *args, "--json")
        assert code == 0, err
        return json.loads(out)

    task_id = ok("send", sdk_agent, "abcd")["task"]["id"]
    assert ok("get", sdk_agent, task_id, "--history", "1")["task"]["id"] == task_id
    listed = ok("list", sdk_agent, "--state", "completed", "--all")
    assert task_id in [t["id"] for t in listed["tasks"]]
    page = ok("list", sdk_agent, "--page-size", "1")
    assert len(page["tasks"]) == 1
    assert page["nextPageToken"]
    code, out, _ = in_process(capsys, "list", sdk_agent, "--page-size", "1")
    assert code == 0
    assert f"--page-token {page['nextPageToken']}" in out
    running = ok("send", sdk_agent, "wait", "--no-wait")["task"]
    assert ok("cancel", sdk_agent, running["id"])["task"]["status"]["state"] == (
        "TASK_STATE_CANCELED"
    )


def test_subscribe_follows_until_the_task_ends(sdk_agent: str) -> None:
    running = ok_json("send", sdk_agent, "wait", "--no-wait")["task"]
    with started("subscribe", sdk_agent, running["id"], "--json") as follower:
        assert follower.stdout is not None
        first = json.loads(follower.stdout.readline())  # subscribed: the task comes first
        assert first["task"]["id"] == running["id"]
        assert main(["cancel", sdk_agent, running["id"]]) == 0
        rest = [json.loads(line) for line in follower.stdout]
        assert follower.wait(timeout=30) == 3  # it followed the task to its end: canceled
    last = rest[-1].get("statusUpdate") or rest[-1].get("task")
    assert last["status"]["state"] == "TASK_STATE_CANCELED"


def test_remote_error_exits_2_with_one_line(sdk_agent: str) -> None:
    assert_one_line_error(run("get", sdk_agent, "no-such-task"), 2, "TaskNotFoundError (-32001)")


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["card", "{agent}/nowhere"], "no agent card found"),
        (["cancel", "{agent}", "no-such-task"], "TaskNotFoundError (-32001)"),
        (["get", "{agent}/v03/.well-known/agent.json", "no-such-task"], "TaskNotFoundError"),
        (
            ["send", "{agent}/v03/.well-known/agent.json", "hi", "--binding", "HTTP+JSON"],
            "the agent offers none of the bindings asked for (HTTP+JSON; offered: JSONRPC 0.3.0)",
        ),
        (["send", "http://127.0.0.1:{port}", "hi"], "connection refused: nothing is listening"),
    ],
)
def test_runtime_errors_exit_2(
    args: list[str],
    text: str,
    sdk_agent: str,
    unused_port: int,
    capsys: pytest.CaptureFixture[str],
) -> None:
    filled = [a.format(agent=sdk_agent, port=unused_port) for a in args]
    code, out, err = in_process(capsys, *filled)
    assert (code, out) == (2, "")
    assert err.startswith("error: ")
    assert text in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["send"], "Missing argument 'URL'"),
        (["send", "http://x", "hi", "--bogus"], "No such option: --bogus (see 'a2a-trio send"),
        (  # a message text starting with '-' reads as an option: say how to send it
            ["stream", "http://x", "-5 degrees"],
            "No such option: -5 (for a text starting with '-', put -- before it:"
            " a2a-trio stream URL -- '-5 ...'; see 'a2a-trio stream --help')",
        ),
        (["card", "http://x", "-j"], "No such option: -j (see 'a2a-trio card --help')"),
        (["frobnicate"], "No such command"),
        (["send", "http://x", "hi", "--header", "no-colon"], "must look like 'Name: value'"),
        (  # named as docs/cli.md names them, and as --state takes them; in the words of the
            # server's refusal ("is not a task state", before)
            ["list", "http://x", "--state", "sleepy"],
            "Invalid value for '--state': unknown task state 'sleepy' (one of submitted, working,"
            " completed, failed, canceled, input-required, rejected, auth-required) (see",
        ),
        (["serve", "no_such_module_here:agent"], "cannot import 'no_such_module_here'"),
        (["serve", "a2a_trio.demo"], "names no attribute: give the module and the Agent's name"),
        (["serve", "a2a_trio/demo.py:agent"], "is a file name: give its module, 'a2a_trio.demo"),
        (["serve", "a2a_trio.demo:agent", "--log-level", "loud"], "--log-level 'loud'"),
        (["serve", "a2a_trio.demo:nope"], "module 'a2a_trio.demo' has no attribute 'nope'"),
        (["serve", "a2a_trio.demo:MAX_COUNTDOWN"], "is int, not an a2a_trio Agent (its agents: "),
        (["serve", "a2a_trio.demo:agent", "--port", "99999"], "Invalid value for '--port'"),
        (["serve", "a2a_trio.demo:agent", "--port", "-1"], "Invalid value for '--port'"),
        (
            ["serve", "a2a_trio.demo:agent", "--keepalive", "0"],
            "--keepalive must be a positive number of seconds, not 0.0",
        ),
        (
            ["serve", "a2a_trio.demo:agent", "--follow-interval", "-1"],
            "--follow-interval must be a positive number of seconds, not -1.0",
        ),
        (
            ["serve", "a2a_trio.demo:agent", "--stall-warning", "-0.5"],
            "--stall-warning must be a positive number of seconds, not -0.5",
        ),
        (["send", "http://x", "hi", "--webhook", "localhost:9000"], "did you mean http://"),
        (["send", "http://x", "hi", "--notification-token", "t"], "goes with --webhook URL"),
        (["webhook", "--host", "http://x"], "--host"),
        (
            ["serve", "a2a_trio.demo:agent", "--push", "always"],
            "--push 'always' is not one of off, on, private",
        ),
        (
            ["serve", "a2a_trio.demo:agent", "--shutdown-grace", "-1"],
            "--shutdown-grace must be zero or a positive number of seconds, not -1.0",
        ),
        (
            ["serve", "a2a_trio.demo:agent", "--shutdown-grace", "nan"],
            "--shutdown-grace must be zero or a positive number of seconds, not nan",
        ),
        (["send", "http://x", "hi", "--binding", "foo"], "'foo' is not one of JSONRPC, HTTP+JSON"),
        (["send", "http://x", "hi", "--binding", "GRPC"], "'GRPC' is not one of JSONRPC"),
        (["list", "http://x", "--page-size", "0"], "Invalid value for '--page-size'"),
        (["get", "http://x", "t1", "--history", "-1"], "Invalid value for '--history'"),
        (["get", "http://x", "t1", "--timeout", "0"], "'--timeout': 0.0 is not a positive number"),
        (["card", "127.0.0.1:8000"], "URL (did you mean http://127.0.0.1:8000?)"),
        (["send", "ftp://x", "hi"], "'ftp://x' is not an http:// or https:// URL"),
        (["send", "http://", "hi"], "'http://' names no host"),
        (["get", "http://127.0.0.1:99999", "t1"], "port 99999 is not 1 to 65535"),
        (["card", "http://x", "--timeout", "nan"], "'--timeout': nan is not a positive number"),
        (  # empty, it read as no --after and showed the whole log
            ["subscribe", "http://x", "t1", "--after", ""],
            "'--after': '' is not an event id: give the id of the last event you saw",
        ),
        (
            ["serve", "a2a_trio.demo:agent", "--public-url", "agents.example.com"],
            "--public-url must be an absolute http(s) URL",
        ),
    ],
)
def test_usage_errors_exit_1(
    args: list[str], text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: ")
    assert text in err
    assert err.count("\n") == 1


def test_usage_error_in_a_real_process() -> None:
    assert_one_line_error(run("get"), 1, "Missing argument 'URL'")
    # out of range for a socket: refused before anything binds, not an OverflowError traceback
    assert_one_line_error(
        run("serve", "a2a_trio.demo:agent", "--port", "99999"), 1, "Invalid value for '--port'"
    )


def test_binding_names_are_case_insensitive(
    sdk_agent: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = in_process(capsys, "send", sdk_agent, "abcd", "--binding", "http+json")
    assert (code, err) == (0, "")
    assert "COMPLETED" in out


def test_https_to_a_plain_http_agent_says_why(sdk_agent: str) -> None:
    """The TLS failure reaches the user: httpx raises it with an empty message."""
    result = run("card", sdk_agent.replace("http://", "https://"))
    assert_one_line_error(result, 2, "agent-card.json: TLS handshake failed: [SSL: ")
    assert result.stderr.endswith("(is it a plain http:// server?)\n")


def test_live_view_in_a_terminal(sdk_agent: str) -> None:
    """The stream view redraws as events arrive: WORKING shows before the task completes."""
    child = pexpect.spawn(
        SCRIPT, ["stream", sdk_agent, "slow live"], env=ENV, encoding="utf-8", timeout=20
    )
    try:
        child.expect("WORKING")
        assert "COMPLETED" not in (child.before or "")
        child.expect("echoing")  # the status message
        child.expect("slow")  # the first artifact chunk...
        assert "slow live" not in (child.before or "")
        child.expect("slow live")  # ...then the whole artifact
        child.expect("COMPLETED")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0


@contextlib.contextmanager
def serving_demo(
    *options: str,
    launch: Callable[[list[str]], list[str]] = list,
    agent: str = "a2a_trio.demo:agent",
    cwd: Path | None = None,
    as_a_user: bool = False,
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``a2a-trio serve`` with the built-in demo agent, or ``agent`` found from ``cwd`` (port 0
    unless ``options`` say), and its base URL; killed on exit if it is still running.
    ``launch`` wraps the command line.  The store is memory and only warnings are logged,
    unless ``as_a_user``: then the command is as a user types it next to their module (its
    default store and log level, no PYTHONPATH)."""
    defaults = () if as_a_user else (*MEMORY, *QUIET)
    command = launch([SCRIPT, "serve", agent, "--port", "0", *defaults, *options])
    env = WITHOUT_PYTHONPATH if as_a_user else ENV
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        try:
            line = proc.stdout.readline()
            assert line.startswith(f"serving {agent} at http://"), line or proc.stderr.read()
            yield proc, line.split(" at ")[1].strip()
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)


async def test_serve_raises_its_open_file_limit_and_holds_more_connections() -> None:
    """Started with a soft limit of 128 open files (1,024 is common) under a higher hard one,
    the command raises its own to the hard limit, so it answers 300 connections held open
    together; before, it stopped accepting at its 128th descriptor."""
    with serving_demo(launch=with_soft_limit) as (proc, url):
        soft, hard = open_files_limits(proc.pid)
        assert hard > CONNECTIONS + SOFT_LIMIT  # else this machine cannot show the difference
        assert soft == hard
        assert await answered_together(url) == CONNECTIONS


async def test_serve_push_private_calls_a_webhook_on_this_machine() -> None:
    """``--push private``: the card offers push notifications, and a task's events reach a
    webhook on 127.0.0.1 (``--push on`` would refuse it: test_push.py)."""
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    async with webhook_server() as hook:
        with serving_demo("--push", "private") as (_proc, url):
            async with httpx.AsyncClient(base_url=url, timeout=10) as http:
                card = (await http.get("/.well-known/agent-card.json")).json()
                assert card["capabilities"]["pushNotifications"] is True
                push = {"taskPushNotificationConfig": {"url": hook.url}}
                params = {"message": message, "configuration": push}
                sent = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
                answer = await http.post("/", json=sent, headers={"A2A-Version": "1.0"})
                task_id = answer.json()["result"]["task"]["id"]
                got = await hook.wait_for_state("TASK_STATE_COMPLETED")
    assert {d.body[d.kind].get("taskId", task_id) for d in got} == {task_id}


@pytest.fixture
def served_demo() -> Iterator[tuple[subprocess.Popen[str], str]]:
    with serving_demo() as served:
        yield served


def test_serve_then_talk_to_it_then_stop(
    served_demo: tuple[subprocess.Popen[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    proc, url = served_demo
    code, out, _ = in_process(capsys, "card", url, "--json")
    assert code == 0
    assert json.loads(out)["name"] == "a2a_trio demo"
    code, out, _ = in_process(capsys, "send", url, "ping", "--json")
    assert code == 0
    assert json.loads(out)["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0
    assert proc.stderr is not None
    assert "Running on" not in proc.stderr.read()  # --log-level warning quiets hypercorn too


ENDINGS_AGENT = """
from a2a_trio import Agent, TaskContext, TaskFailed, TaskRejected

agent = Agent("endings", "Ends its tasks every way but completed.")


@agent.skill(default=True)
async def fail(ctx: TaskContext) -> str:
    raise TaskFailed("no luck")


@agent.skill()
async def reject(ctx: TaskContext) -> str:
    raise TaskRejected("not mine")


@agent.skill()
async def ask(ctx: TaskContext) -> str:
    return (await ctx.ask("Which one?")).parts[0].text
"""


def test_a_task_that_did_not_complete_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The call worked, the task did not: exit 3, the task shown as usual and nothing on stderr,
    so a script can tell it from a completed task (0) and from a failed call (2).  An
    interrupted task (INPUT_REQUIRED) waits for its answer: 0.  Before, every one was 0."""
    (tmp_path / "endings.py").write_text(ENDINGS_AGENT)
    with serving_demo(agent="endings:agent", cwd=tmp_path) as (_proc, url):
        code, out, err = in_process(capsys, "send", url, "hi", "--json")
        assert (code, err) == (3, "")
        assert json.loads(out)["task"]["status"]["state"] == "TASK_STATE_FAILED"
        code, out, err = in_process(capsys, "stream", url, "hi", "--json")
        assert (code, err) == (3, "")
        last = json.loads(out.splitlines()[-1])["statusUpdate"]["status"]
        assert last["state"] == "TASK_STATE_FAILED"
        code, out, err = in_process(capsys, "send", url, "hi", "--skill", "reject")
        assert (code, err) == (3, "")
        assert "REJECTED" in out and "not mine" in out
        code, out, err = in_process(capsys, "stream", url, "hi", "--skill", "ask")
        assert (code, err) == (0, "")
        assert "INPUT_REQUIRED" in out and "Which one?" in out


BLOCKING_AGENT = """
import time

from a2a_trio import Agent, TaskContext

agent = Agent("blocking", "Holds the event loop.")


@agent.skill(default=True)
async def block(ctx: TaskContext) -> str:
    time.sleep(0.8)
    return "done"
"""


@pytest.mark.parametrize("threshold", ["0.3", "0"])
def test_serve_names_a_skill_holding_the_event_loop_unless_told_not_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], threshold: str
) -> None:
    """``--stall-warning SECONDS``: the first stall is said, the next is named with its skill
    and task, on stderr as any warning; 0 turns the watch off."""
    (tmp_path / "blocking.py").write_text(BLOCKING_AGENT)
    options = ("--stall-warning", threshold)
    with serving_demo(*options, agent="blocking:agent", cwd=tmp_path) as (proc, url):
        for _ in range(2):
            code, _out, err = in_process(capsys, "send", url, "hi", "--json")
            assert (code, err) == (0, "")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        assert proc.stderr is not None
        warned = [line for line in proc.stderr.read().splitlines() if "event loop" in line]
    if threshold == "0":
        assert warned == []
        return
    assert len(warned) == 2, warned
    assert warned[0].startswith("WARNING a2a_trio.runtime: the event loop was held for 0.")
    assert re.match(
        r"WARNING a2a_trio.runtime: skill 'block' on task [-0-9a-f]{36} held", warned[1]
    )


TAILOR_AGENT = """
from a2a_trio import Agent, TaskContext
from a2a_trio import model as m

agent = Agent("tailor", "Answers in the form the client accepts.")


@agent.skill(default=True, output_modes=["application/json", "text/plain"])
async def answer(ctx: TaskContext) -> m.JsonObject | str:
    if ctx.accepts("application/json"):
        return {"accepted": list(ctx.accepted_output_modes)}
    return "accepted: " + ", ".join(ctx.accepted_output_modes)
"""


def test_accept_tells_the_skill_which_forms_it_may_answer_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``send`` and ``stream`` pass each ``--accept`` as an accepted output mode, on every
    binding the client speaks (v0.3 through its card's URL): the skill answers with data when
    JSON will do (also when nothing was listed: anything will), else with text."""
    (tmp_path / "tailor.py").write_text(TAILOR_AGENT)

    def answer(*args: str) -> Any:
        code, out, err = in_process(capsys, *args, "--json")
        assert (code, err) == (0, "")
        last = json.loads(out.splitlines()[-2 if args[0] == "stream" else -1])
        artifact = last["artifactUpdate"]["artifact"] if "artifactUpdate" in last else None
        return (artifact or last["task"]["artifacts"][0])["parts"][0]

    with serving_demo(agent="tailor:agent", cwd=tmp_path) as (_proc, url):
        for target, options in [
            (url, ["--binding", "JSONRPC"]),
            (url, ["--binding", "HTTP+JSON"]),
            (url + "/.well-known/agent.json", []),  # the v0.3 card: v0.3 JSON-RPC
        ]:
            for command in ("send", "stream"):
                ask = [command, target, "hi", *options]
                assert answer(*ask)["data"] == {"accepted": []}
                assert answer(*ask, "--accept", "text/plain", "--accept", "TEXT/markdown") == {
                    "text": "accepted: text/plain, TEXT/markdown"
                }
                assert answer(*ask, "--accept", "text/*", "--accept", "application/json")[
                    "data"
                ] == {"accepted": ["text/*", "application/json"]}
        code, _, err = in_process(capsys, "send", url, "hi", "--accept", " ")
        assert code == 1
        assert "Invalid value for '--accept': ' ' is not a media type" in err


def test_a_second_signal_stops_the_drain_at_once_without_a_traceback() -> None:
    """The first Ctrl-C drains (saying so, and how to stop at once); a second one during the
    drain stops the server in order, exit 0.  It was a KeyboardInterrupt traceback, exit 1."""
    with serving_demo() as (proc, url):
        ok_json("send", url, "60", "--skill", "countdown", "--no-wait")  # outlasts the grace
        assert proc.stderr is not None
        proc.send_signal(signal.SIGINT)
        draining = proc.stderr.readline()
        assert draining.startswith("WARNING a2a_trio.serve: SIGINT received: stopping;")
        assert "(send SIGINT again to stop at once)" in draining
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
        rest = proc.stderr.read()
    assert "Traceback" not in rest
    assert rest == (
        "WARNING a2a_trio.serve: SIGINT received again: stopping at once; running tasks are"
        " recorded as failed\n"
    )


def test_the_shutdown_grace_is_an_option(tmp_path: Path) -> None:
    """``--shutdown-grace 0.5``: a stop gives running tasks half a second (the drain says so),
    then records them FAILED with the shutdown message; the grace was fixed at 10 s."""
    store = f"sqlite:///{tmp_path / 'tasks.db'}"
    with serving_demo("--store", store, "--shutdown-grace", "0.5") as (proc, url):
        running = ok_json("send", url, "60", "--skill", "countdown", "--no-wait")["task"]
        assert proc.stderr is not None
        proc.send_signal(signal.SIGINT)
        draining = proc.stderr.readline()
        assert "running ones get up to 0.5 s to finish" in draining
        assert proc.wait(timeout=8) == 0  # the 10 s default would still be waiting
    with serving_demo("--store", store) as (_, url):
        status = ok_json("get", url, running["id"])["task"]["status"]
    assert status["state"] == "TASK_STATE_FAILED"
    shut_down = "The server shut down before this task finished; please send it again."
    assert status["message"]["parts"] == [{"text": shut_down}]


def test_a_second_server_on_the_same_sqlite_file_is_refused(tmp_path: Path) -> None:
    """It started, took the first server's running tasks for a crashed server's and recorded
    them FAILED ("The server restarted before this task finished")."""
    store = f"sqlite:///{tmp_path / 'tasks.db'}"
    with serving_demo("--store", store) as (_, url):
        running = ok_json("send", url, "60", "--skill", "countdown", "--no-wait")["task"]
        second = run("serve", "a2a_trio.demo:agent", "--port", "0", "--store", store)
        assert_one_line_error(
            second,
            2,
            f"error: cannot open the task store {store!r}: another a2a_trio server is serving"
            f" from it (it holds {tmp_path / 'tasks.db'}.lock): stop that one, or give this one"
            " another store",
        )
        state = ok_json("get", url, running["id"])["task"]["status"]["state"]
    assert state == "TASK_STATE_WORKING"
    with serving_demo("--store", store):  # the first one stopped: the file is free again
        pass


def test_serve_refuses_a_misspelled_memory_store(tmp_path: Path) -> None:
    """``--store memroy`` served from a SQLite file named ``memroy``, created in the working
    directory; a path meant as a file still serves."""
    result = run("serve", "a2a_trio.demo:agent", "--port", "0", "--store", "memroy", cwd=tmp_path)
    assert_one_line_error(
        result,
        1,
        "error: unknown task store 'memroy': did you mean \"memory\"? For a SQLite file, give a"
        " path such as ./memroy.db\n",
    )
    assert list(tmp_path.iterdir()) == []


def test_a_store_that_is_a_directory_or_another_file_says_what_to_give(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not SQLite's "unable to open database file", which reads as a missing directory; and
    the refused start leaves no lock file of its own behind."""
    demo = ["serve", "a2a_trio.demo:agent", "--port", "0"]
    directory = tmp_path / "tasks.db"
    directory.mkdir()
    code, out, err = in_process(capsys, *demo, "--store", f"sqlite:///{directory}")
    assert (code, out) == (2, "")
    assert err == (
        f"error: cannot open the task store 'sqlite:///{directory}': {directory} is a directory,"
        f" not a SQLite file: name a file in it, such as sqlite:///{directory}/a2a_trio.db\n"
    )
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database, but long enough for SQLite to read a header from it" * 9)
    code, out, err = in_process(capsys, *demo, "--store", str(notes))
    assert (code, out) == (2, "")
    assert err == (
        f"error: cannot open the task store {str(notes)!r}: file is not a database"
        " (it is some other kind of file: name a new file or an a2a_trio store)\n"
    )
    assert notes.read_text().startswith("not a database")  # left as it was
    # nor anything beside them: the empty FILE.lock each start created stayed there
    assert sorted(path.name for path in tmp_path.iterdir()) == ["notes.txt", "tasks.db"]
    (tmp_path / "notes.txt.lock").touch()  # one this start did not create is not its to remove
    assert in_process(capsys, *demo, "--store", str(notes))[0] == 2
    assert (tmp_path / "notes.txt.lock").exists()


def stored_demo_task(path: Path) -> bytes:
    """A SQLite store at ``path`` holding one task, closed; returns the file as it is."""

    async def store_one() -> None:
        async with open_store(f"sqlite:///{path}") as store:
            await store.create_task(ANONYMOUS, m.new_task(m.text_message("kept")))

    trio.run(store_one)
    return path.read_bytes()


def without_permission_override(command: list[str]) -> list[str]:
    """``command`` run as a process subject to file permissions: as root (which may write
    any file), without the capabilities that let it."""
    if os.geteuid() != 0:
        return command
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        missing_prerequisite(
            "setpriv (util-linux) is not installed: root ignores file permissions without it",
            in_ci="setpriv (util-linux) is missing: CI installs it",
        )
    overrides = "-dac_override,-dac_read_search"
    return [setpriv, "--bounding-set", overrides, "--inh-caps", overrides, *command]


def test_a_store_this_user_may_not_write_stops_start_up_saying_so(tmp_path: Path) -> None:
    """A store file this user may only read, or in a directory they may not write, is refused
    at start-up in one line saying what to change.  Before, a read-only file was served: every
    read worked and every new task was refused as "the task store is unavailable right now;
    try again shortly", which it never would be."""
    store = tmp_path / "tasks.db"
    content = stored_demo_task(store)
    store.chmod(0o444)
    locked_in = tmp_path / "locked"
    locked_in.mkdir(mode=0o555)
    results = [
        subprocess.run(
            without_permission_override(
                [SCRIPT, "serve", "a2a_trio.demo:agent", "--port", "0", "--store", url]
            ),
            capture_output=True,
            text=True,
            timeout=30,
            env=ENV,
            cwd=tmp_path,
            check=False,
        )
        for url in ("sqlite:///tasks.db", "sqlite:///locked/tasks.db")
    ]
    assert [(r.returncode, r.stdout) for r in results] == [(2, ""), (2, "")]
    read_only, locked = (r.stderr for r in results)
    assert read_only == (
        "error: cannot open the task store 'sqlite:///tasks.db': attempt to write a readonly"
        " database (this user may only read the file: make it writable, or name another file)\n"
    )
    assert locked == (
        "error: cannot open the task store 'sqlite:///locked/tasks.db': [Errno 13] Permission"
        " denied: 'locked/tasks.db.lock' (may this user write in that directory? the store"
        " keeps its files there)\n"
    )
    assert store.read_bytes() == content
    assert list(locked_in.iterdir()) == []


def test_a_damaged_store_stops_start_up_saying_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SQLite's "database disk image is malformed" alone did not say what to do about it."""
    store = tmp_path / "tasks.db"
    content = bytearray(stored_demo_task(store))
    content[100:4096] = bytes(4096 - 100)  # the first page's contents, past the file header
    store.write_bytes(content)
    code, out, err = in_process(capsys, "serve", "a2a_trio.demo:agent", "--store", str(store))
    assert (code, out) == (2, "")
    assert err == (
        f"error: cannot open the task store {str(store)!r}: database disk image is malformed"
        " (the file is damaged: restore it from a backup, or name a new file)\n"
    )
    assert store.read_bytes() == content


def test_serve_failures_are_one_line(
    tmp_path: Path, unused_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    demo = ["serve", "a2a_trio.demo:agent", "--port", "0"]
    code, out, err = in_process(capsys, *demo, "--store", "bogus://x")
    assert (code, out) == (1, "")
    assert err.startswith("error: unknown task store 'bogus://x'")
    missing = str(tmp_path / "missing" / "t.db")
    code, _, err = in_process(capsys, *demo, "--store", missing)
    assert code == 2
    assert err == (
        f"error: cannot open the task store {missing!r}: unable to open database file"
        " (does its directory exist, and may you write there?)\n"
    )
    no_server = f"postgresql://a2a_trio:s3cret@127.0.0.1:{unused_port}/a2a_trio"
    code, _, err = in_process(capsys, *demo, "--store", no_server)
    assert code == 2
    assert err.startswith("error: cannot open the task store: connection failed: ")
    assert "s3cret" not in err  # a PostgreSQL URL may hold a password: not repeated
    unknown_host = run(*demo, *MEMORY, "--host", "no-such-host.invalid")  # a socket leaks too
    assert_one_line_error(unknown_host, 2, "error: cannot listen on no-such-host.invalid:0: ")
    assert unknown_host.stderr.endswith(" (check --host)\n")
    with socket.socket() as busy:  # in a subprocess: hypercorn leaks the socket it failed to bind
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run("serve", "a2a_trio.demo:agent", "--port", str(port), *MEMORY)
    assert_one_line_error(result, 2, f"cannot listen on 127.0.0.1:{port}: ")
    assert result.stderr.endswith(
        ": Address already in use (another program is listening there: stop it, or pick"
        " another --port; --port 0 picks a free one)\n"
    )


@pytest.mark.parametrize(
    ("host", "text"),
    [
        (
            "1.2.3.4:80",
            "--host '1.2.3.4:80' carries a port: pass the host alone, and the port with --port"
            " (--host 1.2.3.4 --port 80)",
        ),
        (
            "[::1]:8080",
            "--host '[::1]:8080' carries a port: pass the host alone, and the port with --port"
            " (--host [::1] --port 8080)",
        ),
        (
            "http://0.0.0.0",
            "--host 'http://0.0.0.0' is a URL: pass the host alone, and the port with --port"
            " (--host 0.0.0.0)",
        ),
        ("[::1", "--host '[::1' is not a host name or IP address"),
        ("::1]", "--host '::1]' is not a host name or IP address"),
        ("local host", "--host 'local host' is not a host name or IP address"),
    ],
    ids=["host:port", "[ipv6]:port", "URL", "open bracket", "close bracket", "space"],
)
def test_serve_refuses_a_host_with_a_port_or_malformed(host: str, text: str) -> None:
    """Before: ``1.2.3.4:80`` failed as ``cannot listen on 1.2.3.4:80:0`` with no word of
    ``--port``, and ``[::1`` was served as ``[::1]`` (in a subprocess: that one served on)."""
    result = run("serve", "a2a_trio.demo:agent", "--port", "0", *MEMORY, "--host", host)
    assert_one_line_error(result, 1, text)
    assert result.stderr == f"error: {text}\n"


async def test_auth_options_reach_the_agent() -> None:
    """--token, $A2A_TOKEN and --header, seen by a scripted agent on a real socket."""
    task = m.Task("t1", m.TaskStatus(m.TaskState.COMPLETED), context_id="c1")

    async def handler(request: Request, reply: Reply) -> None:
        if "authorization" in request.headers:
            await reply.json(rpc_result(V1.encode(task)))
        else:
            await reply.send(401, b"")

    async with open_stub_agent(handler) as agent:
        result = await trio.run_process(
            [SCRIPT, "get", agent.url, "t1", "--json", "-H", "X-Trace: abc", "--token", "tok"],
            capture_stdout=True,
            capture_stderr=True,
            env=ENV,
            check=False,
        )
        refused = await trio.run_process(
            [SCRIPT, "get", agent.url, "t1"],
            capture_stdout=True,
            capture_stderr=True,
            env=ENV,
            check=False,
        )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["task"]["id"] == "t1"
    for request in agent.requests[:2]:  # the card and the call
        assert request.headers["authorization"] == "Bearer tok"
        assert request.headers["x-trace"] == "abc"
    assert refused.returncode == 2
    assert refused.stderr.decode() == (
        "error: AuthenticationRequiredError (-32001): Authentication required"
        " (pass credentials with --token or --header)\n"
    )


README_AGENT = python_blocks("README.md")[0]  # "Write your own agent": mymodule.py


@runs_examples("README.md", 0)
def test_serve_finds_a_module_in_the_current_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The installed console script, started where the module is, like ``python -m``."""
    (tmp_path / "mymodule.py").write_text(README_AGENT)
    served = serving_demo(
        "--log-level", "warning", agent="mymodule:agent", cwd=tmp_path, as_a_user=True
    )
    with served as (proc, url):
        code, out, err = in_process(capsys, "send", url, "Ada", "--json")
        assert code == 0, err
        parts = json.loads(out)["task"]["artifacts"][0]["parts"]
        assert parts == [{"text": "Hello, Ada!"}]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0


def test_serve_warns_once_about_an_agent_without_skills(tmp_path: Path) -> None:
    """A forgotten ``@agent.skill``: served, with one warning at start (the command loads the
    agent by name, then serves it: a warning in each would be two)."""
    (tmp_path / "bare.py").write_text('from a2a_trio import Agent\n\nagent = Agent("Bare")\n')
    with serving_demo(agent="bare:agent", cwd=tmp_path, as_a_user=True) as (proc, _url):
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        assert proc.stderr is not None
        warned = [w for w in proc.stderr.read().splitlines() if "declares no skills" in w]
    assert warned == [
        "WARNING a2a_trio.server: agent 'Bare' declares no skills, so every message to"
        " it is refused (declare one with @agent.skill, where agent is your Agent, on an"
        " async def taking the task's context)"
    ]


def test_a_module_that_fails_to_import_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import json\n\nRATIO = 1 / 0\n")
    result = run("serve", "broken:agent", "--port", "0", cwd=tmp_path, env=WITHOUT_PYTHONPATH)
    assert_one_line_error(result, 1, "")
    assert result.stderr == (
        "error: importing 'broken' failed: ZeroDivisionError: division by zero"
        " (broken.py, line 3)\n"
    )
    (tmp_path / "good.py").write_text(README_AGENT)
    result = run("serve", "good:nope", cwd=tmp_path, env=WITHOUT_PYTHONPATH)
    assert_one_line_error(
        result, 1, "module 'good' has no attribute 'nope' (its agents: good:agent)"
    )


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def in_a_terminal(columns: int, *args: str) -> str:
    """The command's output in a pseudo-terminal ``columns`` wide (no ``$COLUMNS`` to obey)."""
    env = {k: v for k, v in ENV.items() if k != "COLUMNS"}
    child = pexpect.spawn(
        SCRIPT, list(args), env=env, encoding="utf-8", timeout=30, dimensions=(50, columns)
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return ANSI.sub("", child.before or "")


def test_list_prints_task_ids_whole(sdk_agent: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Ids are what get and cancel take: never cut, at any width, nor in a pipe."""
    for text in ("one", "two", "three", "four"):  # more than a page
        assert in_process(capsys, "send", sdk_agent, text, "--json")[0] == 0
    tasks = ok_json("list", sdk_agent, "--page-size", "3")["tasks"]
    ids = [t["id"] for t in tasks]
    piped = run("list", sdk_agent, "--page-size", "3", env=ENV | {"COLUMNS": "60"})
    assert piped.returncode == 0, piped.stderr
    lines = piped.stdout.splitlines()
    assert lines[0].split() == ["task", "context", "state", "updated"]
    for line, task in zip(lines[1:4], tasks, strict=True):  # one line a task, all of it
        assert line.split() == [
            task["id"],
            task["contextId"],
            task["status"]["state"].removeprefix("TASK_STATE_"),
            task["status"]["timestamp"].split(".")[0].removesuffix("Z") + "+00:00",
        ]
    assert lines[4].startswith("next page: --page-token ")
    for columns, heading in [
        (130, "task context state updated"),
        (100, "task context state updated"),
        (80, "task context state"),
        (30, "task state"),
    ]:
        shown = in_a_terminal(columns, "list", sdk_agent, "--page-size", "3").splitlines()
        assert " ".join(shown[0].split()) == heading
        assert [row.split()[0] for row in shown[1:4]] == ids
        if columns >= 60:  # wide enough for an id and a state: the table fits
            assert max(map(len, shown[:4])) <= columns, "\n".join(shown)


def test_stream_and_subscribe_end_with_the_final_status_and_a_newline(
    served_demo: tuple[subprocess.Popen[str], str],
) -> None:
    """The countdown's last status has no message: the previous one's text must not linger."""
    _, url = served_demo
    streamed = run("stream", url, "1", "--skill", "countdown")
    assert streamed.returncode == 0, streamed.stderr
    assert streamed.stdout.endswith("\n")
    assert re.fullmatch(r"task [0-9a-f-]{36} COMPLETED", streamed.stdout.splitlines()[0])
    assert "liftoff" in streamed.stdout
    # Long enough that the subscribing process, started under a loaded CI machine, still finds
    # the task running (a finished task can no longer be subscribed to).
    running = ok_json("send", url, "10", "--skill", "countdown", "--no-wait")["task"]
    followed = run("subscribe", url, running["id"])
    assert followed.returncode == 0, followed.stderr
    assert followed.stdout.endswith("\n")
    assert followed.stdout.splitlines()[0] == f"task {running['id']} COMPLETED"
    in_terminal = in_a_terminal(100, "stream", url, "1", "--skill", "countdown")
    assert in_terminal.endswith("\n")
    last_status = [line for line in in_terminal.splitlines() if line.startswith("task ")][-1]
    assert re.fullmatch(r"task [0-9a-f-]{36} COMPLETED\s*", last_status)


def test_subscribe_after_an_event_shows_only_what_came_after_it(
    served_demo: tuple[subprocess.Popen[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``subscribe --after N`` resumes as a dropped stream does: a2a_trio numbers a task's
    events 1, 2, ... from its first, so it shows the task's stream from the (N+1)th event on,
    on every binding (v0.3 through its card's URL), for a finished task too; live, for a
    running task, it shows what a replay after the end shows.  An id never sent is the
    agent's refusal, a line break in one a usage error."""
    _, url = served_demo

    def lines(*args: str) -> list[Any]:
        code, out, err = in_process(capsys, *args, "--json")
        assert (code, err) == (0, "")
        return [json.loads(line) for line in out.splitlines()]

    streamed = lines("stream", url, "1", "--skill", "countdown")
    task_id = streamed[0]["task"]["id"]
    for target, options in [
        (url, ["--binding", "JSONRPC"]),
        (url, ["--binding", "HTTP+JSON"]),
        (url + "/.well-known/agent.json", []),  # the v0.3 card: v0.3 JSON-RPC
    ]:
        assert lines("subscribe", target, task_id, "--after", "2", *options) == streamed[2:]
    running = lines("send", url, "2", "--skill", "countdown", "--no-wait")[0]["task"]["id"]
    live = lines("subscribe", url, running, "--after", "1")
    assert "task" not in live[0]  # the snapshot was event 1
    assert live[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert lines("subscribe", url, running, "--after", "1") == live
    code, _, err = in_process(capsys, "subscribe", url, task_id, "--after", "99")
    assert code == 2
    assert err.startswith("error: InvalidParamsError (-32602): Last-Event-ID 99 was never sent")
    code, _, err = in_process(capsys, "subscribe", url, task_id, "--after", "last")
    assert code == 2
    assert err == (  # said as for an id never sent: before, it did not say what ids look like
        "error: InvalidParamsError (-32602): Last-Event-ID 'last' is not an event id this server"
        " sent (it numbers a task's events 1, 2, ...); resume from an id the stream carried, or"
        " subscribe without one\n"
    )
    code, _, err = in_process(capsys, "subscribe", url, task_id, "--after", "1\n2")
    assert code == 1
    assert "'1\\n2' is not an event id (it holds a line break or NUL)" in err


def test_a_stream_stopped_with_ctrl_c_says_how_to_follow_the_task_on(
    served_demo: tuple[subprocess.Popen[str], str],
) -> None:
    """Ctrl-C on a stream of a running task: exit 130 and, on stderr, the ``subscribe --after``
    command that goes on from the last event shown; run, it shows the rest of the task's
    events, none of them twice.  Before, the command said nothing and the user had to find
    the task's id and an event id in the output."""
    _, url = served_demo
    with started("stream", url, "6", "--skill", "countdown", "--json") as proc:
        assert proc.stdout is not None
        shown = [json.loads(proc.stdout.readline()) for _ in range(3)]
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=20)
    assert proc.returncode == 130
    shown += [json.loads(line) for line in rest.splitlines()]
    assert shown[-1].get("statusUpdate", {}).get("status", {}).get("state") != (
        "TASK_STATE_COMPLETED"
    )  # interrupted while the countdown ran (it takes 6 s)
    task_id = shown[0]["task"]["id"]
    hint = f"a2a-trio subscribe {url} {task_id} --after {len(shown)}"
    assert err == f"to follow the task on: {hint}\n"
    followed = run(*shlex.split(hint)[1:], "--json")
    assert followed.returncode == 0, followed.stderr
    replay = run("subscribe", url, task_id, "--after", "1", "--json")
    assert replay.returncode == 0, replay.stderr
    whole = [json.loads(line) for line in replay.stdout.splitlines()]
    assert shown[1:] + [json.loads(line) for line in followed.stdout.splitlines()] == whole
    assert whole[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize(
    "loaded",
    [
        "a2a_trio.model._core",  # the command's first modules
        "trio",  # a dependency it loads
        "a2a_trio.client",  # its own modules
        "a2a_trio.cli",  # loaded: it reads its command line, then calls the agent
        "",  # it waits for the agent's card
    ],
)
def test_ctrl_c_while_the_command_starts_exits_130_without_a_traceback(loaded: str) -> None:
    """Ctrl-C at each stage of ``a2a-trio card``'s start, told by Python's report of each
    module it has loaded (``PYTHONPROFILEIMPORTTIME``): while it loads (most of a second), as
    it reads its command line, or once it waits for an agent that never answers.  Before, one
    while it loaded printed Python's traceback of the import under way."""
    with socket.socket() as silent:  # accepts connections (the backlog does), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        silent.settimeout(30)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        command = [SCRIPT, "card", url, "--timeout", "10"]  # ends a test whose mark never came
        env = ENV | {"PYTHONPROFILEIMPORTTIME": "1"}
        with (
            subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env) as proc,
            contextlib.ExitStack() as connections,
        ):
            assert proc.stderr is not None
            if loaded:
                while (line := proc.stderr.readline()).rpartition("|")[2].strip() != loaded:
                    assert line, f"{loaded} was never loaded"
            else:  # connected: kept open, as a hang-up would race the Ctrl-C with an error
                connections.enter_context(silent.accept()[0])
            proc.send_signal(signal.SIGINT)
            err = proc.stderr.read()
    assert proc.returncode == 130
    said = [line for line in err.splitlines() if not line.startswith("import time:")]
    assert "".join(said).strip() == ""  # click's blank line after a ^C, at most


# Runs the command's entry point; while it loads a2a_trio.client, a SIGINT arrives inside a
# weakref callback, as one does when it lands in importlib's callback for a module lock.
CTRL_C_IN_A_CALLBACK = """
import os, signal, sys, weakref

def spin():  # a Python call: the signal's Python handler runs on entering it
    pass

class Probe:
    pass

class InterruptWhileLoading:
    def find_spec(self, name, path=None, target=None):
        if name == "a2a_trio.client":
            sys.meta_path.remove(self)
            probe = Probe()
            ref = weakref.ref(probe, lambda _: (os.kill(os.getpid(), signal.SIGINT), spin()))
            del probe
        return None

sys.meta_path.insert(0, InterruptWhileLoading())
sys.argv = ["a2a-trio", *sys.argv[1:]]
from a2a_trio._cli import main
sys.exit(main())
"""


def test_ctrl_c_where_python_ignores_exceptions_still_stops_the_loading_command() -> None:
    """Python's own SIGINT handler raises where the interpreter is: inside a callback whose
    exceptions Python prints as "Exception ignored" and drops, the Ctrl-C was lost and the
    command ran on (here: to its timeout).  While the command loads, a Ctrl-C is only noted,
    and acted on once it has loaded."""
    with socket.socket() as silent:  # accepts connections (the backlog does), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        command = [sys.executable, "-c", CTRL_C_IN_A_CALLBACK, "card", url, "--timeout", "5"]
        done = subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=60)
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip() == ""


async def test_a_stream_broken_off_by_an_error_says_how_to_follow_the_task_on() -> None:
    """An error ending a stream before its task did: the one error line names the command
    that follows the task on from the last event shown.  A stream that broke off before any
    task was seen gets no such hint (a stream ends by itself once its task has ended)."""
    working = m.Task("t1", m.TaskStatus(m.TaskState.WORKING), context_id="c1")

    async def handler(request: Request, reply: Reply) -> None:
        await reply.start_sse()
        if request.json()["params"]["message"]["parts"][0]["text"] == "running":
            await reply.event(stream_result(working) | {"id": reply.request_id}, event_id="4")
        await reply.event(rpc_error(-32603, "Internal error", reply.request_id))
        await reply.end_sse()

    async with open_stub_agent(handler) as agent:
        results = [
            await trio.run_process(
                [SCRIPT, "stream", agent.url, text],
                capture_stdout=True,
                capture_stderr=True,
                env=ENV,
                check=False,
            )
            for text in ("running", "nothing")
        ]
    assert [result.returncode for result in results] == [2, 2]
    running, nothing = (result.stderr.decode() for result in results)
    assert running == (
        "error: InternalError (-32603): Internal error (to follow the task on:"
        f" a2a-trio subscribe {agent.url} t1 --after 4)\n"
    )
    assert nothing == "error: InternalError (-32603): Internal error\n"


def test_trust_origin_lets_the_card_send_you_to_another_origin(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The card fetched from 127.0.0.1 names its interface at localhost (another origin, the
    same server): refused without --trust-origin, used with it; a bad value is a usage error."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    public = f"http://localhost:{port}"
    with serving_demo("--port", str(port), "--public-url", public) as (_proc, url):
        code, _, err = in_process(capsys, "send", url, "ping")
        assert code == 2 and err.endswith(f"(to use it, pass --trust-origin {public})\n")
        code, out, _ = in_process(capsys, "send", url, "ping", "--json", "--trust-origin", public)
        assert code == 0
        assert json.loads(out)["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        code, _, err = in_process(capsys, "card", url, "--trust-origin", "ftp://x")
        assert (code, err) == (
            1,
            "error: Invalid value for '--trust-origin': 'ftp://x' is not an http:// or"
            " https:// origin (see 'a2a-trio card --help')\n",
        )


def test_the_client_commands_start_without_the_server() -> None:
    """The CLI and the client import neither Quart nor hypercorn (about half of what
    ``a2a-trio send`` spent starting, before); ``a2a-trio serve`` and ``a2a_trio.serve``
    load them when used."""
    probe = (
        "import sys, a2a_trio.cli, a2a_trio.client\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'quart', 'hypercorn', 'flask'}))\n"
        "print('a2a_trio.server' in sys.modules)\n"
        "import a2a_trio\n"
        "print(a2a_trio.serve.__module__, 'quart' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.splitlines() == ["[]", "False", "a2a_trio.server._serve True"]


MESSAGE = "two lines,\nand not only ASCII: héllo ✓\n"


def echoed(result: subprocess.CompletedProcess[str]) -> list[str]:
    """The texts of the task the demo agent's echo skill answered ``send --json`` with: its
    artifact's (the text it received), and the message's in its history."""
    assert result.returncode == 0, result.stderr
    task = json.loads(result.stdout)["task"]
    return [task["artifacts"][0]["parts"][0]["text"], task["history"][0]["parts"][0]["text"]]


def test_the_message_comes_from_stdin_or_a_file(
    served_demo: tuple[subprocess.Popen[str], str], tmp_path: Path
) -> None:
    """``TEXT`` of ``-`` reads the message from stdin, ``--text-file PATH`` from a file, for
    ``send`` and ``stream``: sent whole and as it is (line breaks, UTF-8), a byte-order mark
    left out.  Before, the message could only be a command-line argument."""
    _, url = served_demo
    saved = tmp_path / "message.txt"
    saved.write_text(MESSAGE, encoding="utf-8")
    with_bom = tmp_path / "windows.txt"
    with_bom.write_bytes(b"\xef\xbb\xbf" + MESSAGE.encode())

    def sent(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [SCRIPT, *args, "--json"],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            env=ENV,
            check=False,
        )

    assert echoed(sent("send", url, "-", stdin=MESSAGE)) == [MESSAGE, MESSAGE]
    assert echoed(sent("send", url, "--text-file", "-", stdin=MESSAGE)) == [MESSAGE, MESSAGE]
    assert echoed(sent("send", url, "--text-file", str(saved))) == [MESSAGE, MESSAGE]
    assert echoed(sent("send", url, "--text-file", str(with_bom))) == [MESSAGE, MESSAGE]
    streamed = sent("stream", url, "-", stdin=MESSAGE)
    assert streamed.returncode == 0, streamed.stderr
    task_id = json.loads(streamed.stdout.splitlines()[0])["task"]["id"]
    assert json.loads(streamed.stdout.splitlines()[-1])["statusUpdate"]["status"]["state"] == (
        "TASK_STATE_COMPLETED"
    )
    task = ok_json("get", url, task_id)["task"]
    assert task["history"][0]["parts"][0]["text"] == MESSAGE
    streamed = sent("stream", url, "--text-file", str(saved))
    assert streamed.returncode == 0, streamed.stderr
    task_id = json.loads(streamed.stdout.splitlines()[0])["task"]["id"]
    assert ok_json("get", url, task_id)["task"]["artifacts"][0]["parts"][0]["text"] == MESSAGE


def test_a_message_typed_at_a_terminal_is_prompted_for(
    served_demo: tuple[subprocess.Popen[str], str],
) -> None:
    """``-`` with stdin a terminal says on stderr how to end the message, which is then sent as
    typed; piped stdin gets no such line.  Before, the command sat silent, as if hung."""
    _, url = served_demo
    child = pexpect.spawn(SCRIPT, ["send", url, "-", "--json"], env=ENV, encoding="utf-8")
    try:
        child.expect_exact(TYPING_HINT, timeout=20)
        child.sendline("first line")
        child.sendline("café")
        child.sendeof()
        child.expect(pexpect.EOF, timeout=30)
    finally:
        child.close()
    assert child.exitstatus == 0
    answer = json.loads((child.before or "").strip().splitlines()[-1])
    assert answer["task"]["history"][0]["parts"][0]["text"] == "first line\ncafé\n"
    piped = subprocess.run(
        [SCRIPT, "send", url, "-", "--json"],
        input="piped",
        capture_output=True,
        text=True,
        timeout=60,
        env=ENV,
        check=False,
    )
    assert (piped.returncode, piped.stderr) == (0, "")


@pytest.mark.parametrize("command", ["send", "stream"])
@pytest.mark.parametrize(
    ("args", "stdin", "text"),
    [
        (["--text-file", "{tmp}/nowhere.txt"], None, "--text-file '{tmp}/nowhere.txt': No such"),
        (["--text-file", "{tmp}"], None, "--text-file '{tmp}': Is a directory"),
        (
            ["--text-file", "{tmp}/latin1.txt"],
            None,
            "--text-file '{tmp}/latin1.txt' is not UTF-8 text (byte 0xe9 on line 2): save it as",
        ),
        (["-"], b"first\ncaf\xe9\n", "stdin is not UTF-8 text (byte 0xe9 on line 2)"),
        (
            ["hi", "--text-file", "{tmp}/latin1.txt"],
            None,
            "give the message as TEXT or with --text-file, not",
        ),
        ([], None, "Missing argument 'TEXT': give the message, - to read it from stdin, or --text"),
    ],
)
def test_a_message_that_cannot_be_read_is_a_usage_error(
    command: str,
    args: list[str],
    stdin: bytes | None,
    text: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Said in one line naming the file or stdin, before anything is sent (the URL is never
    called), exit 1 as every usage error."""
    (tmp_path / "latin1.txt").write_bytes(b"first\ncaf\xe9\n")
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    filled = [arg.format(tmp=tmp_path) for arg in args]
    code, out, err = in_process(capsys, command, "http://127.0.0.1:1", *filled)
    assert (code, out) == (1, "")
    assert err.startswith(f"error: {text.format(tmp=tmp_path)}")
    assert err.count("\n") == 1


def test_a_message_file_or_stdin_the_command_may_not_read_is_one_line(tmp_path: Path) -> None:
    """In a real process: a file this user may not read, and stdin closed, are usage errors
    saying so, not a traceback."""
    secret = tmp_path / "secret.txt"
    secret.write_text("hi")
    secret.chmod(0o000)
    command = [SCRIPT, "send", "http://127.0.0.1:1", "--text-file", str(secret)]
    result = subprocess.run(
        without_permission_override(command),
        capture_output=True,
        text=True,
        timeout=60,
        env=ENV,
        check=False,
    )
    assert_one_line_error(result, 1, f"--text-file '{secret}': Permission denied")
    closed = subprocess.run(
        ["bash", "-c", f"{SCRIPT} send http://127.0.0.1:1 - <&-"],
        capture_output=True,
        text=True,
        timeout=60,
        env=ENV,
        check=False,
    )
    assert_one_line_error(closed, 1, "TEXT '-' reads the message from stdin, but stdin is closed")


def test_a_blocking_send_stopped_with_ctrl_c_names_the_task_it_leaves_running(
    served_demo: tuple[subprocess.Popen[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C on a blocking ``send``: exit 130 and, on stderr, the task it started (found by
    the message's id among the agent's newest tasks) with the commands that show and stop
    it; they work.  Before, the command exited saying nothing: a blocking answer names its
    task only at the end, and the user was left with a running task and no handle on it."""
    _, url = served_demo

    def working() -> list[str]:
        code, out, err = in_process(capsys, "list", url, "--state", "working", "--json")
        assert code == 0, err
        return [task["id"] for task in json.loads(out).get("tasks", [])]

    with started("send", url, "60", "--skill", "countdown") as proc:
        while not (running := working()):
            assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (130, "")
    [task_id] = running
    get, cancel = (f"a2a-trio {verb} {url} {task_id}" for verb in ("get", "cancel"))
    assert err == f"task {task_id} goes on at the agent\nto see it: {get}\nto stop it: {cancel}\n"
    shown = run(*shlex.split(get)[1:], "--json")
    assert json.loads(shown.stdout)["task"]["status"]["state"] == "TASK_STATE_WORKING"
    stopped = run(*shlex.split(cancel)[1:], "--json")
    assert json.loads(stopped.stdout)["task"]["status"]["state"] == "TASK_STATE_CANCELED"


@pytest.mark.parametrize(
    ("options", "listing", "said"),
    [
        (  # it continues a task: its id is known, nothing is looked up
            ["--task-id", "t1"],
            None,
            "task t1 goes on at the agent\nto see it: a2a-trio get {url} t1\n"
            "to stop it: a2a-trio cancel {url} t1\n",
        ),
        (  # the agent cannot list its tasks
            ["--context-id", "c1"],
            rpc_error(-32601, "Method not found"),
            "the agent had not said which task message {message} started, if any\n"
            "to find it (newest first): a2a-trio list {url} --context-id c1\n",
        ),
        (  # the agent does not answer in time (5 s): Ctrl-C does not wait on
            ["--context-id", "c2"],
            "silent",
            "the agent had not said which task message {message} started, if any\n"
            "to find it (newest first): a2a-trio list {url} --context-id c2\n",
        ),
        (  # the task is not listed (yet), or the agent answered with a message
            [],
            rpc_result(V1.encode(m.ListTasksResponse(tasks=(), page_size=0, total_size=0))),
            "the agent had not said which task message {message} started, if any\n"
            "to find it (newest first): a2a-trio list {url}\n",
        ),
    ],
)
async def test_a_blocking_send_stopped_with_ctrl_c_says_how_to_find_its_task(
    options: list[str], listing: dict[str, Any] | str | None, said: str
) -> None:
    """When the task's id cannot be known, Ctrl-C names the message (the command gave it its
    id) and the ``list`` command that finds its task, in its context when the command named
    one; exit 130 all the same."""
    sending = trio.Event()

    async def handler(request: Request, reply: Reply) -> None:
        if request.json()["method"] == "SendMessage":
            sending.set()
            await trio.sleep_forever()  # a blocking send, waiting for the task to end
        if listing == "silent":
            await trio.sleep_forever()
        await reply.json(listing)

    ended: list[subprocess.CompletedProcess[bytes]] = []

    async def send(command: list[str], *, task_status: trio.TaskStatus[trio.Process]) -> None:
        run = partial(trio.run_process, capture_stdout=True, capture_stderr=True, check=False)
        ended.append(await run(command, env=ENV, task_status=task_status))

    async with open_stub_agent(handler) as agent, trio.open_nursery() as nursery:
        with trio.fail_after(30):
            proc = await nursery.start(send, [SCRIPT, "send", agent.url, "hi", *options])
            await sending.wait()
        proc.send_signal(signal.SIGINT)
    sent = [r.json() for r in agent.requests if r.path == "/rpc"]
    [result] = ended
    assert (result.returncode, result.stdout) == (130, b"")
    message = sent[0]["params"]["message"]["messageId"]
    assert result.stderr.decode() == said.format(url=agent.url, message=message)
    assert [r["method"] for r in sent] == ["SendMessage"] + ["ListTasks"] * (listing is not None)
