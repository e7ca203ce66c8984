"""A randomized soak with the official a2a-sdk client as the peer driving an a2a_trio server.

Twenty-four client tasks in one nursery, each holding the SDK's own clients (``ClientFactory``
over one card) for v1.0 JSON-RPC, v1.0 HTTP+JSON, and the SDK's v0.3 compatibility transports
(JSON-RPC and HTTP+JSON), pick random operations against one real server (hypercorn on
127.0.0.1 serving ``create_app`` with the soak agents): blocking and non-blocking sends (text
beyond ASCII, and messages of every kind of part), streaming sends read to the end or dropped
early, SubscribeToTask, cancels (of running and of finished tasks), GetTask with history
lengths, ListTasks with filters and paging, answers to a question, requests given up on
mid-flight, and refused requests.  Then the checks: every answer parsed strictly (the SDK
parses leniently; here an unknown field fails the call), every refusal arrived as the SDK's
typed error, every task ended as the store says, every stream read to the end rebuilt its
task's artifact text and is the stored log's run of events, no job or stream is left, nothing
was logged as an error.

The seed is printed; ``A2A_TRIO_SDK_SOAK_SEED`` replays one (as far as the scheduling allows)
and ``A2A_TRIO_SDK_SOAK_SECONDS`` changes the load's length (8 s by default, about 12 s per
store).
"""

from __future__ import annotations

import base64
import logging
import os
import random
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from pathlib import Path
from typing import Any

import a2a.client.transports.jsonrpc
import a2a.client.transports.rest
import a2a.types as t
import attrs
import httpx
import pytest
import trio
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.utils import errors as sdk_errors
from bindings.conftest import CONFIG
from bindings.test_soak import (
    ABANDONED,
    TERMINAL,
    Book,
    assert_no_errors_logged,
    check_log,
    serving_soak,
    status_at,
)
from google.protobuf import json_format, struct_pb2
from google.protobuf.message import Message as ProtoMessage
from server.test_sdk_interop import message as sdk_message
from server.test_sdk_interop import request as send_request

from a2a_trio import model as m
from a2a_trio.store import ANONYMOUS, TaskStore
from a2a_trio.wire import V1
from a2a_trio.wire._legacy import parts_text

pytestmark = [
    pytest.mark.slow,
    # The SDK's BaseClient, its stream closed early, leaves the async generators it reads
    # through to the GC (they are not closed when the outer one is), which trio reports; trio
    # then closes them, and with them the stream's response (the descriptor check shows it).
    pytest.mark.filterwarnings("ignore:Async generator 'a2a\\.:ResourceWarning"),
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in. <async_generator object"
        " (BaseClient|\\w*Transport|send_http_stream_request|parse_sse_stream)\\b"
        ":pytest.PytestUnraisableExceptionWarning"
    ),
]

SEED_VARIABLE = "A2A_TRIO_SDK_SOAK_SEED"
SECONDS_VARIABLE = "A2A_TRIO_SDK_SOAK_SECONDS"
CLIENTS = 24
PEERS = [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "0.3")]
"""The (binding, version) interfaces of the card each client speaks through the SDK."""


def strict_parse[T: ProtoMessage](data: dict[str, Any] | str | bytes, message: T) -> T:
    """The SDK's ``parse_lenient`` without the leniency: a field the SDK's proto does not know
    fails the call (json_format.ParseError) instead of being dropped."""
    if isinstance(data, str | bytes):
        return json_format.Parse(data, message)
    return json_format.ParseDict(data, message)


@attrs.frozen
class Peer:
    """The SDK's clients for one interface: ``unary`` sends SendMessage, ``streaming`` sends
    SendStreamingMessage and subscribes."""

    name: str
    unary: Client
    streaming: Client

    @property
    def lists(self) -> bool:
        """The SDK's v0.3 transports raise NotImplementedError for ListTasks without asking
        the server, though v0.3 defines it (§7.4; ``GET /v1/tasks`` over HTTP+JSON), and
        a2a_trio serves it (docs/bindings.md)."""
        return self.name.endswith("1.0")

    def history_bound(self, history_length: int | None) -> int | None:
        """The history a task answered to ``history_length`` holds at most.  A v1.0 0 means
        none (A2A v1.0 §3.2.4); the SDK sends it to a v0.3 server as ``historyLength: 0`` on
        JSON-RPC, which v0.3 servers (the SDK's too) read as no limit (docs/model.md), and
        not at all on HTTP+JSON (proto3 has no unset int32 there)."""
        if history_length == 0 and self.name.endswith("0.3"):
            return None
        return history_length


ODD_WORDS = ["é", "漢字", "🙂", '"q"', "b\\s", "a\u2028b", "c\u2029d", "e\x85f", "\x00", "\u200b"]
"""Words beyond ASCII and escapes, with Unicode's line ends (not SSE's: docs/bindings.md)."""


def words(rng: random.Random) -> str:
    return " ".join(
        rng.choice(ODD_WORDS) if rng.random() < 0.2 else f"w{rng.randrange(1000)}"
        for _ in range(rng.randrange(3, 9))
    )


def trickled(text: str) -> str:
    """The text the trickle skill completes with: each word (``str.split``) and a space."""
    return "".join(word + " " for word in text.split())


def state_name(state: int) -> str:
    return t.TaskState.Name(state).removeprefix("TASK_STATE_")


def artifact_text(artifacts: Any) -> str:
    return "".join(part.text for artifact in artifacts for part in artifact.parts)


def to_model(event: t.StreamResponse) -> m.StreamEvent:
    """The SDK's parsed event as a2a_trio's model, to compare with the stored log."""
    return V1.decode_stream_response(json_format.MessageToDict(event))


async def read(
    stream: AsyncIterator[t.StreamResponse], limit: int | None
) -> list[t.StreamResponse]:
    """The stream's events, all of them or the first ``limit`` (then the stream is closed)."""
    seen: list[t.StreamResponse] = []
    async with aclosing(stream) as events:  # type: ignore[type-var]
        async for event in events:
            seen.append(event)
            if len(seen) == limit:
                break
    return seen


def rebuild(events: list[t.StreamResponse]) -> str:
    """The artifact text a stream's events build: the first Task's artifacts, then each
    artifact update appended to (``append``) or replacing its artifact."""
    artifacts: dict[str, str] = {}
    for event in events:
        if event.HasField("task"):
            for artifact in event.task.artifacts:
                artifacts[artifact.artifact_id] = artifact_text([artifact])
        elif event.HasField("artifact_update"):
            update = event.artifact_update
            text = artifact_text([update.artifact])
            old = artifacts.get(update.artifact.artifact_id, "") if update.append else ""
            artifacts[update.artifact.artifact_id] = old + text
    return "".join(artifacts.values())


def last_state(events: list[t.StreamResponse]) -> str:
    event = events[-1]
    if event.HasField("task"):
        return state_name(event.task.status.state)
    assert event.HasField("status_update"), event
    return state_name(event.status_update.status.state)


class Soak(Book[list[m.StreamEvent], Peer]):
    """The SDK's clients: operations through the SDK, on the shared knowledge; the contexts
    their tasks are in, too."""

    def __init__(self) -> None:
        super().__init__()
        self.contexts: list[str] = []

    def finished(self) -> list[str]:
        return [task_id for task_id, tracked in self.tasks.items() if tracked.ends_seen]

    def stream_read(self, task_id: str, events: list[t.StreamResponse]) -> None:
        self.tasks[task_id].streams.append([to_model(event) for event in events])
        self.saw_end(task_id, last_state(events))

    # --- operations -----------------------------------------------------------------------

    async def send_echo(self, peer: Peer, rng: random.Random) -> None:
        text = words(rng)
        history_length = rng.choice([None, 0, 1, 5])
        context = rng.choice(self.contexts) if self.contexts and rng.random() < 0.5 else ""
        msg = sdk_message(text, "echo", context_id=context)
        task = await send_task(peer, msg, history_length=history_length)
        self.track(task.id, "echo", text)
        assert task.context_id == context or not context, (context, task)
        self.contexts.append(task.context_id)
        assert state_name(task.status.state) == "COMPLETED", task
        assert artifact_text(task.artifacts) == text, task
        bound = peer.history_bound(history_length)
        assert len(task.history) <= (1 if bound is None else bound), (peer.name, task)
        self.saw_end(task.id, "COMPLETED")

    async def send_parts(self, peer: Peer, rng: random.Random) -> None:
        """A message of every kind of part, with metadata, extensions and references: the
        task's history holds it as sent (less what the v0.3 proto has no place for)."""
        msg = sdk_message(words(rng), "echo")
        data = struct_pb2.Value()
        data.struct_value.update({"n": rng.randrange(100), "list": [True, None, words(rng)]})
        msg.parts.extend(
            [
                # base64 text: the SDK's v0.3 HTTP+JSON transport reads no other bytes
                t.Part(
                    raw=base64.b64encode(os.urandom(rng.randrange(1, 40))), media_type="text/plain"
                ),
                t.Part(url="https://example.com/f", filename=words(rng), media_type="text/plain"),
                t.Part(data=data, metadata={"at": rng.random()}),
            ]
        )
        msg.metadata.update({"nested": {"k": [1, 2.5, words(rng)]}})
        msg.extensions.append("https://example.com/ext")
        msg.reference_task_ids.extend(rng.sample(sorted(self.tasks), min(2, len(self.tasks))))
        task = await send_task(peer, msg)
        self.track(task.id, "echo", msg.parts[0].text)
        self.saw_end(task.id, state_name(task.status.state))
        stored = await peer.unary.get_task(t.GetTaskRequest(id=task.id))
        expected = t.Message()
        expected.CopyFrom(msg)
        expected.task_id, expected.context_id = task.id, task.context_id
        if peer.name == "HTTP+JSON 0.3":
            del expected.reference_task_ids[:]
        assert stored.history[0] == expected, (peer.name, stored.history[0], expected)

    async def stream(self, peer: Peer, rng: random.Random) -> None:
        """Stream an echo or a trickle, to the end or dropped after a few events."""
        skill, text = rng.choice(["echo", "trickle"]), words(rng)
        limit = rng.choice([None, 1, 2, 3])
        request = send_request(sdk_message(text, skill))
        events = await read(peer.streaming.send_message(request), limit)
        assert events[0].HasField("task"), events[0]
        task = events[0].task
        expected = trickled(text) if skill == "trickle" else text
        self.track(task.id, skill, expected)
        if limit is None:
            assert last_state(events) == "COMPLETED", events[-1]
            assert rebuild(events) == expected, events
            self.stream_read(task.id, events)
        elif skill == "trickle":
            self.trickling.append(task.id)

    async def start(self, peer: Peer, rng: random.Random) -> None:
        """A non-blocking send of a holder or a trickle: the task comes back unfinished."""
        skill = rng.choice(["hold", "trickle"])
        text = "hold" if skill == "hold" else words(rng)
        msg = sdk_message(text, skill)
        task = await send_task(peer, msg, immediately=True)
        state = state_name(task.status.state)
        if skill == "hold":
            assert state in ("SUBMITTED", "WORKING"), task
            self.track(task.id, "hold")
            self.holding.append(task.id)
        else:
            assert state not in TERMINAL or state == "COMPLETED", task
            self.track(task.id, "trickle", trickled(text))
            self.trickling.append(task.id)
        assert task.history[0].message_id == msg.message_id, task

    async def ask(self, peer: Peer, rng: random.Random) -> None:
        if rng.random() < 0.5:
            task = await send_task(peer, sdk_message("?", "ask"))
            task_id, state = task.id, state_name(task.status.state)
            assert task.status.message.role == t.Role.ROLE_AGENT, task
            self.track(task_id, "ask")
        else:
            events = await read(
                peer.streaming.send_message(send_request(sdk_message("?", "ask"))), None
            )
            assert events[0].HasField("task"), events[0]
            task_id, state = events[0].task.id, last_state(events)
            self.track(task_id, "ask").streams.append([to_model(event) for event in events])
        assert state == "INPUT_REQUIRED", state
        self.awaiting.append(task_id)

    async def answer(self, peer: Peer, rng: random.Random) -> None:
        if self.awaiting:
            task_id = self.awaiting.pop(rng.randrange(len(self.awaiting)))
            await self.answer_one(peer, task_id, streaming=rng.random() < 0.5)

    async def answer_one(self, peer: Peer, task_id: str, *, streaming: bool = False) -> None:
        name = f"n{uuid.uuid4().hex[:6]}"
        self.tasks[task_id].text = "hello " + name
        msg = sdk_message(name, "ask", task_id=task_id)
        if streaming:
            events = await read(peer.streaming.send_message(send_request(msg)), None)
            assert events[0].HasField("task") and events[0].task.id == task_id, events[0]
            assert last_state(events) == "COMPLETED", events[-1]
            assert rebuild(events) == "hello " + name, events
            self.stream_read(task_id, events)
        else:
            task = await send_task(peer, msg)
            assert task.id == task_id, task
            assert state_name(task.status.state) == "COMPLETED", task
            assert artifact_text(task.artifacts) == "hello " + name, task
            self.saw_end(task_id, "COMPLETED")

    async def subscribe(self, peer: Peer, rng: random.Random) -> None:
        """Subscribe to a holder, a trickle or a task waiting for input, to the end or
        dropped after a few events."""
        running = self.holding + self.trickling + self.awaiting
        if not running:
            return
        task_id = rng.choice(running)
        limit = rng.choice([None, 1, 2])
        request = t.SubscribeToTaskRequest(id=task_id)
        try:
            events = await read(peer.streaming.subscribe(request), limit)
        except sdk_errors.UnsupportedOperationError:  # it ended meanwhile (A2A v1.0 §3.1.6)
            state = state_name(
                (await peer.unary.get_task(t.GetTaskRequest(id=task_id))).status.state
            )
            assert state in TERMINAL, state
            self.saw_end(task_id, state)
            return
        assert events[0].HasField("task") and events[0].task.id == task_id, events[0]
        if limit is None:
            self.stream_read(task_id, events)

    async def cancel(self, peer: Peer, rng: random.Random) -> None:
        """Cancel a holder or a task waiting for input (always cancelable), a trickle
        (cancelable until it ends) or a finished task (never: TaskNotCancelableError)."""
        choice = rng.random()
        if self.holding and choice < 0.4:
            await self.cancel_one(peer, self.holding.pop(rng.randrange(len(self.holding))))
        elif self.awaiting and choice < 0.5:
            await self.cancel_one(peer, self.awaiting.pop(rng.randrange(len(self.awaiting))))
        elif self.trickling and choice < 0.8:
            task_id = rng.choice(self.trickling)
            try:
                await self.cancel_one(peer, task_id)
            except sdk_errors.TaskNotCancelableError:
                self.tasks[task_id].cancels.append("not cancelable")
        elif finished := self.finished():
            task_id = rng.choice(finished)
            with pytest.raises(sdk_errors.TaskNotCancelableError):
                await peer.unary.cancel_task(t.CancelTaskRequest(id=task_id))
            self.tasks[task_id].cancels.append("not cancelable")

    async def cancel_one(self, peer: Peer, task_id: str) -> None:
        task = await peer.unary.cancel_task(t.CancelTaskRequest(id=task_id))
        assert task.id == task_id, task
        state = state_name(task.status.state)
        assert state == "CANCELED", task
        self.tasks[task_id].cancels.append(state)
        self.saw_end(task_id, state)

    async def get(self, peer: Peer, rng: random.Random) -> None:
        """GetTask, with a history length or none; a finished task's history is the tail of
        its full history."""
        if not self.tasks:
            return
        task_id = rng.choice(list(self.tasks))
        history_length = rng.choice([None, 0, 1, 2, 100])
        request = t.GetTaskRequest(id=task_id)
        if history_length is not None:
            request.history_length = history_length
        task = await peer.unary.get_task(request)
        assert task.id == task_id, task
        state = state_name(task.status.state)
        self.saw_end(task_id, state)
        bound = peer.history_bound(history_length)
        if bound is not None and state in TERMINAL:
            full = await peer.unary.get_task(t.GetTaskRequest(id=task_id))
            tail = list(full.history)[len(full.history) - bound :] if bound else []
            assert list(task.history) == tail, (peer.name, task, full)

    async def list_tasks(self, peer: Peer, rng: random.Random) -> None:
        """A few pages of ListTasks, filtered by a context, a state or nothing: each task
        matches the filter, no page is longer than asked, no task comes twice."""
        if not peer.lists:
            with pytest.raises(NotImplementedError):
                await peer.unary.list_tasks(t.ListTasksRequest())
            return
        request = t.ListTasksRequest(page_size=rng.randrange(1, 8))
        choice = rng.randrange(4)
        if choice == 0 and self.contexts:
            request.context_id = rng.choice(self.contexts)
        elif choice == 3:
            request.status_timestamp_after.GetCurrentTime()
            request.status_timestamp_after.seconds -= rng.randrange(3)
        elif choice == 1:
            request.status = rng.choice(
                [
                    t.TaskState.TASK_STATE_COMPLETED,
                    t.TaskState.TASK_STATE_WORKING,
                    t.TaskState.TASK_STATE_INPUT_REQUIRED,
                    t.TaskState.TASK_STATE_CANCELED,
                ]
            )
        if rng.random() < 0.5:
            request.history_length = rng.randrange(3)
        request.include_artifacts = rng.random() < 0.5
        seen: set[str] = set()
        for _ in range(rng.randrange(1, 4)):
            page = await peer.unary.list_tasks(request)
            assert len(page.tasks) <= request.page_size, page
            assert page.page_size == request.page_size, page
            for task in page.tasks:
                assert task.id not in seen, (task.id, page)
                seen.add(task.id)
                if request.context_id:
                    assert task.context_id == request.context_id, task
                if request.status:
                    assert task.status.state == request.status, task
                if request.HasField("status_timestamp_after"):
                    after = request.status_timestamp_after.ToDatetime()
                    assert task.status.timestamp.ToDatetime() >= after, task
                if request.HasField("history_length"):
                    assert len(task.history) <= request.history_length, task
                if not request.include_artifacts:
                    assert not task.artifacts, task
            if not page.next_page_token:
                break
            request.page_token = page.next_page_token

    async def bad(self, peer: Peer, rng: random.Random) -> None:
        """A request that must be refused as the SDK's typed error, changing nothing."""
        choice = rng.randrange(9)
        if choice == 0:
            with pytest.raises(sdk_errors.TaskNotFoundError):
                await peer.unary.get_task(t.GetTaskRequest(id=str(uuid.uuid4())))
        elif choice == 1:
            with pytest.raises(sdk_errors.TaskNotFoundError):
                await peer.unary.cancel_task(t.CancelTaskRequest(id=str(uuid.uuid4())))
        elif choice == 2:
            with pytest.raises(sdk_errors.InvalidParamsError):  # no such skill
                await send_task(peer, sdk_message("x", "no-such-skill"))
        elif choice == 3 and (finished := self.finished()):
            task_id = rng.choice(finished)  # a finished task takes no more messages
            with pytest.raises(sdk_errors.UnsupportedOperationError):
                await send_task(peer, sdk_message("late", "echo", task_id=task_id))
        elif choice == 4 and peer.lists:
            with pytest.raises(sdk_errors.InvalidParamsError):
                await peer.unary.list_tasks(t.ListTasksRequest(page_size=1000))
        elif choice == 5 and self.tasks:
            config = t.TaskPushNotificationConfig(
                task_id=rng.choice(list(self.tasks)), url="https://127.0.0.1:9/hook"
            )
            with pytest.raises(sdk_errors.PushNotificationNotSupportedError):
                await peer.unary.create_task_push_notification_config(config)
        elif choice == 6 and (finished := self.finished()):
            request = t.SubscribeToTaskRequest(id=rng.choice(finished))
            with pytest.raises(sdk_errors.UnsupportedOperationError):  # A2A v1.0 §3.1.6
                await read(peer.streaming.subscribe(request), None)
        elif choice == 7 and self.holding:
            msg = sdk_message("more", "hold", task_id=rng.choice(self.holding))
            with pytest.raises(sdk_errors.UnsupportedOperationError):  # working, or canceled
                await send_task(peer, msg)
        elif choice == 8 and self.tasks:
            request = t.GetTaskRequest(id=rng.choice(list(self.tasks)), history_length=-1)
            with pytest.raises(sdk_errors.InvalidParamsError):
                await peer.unary.get_task(request)

    async def abandon(self, peer: Peer, rng: random.Random) -> None:
        """Give up on a request after a moment, as a client with a short timeout does (a task
        it may have made is found in the store at the end by its text)."""
        with trio.move_on_after(rng.uniform(0, 0.02)):
            choice = rng.randrange(3)
            if choice == 0:
                await send_task(peer, sdk_message(ABANDONED, "echo"))
            elif choice == 1:
                request = send_request(sdk_message(ABANDONED, "echo"))
                await read(peer.streaming.send_message(request), None)
            elif self.tasks:
                await peer.unary.get_task(t.GetTaskRequest(id=rng.choice(list(self.tasks))))

    # --- clients --------------------------------------------------------------------------

    def operations(self) -> list[tuple[Callable[[Peer, random.Random], Awaitable[None]], int]]:
        return [
            (self.send_echo, 4),
            (self.send_parts, 1),
            (self.stream, 6),
            (self.start, 4),
            (self.ask, 2),
            (self.answer, 3),
            (self.subscribe, 3),
            (self.cancel, 3),
            (self.get, 3),
            (self.list_tasks, 2),
            (self.bad, 2),
            (self.abandon, 1),
        ]

    async def client(self, url: str, card: t.AgentCard, rng: random.Random) -> None:
        self.clients += 1
        try:
            async with httpx.AsyncClient(timeout=60) as http:
                peers = [open_peer(http, card, *interface) for interface in PEERS]
                try:
                    await self.work(peers, rng)
                finally:
                    with trio.CancelScope(shield=True):
                        for peer in peers:
                            await peer.unary.close()
                            await peer.streaming.close()
        finally:
            self.clients -= 1

    async def work(self, peers: list[Peer], rng: random.Random) -> None:
        await self.operate(peers, rng)

    async def run(self, url: str, rng: random.Random, seconds: float) -> None:
        """``CLIENTS`` clients for ``seconds``, then settle what they leave until the last
        one is done (the ones following a holder's stream wait for its cancel)."""
        async with httpx.AsyncClient(timeout=60) as http:
            card = await A2ACardResolver(http, url).get_agent_card()
            async with trio.open_nursery() as clients:
                for _ in range(CLIENTS):
                    clients.start_soon(self.client, url, card, random.Random(rng.getrandbits(64)))
                await trio.sleep(seconds)
                self.over = True
                await self.settle_until_done(open_peer(http, card, "JSONRPC", "1.0"))
        print(f"{len(self.tasks)} tasks; operations: {dict(self.done)}")


def open_peer(http: httpx.AsyncClient, card: t.AgentCard, binding: str, version: str) -> Peer:
    """The SDK's clients for the card's ``binding`` interface of ``version``: the card handed
    to the SDK's factory lists only that interface, so the factory picks its transport (the
    v0.3 compatibility transports for 0.3)."""
    only = t.AgentCard()
    only.CopyFrom(card)
    del only.supported_interfaces[:]
    only.supported_interfaces.extend(
        i
        for i in card.supported_interfaces
        if i.protocol_binding == binding and i.protocol_version == version
    )
    assert len(only.supported_interfaces) == 1, card

    def client(streaming: bool) -> Client:
        config = ClientConfig(
            httpx_client=http, streaming=streaming, supported_protocol_bindings=[binding]
        )
        return ClientFactory(config).create(only)

    return Peer(f"{binding} {version}", client(False), client(True))


async def send_task(
    peer: Peer, msg: t.Message, *, immediately: bool = False, history_length: int | None = None
) -> t.Task:
    """One SendMessage answered with a task."""
    request = send_request(msg, return_immediately=immediately, history_length=history_length)
    (response,) = await read(peer.unary.send_message(request), None)
    assert response.HasField("task"), response
    return response.task


@pytest.mark.parametrize("store", ["memory", "sqlite"])
async def test_sdk_client_soak(
    store: str, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed = int(os.environ.get(SEED_VARIABLE) or random.randrange(2**32))
    seconds = float(os.environ.get(SECONDS_VARIABLE) or 8)
    print(f"SDK client soak seed {seed} ({SEED_VARIABLE}={seed} replays it), {seconds} s of load")
    monkeypatch.setattr(a2a.client.transports.jsonrpc, "parse_lenient", strict_parse)
    monkeypatch.setattr(a2a.client.transports.rest, "parse_lenient", strict_parse)
    caplog.set_level(logging.WARNING)
    soak = Soak()
    with trio.fail_after(seconds + 60):
        async with serving_soak(store, tmp_path, CONFIG) as (url, runtime):
            await soak.run(url, random.Random(seed), seconds)
            await check_tasks(soak, runtime.store)
    assert_no_errors_logged(caplog)


async def check_tasks(soak: Soak, store: TaskStore) -> None:
    """Every task ended as its skill and its cancels say, in the store and to every client;
    every stream read to the end is a run of the stored log."""
    assert len(soak.tasks) > CLIENTS, "the load made too few tasks to prove anything"
    await soak.track_abandoned(store)
    for task_id, tracked in soak.tasks.items():
        stored = await store.load_task(ANONYMOUS, task_id)
        assert stored is not None, task_id
        expected = tracked.expected_state()
        assert stored.task.status.state.name == expected, (task_id, tracked)
        if expected == "COMPLETED":
            text = "".join(parts_text(a.parts) for a in stored.task.artifacts)
            assert text == tracked.text, (task_id, tracked)
        assert tracked.ends_seen <= {expected}, (task_id, tracked)
        log = await check_log(store, task_id)
        for events in tracked.streams:
            check_stream(events, log)


def check_stream(events: list[m.StreamEvent], log: dict[int, m.StreamEvent]) -> None:
    """A stream read to the end (the SDK does not show the SSE ids): the stored log's events
    from some point to its end, or to an INPUT_REQUIRED status; it starts with the task as
    it was at that point."""
    first = events[0]
    assert isinstance(first, m.Task), first
    starts = [
        seq
        for seq in log
        if all(log.get(seq + i) == event for i, event in enumerate(events[1:], 1))
        and (first == log[seq] if seq == 1 else first.status == status_at(log, seq))
    ]
    assert starts, (events, log)
