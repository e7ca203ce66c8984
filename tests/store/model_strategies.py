"""What ``test_model.py``'s state machine draws: callers, keys, tasks, updates, events,
queries and push configs, mostly small (so an example's budget lasts for all its steps), a
refusal (a NUL in a key, a bad sequence number, another caller's task) now and then."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import attrs
from hypothesis import strategies as st
from hypothesis.stateful import Bundle
from strategies import V1_STRATEGIES

from a2a_trio import model as m
from a2a_trio.store import ANONYMOUS, ArtifactWrite, CallerScope, TaskQuery, TaskUpdate

S = m.TaskState
SCOPES = [
    ANONYMOUS,
    CallerScope("acme", "alice"),
    CallerScope("acme", "bob"),
    CallerScope("globex", "alice"),
]
NUL_SCOPE = CallerScope("acme\x00", "alice")
TASK_IDS = ["t1", "t2", "t3", "t4", "t5"]
INSTANTS = [
    datetime(2000, 1, 1, tzinfo=UTC),
    datetime(2020, 6, 1, 12, 0, 0, 1000, tzinfo=UTC),
    datetime(2100, 1, 1, tzinfo=UTC),
]
"""Status timestamps and ``status_timestamp_after`` filters: before and after the stores' now."""
TTL = timedelta(hours=1)

# Keys holding a NUL (refused, or found nowhere) come up now and then, not at every step.
scopes = st.sampled_from([*SCOPES * 3, NUL_SCOPE])
task_ids = st.sampled_from([*TASK_IDS * 3, "t\x00"])
contexts = st.sampled_from(["c1", "c2"] * 3 + ["", "c\x00"])
keys = st.sampled_from([None] * 4 + ["k1", "k2"] * 2 + ["", "k\x00"])
config_ids = st.sampled_from(["p1", "p2", "p3"] * 2 + ["p\x00"])
created = Bundle("created")
"""(scope, task id) of the tasks created: most calls name one, some another caller's or none
(each step injects a refusal or two at most now and then, so that many steps succeed)."""
task_refs = st.one_of(
    *[created] * 6,
    st.tuples(scopes, created).map(lambda pair: (pair[0], pair[1][1])),
    st.tuples(scopes, task_ids),
)
states = st.sampled_from(list(S))
live_states = st.sampled_from([S.SUBMITTED, S.WORKING] * 4 + list(S))
"""Mostly a running task's states (in which the SQL stores remember a task they wrote)."""


small_json = st.dictionaries(
    st.sampled_from(["a", "b", "c\x00"]), st.lists(st.integers(0, 3), max_size=2), max_size=2
)
"""Metadata: small, nested (a list to change in place), a NUL in a key now and then."""
small_messages = st.builds(
    lambda text, metadata: m.text_message(text, role=m.Role.AGENT, metadata=metadata),
    st.text(max_size=6),
    st.none() | small_json,
)


def now_and_then_large(message: m.Message, draw: int) -> m.Message:
    """``message``, or one time in 16 a 300 kB message with a NUL in its text (built here:
    Hypothesis shows the arguments, and shrinks ``draw`` away from it)."""
    if draw < 15:
        return message
    return m.text_message("large \x00 text " * 20_000, role=m.Role.AGENT)


# Mostly small values, so that Hypothesis's budget for an example lasts for all its steps;
# every shape the model can hold (tests/strategies.py) a quarter of the time.
messages = st.builds(
    now_and_then_large,
    st.one_of(small_messages, small_messages, small_messages, V1_STRATEGIES.of(m.Message)),
    st.integers(0, 15),
)
stream_events = messages | st.builds(
    m.TaskStatusUpdateEvent, task_ids, contexts, st.builds(m.TaskStatus, states)
)
good_seqs = st.lists(st.integers(1, 12), unique=True, max_size=4)
bad_seqs = st.lists(st.integers(-1, 12), min_size=1, max_size=4)
event_lists = st.one_of(*[st.just([])] * 4, *[good_seqs] * 4, bad_seqs).flatmap(
    lambda seqs: st.lists(stream_events, min_size=len(seqs), max_size=len(seqs)).map(
        lambda events: list(zip(seqs, events, strict=True))
    )
)


def a_task(message: m.Message, state: m.TaskState, metadata: m.JsonObject | None) -> m.Task:
    return attrs.evolve(m.new_task(message), status=m.TaskStatus(state), metadata=metadata)


new_tasks = st.builds(
    lambda task, task_id, context_id: attrs.evolve(task, id=task_id, context_id=context_id),
    st.one_of(
        *[st.builds(a_task, messages, live_states, st.none() | small_json)] * 3,
        V1_STRATEGIES.of(m.Task),
    ),
    task_ids,
    contexts,
)
small_artifacts = st.builds(
    m.Artifact,
    st.just(""),
    st.lists(st.builds(m.TextPart, st.text(max_size=4)) | st.builds(m.DataPart, small_json)),
    metadata=st.none() | small_json,
)
artifact_writes = st.builds(
    lambda artifact, artifact_id, append: ArtifactWrite(
        attrs.evolve(artifact, artifact_id=artifact_id), append
    ),
    st.one_of(small_artifacts, small_artifacts, small_artifacts, V1_STRATEGIES.of(m.Artifact)),
    st.sampled_from(["a1", "a2", "a3"]),
    st.booleans(),
)
updates = st.builds(
    TaskUpdate,
    state=st.none() | live_states,
    status_message=st.none() | messages,
    timestamp=st.none() | st.sampled_from(INSTANTS),
    artifacts=st.lists(artifact_writes, max_size=3),
    messages=st.lists(messages, max_size=2),
    metadata=st.none() | small_json,
)
versions = st.sampled_from(["right", "none"] * 2 + ["wrong"])
history_lengths = st.none() | st.sampled_from([0, 1, 3]) | st.just(-1)
queries = st.builds(
    TaskQuery,
    context_id=st.sampled_from(["", "c1", "c2"]),
    status=st.sampled_from([S.UNSPECIFIED, S.SUBMITTED, S.WORKING, S.COMPLETED, S.CANCELED]),
    page_size=st.sampled_from([1, 2, 3, 50]) | st.sampled_from([0, 101]),
    history_length=history_lengths,
    status_timestamp_after=st.none() | st.sampled_from(INSTANTS),
    include_artifacts=st.booleans(),
)
configs = st.builds(
    m.TaskPushNotificationConfig,
    url=st.sampled_from(["https://a.example/hook", "https://b.example/"]),
    id=config_ids,
    token=st.text(max_size=8),
)
