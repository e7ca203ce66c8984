"""The task context a handler receives: what was asked, and how to report back."""

from __future__ import annotations

from typing import Any, NoReturn

import attrs
import trio

from .. import model as m
from ..errors import AgentMisuseError, ConcurrencyError
from ..store import ArtifactWrite, CallerScope, TaskUpdate
from ._agent import accepts_media_type
from ._job import Incoming, Job
from ._outcome import TaskRejected, agent_message, value_to_parts


class TaskContext:
    """Handed to a skill handler; every ``await`` here persists first, then notifies streams.

    The incoming message is ``message`` (``text`` and ``data`` read its parts); ``history`` and
    ``task`` show the task as stored; ``accepted_output_modes`` (and :meth:`accepts`) say which
    media types the client takes in the answer.  A handler reports progress with
    :meth:`update`, emits artifacts with :meth:`emit_artifact`, asks the client with
    :meth:`ask`, declines with :meth:`reject`; returning completes the task, raising fails it,
    cancellation cancels it.

    What it hands out is the handler's own copy: changing a ``metadata`` dict or a data part's
    value there changes neither the stored task nor what its streams replay (only a write does).
    """

    def __init__(self, job: Job | None, incoming: Incoming, *, caller: CallerScope) -> None:
        self._job = job
        self.message = m.detached_content(incoming.message)
        self.accepted_output_modes = incoming.accepted_output_modes
        """The media types the client accepts in response parts, as its send listed them
        (``SendMessageConfiguration.accepted_output_modes``, A2A v1.0 §3.2.2); empty means
        anything.  They come from the send that started the task, then from the follow-up that
        answered ``ask``; a run the server starts by itself (a resumable task after a restart)
        sees none, as they are not stored."""
        self.caller = caller
        self._asking = False

    # --- what was asked -------------------------------------------------------------------

    @property
    def task(self) -> m.Task:
        """The task as last stored (its status, artifacts and full history)."""
        return m.detached_task(self._require_job().task)

    @property
    def task_id(self) -> str:
        return self._job.id if self._job else ""

    @property
    def context_id(self) -> str:
        return self._job.task.context_id if self._job else self.message.context_id

    @property
    def history(self) -> tuple[m.Message, ...]:
        if self._job is None:
            return (self.message,)
        return tuple(map(m.detached_content, self._job.task.history))  # not the artifacts too

    @property
    def text(self) -> str:
        """The text parts of the incoming message, joined by newlines."""
        return "\n".join(p.text for p in self.message.parts if isinstance(p, m.TextPart))

    @property
    def data(self) -> m.JsonValue:
        """The first data part's value of the incoming message (``None`` when there is none)."""
        return next((p.data for p in self.message.parts if isinstance(p, m.DataPart)), None)

    @property
    def metadata(self) -> m.JsonObject:
        return self.message.metadata or {}

    def accepts(self, media_type: str) -> bool:
        """Whether the client accepts ``media_type`` in the answer: one of
        ``accepted_output_modes`` names it, or is ``type/*`` or ``*/*`` (RFC 9110 §12.5.1
        media ranges), or the client listed none.  Case does not count, nor do parameters
        (``; charset=utf-8``) on either side.  Advice only: the runtime sends whatever the
        handler returns (A2A: agents SHOULD tailor their output to these modes)."""
        return not self.accepted_output_modes or accepts_media_type(
            self.accepted_output_modes, media_type
        )

    # --- reporting back -------------------------------------------------------------------

    async def update(
        self,
        text: str | None = None,
        *,
        progress: float | None = None,
        metadata: m.JsonObject | None = None,
    ) -> None:
        """Report progress: the task is WORKING, with an optional status message.

        ``progress`` (0..1 or a percentage, as the agent chooses) is kept in the status
        message's metadata so every client dialect can show it.
        """
        job = self._require_job()
        message_metadata: m.JsonObject = dict(metadata or {})
        if progress is not None:
            message_metadata["progress"] = progress
        status_message = None
        if text is not None or message_metadata:
            status_message = agent_message(job.task, text or "")
            if message_metadata:
                status_message = attrs.evolve(status_message, metadata=message_metadata)
        await self._write(TaskUpdate(state=m.TaskState.WORKING, status_message=status_message))

    async def emit_artifact(
        self,
        content: Any,
        *,
        name: str = "",
        description: str = "",
        artifact_id: str | None = None,
        append: bool = False,
        last_chunk: bool = True,
        metadata: m.JsonObject | None = None,
    ) -> str:
        """Emit an artifact (or, with ``append=True``, a chunk of one); returns its id.

        ``content`` is anything a handler may return (text, bytes, JSON data, parts) or an
        ``Artifact``.  Stream a large artifact as chunks: the first without ``append``, then
        ``append=True`` with ``artifact_id=`` the id the first call returned, the last with
        ``last_chunk=True`` (pass ``last_chunk=False`` before).

        Raises:
            AgentMisuseError: ``append=True`` names no artifact this task emitted before (an
                append needs the first chunk's id: a client has nothing to append it to), or
                an ``Artifact`` has no id or no parts; nothing is written.
        """
        job = self._require_job()
        if isinstance(content, m.Artifact):
            artifact = content
        else:
            artifact = m.Artifact(
                artifact_id=artifact_id or m.new_id(),
                parts=value_to_parts(content),
                name=name,
                description=description,
                metadata=metadata,
            )
        if append and all(a.artifact_id != artifact.artifact_id for a in job.task.artifacts):
            raise AgentMisuseError(
                f"emit_artifact(append=True) adds to an artifact this task emitted before, and"
                f" it has none with id {artifact.artifact_id!r}: emit the first chunk without"
                " append, then pass artifact_id=<the id that call returned> with each chunk"
                " appended to it"
            )
        await self._write(
            TaskUpdate(artifacts=(ArtifactWrite(artifact, append=append),)),
            chunk=(append, last_chunk),
        )
        return artifact.artifact_id

    async def ask(self, question: str | m.Message, *, auth: bool = False) -> m.Message:
        """Ask the client for more input (or for auth) and wait for its reply on this task.

        The task goes INPUT_REQUIRED (AUTH_REQUIRED with ``auth=True``) with ``question`` as its
        status message; the client's follow-up message (same ``taskId``) is returned and the task
        is WORKING again (``accepted_output_modes`` are now that follow-up's).  Waits
        indefinitely; cancelling the task cancels the wait.

        Raises:
            AgentMisuseError: another ``ask`` of this task is still waiting (called from two
                tasks of a nursery at once): one follow-up answers one question, so the other
                would wait forever with its task WORKING; nothing is written.
        """
        job = self._require_job()
        if self._asking:
            raise AgentMisuseError(
                "ctx.ask was called while another ctx.ask of this task still waits for its"
                " answer: a task asks one question at a time (the client's one follow-up"
                " answers it); ask the next question once the first returns"
            )
        if isinstance(question, str):
            question = agent_message(job.task, question)
        state = m.TaskState.AUTH_REQUIRED if auth else m.TaskState.INPUT_REQUIRED
        self._asking = True
        try:
            await self._write(
                TaskUpdate(state=state, status_message=question, messages=(question,))
            )
            answer = await job.next_message()
        finally:
            self._asking = False
        self.message = m.detached_content(answer.message)
        self.accepted_output_modes = answer.accepted_output_modes
        return self.message

    async def _write(self, update: TaskUpdate, *, chunk: tuple[bool, bool] | None = None) -> None:
        """Every report a handler awaits is a full checkpoint, even on a store that never waits:
        a cancelled handler stops before writing, and other tasks (its streams) run after.

        A write the store refuses because the task moved on without this job (another replica
        cancelled, re-ran or recovered it) stops the job, which cancels the handler's scope: the
        handler sees ``trio.Cancelled`` here, as when a lease tick or ``CancelTask`` stops it
        first.  Only a call the job's scope does not reach (shielded, or from a task outside it)
        gets the ``ConcurrencyError``.
        """
        job = self._require_job()
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            await job.write(update, chunk=chunk)
        except ConcurrencyError:
            if job.superseded:  # superseding cancelled the job's scope: Cancelled, here
                await trio.lowlevel.checkpoint()
            raise
        await trio.lowlevel.cancel_shielded_checkpoint()

    def reject(self, reason: str) -> NoReturn:
        """Decline the task: it ends REJECTED with ``reason`` as its status message."""
        raise TaskRejected(reason)

    def _require_job(self) -> Job:
        if self._job is None:
            raise AgentMisuseError("a message_only skill has no task: it can only return a reply")
        return self._job
