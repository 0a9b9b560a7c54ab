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
# Deployed apps' and automations' models live in automation_models.py; likewise.
from .automation_models import (  # noqa: F401
    AppRelease as AppRelease,
    AppReplica as AppReplica,
    AppReplicaLog as AppReplicaLog,
    App as App,
    Job as Job,
    RunUsage as RunUsage,
    Run as Run,
    AutomationStateChange as AutomationStateChange,
    RunEvent as RunEvent,
    Automation as Automation)


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
