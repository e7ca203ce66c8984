"""Where tasks live while they run: the agent API, the job nursery, event logs, parked jobs."""

from ._agent import SKILL_METADATA_KEY, Agent, Handler, Skill
from ._context import TaskContext
from ._eventlog import (
    EventLog,
    EventLogLimits,
    HandedOver,
    LogEntry,
    ReplayGap,
    SubscriberOverflow,
    Subscription,
)
from ._outcome import INTERNAL_FAILURE, TaskFailed, TaskRejected
from ._parked import JobCanceled, JobHandle, JobStatus, poll_job
from ._runtime import OnRecovered, OnStart, RuntimeConfig, RuntimeStatistics, TaskRuntime
from ._stream import TaskStream

__all__ = [
    "INTERNAL_FAILURE",
    "SKILL_METADATA_KEY",
    "Agent",
    "EventLog",
    "EventLogLimits",
    "HandedOver",
    "Handler",
    "JobCanceled",
    "JobHandle",
    "JobStatus",
    "LogEntry",
    "OnRecovered",
    "OnStart",
    "ReplayGap",
    "RuntimeConfig",
    "RuntimeStatistics",
    "Skill",
    "SubscriberOverflow",
    "Subscription",
    "TaskContext",
    "TaskFailed",
    "TaskRejected",
    "TaskRuntime",
    "TaskStream",
    "poll_job",
]
