"""A randomized soak of the legacy producer dialect's surfaces, then invariants.

The concurrency soak (``test_soak``) leaves the legacy surfaces out: their clients choose the
task ids, and what they see is the dialect's own frames.  Here thirty-two client tasks, with
bearer tokens, pick random operations on the surfaces of one real server (hypercorn on
127.0.0.1 serving ``create_app``, the surfaces mounted for every skill) on each store:
``tasks/send`` to an echo, a slow streamer and parked work (a ``JobHandle`` polled by the
runtime), ``tasks/sendSubscribe`` read to the end or dropped, ``tasks/resubscribe``,
``tasks/get``, ``tasks/cancel`` (twice, as it is idempotent), an id in use, requests given up
on, and bad requests (no bearer token, torn JSON, an unknown method, an unknown id).

When the load ends the holders are cancelled and the checks run: every id answers
``tasks/get`` with the state its skill and cancels imply and the result text it must hold;
every stream read to the end is in the dialect's order (``working`` frames, never the same
progress twice in a row, then for a completed task one ``result`` artifact and one final
status); every stored task is terminal, made by a client, with its log numbered 1..n and ending
with its stored status; no job, subscriber, connection or descriptor is left; nothing was
logged as an error.

The seed is printed; ``A2A_TRIO_SOAK_SEED`` replays one, as far as the scheduling allows, and
``A2A_TRIO_SOAK_SECONDS`` changes the load's length (10 s by default, a bit over 40 s for the
three stores).  Marked ``slow`` but run in CI, PostgreSQL included.
"""

from __future__ import annotations

import itertools
import logging
import os
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from pathlib import Path
from typing import Any

import attrs
import httpx
import orjson
import pytest
import trio
from store.conftest import ALL_BACKENDS

from a2a_trio.store import ANONYMOUS, TaskStore
from a2a_trio.wire import SSEDecoder
from a2a_trio.wire._legacy import parts_text

from .conftest import CONFIG
from .test_soak import (
    ABANDONED,
    CLIENT_LIMITS,
    SECONDS_VARIABLE,
    SEED_VARIABLE,
    all_task_ids,
    assert_no_errors_logged,
    check_log,
    serving_soak,
    words,
)

pytestmark = pytest.mark.slow

CLIENTS = 32
AUTH = {"Authorization": "Bearer soak"}
FINAL_STATES = {"completed", "canceled"}

type Frame = dict[str, Any]
"""One stream frame's JSON-RPC ``result``."""


@attrs.define
class LegacyTracked:
    """What the clients know of one legacy id: its skill, the text it was sent, the cancels'
    answers and the streams they read to the end."""

    skill: str
    text: str
    cancels: list[str] = attrs.field(factory=list)
    streams: list[list[Frame]] = attrs.field(factory=list)

    def expected_state(self) -> str:
        return "canceled" if "canceled" in self.cancels else "completed"

    def expected_text(self) -> str:
        """What a completed task's ``result`` artifact holds."""
        if self.skill == "steps":
            return self.text.upper()
        return self.text + " " if self.skill == "trickle" else self.text


class Refused(Exception):
    """The surface answered a JSON-RPC error."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error)
        self.code: int = error["code"]
        self.message: str = error["message"]


class LegacySoak:
    """The clients' shared knowledge: every id they were given, and the pools they draw from."""

    def __init__(self) -> None:
        self.tasks: dict[str, LegacyTracked] = {}
        self.running: list[str] = []
        """Ids of holders and parked work (cancelable; holders must be cancelled)."""
        self.over = False
        self.clients = 0
        self.done: Counter[str] = Counter()
        self._serial = itertools.count()

    def text(self, rng: random.Random) -> str:
        """A text no other task is sent, so a stored task tells whose it is."""
        return f"{words(rng)} t{next(self._serial)}"

    # --- the wire --------------------------------------------------------------------------

    @staticmethod
    async def call(http: httpx.AsyncClient, skill: str, method: str, params: Any) -> Any:
        rid = random.choice([1, "r", None, {"n": 1}, [1, 2], True])  # §4.1: any JSON value
        response = await http.post(f"/{skill}", json=_rpc(method, params, rid))
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["jsonrpc"] == "2.0" and body["id"] == rid, body
        if "error" in body:
            raise Refused(body["error"])
        return body["result"]

    @staticmethod
    async def stream(
        http: httpx.AsyncClient, skill: str, method: str, params: Any, limit: int | None
    ) -> list[Frame]:
        """The frames' results of a stream, read to the end or left after ``limit`` frames."""
        rid = random.randrange(1000)
        request = http.build_request("POST", f"/{skill}", json=_rpc(method, params, rid))
        response = await http.send(request, stream=True)
        try:
            if response.headers["content-type"].startswith("application/json"):
                body = orjson.loads(await response.aread())
                raise Refused(body["error"])
            assert response.headers["content-type"].startswith("text/event-stream")
            frames: list[Frame] = []
            decoder = SSEDecoder()
            async with aclosing(response.aiter_bytes()) as chunks:
                async for chunk in chunks:
                    for event in decoder.feed(chunk):
                        envelope = orjson.loads(event.data)
                        assert envelope["id"] == rid, envelope
                        frames.append(envelope["result"])
                        if len(frames) == limit:
                            return frames
            return frames
        finally:
            await response.aclose()

    # --- operations -----------------------------------------------------------------------

    def track(self, legacy_id: str, skill: str, text: str) -> LegacyTracked:
        assert legacy_id not in self.tasks, f"id {legacy_id} given out twice"
        tracked = self.tasks[legacy_id] = LegacyTracked(skill, text)
        return tracked

    async def send(self, http: httpx.AsyncClient, rng: random.Random) -> None:
        skill, text, chosen = rng.choice(["echo", "trickle", "steps"]), self.text(rng), None
        params: dict[str, Any] = {"message": _text(text)}
        if rng.random() < 0.7:
            chosen = params["id"] = f"soak-{next(self._serial)}"
        result = await self.call(http, skill, "tasks/send", params)
        assert chosen is None or result["id"] == chosen, result
        assert result["sessionId"] == result["id"]
        tracked = self.track(result["id"], skill, text)
        if skill == "steps" and result["status"]["state"] == "working":  # parked
            assert result["artifacts"] == []
            self.running.append(result["id"])
        else:  # done, parked work too if it was quicker than the answer
            assert _outcome(result) == ("completed", tracked.expected_text()), result

    async def start_hold(self, http: httpx.AsyncClient, rng: random.Random) -> None:
        """A holder, started by a stream its client leaves after the first frame."""
        text = self.text(rng)
        params = {"id": f"soak-{next(self._serial)}", "message": _text(text)}
        (frame,) = await self.stream(http, "hold", "tasks/sendSubscribe", params, limit=1)
        assert (frame["status"]["state"], frame["final"]) == ("working", False), frame
        self.track(params["id"], "hold", text)
        self.running.append(params["id"])

    async def send_subscribe(self, http: httpx.AsyncClient, rng: random.Random) -> None:
        skill, text = rng.choice(["echo", "trickle", "steps"]), self.text(rng)
        params: dict[str, Any] = {"id": f"soak-{next(self._serial)}", "message": _text(text)}
        limit = rng.choice([None, None, 1, 2])
        frames = await self.stream(http, skill, "tasks/sendSubscribe", params, limit)
        tracked = self.track(params["id"], skill, text)
        if limit is None:
            tracked.streams.append(frames)
        elif skill == "steps":
            self.running.append(params["id"])

    async def resubscribe(self, http: httpx.AsyncClient, rng: random.Random) -> None:
        if not self.tasks:
            return
        legacy_id = rng.choice(self.running or list(self.tasks))
        limit = rng.choice([None, 1])
        frames = await self.stream(
            http, self.tasks[legacy_id].skill, "tasks/resubscribe", {"id": legacy_id}, limit
        )
        assert frames and frames[0]["id"] == legacy_id, frames
        if limit is None:
            self.tasks[legacy_id].streams.append(frames)

    async def cancel(self, http: httpx.AsyncClient, rng: random.Random) -> None:
        if self.running:
            await self.cancel_one(http, self.running.pop(rng.randrange(len(self.running))))

    async def cancel_one(self, http: httpx.AsyncClient, legacy_id: str) -> None:
        tracked = self.tasks[legacy_id]
        result = await self.call(http, tracked.skill, "tasks/cancel", {"id": legacy_id})
        state = result["status"]["state"]
        assert state == "canceled" or (tracked.skill == "steps" and state == "completed"), result
        tracked.cancels.append(state)
        again = await self.call(http, tracked.skill, "tasks/cancel", {"id": legacy_id})
        assert again["status"]["state"] == state, (result, again)  # idempotent

    async def get(self, http: httpx.AsyncClient, rng: random.Random) -> None:
        if self.tasks:
            legacy_id = rng.choice(list(self.tasks))
            result = await self.call(
                http, self.tasks[legacy_id].skill, "tasks/get", {"id": legacy_id}
            )
            assert result["id"] == legacy_id
            assert result["status"]["state"] in {"working", *FINAL_STATES}, result

    async def reuse(self, http: httpx.AsyncClient, rng: random.Random) -> None:
        """A send with an id in use is refused, and changes nothing."""
        if not self.tasks:
            return
        legacy_id = rng.choice(list(self.tasks))
        skill = self.tasks[legacy_id].skill
        params = {"id": legacy_id, "message": _text(ABANDONED)}
        with pytest.raises(Refused) as refused:
            await self.call(http, skill, "tasks/send", params)
        assert refused.value.code == -32602 and "already in use" in refused.value.message

    async def bad(self, http: httpx.AsyncClient, rng: random.Random) -> None:
        """A request that must be refused in the dialect's shapes, changing nothing."""
        choice = rng.randrange(4)
        if choice == 0:
            bare = {"Authorization": ""}
            response = await http.post("/echo", json=_rpc("tasks/send", {}, 7), headers=bare)
            assert response.status_code == 401, response.text
            assert (response.json()["id"], response.json()["error"]["code"]) == (None, -32001)
        elif choice == 1:
            torn = b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {'
            response = await http.post("/echo", content=torn)
            assert response.status_code == 400, response.text
            assert (response.json()["id"], response.json()["error"]["code"]) == (None, -32700)
        else:
            method, params = [("tasks/nope", {}), ("tasks/get", {"id": "soak-unknown"})][choice - 2]
            with pytest.raises(Refused) as refused:
                await self.call(http, "echo", method, params)
            assert refused.value.code == (-32601 if choice == 2 else -32602), refused.value

    async def abandon(self, http: httpx.AsyncClient, rng: random.Random) -> None:
        """Give up on a request after a moment (a task it may have made is found in the store
        at the end by its text)."""
        with trio.move_on_after(rng.uniform(0, 0.02)):
            params = {"message": _text(ABANDONED)}
            if rng.random() < 0.5:
                await self.call(http, "echo", "tasks/send", params)
            else:
                await self.stream(http, "echo", "tasks/sendSubscribe", params, None)

    # --- clients --------------------------------------------------------------------------

    def operations(self) -> list[tuple[Callable[..., Awaitable[None]], int]]:
        return [
            (self.send, 5),
            (self.send_subscribe, 6),
            (self.start_hold, 2),
            (self.resubscribe, 3),
            (self.cancel, 3),
            (self.get, 3),
            (self.reuse, 1),
            (self.bad, 1),
            (self.abandon, 1),
        ]

    async def client(self, url: str, rng: random.Random) -> None:
        self.clients += 1
        operations, weights = zip(*self.operations(), strict=True)
        try:
            async with httpx.AsyncClient(
                base_url=url, headers=AUTH, timeout=60, limits=CLIENT_LIMITS
            ) as http:
                while not self.over:
                    operation = rng.choices(operations, weights)[0]
                    await operation(http, rng)
                    self.done[operation.__name__] += 1
        finally:
            self.clients -= 1

    async def run(self, url: str, rng: random.Random, seconds: float) -> None:
        """``CLIENTS`` clients for ``seconds``, then cancel the holders left until the last
        client is done (the ones resubscribed to a holder wait for its cancel)."""
        async with trio.open_nursery() as clients:
            for _ in range(CLIENTS):
                clients.start_soon(self.client, url, random.Random(rng.getrandbits(64)))
            await trio.sleep(seconds)
            self.over = True
            async with httpx.AsyncClient(
                base_url=url, headers=AUTH, timeout=60, limits=CLIENT_LIMITS
            ) as http:
                while self.clients or self.running:
                    while self.running:
                        await self.cancel_one(http, self.running.pop())
                    await trio.sleep(0.05)
        print(f"{len(self.tasks)} legacy ids; operations: {dict(self.done)}")


def _rpc(method: str, params: Any, rid: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def _text(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "text": text}]}


def _outcome(result: dict[str, Any]) -> tuple[str, str]:
    """A task envelope's state and its ``result`` artifact's text."""
    texts = [part["text"] for artifact in result["artifacts"] for part in artifact["parts"]]
    return result["status"]["state"], "".join(texts)


def check_frames(frames: list[Frame], legacy_id: str, tracked: LegacyTracked) -> None:
    """A stream read to the end, in the dialect's order (§5.3)."""
    assert all(frame["id"] == legacy_id for frame in frames), frames
    *body, last = frames
    assert last["final"] is True and last["status"]["state"] == tracked.expected_state(), frames
    if last["status"]["state"] == "completed":
        *body, artifact = body
        assert artifact["artifact"]["name"] == "result", frames
        assert parts_text_of(artifact["artifact"]) == tracked.expected_text(), frames
    shown = []
    for frame in body:
        assert (frame["status"]["state"], frame["final"]) == ("working", False), frames
        message = frame["status"].get("message")
        shown.append((message and message["parts"], frame.get("metadata")))
    assert all(a != b for a, b in itertools.pairwise(shown)), frames  # never repeated


def parts_text_of(artifact: dict[str, Any]) -> str:
    return "".join(part["text"] for part in artifact["parts"])


@pytest.mark.parametrize("store", ALL_BACKENDS)
async def test_legacy_soak(store: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    seed = int(os.environ.get(SEED_VARIABLE) or random.randrange(2**32))
    seconds = float(os.environ.get(SECONDS_VARIABLE) or 10)
    print(f"legacy soak seed {seed} ({SEED_VARIABLE}={seed} replays it), {seconds} s of load")
    random.seed(seed)  # the request ids
    caplog.set_level(logging.WARNING)
    soak = LegacySoak()
    config = attrs.evolve(CONFIG, legacy_bearer=True)
    with trio.fail_after(seconds + 60):
        async with serving_soak(store, tmp_path, config) as (url, runtime):
            await soak.run(url, random.Random(seed), seconds)
            async with httpx.AsyncClient(
                base_url=url, headers=AUTH, timeout=60, limits=CLIENT_LIMITS
            ) as http:
                await check_ids(soak, http)
            await check_store(soak, runtime.store)
    assert_no_errors_logged(caplog)


async def check_ids(soak: LegacySoak, http: httpx.AsyncClient) -> None:
    """Every id answers with the state and result its skill and cancels imply, and every
    stream read to the end was in the dialect's order."""
    assert len(soak.tasks) > CLIENTS, "the load made too few tasks to prove anything"
    for legacy_id, tracked in soak.tasks.items():
        result = await soak.call(http, tracked.skill, "tasks/get", {"id": legacy_id})
        expected = tracked.expected_state()
        text = tracked.expected_text() if expected == "completed" else ""
        assert _outcome(result) == (expected, text), (legacy_id, tracked, result)
        for frames in tracked.streams:
            check_frames(frames, legacy_id, tracked)


async def check_store(soak: LegacySoak, store: TaskStore) -> None:
    """Every stored task is one a client was given (or gave up on), ended as it says, with
    its log numbered on and ending with its status."""
    by_text = {tracked.text: tracked for tracked in soak.tasks.values()}
    found: Counter[str] = Counter()
    for task_id in await all_task_ids(store):
        stored = await store.load_task(ANONYMOUS, task_id)
        assert stored is not None and stored.task.history, task_id
        text = parts_text(stored.task.history[0].parts)
        await check_log(store, task_id)
        state = stored.task.status.state.name.lower()
        if text == ABANDONED:
            assert state == "completed", stored.task
            continue
        found[text] += 1
        assert state == by_text[text].expected_state(), (stored.task, by_text[text])
    assert found == Counter(by_text.keys()), "a task a client was given is missing, or stored twice"
