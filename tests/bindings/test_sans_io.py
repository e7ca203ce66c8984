"""The bindings' protocol logic without I/O: REST routing, legacy ids, event translation, SSE
framing."""

from __future__ import annotations

import contextlib

import pytest

from a2a_trio import model as m
from a2a_trio.errors import (
    ContextMismatchError,
    InvalidParamsError,
    TaskNotFoundError,
    VersionNotSupportedError,
)
from a2a_trio.server import _jsonrpc as rpc
from a2a_trio.server._legacy import LegacyEvents, LegacyIds, bearer_refusal
from a2a_trio.server._rest import (
    RouteNotFound,
    VerbNotAllowed,
    error_type,
    integer,
    match_route,
    problem,
    rest_params,
)
from a2a_trio.server._rpc_methods import V1_METHODS
from a2a_trio.server._rpc_v03 import V03_METHODS, V03_PATHS
from a2a_trio.server._sse import encode_event
from a2a_trio.server._tenants import request_headers
from a2a_trio.server._versions import requested_version, version_from_query
from a2a_trio.store import ANONYMOUS, CallerScope
from a2a_trio.wire import V03, dumps, loads


def test_every_v03_method_has_an_entry_sharing_a_v1_operation() -> None:
    assert set(V03_METHODS) == set(V03.PARAMS_BY_METHOD)
    v1_calls = {method.call for method in V1_METHODS.values()}
    # A v0.3 call is the v1.0 one, or wraps it only to name fields as v0.3 params hold them.
    shared = {
        name: getattr(method.call, "__wrapped__", method.call)
        for name, method in V03_METHODS.items()
    }
    assert all(call in v1_calls for call in shared.values())
    wrapped = {name for name, method in V03_METHODS.items() if method.call not in v1_calls}
    assert wrapped == set(V03_PATHS)


@pytest.mark.parametrize(
    ("verb", "path", "method", "tenant", "fields"),
    [
        ("POST", "/message:send", "SendMessage", "", {}),
        ("GET", "/tasks/t1", "GetTask", "", {"id": "t1"}),
        ("GET", "/tasks", "ListTasks", "", {}),
        ("POST", "/acme/tasks/t1:cancel", "CancelTask", "acme", {"id": "t1"}),
        ("GET", "/tasks/t1:subscribe", "SubscribeToTask", "", {"id": "t1"}),
        ("POST", "/tasks/t1:subscribe", "SubscribeToTask", "", {"id": "t1"}),
        ("DELETE", "/x/tasks/t/pushNotificationConfigs/c", "DeleteTaskPushNotificationConfig",
         "x", {"taskId": "t", "id": "c"}),
        ("GET", "/tasks/tasks", "GetTask", "", {"id": "tasks"}),  # an id, not a tenant
        ("GET", "/tasks/tasks/tasks", "GetTask", "tasks", {"id": "tasks"}),
    ],
)  # fmt: skip
def test_routes(verb: str, path: str, method: str, tenant: str, fields: dict[str, str]) -> None:
    call = match_route(verb, path)
    assert (call.route.method, call.tenant, call.fields) == (method, tenant, fields)


def test_unknown_paths_and_wrong_verbs() -> None:
    with pytest.raises(RouteNotFound):
        match_route("GET", "/nothing/here/at/all")
    with pytest.raises(RouteNotFound):
        match_route("GET", "/tasks/a:b")  # ids cannot hold ":" (ambiguous with :cancel)
    with pytest.raises(VerbNotAllowed) as refused:
        match_route("PUT", "/tasks/t1")
    assert refused.value.allow == ("GET",)
    assert problem(refused.value)["error"]["code"] == 405


def test_query_values_are_typed_and_checked() -> None:
    call = match_route("GET", "/tasks")
    query = [("pageSize", "5"), ("includeArtifacts", "true"), ("status", "input-required")]
    assert rest_params(call, None, query) == {
        "pageSize": 5,
        "includeArtifacts": True,
        "status": "TASK_STATE_INPUT_REQUIRED",
    }
    for bad in (("pageSize", "five"), ("includeArtifacts", "yes"), ("colour", "red")):
        with pytest.raises(InvalidParamsError) as failed:
            rest_params(call, None, [bad])
        assert failed.value.path == f"$.query.{bad[0]}"
    with pytest.raises(InvalidParamsError):
        rest_params(call, None, [("pageSize", "1"), ("pageSize", "2")])
    with pytest.raises(InvalidParamsError):
        rest_params(match_route("POST", "/message:send"), [1, 2], [])


def test_problem_body_carries_the_error_info_reason() -> None:
    body = problem(TaskNotFoundError("Task t not found"))["error"]
    assert (body["code"], body["status"]) == (404, "NOT_FOUND")
    (info,) = body["details"]
    assert info["reason"] == "TASK_NOT_FOUND"
    assert info["domain"] == "a2a-protocol.org"


def test_a_refined_error_goes_out_as_the_a2a_error_it_refines() -> None:
    """A context mismatch is an invalid-params error to every client: the ErrorInfo reason
    and the v0.3 error type name InvalidParams, not the local subclass."""
    refused = ContextMismatchError(
        "contextId 'c' does not match", path="$.params.message.contextId"
    )
    (info,) = problem(refused)["error"]["details"]
    assert info["reason"] == "INVALID_PARAMS"
    assert error_type(refused) == "InvalidParamsError"


def always_running(scope: CallerScope, task_id: str) -> bool:
    return True


def test_legacy_ids_in_use_until_the_grace_window_after_the_end() -> None:
    ids = LegacyIds(grace=300, has_job=always_running)
    entry = ids.reserve(ANONYMOUS, "c-1", "s", now=0)
    entry.task_id = "runtime-1"
    with pytest.raises(InvalidParamsError, match="already in use"):
        ids.reserve(ANONYMOUS, "c-1", "s", now=1)
    ids.observe(entry, m.TaskState.COMPLETED, now=10)
    ids.observe(entry, m.TaskState.COMPLETED, now=200)  # the first sighting counts
    assert ids.lookup(ANONYMOUS, "c-1", now=309) is entry
    with pytest.raises(InvalidParamsError, match="Unknown task id"):
        ids.lookup(ANONYMOUS, "c-1", now=310)
    assert ids.reserve(ANONYMOUS, "c-1", "s", now=311).task_id == ""  # reusable after eviction
    with pytest.raises(InvalidParamsError, match="Unknown task id"):
        ids.lookup(ANONYMOUS, "c-1", now=312)  # reserved but not started


def test_legacy_ids_are_evicted_in_the_order_their_windows_end() -> None:
    """Ids seen terminal at different times leave one by one as their own windows end, those
    still running stay, and an id reused after its eviction keeps its new task."""
    ids = LegacyIds(grace=100, has_job=always_running)
    entries = {}
    for name, started in [("a", 0), ("b", 1), ("c", 2), ("running", 3)]:
        entries[name] = ids.reserve(ANONYMOUS, name, "s", now=started)
        entries[name].task_id = "runtime-" + name
    for name, ended in [("b", 10), ("a", 20), ("c", 30)]:
        ids.observe(entries[name], m.TaskState.COMPLETED, now=ended)

    def known(now: float) -> set[str]:
        found = set()
        for name in entries:
            with contextlib.suppress(InvalidParamsError):
                found.add(ids.lookup(ANONYMOUS, name, now=now).task_id)
        return found

    assert known(now=109) == {"runtime-a", "runtime-b", "runtime-c", "runtime-running"}
    assert known(now=110) == {"runtime-a", "runtime-c", "runtime-running"}
    again = ids.reserve(ANONYMOUS, "b", "s", now=111)
    again.task_id = "runtime-b2"
    assert known(now=120) == {"runtime-b2", "runtime-c", "runtime-running"}
    assert known(now=1000) == {"runtime-b2", "runtime-running"}


def test_legacy_ids_of_tasks_that_ended_unseen_are_evicted() -> None:
    """A task nobody saw end (its stream dropped, its client gone) was kept for good; now an
    id whose task no longer has a job starts its grace window when a look (every grace
    window, at least 1 s apart) notices."""
    jobs = {"runtime-1", "runtime-2"}
    ids = LegacyIds(grace=5, has_job=lambda scope, task_id: task_id in jobs)
    for number in (1, 2):
        ids.reserve(ANONYMOUS, f"c-{number}", "s", now=0).task_id = f"runtime-{number}"
    jobs.discard("runtime-1")  # its job ended; nobody asked
    ids.lookup(ANONYMOUS, "c-1", now=6)  # noticed by the look at 6: in use until 11
    with pytest.raises(InvalidParamsError, match="already in use"):
        ids.reserve(ANONYMOUS, "c-1", "s", now=10)
    assert ids.reserve(ANONYMOUS, "c-1", "s", now=11).task_id == ""
    assert ids.lookup(ANONYMOUS, "c-2", now=100).task_id == "runtime-2"  # still working


def test_legacy_ids_belong_to_their_caller() -> None:
    ids = LegacyIds(grace=300, has_job=always_running)
    alice, bob = CallerScope(owner="alice"), CallerScope(owner="bob")
    mine = ids.reserve(alice, "c-1", "s", now=0)
    mine.task_id = "runtime-1"
    with pytest.raises(InvalidParamsError, match="Unknown task id"):
        ids.lookup(bob, "c-1", now=1)  # the same words as an id nobody holds
    with pytest.raises(InvalidParamsError, match="Unknown task id"):
        ids.lookup(ANONYMOUS, "c-1", now=1)
    theirs = ids.reserve(bob, "c-1", "s", now=2)  # not "already in use": bob's own id space
    theirs.task_id = "runtime-2"
    ids.release(bob, "c-1")
    assert ids.lookup(alice, "c-1", now=3) is mine


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        ([("Authorization", "Bearer a")], {"authorization": "Bearer a"}),
        ([("A2A-Version", "0.3"), ("a2a-version", "1.0")], {"a2a-version": "1.0"}),
        ([("Authorization", "Bearer a"), ("authorization", "Bearer b")], {}),
        ([("authorization", "Bearer a"), ("X", "1"), ("AUTHORIZATION", "")], {"x": "1"}),
    ],
)
def test_request_headers_drop_repeated_credentials(
    pairs: list[tuple[str, str]], expected: dict[str, str]
) -> None:
    """Every binding reads headers this way: a repeated Authorization is no credential at all."""
    assert request_headers(pairs) == expected


def _status(state: m.TaskState, text: str = "", progress: float | None = None) -> m.TaskStatus:
    metadata: m.JsonObject | None = {"progress": progress} if progress is not None else None
    message = (
        m.text_message(text, role=m.Role.AGENT, metadata=metadata) if text or metadata else None
    )
    return m.TaskStatus(state, message=message, timestamp=m.utcnow())


def test_legacy_events_suppress_repeats_and_end_with_one_artifact() -> None:
    states: list[m.TaskState] = []
    events = LegacyEvents("c-1", resubscribed=False, on_state=states.append)
    task = m.new_task(m.text_message("hi"))
    assert events.translate(task) == []  # no "submitted" in the dialect

    def status(*args: object) -> list[dict[str, object]]:
        return events.translate(m.TaskStatusUpdateEvent(task.id, task.context_id, _status(*args)))  # type: ignore[arg-type]

    first = status(m.TaskState.WORKING, "step", 0.25)
    assert first[0]["metadata"] == {"progress": 0.25} and first[0]["final"] is False
    assert status(m.TaskState.WORKING, "step", 0.25) == []
    assert len(status(m.TaskState.WORKING, "step", 0.5)) == 1
    artifact = m.Artifact("a", (m.TextPart("one "),))
    chunk = m.Artifact("a", (m.TextPart("two"),))
    for art, append in ((artifact, False), (chunk, True)):
        assert (
            events.translate(
                m.TaskArtifactUpdateEvent(task.id, task.context_id, art, append=append)
            )
            == []
        )
    done = status(m.TaskState.COMPLETED)
    assert [list(frame) for frame in done] == [["id", "artifact"], ["id", "status", "final"]]
    assert done[0]["artifact"] == {
        "name": "result",
        "parts": [{"type": "text", "text": "one two"}],
        "index": 0,
    }  # type: ignore[index]
    assert done[1]["final"] is True and str(done[1]["status"]["timestamp"]).endswith("Z")  # type: ignore[index]
    assert states[-1] is m.TaskState.COMPLETED


def test_legacy_resubscribe_announces_working_first() -> None:
    events = LegacyEvents("c-1", resubscribed=True, on_state=lambda _s: None)
    task = m.new_task(m.text_message("hi"))
    (frame,) = events.translate(task)
    assert frame["status"]["state"] == "working" and frame["final"] is False  # type: ignore[index]


@pytest.mark.parametrize(
    ("header", "refused"),
    [
        (None, "missing"),
        ("Basic abc", "missing"),
        ("Bearer", "empty"),
        ("Bearer    ", "empty"),
        ("bearer tok", ""),
        ("Bearer tok", ""),
    ],
)
def test_bearer_gate(header: str | None, refused: str) -> None:
    assert (
        (refused in bearer_refusal(header, None)) if refused else not bearer_refusal(header, None)
    )


def test_bearer_gate_with_a_token_check() -> None:
    assert bearer_refusal("Bearer good", lambda token: token == "good") == ""
    assert "not accepted" in bearer_refusal("Bearer bad", lambda token: token == "good")


@pytest.mark.parametrize("value", ["0", "7", "007", "-1", "2147483648", "9" * 30])
def test_integer_query_values_are_decimal(value: str) -> None:
    assert integer("pageSize", value) == int(value)


@pytest.mark.parametrize(
    "value",
    ["1_0", "+5", " 5", "5 ", "\t5", "\uff15", "\u0665", "5.0", "1e3", "0x10", "", "-", "9" * 5000],
)
def test_integer_query_values_refuse_what_only_python_reads(value: str) -> None:
    with pytest.raises(InvalidParamsError) as refused:
        integer("pageSize", value)
    assert refused.value.path == "$.query.pageSize"
    assert "pageSize must be a decimal integer (digits only)" in refused.value.message


@pytest.mark.parametrize("rid", ["r-1", 'ü \u2028 "', 7, -(2**63), 2**64 - 1, 2.5, None])
def test_an_event_streams_encoded_head_writes_what_a_response_does(rid: rpc.RequestId) -> None:
    """A stream encodes its request's id once (``success_head``) for all its events."""
    result = {"task": {"id": "t"}}
    assert rpc.success_head(rid) + dumps(result) + rpc.SUCCESS_TAIL == dumps(
        rpc.success(rid, result)
    )


def test_request_ids_beyond_64_bits_are_read_and_written_exactly() -> None:
    big = 123456789012345678901234567890
    document = rpc.load_request(b'{"jsonrpc": "2.0", "id": %d, "method": "m"}' % big)
    assert rpc.parse_request(document).id == big
    sent = b'{"jsonrpc":"2.0","id":%d,"result":{}}' % big
    assert rpc.success_head(big) + b"{}" + rpc.SUCCESS_TAIL == sent
    assert dumps(rpc.success(big, {})) == sent
    assert dumps(rpc.failure(-big, TaskNotFoundError())).startswith(
        b'{"jsonrpc":"2.0","id":-%d,' % big
    )
    legacy = rpc.load_request(b'{"id": [1e30, {"n": -18446744073709551616}, 2.5], "x": 1e30}')
    assert legacy["id"] == [1e30, {"n": -(2**64)}, 2.5]
    assert dumps(rpc.success(legacy["id"], None)) == (
        b'{"jsonrpc":"2.0","id":[1e+30,{"n":-18446744073709551616},2.5],"result":null}'
    )
    assert rpc.load_request(b'{"id": 5, "x": 1e30}') == {"id": 5, "x": 1e30}


@pytest.mark.parametrize(
    ("sent", "served"),
    [
        ("", "0.3"),
        ("1", "1.0"),
        ("1.0", "1.0"),
        ("1.0.2", "1.0"),
        ("0.3.0", "0.3"),
        (" 1.0 ", "1.0"),
    ],
)
def test_only_major_and_minor_pick_the_version(sent: str, served: str) -> None:
    """A2A v1.0 §3.6: patch numbers MUST NOT be considered in version negotiation."""
    assert requested_version({"a2a-version": sent}) == served


@pytest.mark.parametrize("sent", ["1.1", "2.0", "1.0.x", "1.0.2.1", "v1.0"])
def test_versions_not_spoken_are_refused(sent: str) -> None:
    with pytest.raises(VersionNotSupportedError):
        requested_version({"a2a-version": sent})


def test_the_version_may_come_as_a_request_parameter() -> None:
    """A2A v1.0 §3.6.1: a client MAY send the version as a request parameter; a header wins."""
    query = [("OPVS-Version", "1.0"), ("pageSize", "5")]
    headers, rest = version_from_query({"accept": "*/*"}, query)
    assert requested_version(headers) == "1.0"
    assert rest == [("pageSize", "5")]
    headers, rest = version_from_query({"a2a-version": "0.3"}, [("A2A-Version", "1.0")])
    assert (requested_version(headers), rest) == ("0.3", [])


def test_event_data_escapes_where_line_splitting_clients_end_lines() -> None:
    """U+0085, U+2028 and U+2029 go out as JSON escapes: a client reading lines the way
    ``str.splitlines`` does (the official SDK) sees one ``data:`` line, and the same JSON."""
    data = dumps({"text": "a\x85b\u2028c\u2029d", "\u2028": ["\\\u2029"]})
    frame = encode_event(data, event_id=3)
    assert frame.startswith(b"id: 3\ndata: {") and frame.endswith(b"}\n\n")
    text = frame.decode()
    assert text.splitlines() == text.split("\n")[:-1]  # the lines an SSE reader sees
    assert loads(frame.removeprefix(b"id: 3\ndata: ")) == loads(data)
    assert encode_event(dumps({"text": "plain"})) == b'data: {"text":"plain"}\n\n'
