// The API's objects (docs/openapi.yaml's components.schemas), with the wire names. A field the
// API always sends is required; one it may omit is optional (`?`); `| null` where it may be
// null. tests/e2e/test_sdk_models.py keeps these equal to the spec, names and types. The
// account's (plans, usage, ledger) are in account_models.ts.

export type * from "./account_models.js";

export interface Endpoint {
  id: string;
  sandboxId: string;
  port: number;
  hostname: string;
  url: string;
  httpUrl: string;
  createdAt: string;
}

export interface Network {
  egress: string;
  allow: Record<string, unknown>[];
  dns: string | null;
  hostnames: Record<string, unknown>[];
}

/** The startup configuration with its defaults, and its result once it ran. */
export interface Startup {
  mode: string;
  argv: string[] | null;
  args: string[] | null;
  entrypoint: string[] | null;
  cwd: string | null;
  user: string | null;
  exitCode: number | null;
  signal: string | null;
  error: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
}

export interface Hibernation {
  stoppedAt: string;
  workspace: string;
  processes: string;
  note: string | null;
}

export interface Pool {
  used: boolean;
  reason: string | null;
}

export interface EnvironmentSource {
  name: string;
  source: string;
  version?: number;
}

/** A sandbox record as the API answers it (`Sandbox` wraps it with verbs). */
export interface SandboxInfo {
  id: string;
  status: string;
  createdAt: string;
  updatedAt: string;
  expiresAt: string | null;
  deletedAt: string | null;
  cpu: number;
  memoryMiB: number;
  diskMiB: number;
  ttlSeconds: number | null;
  idleTimeoutSeconds?: number | null;
  labels: Record<string, string>;
  image: string;
  imageId: string | null;
  network: Network;
  securityProfile: string;
  startupClass: string;
  storage?: string | null;
  terminationReason: string | null;
  error: string | null;
  endpoints: Endpoint[];
  hibernation?: Hibernation | null;
  pool?: Pool;
  operationId?: string;
  environmentNames: string[];
  environmentSources: EnvironmentSource[];
  secrets?: string[];
  startup: Startup | null;
}

/** A command: running (`status` "running") or ended, with its kept output. */
export interface CommandResult {
  id: string;
  sandboxId: string;
  status: string;
  argv: string[];
  cwd?: string | null;
  user?: string | null;
  timeoutSeconds?: number;
  exitCode: number | null;
  signal: number | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  startedAt: string;
  finishedAt: string | null;
  terminationReason: string | null;
  error?: string | null;
  servedBy: string;
}

export interface FileEntry {
  name: string;
  type: string;
  size: number;
  mode: string;
  mtime: string;
  linkTarget?: string;
}

export interface FileList {
  path: string;
  items: FileEntry[];
}

export interface FileWritten {
  path: string;
  size: number;
}

export interface StatusEvent {
  sandboxId: string;
  status: string;
  at: string;
  /** The SSE `id:` of the frame (for Last-Event-ID), added by the SDK. */
  id?: string;
}

/** An `event: alert` frame of the organization's event stream (`client.account.alerts()`): 80% /
 * 100% of its credits used (`credit_80`, `credit_100`) or of a plan limit (`limit_80`,
 * `limit_100`), once per crossing. */
export interface AlertEvent {
  type: string;
  /** The plan limit's name (limit alerts); null for credit alerts. */
  limit: string | null;
  /** The credits (nano-units) or the limit's value. */
  value: number;
  /** The usage charged (nano-units) or what was in use, in the limit's unit. */
  used: number;
  at: string;
  /** The SSE `id:` of the frame (for Last-Event-ID), added by the SDK. */
  id?: string;
}

export interface Progress {
  bytes: number;
  totalBytes: number;
}

export interface ImageOperation {
  id: string;
  phase: string;
}

export interface Image {
  id: string;
  reference: string | null;
  source?: string;
  status: string;
  createdAt: string;
  digest: string | null;
  size: number | null;
  platform: string | null;
  error: string | null;
  progress: Progress;
  operation: ImageOperation;
  config?: Record<string, unknown> | null;
  sandboxes?: string[];
}

/** A named checkpoint of a durable sandbox: processes, memory and disk. */
export interface Checkpoint {
  name: string;
  sandboxId: string;
  sizeBytes: number;
  createdAt: string | null;
  /** Kept after the sandbox's deletion. */
  keep: boolean;
  /** The runsc version and platform that took it; a restore or fork needs this host's. */
  runscVersion: string;
  platform: string;
  operationId?: string;
  /** Its sandbox is deleted (the checkpoint was taken with keep). */
  sandboxDeleted: boolean;
  /** Its sandbox's labels (name, ...), to find it by name. */
  sandboxLabels: Record<string, string>;
}

export interface Operation {
  id: string;
  kind: string;
  phase: string;
  progress: Progress;
  imageId?: string;
  sandboxId?: string;
  appId?: string;
  releaseId?: string;
  error: string | null;
  startedAt?: string | null;
  finishedAt?: string | null;
}

/** The organization's PostgreSQL database: never its host or password. */
export interface Database {
  status: string;
  postgresVersion: string | null;
  sizeBytes: number;
  quotaBytes: number;
  connections: number;
  connectionLimit: number;
  createdAt: string | null;
}

/** A pg_dump archive of the database, stored as one of the organization's objects. */
export interface DatabaseDump {
  bucket: string;
  key: string;
  sizeBytes: number;
  sha256: string;
  createdAt: string;
}

export interface Secret {
  name: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** An immutable package of a deployed app's sourcePath, with its build's outcome. */
export interface AppRelease {
  id: string;
  sha256: string;
  sizeBytes: number;
  sourcePath: string;
  buildCommand: string | null;
  buildPath: string;
  buildExitCode: number | null;
  buildOutput: string;
  startCommand: string;
  port: number;
  readinessPath: string | null;
  readinessTimeoutSeconds: number;
  readinessPeriodSeconds: number;
  readinessFailureThreshold: number;
  secrets: string[];
  createdAt: string;
}

export interface AppReplica {
  sandboxId: string;
  releaseId: string;
  state: string;
}

/** The latest output of one replica of a deployed app (bounded). */
export interface AppReplicaLog {
  sandboxId: string;
  releaseId: string;
  state: string;
  stdout: string;
  stderr: string;
  truncated: boolean;
  exitCode: number | null;
}

/** A deployed app: replicas of a release behind one public hostname. */
export interface App {
  id: string;
  name: string;
  hostname: string;
  url: string;
  httpUrl: string;
  sourceSandboxId: string;
  releaseId: string;
  replicas: number;
  readyReplicas: number;
  status: string;
  statusMessage: string | null;
  restarts: number;
  replicaSandboxes: AppReplica[];
  release: AppRelease | null;
  createdAt: string;
  updatedAt: string;
}

/** A one-shot job: a command run once in a fresh instant sandbox. */
export interface Job {
  id: string;
  status: string;
  image: string;
  cpu: number;
  memoryMiB: number;
  diskMiB: number;
  envNames: string[];
  secrets: string[];
  egress: string;
  argv: string[];
  cwd: string | null;
  timeoutSeconds: number;
  maxAttempts: number;
  attempts: number;
  lastRunId: string | null;
  exitCode: number | null;
  error: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

/** One execution of a job and its bounded output. */
export interface Run {
  id: string;
  jobId: string | null;
  automationId: string | null;
  trigger: string;
  attempt: number;
  status: string;
  sandboxId: string | null;
  commandId: string | null;
  exitCode: number | null;
  error: string | null;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  scheduledAt: string | null;
  startedAt: string | null;
  endedAt: string | null;
  createdAt: string;
  /** A job run's metered usage; null for an automation's run and before a sandbox. */
  usage: RunUsage | null;
}

/** What a job's run used: its sandbox's usage entries in the ledger, summed. */
export interface RunUsage {
  cpuMilliseconds: number;
  memoryMiBMilliseconds: number;
  gpuMilliseconds: number;
  amountNanos: number;
  entries: number;
}

/** A run's status change on the organization's event stream (`event: run`): a job's run
 * (`jobId`) or an automation's (`automationId`); `exitCode` once it ended. */
export interface RunEvent {
  runId: string;
  automationId?: string;
  jobId?: string;
  status: string;
  attempt: number;
  sandboxId: string | null;
  exitCode?: number | null;
  at: string;
  /** The SSE `id:` of the frame (for Last-Event-ID), added by the SDK. */
  id?: string;
}

/** A schedule: a command run in a sandbox of the organization every interval or at the slots
 * of a cron expression (in an IANA time zone). */
export interface Automation {
  id: string;
  name: string;
  kind: string;
  sandboxId: string;
  argv: string[];
  cwd: string | null;
  envNames: string[];
  timeoutSeconds: number;
  intervalSeconds: number | null;
  cron: string | null;
  timeZone: string;
  overlap: string;
  catchUpSeconds: number;
  maxAttempts: number;
  enabled: boolean;
  pausedReason: string | null;
  version: number;
  consecutiveFailures: number;
  nextRuns: string[];
  desiredState: string | null;
  windowSeconds: number | null;
  nextChanges: AutomationStateChange[];
  createdAt: string;
  updatedAt: string;
}

/** A controller's next change of the state it wants. */
export interface AutomationStateChange {
  at: string;
  state: string;
}

export interface StorageAttachment {
  sandboxId: string;
  status: string;
}

export interface Storage {
  id: string;
  name: string;
  sizeMiB: number;
  usedBytes: number | null;
  availableBytes: number | null;
  status: string;
  default: boolean;
  encrypted: boolean;
  mountPath: string;
  attachments: StorageAttachment[];
  createdAt: string;
}

export interface StoredObject {
  key: string;
  size: number;
  sha256: string;
  etag: string;
  contentType: string;
  lastModified: string;
}

/** A workspace file copied into object storage, with a temporary read-only download link to
 * exactly that object (`url` needs no credentials until `expiresAt`). */
export interface Artifact {
  key: string;
  size: number;
  sha256: string;
  etag: string;
  contentType: string;
  lastModified: string;
  url: string;
  expiresAt: string;
}

/** One page of a sandbox's artifacts, the objects under `prefix` (artifacts/<sandbox id>/), in
 * key order; `nextCursor` asks for the next page (null on the last). */
export interface ArtifactList {
  sandboxId: string;
  prefix: string;
  items: StoredObject[];
  nextCursor: string | null;
}

export interface Site {
  id: string;
  name: string;
  hostname: string;
  releaseId: string;
  url: string;
  urls: string[];
  createdAt: string;
  source?: string;
  files?: number;
  publishedAt?: string;
}

export interface Org {
  id: string;
  name: string;
  admin: boolean;
  /** "deleting" while a deletion that stopped part way waits for a repeat of `delete`. */
  status: string;
  createdAt: string;
}

/** A key as listed: never its text. `expiresAt` is null for a key that never expires. */
export interface ApiKey {
  id: string;
  orgId: string;
  name: string;
  admin: boolean;
  createdAt: string;
  expiresAt: string | null;
}

/** A key as made: `key` is its text, shown only this once. */
export interface NewApiKey {
  id: string;
  orgId: string;
  name: string;
  key: string;
  createdAt: string;
  expiresAt: string | null;
}

/** A person who signs in to an organization on the OAuth page (never the password). */
export interface User {
  id: string;
  orgId: string;
  email: string;
  createdAt: string;
}

/** A user as added: `password` is the one adaptd chose (shown only this once), or null. */
export interface NewUser {
  id: string;
  orgId: string;
  email: string;
  createdAt: string;
  password: string | null;
}

/** A temporary read-only download link for one object; `url` needs no credentials. */
export interface ObjectLink {
  key: string;
  url: string;
  size: number;
  expiresAt: string;
}

export interface StorageToken {
  id: string;
  name: string;
  sandboxId?: string;
  expiresAt: string;
  createdAt: string;
  revoked: boolean;
}

/** A storage token as made, with its secret (shown only this once). */
export interface NewStorageToken {
  id: string;
  name?: string;
  expiresAt: string;
  createdAt?: string;
  revoked?: boolean;
  token: string;
  accessKeyId: string;
  secretAccessKey: string;
  endpoint: string;
  bucket: string;
}

/** A sandbox's storage token, in its environment as SANDBOX_STORAGE_ENDPOINT/_TOKEN. */
export interface ObjectStorageAttachment {
  sandboxId: string;
  endpoint: string;
  tokenId: string;
  expiresAt: string;
  restarted: boolean;
  variables: string[];
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** A plan's limits; null: no limit. */
export interface SandboxStats {
  sandboxId: string;
  at: string;
  cpu: number;
  memoryMiB: number;
  cpuUsageUsec: number;
  memoryBytes: number;
  pids: number;
}
