"""A randomized soak with the official A2A JavaScript SDK's client as the peer (``soak.mjs``).

One ``node`` process runs twenty clients, each holding the SDK's client for v1.0 JSON-RPC, v1.0
HTTP+JSON and the SDK's v0.3 compatibility transports (JSON-RPC and HTTP+JSON), against one real
server (hypercorn on 127.0.0.1 serving ``create_app`` with the soak agents, on each store):
blocking and non-blocking sends, streams read to the end, left after a few events or aborted,
resubscribes, cancels of running and finished tasks, gets with history lengths, lists with
filters and paging, answers to questions, and refused requests.  It prints every call; then
each is judged here against the specification and the store: every answer holds what the store
holds, every stream read to the end is a run of the stored log and ends where it should, every
cancel's answer is the stored end, every refusal is the specification's typed error, every task
in the store was made by a call, no job or stream is left, nothing was logged as an error.

The seed is printed; ``A2A_TRIO_JS_SOAK_SEED`` replays one (as far as the scheduling allows)
and ``A2A_TRIO_JS_SOAK_SECONDS`` changes the load's length (6 s by default, about 12 s per
store).
"""

from __future__ import annotations

import json
import logging
import os
import random
from collections import Counter
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio
from bindings.conftest import CONFIG
from bindings.test_soak import (
    TERMINAL,
    Tracked,
    all_task_ids,
    assert_no_errors_logged,
    check_log,
    serving_soak,
)
from client.test_sdk_client_soak import check_stream, trickled

from a2a_trio import model as m
from a2a_trio.store import ANONYMOUS, TaskStore
from a2a_trio.wire import V1
from a2a_trio.wire._legacy import parts_text

from .js_peer import HERE

pytestmark = pytest.mark.slow

SEED_VARIABLE = "A2A_TRIO_JS_SOAK_SEED"
SECONDS_VARIABLE = "A2A_TRIO_JS_SOAK_SECONDS"
CLIENTS = 20
KEEP_ALIVE = 5
"""The server's keep-alive timer, past Node's fetch's own (4 s, which a test cannot set without
the undici package): a request sent on a connection the server's timer is closing meanwhile
fails (``fetch failed``, ``UND_ERR_SOCKET``), the race any HTTP client has with a server's idle
timer (seed 2251446194 hit it at the soaks' usual 1 s; bindings/test_soak.py's
``CLIENT_LIMITS``)."""

# How the SDK's transports show the specification's errors: the prefix of its class.
ERROR_CLASS_PREFIX = {
    "JSONRPC 1.0": "JsonRpc",
    "HTTP+JSON 1.0": "Rest",
    "JSONRPC 0.3": "JsonRpc",
    "HTTP+JSON 0.3": "",
}

SPEC_CODES = {
    "TaskNotFoundError": (-32001, 404),
    "TaskNotCancelableError": (-32002, 409),
    "UnsupportedOperationError": (-32004, 400),
    "RequestMalformedError": (-32602, 400),  # InvalidParams, as the SDK names it
}
"""The specification's JSON-RPC code and HTTP status of each error the soak meets (A2A v1.0
§5.4's table)."""

# The SDK's v0.3 transports refuse ListTasks by themselves, with no request sent, though v0.3
# §7.4 defines it and a2a_trio serves it (docs/bindings.md; test_js_client.py pins the same).
V03_LIST_REFUSAL = {
    "JSONRPC 0.3": ("JsonRpcTransportError", "Method not found: tasks/list"),
    "HTTP+JSON 0.3": (
        "UnsupportedOperationError",
        "tasks/list has no equivalent in v0.3 HTTP+JSON",
    ),
}


def state(event: m.Task | m.TaskStatusUpdateEvent) -> str:
    return event.status.state.name


def text_of(artifacts: tuple[m.Artifact, ...]) -> str:
    return "".join(parts_text(a.parts) for a in artifacts)


DROPS_APPEND = "HTTP+JSON 0.3"
"""The SDK's v0.3 HTTP+JSON transport drops ``append`` from every artifact update it reads
(its v0.3-to-v1.0 translation leaves the proto's field out), so a chunked artifact reads as
each chunk replacing the one before; the v0.3 proto defines it (``TaskArtifactUpdateEvent``
field 4: the chunk is appended to the artifact) and a2a_trio sends it."""


def rebuild(events: list[m.StreamEvent], via: str) -> str:
    """The artifact text a stream's events build: the first Task's artifacts, then each
    artifact update appended to (``append``) or replacing its artifact.  Through the
    transport that drops ``append`` an artifact seen before is appended to (the soak agents
    chunk so)."""
    artifacts: dict[str, str] = {}
    for event in events:
        if isinstance(event, m.Task):
            artifacts = {a.artifact_id: parts_text(a.parts) for a in event.artifacts}
        elif isinstance(event, m.TaskArtifactUpdateEvent):
            append = event.append or via == DROPS_APPEND
            old = artifacts.get(event.artifact.artifact_id, "") if append else ""
            artifacts[event.artifact.artifact_id] = old + parts_text(event.artifact.parts)
    return "".join(artifacts.values())


def shown(call: dict[str, Any]) -> str:
    """A call as ``soak.mjs`` logged it, for a failure's message."""
    return json.dumps(call, ensure_ascii=False)


def v03_proto_shape(message: m.Message) -> m.Message:
    """``message`` less what the v0.3 proto (HTTP+JSON's shape) has no field for: a part's
    file name and metadata, the referenced tasks."""
    parts = tuple(attrs.evolve(part, filename="", metadata=None) for part in message.parts)
    return attrs.evolve(message, parts=parts, reference_task_ids=())


def history_bound(via: str, history_length: int | None) -> int | None:
    """The history an answer to ``history_length`` holds at most: a v1.0 0 means none (A2A
    v1.0 §3.2.4); v0.3 gives 0 no meaning of its own, and a2a_trio reads it as no limit there,
    as deployed v0.3 servers do (docs/model.md)."""
    if history_length == 0 and via.endswith("0.3"):
        return None
    return history_length


def without_append(event: m.StreamEvent) -> m.StreamEvent:
    if isinstance(event, m.TaskArtifactUpdateEvent):
        return attrs.evolve(event, append=False)
    return event


def last_state(events: list[m.StreamEvent]) -> str:
    last = events[-1]
    assert isinstance(last, m.Task | m.TaskStatusUpdateEvent), last
    return state(last)


type Streamed = tuple[str, list[m.StreamEvent]]
"""A stream read to the end: the interface it came through, its events."""


@attrs.define
class Judge:
    """The calls ``soak.mjs`` made, judged one by one, and what they say of each task."""

    tasks: dict[str, Tracked[Streamed]] = attrs.field(factory=dict)
    answers: list[tuple[str, m.Task]] = attrs.field(factory=list)
    """Tasks answered as final (a blocking send's, a cancel's, a get's of a finished task):
    each must be as stored."""
    first_messages: list[m.Message] = attrs.field(factory=list)
    """The messages of every kind of part sent, as their tasks must store them."""
    histories: list[tuple[str, m.Task, int]] = attrs.field(factory=list)
    """Finished tasks got with a history length: each history the stored one's tail."""
    streamed: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    """The streaming sends, by their message's id (one aborted early may leave a task no
    client knows of)."""

    def track(self, task_id: str, skill: str, text: str = "") -> Tracked[Streamed]:
        return self.tasks.setdefault(task_id, Tracked(skill, text))

    def saw(self, task_id: str, seen: str) -> None:
        if seen in TERMINAL:
            self.tasks[task_id].ends_seen.add(seen)

    def error(self, call: dict[str, Any], name: str) -> None:
        """The call failed as the specification's ``name`` error, as the SDK types it."""
        error = call.get("error")
        assert error is not None, shown(call)
        expected = (ERROR_CLASS_PREFIX[call["via"]] + name, name)
        assert (error["class"], error["name"]) == expected, shown(call)
        json_rpc, http = SPEC_CODES[name]
        # the SDK's v0.3 HTTP+JSON errors keep no code (it types them by the body's code)
        codes = {"JSONRPC 1.0": json_rpc, "JSONRPC 0.3": json_rpc, "HTTP+JSON 1.0": http}
        assert error.get("code") == codes.get(call["via"]), shown(call)

    def call(self, call: dict[str, Any]) -> None:
        getattr(self, call["op"])(call, call["asked"])

    def task(self, call: dict[str, Any]) -> m.Task:
        assert "error" not in call, shown(call)
        task = V1.decode_stream_response(call["task"])
        assert isinstance(task, m.Task), shown(call)
        return task

    def events(self, call: dict[str, Any]) -> list[m.StreamEvent]:
        assert "error" not in call, shown(call)
        events = [V1.decode_stream_response(event) for event in call["events"]]
        assert call["end"] == "abort" or events, shown(call)
        if events:
            first = events[0]
            assert isinstance(first, m.Task), shown(call)
            assert all(getattr(e, "task_id", first.id) == first.id for e in events), shown(call)
        if call["end"] == "break":
            assert len(events) == call["asked"]["limit"], shown(call)
        if call["via"] == DROPS_APPEND:
            updates = [e for e in events if isinstance(e, m.TaskArtifactUpdateEvent)]
            assert not any(update.append for update in updates), shown(call)
        return events

    # --- the operations, as soak.mjs names them --------------------------------------------

    def send(self, call: dict[str, Any], asked: dict[str, Any]) -> None:
        task = self.task(call)
        self.track(task.id, asked["skill"], asked["text"])
        if asked["contextId"]:
            assert task.context_id == asked["contextId"], shown(call)
        if asked["skill"] == "ask":
            assert state(task) == "INPUT_REQUIRED", shown(call)
            return
        assert (state(task), text_of(task.artifacts)) == ("COMPLETED", asked["text"]), shown(call)
        bound = history_bound(call["via"], asked.get("historyLength"))
        assert len(task.history) <= (1 if bound is None else bound), shown(call)
        self.saw(task.id, "COMPLETED")
        self.answers.append((call["via"], task))

    def parts(self, call: dict[str, Any], asked: dict[str, Any]) -> None:
        """A message of every kind of part: the task's first message is the one sent, to
        the client as in the store."""
        task = self.task(call)
        self.track(task.id, "echo", asked["text"])
        assert (state(task), text_of(task.artifacts)) == ("COMPLETED", asked["text"]), shown(call)
        self.saw(task.id, "COMPLETED")
        self.answers.append((call["via"], task))
        sent = V1.decode_stream_response(asked["message"])
        assert isinstance(sent, m.Message)
        sent = attrs.evolve(sent, task_id=task.id, context_id=task.context_id)
        if call["via"] == "HTTP+JSON 0.3":
            sent = v03_proto_shape(sent)
        got = V1.decode_stream_response(call["got"])
        assert isinstance(got, m.Task), shown(call)
        assert got.history[0] == sent, f"{call['via']}\n{got.history[0]!r}\n{sent!r}"
        self.first_messages.append(sent)

    def start(self, call: dict[str, Any], asked: dict[str, Any]) -> None:
        task = self.task(call)
        if asked["skill"] == "hold":
            assert state(task) in ("SUBMITTED", "WORKING"), shown(call)
            self.track(task.id, "hold")
        else:
            assert state(task) not in TERMINAL - {"COMPLETED"}, shown(call)
            self.track(task.id, "trickle", trickled(asked["text"]))
            self.saw(task.id, state(task))

    def stream(self, call: dict[str, Any], asked: dict[str, Any]) -> None:
        self.streamed[asked["messageId"]] = call
        events = self.events(call)
        if not events:
            return
        first = events[0]
        assert isinstance(first, m.Task)
        expected = trickled(asked["text"]) if asked["skill"] == "trickle" else asked["text"]
        tracked = self.track(first.id, asked["skill"], "" if asked["skill"] == "ask" else expected)
        if call["end"] != "end":
            return
        tracked.streams.append((call["via"], events))
        if asked["skill"] == "ask":
            assert last_state(events) == "INPUT_REQUIRED", shown(call)
        else:
            assert (last_state(events), rebuild(events, call["via"])) == ("COMPLETED", expected), (
                call
            )
            self.saw(first.id, "COMPLETED")

    def answer(self, call: dict[str, Any], asked: dict[str, Any]) -> None:
        task_id, greeting = asked["taskId"], "hello " + asked["text"]
        self.tasks[task_id].text = greeting
        if asked.get("streaming"):
            events = self.events(call)
            assert call["end"] == "end", shown(call)
            assert isinstance(events[0], m.Task) and events[0].id == task_id, shown(call)
            assert (last_state(events), rebuild(events, call["via"])) == ("COMPLETED", greeting), (
                call
            )
            self.tasks[task_id].streams.append((call["via"], events))
        else:
            task = self.task(call)
            assert task.id == task_id, shown(call)
            assert (state(task), text_of(task.artifacts)) == ("COMPLETED", greeting), shown(call)
            self.answers.append((call["via"], task))
        self.saw(task_id, "COMPLETED")

    def race(self, call: dict[str, Any], asked: dict[str, Any]) -> None:
        """Two answers to one question at once: one completes the task, the other is refused
        (the task is no longer waiting for input, §3.1.1)."""
        assert "error" not in call, shown(call)
        taken = [i for i, answer in enumerate(call["answers"]) if "task" in answer]
        assert len(taken) == 1, shown(call)
        (winner,) = taken
        refused = call["answers"][1 - winner]["error"]
        via = asked["vias"][1 - winner]
        name = "UnsupportedOperationError"
        assert (refused["class"], refused["name"]) == (ERROR_CLASS_PREFIX[via] + name, name), shown(
            call
        )
        self.answer(
            {**call, "via": asked["vias"][winner], **call["answers"][winner]},
            {"taskId": asked["taskId"], "text": asked["names"][winner]},
        )

    def resubscribe(self, call: dict[str, Any], asked: dict[str, Any]) -> None:
        if "error" in call:  # it ended meanwhile: a finished task has no updates (§3.1.6)
            self.error(call, "UnsupportedOperationError")
            return
        events = self.events(call)
        if events:
            assert isinstance(events[0], m.Task) and events[0].id == asked["id"], shown(call)
        if call["end"] == "end":
            self.tasks[asked["id"]].streams.append((call["via"], events))
            self.saw(asked["id"], last_state(events))

    def cancel(self, call: dict[str, Any], asked: dict[str, Any]) -> None:
        tracked = self.tasks[asked["id"]]
        if "error" in call:  # finished before the cancel came (§3.1.5)
            self.error(call, "TaskNotCancelableError")
            tracked.cancels.append("not cancelable")
            return
        task = self.task(call)
        assert (task.id, state(task)) == (asked["id"], "CANCELED"), shown(call)
        tracked.cancels.append("CANCELED")
        self.saw(task.id, "CANCELED")
        self.answers.append((call["via"], task))

    def get(self, call: dict[str, Any], asked: dict[str, Any]) -> None:
        task = self.task(call)
        assert task.id == asked["id"], shown(call)
        self.saw(task.id, state(task))
        bound = history_bound(call["via"], asked.get("historyLength"))
        if bound is not None:
            assert len(task.history) <= bound, shown(call)
        if state(task) in TERMINAL:
            self.answers.append((call["via"], task))
            if bound is not None:
                self.histories.append((call["via"], task, bound))

    def listing(self, call: dict[str, Any], asked: dict[str, Any]) -> None:
        if self.list_refused(call):
            return
        assert "error" not in call, shown(call)
        assert call["pageSize"] == asked["pageSize"], shown(call)
        tasks = [V1.decode_stream_response(task) for task in call["tasks"]]
        assert len(tasks) <= asked["pageSize"], shown(call)
        for task in tasks:
            assert isinstance(task, m.Task), shown(call)
            if asked["contextId"]:
                assert task.context_id == asked["contextId"], shown(call)
            if asked["status"]:
                assert task.status.state.value == asked["status"], shown(call)
            if "historyLength" in asked:
                assert len(task.history) <= asked["historyLength"], shown(call)
            if not asked["includeArtifacts"]:
                assert not task.artifacts, shown(call)

    def list_refused(self, call: dict[str, Any]) -> bool:
        """Whether the call is a ListTasks through a v0.3 transport, refused by the SDK."""
        if call["via"] not in V03_LIST_REFUSAL:
            return False
        error = call["error"]
        assert (error["class"], error["message"]) == V03_LIST_REFUSAL[call["via"]], shown(call)
        return True

    def bad(self, call: dict[str, Any], asked: dict[str, Any]) -> None:
        """A refused request, as the specification types it (invalid params are the SDK's
        RequestMalformedError)."""
        if asked["kind"] == "bigPage" and self.list_refused(call):
            return
        self.error(
            call,
            {
                "getUnknown": "TaskNotFoundError",
                "cancelUnknown": "TaskNotFoundError",
                "subscribeUnknown": "TaskNotFoundError",
                "subscribeFinished": "UnsupportedOperationError",  # no updates to come (§3.1.6)
                "noSkill": "RequestMalformedError",
                "late": "UnsupportedOperationError",
                "bigPage": "RequestMalformedError",
                "negativeHistory": "RequestMalformedError",
            }[asked["kind"]],
        )

    # --- against the store --------------------------------------------------------------

    async def check_store(self, store: TaskStore) -> None:
        """Every task ended as its skill and its cancels say, in the store and to every
        client; every answer as final is the stored task; every stream read to the end is a
        run of the stored log; every task was made by a call."""
        for task_id in await all_task_ids(store) - set(self.tasks):
            stored = await store.load_task(ANONYMOUS, task_id)
            assert stored is not None and stored.task.history, task_id
            sent = self.streamed.get(stored.task.history[0].message_id)
            assert sent is not None, f"task {task_id} was made by no call"
            assert sent["end"] == "abort" and not sent["events"], sent
            asked = sent["asked"]
            text = trickled(asked["text"]) if asked["skill"] == "trickle" else asked["text"]
            self.track(task_id, asked["skill"], text)
        for task_id, tracked in self.tasks.items():
            stored = await store.load_task(ANONYMOUS, task_id)
            assert stored is not None, task_id
            expected = tracked.expected_state()
            assert state(stored.task) == expected, (task_id, tracked)
            if expected == "COMPLETED":
                assert text_of(stored.task.artifacts) == tracked.text, (task_id, tracked)
            assert tracked.ends_seen <= {expected}, (task_id, tracked)
            log = await check_log(store, task_id)
            for via, events in tracked.streams:
                if via == DROPS_APPEND:
                    check_stream(events, {seq: without_append(e) for seq, e in log.items()})
                else:
                    check_stream(events, log)
                # read to the end: to the task's end, or to the question an ask skill asks
                ended = last_state(events)
                assert ended in {expected, "INPUT_REQUIRED" if tracked.skill == "ask" else ""}
                if ended == "COMPLETED":
                    assert rebuild(events, via) == tracked.text, (via, events, tracked)
        for via, task in self.answers:
            stored = await store.load_task(ANONYMOUS, task.id)
            assert stored is not None
            assert task.status == stored.task.status, (via, task, stored.task)
            assert task.artifacts == stored.task.artifacts, (via, task, stored.task)
        for sent in self.first_messages:
            stored = await store.load_task(ANONYMOUS, sent.task_id)
            assert stored is not None and stored.task.history[0] == sent, (stored, sent)
        for via, task, bound in self.histories:
            stored = await store.load_task(ANONYMOUS, task.id)
            assert stored is not None
            tail = stored.task.history[len(stored.task.history) - bound :] if bound else ()
            if via == "HTTP+JSON 0.3":
                tail = tuple(v03_proto_shape(message) for message in tail)
            assert task.history == tail, (via, task, stored.task)


async def run_soak(node: str, url: str, seed: int, seconds: float) -> dict[str, Any]:
    command = [node, str(HERE / "soak.mjs"), url, str(seconds), str(CLIENTS)]
    with trio.fail_after(seconds + 60):
        done = await trio.run_process(
            command,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=os.environ | {SEED_VARIABLE: str(seed)},
        )
    assert done.returncode == 0, done.stderr.decode()
    ran: dict[str, Any] = json.loads(done.stdout)
    return ran


@pytest.mark.parametrize("store", ["memory", "sqlite"])
async def test_js_client_soak(
    node_path: str, store: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    seed = int(os.environ.get(SEED_VARIABLE) or random.randrange(2**32))
    seconds = float(os.environ.get(SECONDS_VARIABLE) or 6)
    print(f"JS client soak seed {seed} ({SEED_VARIABLE}={seed} replays it), {seconds} s of load")
    caplog.set_level(logging.WARNING)
    judge = Judge()
    async with serving_soak(store, tmp_path, CONFIG, keep_alive=KEEP_ALIVE) as (url, runtime):
        ran = await run_soak(node_path, url, seed, seconds)
        calls = ran["calls"]
        print(f"{len(calls)} calls: {dict(Counter(c['op'] for c in calls))}")
        for op in sorted({c["op"] for c in calls}):
            times = sorted(c["ms"] for c in calls if c["op"] == op)
            print(f"{op}: median {times[len(times) // 2]} ms, slowest {times[-1]} ms")
        assert ran["seed"] == seed
        for call in calls:
            judge.call(call)
        assert len(judge.tasks) > CLIENTS, "the load made too few tasks to prove anything"
        await judge.check_store(runtime.store)
    assert_no_errors_logged(caplog)
