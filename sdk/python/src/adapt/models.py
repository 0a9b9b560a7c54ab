"""The API's objects (docs/openapi.yaml's components.schemas) as dataclasses.

A field the API always sends and never nulls has a plain type; one it may null or omit is
Optional. Attribute names are the wire names in snake_case (`memoryMiB` -> `memory_mib`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

# The account's models live in account_models.py; they are this module's too.
from .account_models import (  # noqa: F401
    PlanLimits as PlanLimits,
    PlanPrices as PlanPrices,
    Plan as Plan,
    AccountUsage as AccountUsage,
    AccountAlert as AccountAlert,
    Account as Account,
    UsageTotal as UsageTotal,
    UsageReport as UsageReport,
    LedgerEntry as LedgerEntry)


@dataclass
class Endpoint:
    id: str
    sandbox_id: str
    port: int
    hostname: str
    url: str
    http_url: str
    created_at: str


@dataclass
class Network:
    egress: str
    allow: List[Dict[str, Any]]
    dns: Optional[str]
    hostnames: List[Dict[str, Any]]


@dataclass
class Startup:
    """The startup configuration with its defaults, and its result once it ran."""
    mode: str
    argv: Optional[List[str]]
    args: Optional[List[str]]
    entrypoint: Optional[List[str]]
    cwd: Optional[str]
    user: Optional[str]
    exit_code: Optional[int]
    signal: Optional[str]
    error: Optional[str]
    started_at: Optional[str]
    finished_at: Optional[str]
    stdout: str
    stderr: str
    truncated: bool


@dataclass
class Hibernation:
    stopped_at: str
    workspace: str
    processes: str
    note: Optional[str]


@dataclass
class Pool:
    used: bool
    reason: Optional[str]


@dataclass
class EnvironmentSource:
    name: str
    source: str
    version: Optional[int] = None


@dataclass
class SandboxInfo:
    """A sandbox record as the API answers it (`Sandbox` wraps it with verbs)."""
    id: str
    status: str
    created_at: str
    updated_at: str
    expires_at: Optional[str]
    deleted_at: Optional[str]
    cpu: int
    memory_mib: int
    disk_mib: int
    ttl_seconds: Optional[int]
    labels: Dict[str, str]
    image: str
    image_id: Optional[str]
    network: Network
    security_profile: str
    startup_class: str
    termination_reason: Optional[str]
    error: Optional[str]
    endpoints: List[Endpoint]
    environment_names: List[str]
    environment_sources: List[EnvironmentSource]
    startup: Optional[Startup]
    storage: Optional[str] = None
    hibernation: Optional[Hibernation] = None
    pool: Optional[Pool] = None
    idle_timeout_seconds: Optional[int] = None
    operation_id: Optional[str] = None
    secrets: Optional[List[str]] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class CommandResult:
    """A command: running (`status` "running") or ended, with its kept output."""
    id: str
    sandbox_id: str
    status: str
    argv: List[str]
    exit_code: Optional[int]
    signal: Optional[int]
    stdout: str
    stderr: str
    truncated: bool
    started_at: str
    finished_at: Optional[str]
    termination_reason: Optional[str]
    served_by: str
    cwd: Optional[str] = None
    user: Optional[str] = None
    timeout_seconds: Optional[int] = None
    error: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def done(self) -> bool:
        return self.status != "running"


@dataclass
class FileEntry:
    name: str
    type: str
    size: int
    mode: str
    mtime: str
    link_target: Optional[str] = None


@dataclass
class FileList:
    path: str
    items: List[FileEntry]


@dataclass
class FileWritten:
    path: str
    size: int


@dataclass
class StatusEvent:
    sandbox_id: str
    status: str
    at: str
    id: Optional[str] = None


@dataclass
class AlertEvent:
    """An `event: alert` frame of the organization's event stream (`client.account.alerts()`):
    80% / 100% of its credits used (`credit_80`, `credit_100`) or of a plan limit (`limit_80`,
    `limit_100`), once per crossing. `value`/`used`: the credits and usage in nano-units, or the
    limit's value and what was in use in its unit; `limit`: the limit's name (None for credits)."""
    type: str
    limit: Optional[str]
    value: int
    used: int
    at: str
    id: Optional[str] = None


@dataclass
class Progress:
    bytes: int
    total_bytes: int


@dataclass
class ImageOperation:
    id: str
    phase: str


@dataclass
class Image:
    id: str
    reference: Optional[str]
    status: str
    created_at: str
    digest: Optional[str]
    size: Optional[int]
    platform: Optional[str]
    error: Optional[str]
    progress: Progress
    operation: ImageOperation
    source: Optional[str] = None
    config: Optional[Dict[str, Any]] = None
    sandboxes: Optional[List[str]] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Checkpoint:
    """A named checkpoint of a durable sandbox: processes, memory and disk."""
    name: str
    sandbox_id: str
    size_bytes: int
    created_at: Optional[str]
    keep: bool = False  # kept after the sandbox's deletion
    runsc_version: str = ""  # the runsc version and platform that took it
    platform: str = ""
    operation_id: Optional[str] = None
    sandbox_deleted: bool = False  # its sandbox is deleted (the checkpoint was kept)
    sandbox_labels: Dict[str, str] = field(default_factory=dict)  # its sandbox's, name included


@dataclass
class Operation:
    id: str
    kind: str
    phase: str
    progress: Progress
    error: Optional[str]
    image_id: Optional[str] = None
    sandbox_id: Optional[str] = None
    app_id: Optional[str] = None
    release_id: Optional[str] = None
    started_at: Optional[str] = None
    finished_at: Optional[str] = None


@dataclass
class Database:
    """The organization's PostgreSQL database: never its host or password."""
    status: str
    postgres_version: Optional[str]
    size_bytes: int
    quota_bytes: int
    connections: int
    connection_limit: int
    created_at: Optional[str]


@dataclass
class DatabaseDump:
    """A pg_dump archive of the database, stored as one of the organization's objects."""
    bucket: str
    key: str
    size_bytes: int
    sha256: str
    created_at: str


@dataclass
class Secret:
    name: str
    version: int
    created_at: str
    updated_at: str


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


@dataclass
class StorageAttachment:
    sandbox_id: str
    status: str


@dataclass
class Storage:
    id: str
    name: str
    size_mib: int
    used_bytes: Optional[int]
    available_bytes: Optional[int]
    status: str
    default_: bool
    encrypted: bool
    mount_path: str
    attachments: List[StorageAttachment]
    created_at: str


@dataclass
class StoredObject:
    key: str
    size: int
    sha256: str
    etag: str
    content_type: str
    last_modified: str


@dataclass
class Artifact:
    """A workspace file copied into object storage, with a temporary read-only download link
    to exactly that object (`url` needs no credentials until `expires_at`)."""
    key: str
    size: int
    sha256: str
    etag: str
    content_type: str
    last_modified: str
    url: str
    expires_at: str


@dataclass
class ArtifactList:
    """One page of a sandbox's artifacts, the objects under `prefix` (artifacts/<sandbox id>/),
    in key order; `next_cursor` asks for the next page (None on the last)."""
    sandbox_id: str
    prefix: str
    items: List[StoredObject]
    next_cursor: Optional[str] = None


@dataclass
class Site:
    id: str
    name: str
    hostname: str
    release_id: str
    url: str
    urls: List[str]
    created_at: str
    source: Optional[str] = None
    files: Optional[int] = None
    published_at: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Org:
    """`status` is "active", or "deleting" while a deletion that stopped part way waits for a
    repeat of `Orgs.delete`."""
    id: str
    name: str
    admin: bool
    status: str
    created_at: str


@dataclass
class ApiKey:
    """A key as listed: never its text. `expires_at` is None for a key that never expires."""
    id: str
    org_id: str
    name: str
    admin: bool
    created_at: str
    expires_at: Optional[str] = None


@dataclass
class NewApiKey:
    """A key as made: `key` is its text, shown only this once."""
    id: str
    org_id: str
    name: str
    key: str
    created_at: str
    expires_at: Optional[str] = None


@dataclass
class User:
    """A person who signs in to an organization on the OAuth page (never the password)."""
    id: str
    org_id: str
    email: str
    created_at: str


@dataclass
class NewUser:
    """A user as added: `password` is the one adaptd chose (shown only this once), or None."""
    id: str
    org_id: str
    email: str
    created_at: str
    password: Optional[str]


@dataclass
class ObjectLink:
    """A temporary read-only download link for one object; `url` needs no credentials."""
    key: str
    url: str
    size: int
    expires_at: str


@dataclass
class StorageToken:
    id: str
    name: str
    expires_at: str
    created_at: str
    revoked: bool
    sandbox_id: Optional[str] = None


@dataclass
class NewStorageToken:
    """A storage token as made, with its secret (shown only this once): the storage gateway's
    S3 credentials (`access_key_id`, `secret_access_key`, `endpoint`, `bucket`) or `token`."""
    id: str
    token: str
    access_key_id: str
    secret_access_key: str
    endpoint: str
    bucket: str
    expires_at: str
    name: Optional[str] = None
    created_at: Optional[str] = None
    revoked: Optional[bool] = None


@dataclass
class ObjectStorageAttachment:
    """A sandbox's storage token, in its environment as SANDBOX_STORAGE_ENDPOINT/_TOKEN."""
    sandbox_id: str
    endpoint: str
    token_id: str
    expires_at: str
    restarted: bool
    variables: List[str]
