// The account's objects (plans, usage, alerts, ledger) of docs/openapi.yaml, with the wire
// names, as in models.ts (which re-exports them).

export interface PlanLimits {
  concurrentSandboxes: number | null;
  cpu: number | null;
  memoryMiB: number | null;
  maxRunSeconds: number | null;
  persistentStorageGiB: number | null;
  objectStorageGiB: number | null;
  gpus: number | null;
  automations: number | null;
  queuedJobs: number | null;
  endpoints: number | null;
  databaseMiB: number | null;
  databaseConnections: number | null;
  appReplicas: number | null;
}

/** Prices in nano-units (1e-9 of the currency unit). */
export interface PlanPrices {
  cpuSecondNanos: number;
  memoryGiBSecondNanos: number;
  storageGiBMonthNanos: number;
  gpuSecondNanos: number;
}

export interface Plan {
  id: string;
  name: string;
  limits: PlanLimits;
  prices: PlanPrices;
  updatedAt: string | null;
}

export interface AccountUsage {
  sandboxes: number;
  runningSandboxes: number;
  cpu: number;
  memoryMiB: number;
  persistentStorageMiB: number;
  objectStorageBytes: number;
  endpoints: number;
}

/** The caller's organization as an account: plan, usage now and prepaid balance. */
/** Emitted once when usage reaches 80% / 100% of the credits it is measured against. */
/** 80% / 100% of the credits (balance_80 / balance_100) or of a plan limit (limit_80 / limit_100). */
export interface AccountAlert {
  kind: string;
  creditsNanos?: number;
  usageNanos?: number;
  limit?: string;
  limitValue?: number;
  used?: number;
  at: string;
}

export interface Account {
  orgId: string;
  orgName: string;
  registered: boolean;
  termsVersion: string | null;
  registeredAt: string | null;
  plan: Plan;
  usage: AccountUsage;
  balanceNanos: number;
  creditsNanos: number;
  usageNanos: number;
  alerts: AccountAlert[];
}

/** Metered usage of one sandbox or volume (or of all: no subject) over a range. */
export interface UsageTotal {
  subjectKind?: string;
  subjectId?: string;
  jobId?: string | null;
  runId?: string | null;
  cpuMilliseconds: number;
  memoryMiBMilliseconds: number;
  storageMiBMilliseconds: number;
  gpuMilliseconds: number;
  amountNanos: number;
  entries: number;
}

export interface UsageReport {
  from: string;
  to: string;
  items: UsageTotal[];
  total: UsageTotal;
}

export interface LedgerEntry {
  id: string;
  orgId: string;
  kind: string;
  amountNanos: number;
  reason: string;
  expiresAt: string | null;
  createdAt: string;
  subjectKind?: string;
  subjectId?: string;
  periodStart?: string;
  periodEnd?: string;
  cpuMilliseconds?: number;
  memoryMiBMilliseconds?: number;
  storageMiBMilliseconds?: number;
  gpuMilliseconds?: number;
}

/** GET /v1/sandboxes/{id}/stats: a running sandbox's CPU time and memory now. */
