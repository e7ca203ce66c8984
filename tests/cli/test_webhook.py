"""``a2a-trio webhook`` prints the push notifications an agent sends, and ``send --webhook``
asks an agent for them: the whole loop from a terminal, against ``a2a-trio serve --push``."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from a2a_trio import model as m
from a2a_trio._cli._webhook import decode_notification, notification_line
from a2a_trio.errors import InvalidParamsError
from a2a_trio.wire import V03, dumps

from .test_cli import ENV, SCRIPT, in_process, serving_demo


@contextmanager
def webhook_command(*options: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``a2a-trio webhook`` on a free port, and its URL (from its first line, on stderr)."""
    command = [SCRIPT, "webhook", "--port", "0", *options]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        try:
            line = proc.stderr.readline()
            assert line.startswith("receiving push notifications at http://"), line
            yield proc, line.split(" at ")[1].strip()
        finally:
            proc.kill()
            proc.wait(timeout=10)


def test_notifications_read_as_one_line_each() -> None:
    said = m.Message("q", m.Role.AGENT, (m.TextPart("line one\nline  two"),))
    status = m.TaskStatus(m.TaskState.WORKING, message=said)
    assert notification_line(m.TaskStatusUpdateEvent("t1", "c1", status)) == (
        "task t1 WORKING  line one line two"
    )
    artifact = m.Artifact("a1", (m.TextPart("3\n"),), name="countdown")
    chunk = m.TaskArtifactUpdateEvent("t1", "c1", artifact, append=True, last_chunk=False)
    assert notification_line(chunk) == "task t1 artifact countdown: 3 …"
    done = m.TaskStatusUpdateEvent("t1", "c1", m.TaskStatus(m.TaskState.COMPLETED))
    assert notification_line(done) == "task t1 COMPLETED"


def test_send_webhook_and_the_webhook_command_show_a_task_from_a_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with (
        webhook_command("--notification-token", "s3") as (hook, hook_url),
        serving_demo("--push", "private") as (_agent, url),
    ):
        code, out, err = in_process(
            capsys,
            "send",
            url,
            "2",
            "--skill",
            "countdown",
            "--no-wait",
            "--webhook",
            hook_url + "a2a",
            "--notification-token",
            "s3",
            "--json",
        )
        assert code == 0, err
        task_id = json.loads(out)["task"]["id"]
        assert hook.stdout is not None and hook.stderr is not None
        lines = []
        while not lines or not lines[-1].endswith("COMPLETED"):
            lines.append(hook.stdout.readline().rstrip("\n"))
        assert lines[0] == f"task {task_id} SUBMITTED"
        assert f"task {task_id} artifact countdown: 2 …" in lines
        assert all(line.startswith(f"task {task_id} ") for line in lines)
        # Anything else POSTed there is refused, and said so on stderr.
        wrong = httpx.post(
            hook_url, json={"statusUpdate": {}}, headers={"X-A2A-Notification-Token": "no"}
        )
        assert wrong.status_code == 401
        assert (
            hook.stderr.readline()
            == "refused a notification with a wrong X-A2A-Notification-Token\n"
        )
        garbage = httpx.post(hook_url, content=b"{", headers={"X-A2A-Notification-Token": "s3"})
        assert garbage.status_code == 400
        assert hook.stderr.readline().startswith(
            "refused a body that is not an A2A notification (a v1.0 StreamResponse, or a v0.3"
            " Task or event) ("
        )
        too_big = httpx.post(
            hook_url, content=b" " * (1024 * 1024 + 1), headers={"X-A2A-Notification-Token": "s3"}
        )
        assert too_big.status_code == 413
        assert hook.stderr.readline() == "refused a notification of more than 1048576 bytes\n"
        assert httpx.get(hook_url).status_code == 405


def test_the_webhook_command_reads_what_v03_agents_send_too() -> None:
    """An A2A v0.3 agent POSTs the Task itself (v0.3 §9.6), or an event, with its ``kind``;
    ``--json`` prints each body as it came."""
    said = m.Message("q", m.Role.AGENT, (m.TextPart("ready"),))
    task = m.Task("t1", m.TaskStatus(m.TaskState.COMPLETED, message=said), context_id="c1")
    artifact = m.Artifact("a1", (m.TextPart("42"),), name="answer")
    chunk = m.TaskArtifactUpdateEvent("t1", "c1", artifact, last_chunk=True)
    bodies = [V03.encode_stream_event(task), V03.encode_stream_event(chunk)]
    assert [body["kind"] for body in bodies] == ["task", "artifact-update"]
    for options, expected in [
        ((), ["task t1 COMPLETED  ready", "task t1 artifact answer: 42"]),
        (("--json",), [dumps(body).decode() for body in bodies]),
    ]:
        with webhook_command(*options) as (hook, hook_url):
            assert hook.stdout is not None
            for body in bodies:
                assert httpx.post(hook_url, json=body).status_code == 204
            assert [hook.stdout.readline().rstrip("\n") for _ in bodies] == expected
    with pytest.raises(InvalidParamsError, match="kind must be one of"):
        decode_notification({**bodies[0], "kind": "news"})


def test_the_webhook_command_says_when_its_port_is_taken() -> None:
    with webhook_command() as (_hook, hook_url):
        port = hook_url.rsplit(":", 1)[1].strip("/")
        taken = subprocess.run(
            [SCRIPT, "webhook", "--port", port], capture_output=True, text=True, env=ENV, timeout=30
        )
    assert taken.returncode == 2
    assert taken.stderr.startswith(
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use"
    )
    assert "--port 0 picks a free one" in taken.stderr
