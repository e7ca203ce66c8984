"""Codec speed: a2a_trio's wire codecs next to the official SDK's protobuf JSON conversion.

Encode = model value -> JSON bytes; decode = JSON bytes -> model value (validated).  The SDK side
gets its fastest path: ``MessageToDict`` + orjson to write, orjson + ``ParseDict`` to read.

    .venv/bin/python benchmarks/codec.py            # ~1 min on an idle 2-core machine
    .venv/bin/python benchmarks/codec.py --quick    # ~2 s, for CI smoke runs
"""

from __future__ import annotations

import argparse
import timeit
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import a2a.types as sdk
import orjson
from google.protobuf import json_format

from a2a_trio import model as m
from a2a_trio.wire import V03, V1, dumps, loads

WHEN = datetime(2026, 11, 25, 12, 30, 15, 123000, tzinfo=UTC)


def typical_task() -> m.Task:
    """About 2 KB of v1.0 JSON: 5 history messages, 2 artifacts, a status message, metadata."""
    lines = [
        "Find me a flight from Lisbon to Oslo next Friday.",
        "Searching flights for Friday 4 December, LIS to OSL.",
        "Prefer a morning departure and one stop at most.",
        "Found 3 options; the best leaves 07:40 and stops in Amsterdam.",
        "Book the 07:40 one, aisle seat please.",
    ]
    history = [
        m.Message(
            message_id=f"msg-{i:04d}-6c1f-4b7e-9d1a-0f3e2b1c4d5e",
            role=m.Role.USER if i % 2 == 0 else m.Role.AGENT,
            parts=[m.TextPart(text)],
            context_id="ctx-0b6f2a94-3c1e-4d8e-a0b1-5f6e7d8c9a0b",
            task_id="task-7f3e9c2a-1b4d-4e6f-8a0c-2d5e7f9a1b3c",
            metadata={"turn": i, "lang": "en"} if i == 0 else None,
        )
        for i, text in enumerate(lines)
    ]
    itinerary = {
        "confirmation": "XK7Q2P",
        "segments": [
            {"from": "LIS", "to": "AMS", "departs": "2026-12-04T07:40:00Z", "flight": "KL1692"},
            {"from": "AMS", "to": "OSL", "departs": "2026-12-04T13:05:00Z", "flight": "KL1143"},
        ],
        "seat": {"row": 23, "letter": "C", "aisle": True},
        "price": {"amount": 412.6, "currency": "EUR"},
    }
    return m.Task(
        id="task-7f3e9c2a-1b4d-4e6f-8a0c-2d5e7f9a1b3c",
        context_id="ctx-0b6f2a94-3c1e-4d8e-a0b1-5f6e7d8c9a0b",
        status=m.TaskStatus(
            m.TaskState.COMPLETED,
            message=m.Message(
                message_id="msg-status-3e1d", role=m.Role.AGENT, parts=[m.TextPart("Booked.")]
            ),
            timestamp=WHEN,
        ),
        artifacts=[
            m.Artifact(
                artifact_id="art-itinerary-1",
                name="itinerary",
                parts=[m.DataPart(itinerary, media_type="application/json")],
            ),
            m.Artifact(
                artifact_id="art-summary-2",
                name="summary",
                description="Human-readable booking summary",
                parts=[m.TextPart("LIS 07:40 -> AMS -> OSL 16:55, seat 23C, EUR 412.60")],
            ),
        ],
        history=history,
        metadata={"skill": "travel.book", "priority": 1},
    )


def typical_event() -> m.TaskStatusUpdateEvent:
    return m.TaskStatusUpdateEvent(
        task_id="task-7f3e9c2a-1b4d-4e6f-8a0c-2d5e7f9a1b3c",
        context_id="ctx-0b6f2a94-3c1e-4d8e-a0b1-5f6e7d8c9a0b",
        status=m.TaskStatus(
            m.TaskState.WORKING,
            message=m.Message(
                message_id="msg-progress-17",
                role=m.Role.AGENT,
                parts=[m.TextPart("Comparing 3 itineraries...")],
            ),
            timestamp=WHEN,
        ),
    )


def best_per_op(
    ours: Callable[[], Any], theirs: Callable[[], Any], number: int, repeat: int
) -> tuple[float, float]:
    """Microseconds per call, best of ``repeat`` runs of ``number`` calls each.

    The two sides alternate run by run, and the best run is kept, so load from other work on a
    shared machine slows both alike instead of whichever ran during a spike.
    """
    best = [float("inf"), float("inf")]
    for _ in range(repeat):
        for side, fn in enumerate((ours, theirs)):
            best[side] = min(best[side], timeit.timeit(fn, number=number) / number * 1e6)
    return best[0], best[1]


def cases() -> list[tuple[str, Callable[[], Any], Callable[[], Any]]]:
    """(name, a2a_trio encode+decode, SDK encode+decode) for each payload."""
    task, event = typical_task(), typical_event()
    task_json, event_json = dumps(V1.encode(task)), dumps(V1.encode_stream_response(event))
    sdk_task = json_format.ParseDict(loads(task_json), sdk.Task())
    sdk_event = json_format.ParseDict(loads(event_json), sdk.StreamResponse())
    v03_task_json = dumps(V03.encode(task))
    v03_event_json = dumps(V03.encode_stream_event(event))

    def trio_task() -> None:
        V1.decode(loads(dumps(V1.encode(task))), m.Task)

    def sdk_task_trip() -> None:
        json_format.ParseDict(
            orjson.loads(orjson.dumps(json_format.MessageToDict(sdk_task))), sdk.Task()
        )

    def trio_event() -> None:
        V1.decode_stream_response(loads(dumps(V1.encode_stream_response(event))))

    def sdk_event_trip() -> None:
        json_format.ParseDict(
            orjson.loads(orjson.dumps(json_format.MessageToDict(sdk_event))), sdk.StreamResponse()
        )

    def v03_task() -> None:
        V03.decode(loads(dumps(V03.encode(task))), m.Task)

    def v03_event() -> None:
        V03.decode_stream_event(loads(dumps(V03.encode_stream_event(event))))

    print(
        f"payloads: Task {len(task_json)} B (v0.3 form {len(v03_task_json)} B), "
        f"stream event {len(event_json)} B (v0.3 form {len(v03_event_json)} B)"
    )
    return [
        ("Task, v1.0 JSON", trio_task, sdk_task_trip),
        ("stream event, v1.0 JSON", trio_event, sdk_event_trip),
        ("Task, v0.3 JSON (a2a_trio) vs v1.0 (SDK)", v03_task, sdk_task_trip),
        ("stream event, v0.3 JSON (a2a_trio) vs v1.0 (SDK)", v03_event, sdk_event_trip),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few iterations (smoke run)")
    args = parser.parse_args()
    number, repeat = (100, 3) if args.quick else (300, 10)
    print(f"encode+decode round trips, best of {repeat} x {number} (us per op)")
    print(f"{'payload':52} {'a2a_trio':>10} {'a2a-sdk':>10} {'sdk/trio':>9}")
    for name, ours, theirs in cases():
        ours_us, theirs_us = best_per_op(ours, theirs, number, repeat)
        print(f"{name:52} {ours_us:10.1f} {theirs_us:10.1f} {theirs_us / ours_us:8.2f}x")


if __name__ == "__main__":
    main()
