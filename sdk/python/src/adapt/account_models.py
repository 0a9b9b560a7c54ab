"""The account's objects (plans, limits, usage, alerts, the ledger) as dataclasses, like
models.py's (which re-exports them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional


@dataclass
class PlanLimits:
    """A plan's limits; None: no limit."""
    concurrent_sandboxes: Optional[int]
    cpu: Optional[int]
    memory_mib: Optional[int]
    max_run_seconds: Optional[int]
    persistent_storage_gib: Optional[int]
    object_storage_gib: Optional[int]
    gpus: Optional[int]
    automations: Optional[int]
    queued_jobs: Optional[int]
    endpoints: Optional[int]
    database_mib: Optional[int]
    database_connections: Optional[int]
    app_replicas: Optional[int]


@dataclass
class PlanPrices:
    """Prices in nano-units (1e-9 of the currency unit)."""
    cpu_second_nanos: int
    memory_gib_second_nanos: int
    storage_gib_month_nanos: int
    gpu_second_nanos: int


@dataclass
class Plan:
    id: str
    name: str
    limits: PlanLimits
    prices: PlanPrices
    updated_at: Optional[str]


@dataclass
class AccountUsage:
    sandboxes: int
    running_sandboxes: int
    cpu: int
    memory_mib: int
    persistent_storage_mib: int
    object_storage_bytes: int
    endpoints: int


@dataclass
class AccountAlert:
    """Emitted once when usage reaches 80% / 100% of the credits it is measured against
    (balance_80 / balance_100), or of a plan limit (limit_80 / limit_100, once per crossing)."""
    kind: str
    at: str
    credits_nanos: Optional[int] = None
    usage_nanos: Optional[int] = None
    limit: Optional[str] = None
    limit_value: Optional[int] = None
    used: Optional[int] = None


@dataclass
class Account:
    """The caller's organization as an account: plan, usage now and prepaid balance."""
    org_id: str
    org_name: str
    registered: bool
    terms_version: Optional[str]
    registered_at: Optional[str]
    plan: Plan
    usage: AccountUsage
    balance_nanos: int
    credits_nanos: int
    usage_nanos: int
    alerts: List[AccountAlert]


@dataclass
class UsageTotal:
    """Metered usage of one sandbox or volume (or of all: no subject) over a range."""
    cpu_milliseconds: int
    memory_mib_milliseconds: int
    storage_mib_milliseconds: int
    gpu_milliseconds: int
    amount_nanos: int
    entries: int
    subject_kind: Optional[str] = None
    subject_id: Optional[str] = None
    job_id: Optional[str] = None
    run_id: Optional[str] = None


@dataclass
class UsageReport:
    from_: str
    to: str
    items: List[UsageTotal]
    total: UsageTotal


@dataclass
class LedgerEntry:
    id: str
    org_id: str
    kind: str
    amount_nanos: int
    reason: str
    expires_at: Optional[str]
    created_at: str
    subject_kind: Optional[str] = None
    subject_id: Optional[str] = None
    period_start: Optional[str] = None
    period_end: Optional[str] = None
    cpu_milliseconds: Optional[int] = None
    memory_mib_milliseconds: Optional[int] = None
    storage_mib_milliseconds: Optional[int] = None
    gpu_milliseconds: Optional[int] = None
