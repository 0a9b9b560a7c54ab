"""Deployed apps' and automations' objects (releases, replicas, jobs, runs) as dataclasses, like
models.py's (which re-exports them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional


@dataclass
class AppRelease:
    """An immutable package of a deployed app's source_path, with its build's outcome."""
    id: str
    sha256: str
    size_bytes: int
    source_path: str
    build_command: Optional[str]
    build_path: str
    build_exit_code: Optional[int]
    build_output: str
    start_command: str
    port: int
    readiness_path: Optional[str]
    readiness_timeout_seconds: int
    readiness_period_seconds: int
    readiness_failure_threshold: int
    secrets: List[str]
    created_at: str


@dataclass
class AppReplica:
    sandbox_id: str
    release_id: str
    state: str


@dataclass
class AppReplicaLog:
    """The latest output of one replica of a deployed app (bounded)."""
    sandbox_id: str
    release_id: str
    state: str
    stdout: str
    stderr: str
    truncated: bool
    exit_code: Optional[int]


@dataclass
class App:
    """A deployed app: replicas of a release behind one public hostname."""
    id: str
    name: str
    hostname: str
    url: str
    http_url: str
    source_sandbox_id: str
    release_id: str
    replicas: int
    ready_replicas: int
    status: str
    status_message: Optional[str]
    restarts: int
    replica_sandboxes: List[AppReplica]
    release: Optional[AppRelease]
    created_at: str
    updated_at: str


@dataclass
class Job:
    """A one-shot job: a command run once in a fresh instant sandbox (retried on
    infrastructure failures only)."""
    id: str
    status: str
    image: str
    cpu: int
    memory_mib: int
    disk_mib: int
    env_names: List[str]
    secrets: List[str]
    egress: str
    argv: List[str]
    cwd: Optional[str]
    timeout_seconds: int
    max_attempts: int
    attempts: int
    last_run_id: Optional[str]
    exit_code: Optional[int]
    error: Optional[str]
    created_at: str
    updated_at: str
    finished_at: Optional[str]


@dataclass
class RunUsage:
    """What a job's run used: its sandbox's usage entries in the ledger, summed (cpus x ms,
    MiB x ms, GPUs x ms, the cost in nano-units)."""
    cpu_milliseconds: int
    memory_mib_milliseconds: int
    gpu_milliseconds: int
    amount_nanos: int
    entries: int


@dataclass
class Run:
    """One execution of a job (or, later, an automation) and its bounded output."""
    id: str
    job_id: Optional[str]
    automation_id: Optional[str]
    trigger: str
    attempt: int
    status: str
    sandbox_id: Optional[str]
    command_id: Optional[str]
    exit_code: Optional[int]
    error: Optional[str]
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    scheduled_at: Optional[str]
    started_at: Optional[str]
    ended_at: Optional[str]
    created_at: str
    usage: Optional[RunUsage]


@dataclass
class AutomationStateChange:
    """A controller's next change of the state it wants (`at`, RFC 3339) to `state`."""
    at: str
    state: str


@dataclass
class RunEvent:
    """A run's status change on the organization's event stream (`event: run`): a job's run
    (job_id) or an automation's (automation_id); exit_code once it ended."""
    run_id: str
    status: str
    attempt: int
    sandbox_id: Optional[str]
    at: str
    automation_id: Optional[str] = None
    job_id: Optional[str] = None
    exit_code: Optional[int] = None
    id: Optional[str] = None  # the SSE id (for last_event_id)


@dataclass
class Automation:
    """A schedule: a command run in a sandbox of the organization every interval or at the
    slots of a cron expression (in an IANA time zone). Or (kind "controller") a controller
    holding the sandbox in desired_state, inside windows of window_seconds when scheduled."""
    id: str
    name: str
    kind: str
    sandbox_id: str
    argv: List[str]
    cwd: Optional[str]
    env_names: List[str]
    timeout_seconds: int
    interval_seconds: Optional[int]
    cron: Optional[str]
    time_zone: str
    overlap: str
    catch_up_seconds: int
    max_attempts: int
    enabled: bool
    paused_reason: Optional[str]
    version: int
    consecutive_failures: int
    next_runs: List[str]
    desired_state: Optional[str]
    window_seconds: Optional[int]
    next_changes: List[AutomationStateChange]
    created_at: str
    updated_at: str
