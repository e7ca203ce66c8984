"""Event streams over real sockets: disconnect, resume, keepalive, many streams at once."""

from __future__ import annotations

from contextlib import aclosing

import h11
import httpx
import orjson
import trio

from a2a_trio.server._jsonrpc_endpoint import BURST
from a2a_trio.wire import SSEDecoder

from . import agents
from .conftest import kind, read_events, rpc, user_message


async def test_stream_starts_with_task_and_ends_after_terminal(http: httpx.AsyncClient) -> None:
    body = rpc("SendStreamingMessage", {"message": user_message("x", skill="chunks")})
    async with http.stream("POST", "/", json=body) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-accel-buffering"] == "no"
        events = await read_events(response)
    kinds = [kind(result) for _, result in events]
    assert kinds == ["task", "artifactUpdate", "artifactUpdate", "artifactUpdate", "statusUpdate"]
    assert [int(event_id) for event_id, _ in events] == [1, 2, 3, 4, 5]
    chunks = [result["artifactUpdate"] for _, result in events[1:4]]
    assert [c.get("append", False) for c in chunks] == [False, True, True]  # type: ignore[union-attr]
    assert [c.get("lastChunk", False) for c in chunks] == [False, False, True]  # type: ignore[union-attr]
    final = events[-1][1]["statusUpdate"]
    assert final["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]


async def test_disconnect_keeps_job_and_resume_replays_exactly_the_missed_events(
    http: httpx.AsyncClient,
) -> None:
    gate = agents.gates.setdefault("resume", trio.Event())
    body = rpc("SendStreamingMessage", {"message": user_message("resume", skill="gated")})
    async with http.stream("POST", "/", json=body) as response:
        seen = await read_events(response, limit=2)  # the Task, then "waiting" progress
    # The client is gone; the job must still be running and finish on its own.
    task_id = seen[0][1]["task"]["id"]  # type: ignore[index]
    last_id = seen[-1][0]
    gate.set()
    with trio.fail_after(5):
        while True:
            got = await http.post("/", json=rpc("GetTask", {"id": task_id}))
            state = got.json()["result"]["status"]["state"]
            if state == "TASK_STATE_COMPLETED":
                break
            await trio.sleep(0.01)
    resume = rpc("SubscribeToTask", {"id": task_id})
    async with http.stream("POST", "/", json=resume, headers={"Last-Event-ID": last_id}) as r:
        missed = await read_events(r)
    assert [int(event_id) for event_id, _ in missed] == [3, 4, 5]
    assert [kind(result) for _, result in missed] == [
        "artifactUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert task_id in agents.cleanups


async def test_subscribe_to_finished_task_without_last_event_id_is_refused(
    http: httpx.AsyncClient,
) -> None:
    done = await http.post("/", json=rpc("SendMessage", {"message": user_message("fin")}))
    task_id = done.json()["result"]["task"]["id"]
    refused = await http.post("/", json=rpc("SubscribeToTask", {"id": task_id}))
    assert refused.json()["error"]["code"] == -32004


async def test_a_last_event_id_that_was_never_sent_is_refused(http: httpx.AsyncClient) -> None:
    done = await http.post("/", json=rpc("SendMessage", {"message": user_message("ids")}))
    task_id = done.json()["result"]["task"]["id"]
    resume = rpc("SubscribeToTask", {"id": task_id})
    for never in ("99999", "-1", "+2", "1_0", "abc"):
        refused = await http.post("/", json=resume, headers={"Last-Event-ID": never})
        error = refused.json()["error"]
        assert error["code"] == -32602, never
        assert "Last-Event-ID" in error["message"]


async def test_idle_stream_gets_keepalive_comments(http: httpx.AsyncClient) -> None:
    gate = agents.gates.setdefault("idle", trio.Event())
    body = rpc("SendStreamingMessage", {"message": user_message("idle", skill="gated")})
    comments = 0
    async with http.stream("POST", "/", json=body) as response:
        with trio.fail_after(5):
            async with aclosing(response.aiter_bytes()) as chunks:
                async for chunk in chunks:
                    comments += chunk.count(b": keepalive")
                    if comments >= 2:
                        break
    gate.set()
    assert comments >= 2  # 0.2 s keepalive in the fixture; the task stayed idle meanwhile


async def raw_stream(port: int, body: bytes) -> list[dict[str, object]]:
    """POST over a bare trio socket with h11 and parse the event stream: httpx's connection pool
    is itself the bottleneck at a thousand concurrent streams, so it would test the client."""
    connection = h11.Connection(h11.CLIENT)
    request = h11.Request(
        method="POST",
        target="/",
        headers=[
            ("Host", "127.0.0.1"),
            ("Content-Type", "application/json"),
            ("A2A-Version", "1.0"),
            ("Content-Length", str(len(body))),
            ("Connection", "close"),
        ],
    )
    decoder = SSEDecoder()
    results: list[dict[str, object]] = []
    async with await trio.open_tcp_stream("127.0.0.1", port) as sock:
        await sock.send_all(connection.send(request) + connection.send(h11.Data(data=body)))
        await sock.send_all(connection.send(h11.EndOfMessage()))
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                connection.receive_data(await sock.receive_some(65536))
            elif isinstance(event, h11.Data):
                results += [orjson.loads(e.data)["result"] for e in decoder.feed(event.data)]
            elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                return results


async def test_a_thousand_concurrent_streams_all_receive_their_events(base_url: str) -> None:
    port = int(base_url.rsplit(":", 1)[1])
    finals: list[object] = []

    async def one(n: int) -> None:
        body = orjson.dumps(rpc("SendStreamingMessage", {"message": user_message(f"s{n}")}, n))
        events = await raw_stream(port, body)
        assert kind(events[0]) == "task"
        finals.append(events[-1]["statusUpdate"]["status"]["state"])  # type: ignore[index]

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            for n in range(1000):
                nursery.start_soon(one, n)
    assert finals == ["TASK_STATE_COMPLETED"] * 1000


async def exchange(
    stream: trio.SocketStream, conn: h11.Connection, body: bytes, pieces: int = 1
) -> bytes:
    """One request on a kept-alive connection, its body written in ``pieces`` with pauses."""
    headers = [
        ("Host", "test"),
        ("A2A-Version", "1.0"),
        ("Content-Type", "application/json"),
        ("Content-Length", str(len(body))),
    ]
    await stream.send_all(conn.send(h11.Request(method="POST", target="/", headers=headers)))
    step = -(-len(body) // pieces)
    for start in range(0, len(body), step):
        await stream.send_all(conn.send(h11.Data(data=body[start : start + step])))
        await trio.sleep(0.05)
    await stream.send_all(conn.send(h11.EndOfMessage()))
    received = b""
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(await stream.receive_some(65536))
        elif isinstance(event, h11.Data):
            received += event.data
        elif isinstance(event, h11.EndOfMessage):
            conn.start_next_cycle()
            return received


async def test_requests_and_streams_share_a_kept_alive_connection(base_url: str) -> None:
    # The endpoint stops reading a body once Content-Length bytes are in, leaving hypercorn's
    # end-of-body message unread; the next request on the connection must not notice.
    url = httpx.URL(base_url)
    send = orjson.dumps(rpc("SendMessage", {"message": user_message("split body")}, 1))
    stream_body = orjson.dumps(rpc("SendStreamingMessage", {"message": user_message("s")}, 2))
    with trio.fail_after(10):
        async with await trio.open_tcp_stream(str(url.host), int(url.port or 80)) as stream:
            conn = h11.Connection(h11.CLIENT)
            reply = orjson.loads(await exchange(stream, conn, send, pieces=3))
            assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            events = SSEDecoder().feed(await exchange(stream, conn, stream_body))
            states = [orjson.loads(e.data)["result"] for e in events]
            assert "task" in states[0]
            assert states[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
            again = orjson.loads(await exchange(stream, conn, send, pieces=2))
            assert again["id"] == 1 and "result" in again


async def test_a_long_replay_goes_out_in_chunks_of_at_most_a_burst(
    http: httpx.AsyncClient, base_url: str
) -> None:
    """A resume replaying 300 events sends them in several body chunks of at most ``BURST``
    events, each send a turn for the replica's other streams, not all rendered in one go."""
    body = rpc("SendStreamingMessage", {"message": user_message("300", skill="many")})
    async with http.stream("POST", "/", json=body) as response:
        events = await read_events(response)
    task_id = events[0][1]["task"]["id"]  # type: ignore[index]
    resume = orjson.dumps(rpc("SubscribeToTask", {"id": task_id}))
    headers = [
        ("Host", "127.0.0.1"),
        ("Content-Type", "application/json"),
        ("A2A-Version", "1.0"),
        ("Last-Event-ID", "1"),
        ("Content-Length", str(len(resume))),
    ]
    connection = h11.Connection(h11.CLIENT)
    chunks: list[bytes] = []
    with trio.fail_after(10):
        async with await trio.open_tcp_stream("127.0.0.1", int(httpx.URL(base_url).port)) as sock:
            request = h11.Request(method="POST", target="/", headers=headers)
            await sock.send_all(connection.send(request) + connection.send(h11.Data(data=resume)))
            await sock.send_all(connection.send(h11.EndOfMessage()))
            while (event := connection.next_event()) is not h11.PAUSED:
                if event is h11.NEED_DATA:
                    connection.receive_data(await sock.receive_some(65536))
                elif isinstance(event, h11.Data):
                    if event.chunk_start or not chunks:
                        chunks.append(b"")
                    chunks[-1] += event.data
                elif isinstance(event, h11.EndOfMessage):
                    break
    per_chunk = [len(SSEDecoder().feed(chunk)) for chunk in chunks]
    replayed = SSEDecoder().feed(b"".join(chunks))
    assert [int(event.id) for event in replayed] == list(range(2, len(events) + 1))
    assert len(events) == 302  # the task, 300 chunks, COMPLETED
    assert max(per_chunk) <= BURST
    assert sum(per_chunk) == 301


class _Spawned(trio.abc.Instrument):
    """The names of the trio tasks spawned while it is installed."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        self.names.append(task.name)

    def watchers(self) -> int:
        return sum(name.endswith("_jsonrpc_endpoint._watch") for name in self.names)


async def test_only_a_stream_that_waits_for_an_event_gets_a_watcher(
    http: httpx.AsyncClient, nursery: trio.Nursery
) -> None:
    """A quick task's stream finds every event there when it starts, so it is sent without a
    nursery, keepalive timer or disconnect watcher; a stream that has to wait gets them."""
    spawned = _Spawned()
    trio.lowlevel.add_instrument(spawned)
    try:
        quick = rpc("SendStreamingMessage", {"message": user_message("x")})
        async with http.stream("POST", "/", json=quick) as response:
            quick_events = await read_events(response)
        quick_watchers = spawned.watchers()

        async def open_later() -> None:
            await trio.sleep(0.3)  # the stream has sent the task and its progress by then
            agents.open_gate("watched")

        nursery.start_soon(open_later)
        waiting = rpc("SendStreamingMessage", {"message": user_message("watched", skill="gated")})
        async with http.stream("POST", "/", json=waiting) as response:
            waited_events = await read_events(response)
    finally:
        trio.lowlevel.remove_instrument(spawned)
    assert [kind(result) for _, result in quick_events] == [
        "task",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert quick_watchers == 0
    kinds = ["task", "statusUpdate", "artifactUpdate", "artifactUpdate", "statusUpdate"]
    assert [kind(result) for _, result in waited_events] == kinds  # WORKING, "opened", COMPLETED
    assert spawned.watchers() == 1
