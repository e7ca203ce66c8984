"""Random sequences of store calls, run on every backend in lockstep and on the reference model
(``reference_model.py``), every outcome compared: what each call returns (by its JSON form), or
the type of what it raises, and after a refused write, that the task is as it was.

``A2A_TRIO_MODEL_EXAMPLES`` and ``A2A_TRIO_MODEL_STEPS`` (environment) raise the number of
examples and of steps in each for a long local hunt (400 and 50 take about 7 minutes); by
default the module takes well under a minute, as CI runs it.
"""

from __future__ import annotations

import os
from copy import deepcopy
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)

from a2a_trio import model as m
from a2a_trio.errors import InvalidParamsError, TaskNotFoundError
from a2a_trio.store import (
    CallerScope,
    Retention,
    ScopedTask,
    StoredTask,
    TaskAtVersion,
    TaskPage,
    TaskQuery,
    TaskStore,
    TaskUpdate,
)
from a2a_trio.wire import V1

from .conftest import pg_base_url
from .model_strategies import (
    SCOPES,
    TTL,
    config_ids,
    configs,
    created,
    event_lists,
    history_lengths,
    keys,
    new_tasks,
    queries,
    scopes,
    task_ids,
    task_refs,
    updates,
    versions,
)
from .reference_model import Listed, ReferenceStore, Row, trimmed
from .store_session import BACKENDS, Outcome, Stores, outcome_of
from .test_isolation import scribble

type Ref = tuple[CallerScope, str]
"""A caller's scope and a task id: what most calls name."""
UNKNOWN_TIME = datetime(1970, 1, 1, tzinfo=UTC)
"""The write time of a ``StoredTask`` the model expects: the model has no clock."""


def task_json(task: m.Task, row: Row | None) -> Any:
    """The task's JSON form; without the status timestamp when the store chose it."""
    encoded = V1.encode(task)
    if row is not None and row.store_stamped:
        encoded["status"].pop("timestamp", None)
    return encoded


def event_json(events: Any) -> Any:
    return [(seq, V1.encode_stream_response(event)) for seq, event in events]


@attrs.define
class Listing:
    """A listing being paged: the query, the model's cursor and each store's next token."""

    scope: CallerScope
    query: TaskQuery
    cursor: Listed
    tokens: dict[str, str]


class StoreMachine(RuleBasedStateMachine):
    def __init__(self, stores: Stores) -> None:
        super().__init__()
        self.stores = stores
        self.model = ReferenceStore(max_events=1)
        self.ttl: timedelta | None = None
        self.listing: Listing | None = None
        self.shared: list[object] = []
        """What the stores were given or handed out since the last ``scribble``."""

    # -- helpers ---------------------------------------------------------------------------

    def stored_json(self, stored: StoredTask | None) -> Any:
        if stored is None:
            return None
        return task_json(stored.task, self.model.rows.get(stored.task.id)), stored.version

    @staticmethod
    def as_stored(
        row: Row, *, history_length: int | None = None, include_artifacts: bool = True
    ) -> StoredTask:
        """The ``StoredTask`` a store returns for ``row`` (its write time is not compared)."""
        task = trimmed(row.task, history_length, include_artifacts)
        return StoredTask(task, row.version, UNKNOWN_TIME)

    def agree(self, outcomes: dict[str, Outcome], expected: Outcome, encode: Any) -> None:
        """Every store's outcome is the model's (values by ``encode``, errors by type)."""

        def seen(outcome: Outcome) -> Any:
            if outcome.error is not None:
                return ("raised", outcome.error.__name__)
            return encode(outcome.value)

        want = seen(expected)
        assert outcomes.keys() == set(BACKENDS)
        for name, outcome in outcomes.items():
            assert seen(outcome) == want, name

    def check_task(self, scope: CallerScope, task_id: str) -> None:
        """Each store holds the model's task: document, version, events, configs."""
        row = self.model.row(scope, task_id)

        async def read(_name: str, store: TaskStore) -> Any:
            stored = await store.load_task(scope, task_id)
            if stored is None:
                return None
            events = await store.load_events(scope, task_id)
            configs = await store.list_push_configs(scope, task_id)
            return stored, events, configs

        def encode(value: Any) -> Any:
            if value is None:
                return None
            stored, events, configs = value
            return self.stored_json(stored), event_json(events), [V1.encode(c) for c in configs]

        expected = None
        if row is not None:
            expected = (
                self.as_stored(row),
                sorted(row.events.items()),
                list(row.configs.values()),
            )
        self.agree(self.stores.each(read), Outcome(expected), encode)

    # -- steps -----------------------------------------------------------------------------

    @initialize(
        target=created,
        max_events=st.sampled_from([1, 2, 3, 5, 1000]),
        purge_batch=st.sampled_from([1, 2, 500]),
        ttl=st.none() | st.just(TTL),
        tasks=st.lists(st.tuples(st.sampled_from(SCOPES), new_tasks), min_size=1, max_size=4),
    )
    def open_stores(
        self,
        max_events: int,
        purge_batch: int,
        ttl: timedelta | None,
        tasks: list[tuple[CallerScope, m.Task]],
    ) -> Any:
        """Open the stores with these retention settings, and create a few tasks to work on."""
        self.ttl = ttl
        self.model = ReferenceStore(max_events=max_events)
        retention = Retention(
            terminal_ttl=ttl,
            max_events_per_task=max_events,
            purge_interval=timedelta(days=1),
            purge_batch=purge_batch,
        )
        self.stores.open(retention)
        refs = [self.create_task(scope, task, None, []) for scope, task in tasks]
        return multiple(*(ref for ref in refs if isinstance(ref, tuple)))

    def teardown(self) -> None:
        """Every store holds what the model holds, and nothing else."""
        try:
            for row in list(self.model.rows.values()):
                self.check_task(row.scope, row.task.id)
            for scope in SCOPES:
                self.list_and_compare(scope, TaskQuery(page_size=100, include_artifacts=True), None)
        finally:
            self.stores.close()

    @rule(target=created, scope=scopes, task=new_tasks, key=keys, events=event_lists)
    def create_task(
        self, scope: CallerScope, task: m.Task, key: str | None, events: list[Any]
    ) -> Any:
        outcomes = self.stores.each(
            lambda _name, store: store.create_task(scope, task, idempotency_key=key, events=events),
            writes=True,
        )
        self.shared += [task, events, *outcomes.values()]
        expected = outcome_of(
            lambda: self.model.create(scope, deepcopy(task), key, deepcopy(events))
        )
        self.agree(outcomes, _stored(expected), self.stored_json)
        self.check_task(scope, task.id)
        return multiple() if expected.error is not None else (scope, expected.value.task.id)

    @rule(ref=task_refs, history_length=history_lengths, artifacts=st.booleans())
    def load_task(self, ref: Ref, history_length: int | None, artifacts: bool) -> None:
        scope, task_id = ref
        outcomes = self.stores.each(
            lambda _name, store: store.load_task(
                scope, task_id, history_length=history_length, include_artifacts=artifacts
            )
        )
        if history_length is not None and history_length < 0:
            self.agree(outcomes, Outcome(error=InvalidParamsError), self.stored_json)
            return
        row = self.model.row(scope, task_id)
        expected = None
        if row is not None:
            expected = self.as_stored(
                row, history_length=history_length, include_artifacts=artifacts
            )
        self.agree(outcomes, Outcome(expected), self.stored_json)

    @rule(ref=task_refs, update=updates, version=versions, events=event_lists)
    def update_task(
        self,
        ref: Ref,
        update: TaskUpdate,
        version: str,
        events: list[Any],
    ) -> None:
        scope, task_id = ref
        row = self.model.row(scope, task_id)
        current = 1 if row is None else row.version
        expected_version = {"right": current, "wrong": current + 1, "none": None}[version]
        now = m.utcnow()
        outcomes = self.stores.each(
            lambda _name, store: store.update_task(
                scope, task_id, update, expected_version=expected_version, events=events
            ),
            writes=True,
        )
        expected = outcome_of(
            lambda: self.model.update(
                scope, task_id, deepcopy(update), expected_version, deepcopy(events), now=now
            )
        )
        self.shared += [update, events, *outcomes.values()]
        self.agree(outcomes, _stored(expected), self.stored_json)
        self.check_task(scope, task_id)

    @rule(
        touches=st.lists(st.tuples(task_refs, versions), max_size=4),
    )
    def touch_tasks(self, touches: list[tuple[Ref, str]]) -> None:
        asked = []
        for (scope, task_id), version in touches:
            row = self.model.row(scope, task_id)
            current = 1 if row is None else row.version
            asked.append(TaskAtVersion(scope, task_id, current + (version == "wrong")))
        if len(asked) == 1:
            (one,) = asked
            outcomes = self.stores.each(
                lambda _name, store: store.touch_task(
                    one.scope, one.task_id, expected_version=one.version
                ),
                writes=True,
            )
            expected = outcome_of(lambda: one in self.model.touch(asked))
            self.agree(outcomes, expected, lambda value: value)
            return
        outcomes = self.stores.each(lambda _name, store: store.touch_tasks(asked), writes=True)
        self.agree(outcomes, outcome_of(lambda: self.model.touch(asked)), lambda value: value)

    @rule(scope=scopes, ids=st.lists(task_ids, max_size=4))
    def task_versions(self, scope: CallerScope, ids: list[str]) -> None:
        outcomes = self.stores.each(lambda _name, store: store.task_versions(scope, ids))
        self.agree(outcomes, Outcome(self.model.versions(scope, ids)), lambda value: value)
        if ids:
            first = ids[0]
            outcomes = self.stores.each(lambda _name, store: store.task_version(scope, first))
            expected = self.model.versions(scope, [first]).get(first)
            self.agree(outcomes, Outcome(expected), lambda value: value)

    def page_json(self, page: TaskPage) -> Any:
        tasks = [task_json(task, self.model.rows.get(task.id)) for task in page.tasks]
        return tasks, page.total_size, page.page_size, bool(page.next_page_token)

    def list_and_compare(self, scope: CallerScope, query: TaskQuery, after: Listed | None) -> None:
        tokens = {} if self.listing is None or after is None else self.listing.tokens
        outcomes = self.stores.each(
            lambda name, store: store.list_tasks(
                scope, attrs.evolve(query, page_token=tokens.get(name, ""))
            )
        )
        expected = outcome_of(lambda: self.model.list_tasks(scope, query, after))
        want = expected
        if expected.error is None:
            page = expected.value
            more = "" if page.cursor is None else "more"
            want = Outcome(TaskPage(page.tasks, more, query.page_size, page.total))
        self.agree(outcomes, want, self.page_json)
        self.listing = None
        if expected.error is None and expected.value.cursor is not None:
            next_tokens = {
                name: outcome.value.next_page_token for name, outcome in outcomes.items()
            }
            self.listing = Listing(scope, query, expected.value.cursor, next_tokens)

    @rule(scope=scopes, query=queries)
    def list_tasks(self, scope: CallerScope, query: TaskQuery) -> None:
        self.list_and_compare(scope, query, None)

    @precondition(lambda self: self.listing is not None)
    @rule()
    def next_page(self) -> None:
        assert self.listing is not None
        self.list_and_compare(self.listing.scope, self.listing.query, self.listing.cursor)

    @rule(
        scope=scopes,
        token=st.sampled_from(["bm90IGEgdG9rZW4", "%%%", "bTk5OTk5OTk5OTk5OTk5OTk5OTk5"]),
    )
    def list_with_a_bad_token(self, scope: CallerScope, token: str) -> None:
        outcomes = self.stores.each(
            lambda _name, store: store.list_tasks(scope, TaskQuery(page_token=token))
        )
        self.agree(outcomes, Outcome(error=InvalidParamsError), self.page_json)

    @rule(ref=task_refs)
    def delete_task(self, ref: Ref) -> None:
        scope, task_id = ref
        outcomes = self.stores.each(lambda _name, store: store.delete_task(scope, task_id))
        self.agree(outcomes, Outcome(self.model.delete(scope, task_id)), lambda value: value)

    @rule(ref=task_refs, events=event_lists)
    def append_events(self, ref: Ref, events: list[Any]) -> None:
        scope, task_id = ref
        outcomes = self.stores.each(
            lambda _name, store: store.append_events(scope, task_id, events)
        )
        self.shared += [events]
        expected = outcome_of(lambda: self.model.append(scope, task_id, deepcopy(events)))
        self.agree(outcomes, expected, lambda value: value)
        self.check_task(scope, task_id)

    @rule(ref=task_refs, after=st.integers(-1, 13))
    def read_the_log(self, ref: Ref, after: int) -> None:
        scope, task_id = ref
        row = self.model.row(scope, task_id)
        events = self.stores.each(
            lambda _name, store: store.load_events(scope, task_id, after_seq=after)
        )
        last = self.stores.each(lambda _name, store: store.last_event_seq(scope, task_id))
        both = self.stores.each(lambda _name, store: store.load_task_with_seq(scope, task_id))
        if row is None:
            self.agree(events, Outcome(error=TaskNotFoundError), event_json)
            self.agree(last, Outcome(error=TaskNotFoundError), lambda value: value)
            self.agree(both, Outcome(None), lambda value: value)
            return
        logged = sorted(row.events.items())
        self.agree(events, Outcome([e for e in logged if e[0] > after]), event_json)
        newest = max(row.events, default=0)
        self.agree(last, Outcome(newest), lambda value: value)
        self.agree(
            both,
            Outcome((self.as_stored(row), newest)),
            lambda value: value if value is None else (self.stored_json(value[0]), value[1]),
        )

    @rule(
        ref=task_refs,
        batch=st.lists(configs, min_size=1, max_size=3),
        named=st.sampled_from([True] * 7 + [False]),
    )
    def set_push_configs(
        self, ref: Ref, batch: list[m.TaskPushNotificationConfig], named: bool
    ) -> None:
        """Set a task's configs one after the other (some in the same millisecond); a config
        that names no task (``named`` false) is refused."""
        scope, task_id = ref
        batch = [attrs.evolve(config, task_id=task_id if named else "") for config in batch]

        async def set_all(_name: str, store: TaskStore) -> list[m.TaskPushNotificationConfig]:
            return [await store.set_push_config(scope, config) for config in batch]

        outcomes = self.stores.each(set_all)
        expected = outcome_of(lambda: [self.model.set_config(scope, config) for config in batch])
        self.agree(outcomes, expected, lambda value: [V1.encode(c) for c in value])
        self.check_task(scope, task_id)

    @rule(ref=task_refs, config_id=config_ids)
    def read_push_configs(self, ref: Ref, config_id: str) -> None:
        scope, task_id = ref
        row = self.model.row(scope, task_id)
        got = self.stores.each(
            lambda _name, store: store.get_push_config(scope, task_id, config_id)
        )
        listed = self.stores.each(lambda _name, store: store.list_push_configs(scope, task_id))
        config = None if row is None else row.configs.get(config_id)
        self.agree(got, Outcome(config), lambda value: value and V1.encode(value))
        expected = (
            Outcome(error=TaskNotFoundError) if row is None else Outcome(list(row.configs.values()))
        )
        self.agree(listed, expected, lambda value: [V1.encode(c) for c in value])

    @rule(ref=task_refs, config_id=config_ids)
    def delete_push_config(self, ref: Ref, config_id: str) -> None:
        scope, task_id = ref
        outcomes = self.stores.each(
            lambda _name, store: store.delete_push_config(scope, task_id, config_id)
        )
        row = self.model.row(scope, task_id)
        existed = row is not None and row.configs.pop(config_id, None) is not None
        self.agree(outcomes, Outcome(existed), lambda value: value)

    @invariant()
    def scribble(self) -> None:
        """After every step, change every dict and list the stores were given or handed out
        in it: no store may hold any of them (the model holds copies)."""
        scribble(self.shared)
        self.shared = []

    @rule()
    def list_unfinished(self) -> None:
        outcomes = self.stores.each(lambda _name, store: store.list_unfinished())
        expected = [ScopedTask(row.scope, self.as_stored(row)) for row in self.model.unfinished()]
        self.agree(
            outcomes,
            Outcome(expected),
            lambda value: [(one.scope, self.stored_json(one.stored)) for one in value],
        )

    @rule(cutoff=st.sampled_from(["past", "future"]) | st.tuples(created, st.sampled_from([0, -1])))
    def purge_expired(self, cutoff: Any) -> None:
        """Purge with a ``now`` that puts the cutoff far back, far ahead, or at (or just
        before) one task's last write, on each store by its own clock."""
        rows = self.model.rows
        if isinstance(cutoff, tuple) and cutoff[0][1] not in rows:
            return
        if cutoff == "past":
            cutoff_tick: int | None = 0
            nows = dict.fromkeys(BACKENDS, datetime(2000, 1, 1, tzinfo=UTC))
        elif cutoff == "future":
            cutoff_tick = self.model.clock
            nows = dict.fromkeys(BACKENDS, datetime(2200, 1, 1, tzinfo=UTC))
        else:
            (_scope, task_id), before = cutoff
            row = rows[task_id]
            cutoff_tick = row.tick + before
            loaded = self.stores.each(lambda _name, store: store.load_task(row.scope, task_id))
            nows = {
                name: outcome.value.updated_at + (self.ttl or TTL) + timedelta(milliseconds=before)
                for name, outcome in loaded.items()
            }
        outcomes = self.stores.each(lambda name, store: store.purge_expired(now=nows[name]))
        purged = self.model.purge(cutoff_tick if self.ttl is not None else None)
        self.agree(outcomes, Outcome(purged), lambda value: value)


def _stored(expected: Outcome) -> Outcome:
    """A model outcome holding a row as one holding the ``StoredTask`` a store returns."""
    if expected.error is not None:
        return expected
    return Outcome(StoreMachine.as_stored(expected.value))


EXAMPLES = int(os.environ.get("A2A_TRIO_MODEL_EXAMPLES", "40"))
STEPS = int(os.environ.get("A2A_TRIO_MODEL_STEPS", "30"))


# The suite's 120 s per test (pyproject.toml) fits the default run; a long hunt gets room in
# proportion to its steps (150 examples of 30 steps took up to 165 s on a loaded machine).
@pytest.mark.timeout(max(120, EXAMPLES * STEPS // 10))
async def test_every_store_agrees_with_the_model(tmp_path: Path) -> None:
    pg_base_url()  # skipped locally without a server, a failure in CI
    run_settings = settings(
        max_examples=EXAMPLES,
        stateful_step_count=STEPS,
        deadline=None,
        # Steps make real database calls, and an example draws many values.
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )
    async with trio.open_nursery() as nursery:
        stores = Stores(nursery, tmp_path)

        class OnTheseStores(StoreMachine):
            def __init__(self) -> None:
                super().__init__(stores)

        run = partial(run_state_machine_as_test, OnTheseStores, settings=run_settings)
        await trio.to_thread.run_sync(run)
