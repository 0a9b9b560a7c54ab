// The organization's other resources: images, secrets, persistent storage, object storage
// and static sites.
import { AdaptError, NotFound, RequestTimeout } from "./errors.js";
import { fileStream, saveResponse } from "./files.js";
import type {
  Account, AlertEvent, ApiKey, App, AppRelease, AppReplicaLog, Database, DatabaseDump, Image, Job, LedgerEntry, NewApiKey, NewStorageToken, NewUser, ObjectLink, Operation, Org, Plan,
  PlanLimits, PlanPrices, Progress, Run, RunEvent, Secret, Site, Storage, StorageToken, StoredObject, UsageReport, User,
} from "./models.js";
import { collect, paginate } from "./pages.js";
import { eventFrames } from "./sandbox.js";
import type { Body, Transport } from "./transport.js";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface ImageWaitOptions {
  wait?: boolean;
  onProgress?: (progress: Progress) => void;
  timeoutMs?: number;
  /** The same key (and request) answers the same image, and starts nothing again. */
  idempotencyKey?: string;
}

/** A create's Idempotency-Key: the same key and request answer what the first made. */
export interface IdempotencyOptions {
  idempotencyKey?: string;
}

export class Images {
  constructor(private readonly t: Transport) {}

  /** Pulls an image into the organization; unless wait is false, waits until it is ready
   * (onProgress gets its bytes so far). */
  async pull(reference: string, options: ImageWaitOptions & { username?: string; password?: string } = {}): Promise<Image> {
    const body: Record<string, unknown> = { reference };
    if (options.username !== undefined || options.password !== undefined) {
      body["credentials"] = { username: options.username ?? "", password: options.password ?? "" };
    }
    const image = await this.t.call<Image>("POST", "/v1/images", { json: body, idempotencyKey: options.idempotencyKey });
    return options.wait === false ? image : this.wait(image.id, options);
  }

  /** Imports an OCI layout or `docker save` archive (tar, gzip or zstd) from a local file,
   * streamed. name: which image of an archive holding several (its ref name or RepoTag). */
  async importArchive(localPath: string, options: ImageWaitOptions & { name?: string } = {}): Promise<Image> {
    const body: Body = () => fileStream(localPath);
    const image = await this.t.call<Image>("POST", "/v1/images/import", {
      query: { name: options.name }, body, headers: { "Content-Type": "application/x-tar" },
      idempotencyKey: options.idempotencyKey,
    });
    return options.wait === false ? image : this.wait(image.id, options);
  }

  /** Saves a sandbox's filesystem (running, or stopped durable) as an image of the organization,
   * `name:tag` (tag "latest" when absent); unless wait is false, waits until it is ready. Create
   * sandboxes from it with `imageId`. */
  async commit(sandboxId: string, name: string, options: ImageWaitOptions & { tag?: string } = {}): Promise<Image> {
    const body: Record<string, unknown> = { name };
    if (options.tag !== undefined) body["tag"] = options.tag;
    const image = await this.t.call<Image>("POST", `/v1/sandboxes/${encodeURIComponent(sandboxId)}/image`, {
      json: body, idempotencyKey: options.idempotencyKey,
    });
    return options.wait === false ? image : this.wait(image.id, options);
  }

  async wait(imageId: string, options: ImageWaitOptions = {}): Promise<Image> {
    const timeoutMs = options.timeoutMs ?? 1_800_000;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const image = await this.get(imageId);
      options.onProgress?.(image.progress);
      if (image.status === "ready") return image;
      if (image.status === "failed") throw new AdaptError(`image ${imageId} failed: ${image.error ?? "no error recorded"}`, { code: "failed_precondition" });
      if (Date.now() > deadline) throw new RequestTimeout(`image ${imageId} is still ${image.status} after ${timeoutMs / 1000} s`, { code: "request_timeout" });
      await sleep(500);
    }
  }

  get(imageId: string): Promise<Image> {
    return this.t.call<Image>("GET", `/v1/images/${imageId}`);
  }

  /** The organization's images, newest first, following nextCursor page by page. */
  list(pageSize = 50): AsyncGenerator<Image> {
    return paginate<Image>(this.t, "/v1/images", pageSize);
  }

  async delete(imageId: string): Promise<void> {
    await this.t.call("DELETE", `/v1/images/${imageId}`);
  }

  operation(operationId: string): Promise<Operation> {
    return this.t.call<Operation>("GET", `/v1/operations/${operationId}`);
  }
}

export class Secrets {
  constructor(private readonly t: Transport) {}

  /** Creates the secret, or gives it a new version. */
  set(name: string, value: string, options: IdempotencyOptions = {}): Promise<Secret> {
    return this.t.call<Secret>("POST", "/v1/secrets", { json: { name, value }, idempotencyKey: options.idempotencyKey });
  }

  get(name: string): Promise<Secret> {
    return this.t.call<Secret>("GET", `/v1/secrets/${encodeURIComponent(name)}`);
  }

  list(pageSize = 50): AsyncGenerator<Secret> {
    return paginate<Secret>(this.t, "/v1/secrets", pageSize);
  }

  async delete(name: string): Promise<void> {
    await this.t.call("DELETE", `/v1/secrets/${encodeURIComponent(name)}`);
  }
}

/** The organization's PostgreSQL database; a sandbox created with `database: true` gets its
 * host and password in its environment, no answer here does. */
export class Databases {
  constructor(private readonly t: Transport) {}

  get(): Promise<Database> {
    return this.t.call<Database>("GET", "/v1/database");
  }

  /** Makes the database (idempotent). */
  create(): Promise<Database> {
    return this.t.call<Database>("POST", "/v1/database", { json: {} });
  }

  /** A new password; sandboxes created afterwards get it. */
  rotate(): Promise<Database> {
    return this.t.call<Database>("POST", "/v1/database/rotate", { json: {} });
  }

  /** A pg_dump -Fc archive into the organization's objects (key database-dumps/...). */
  dump(): Promise<DatabaseDump> {
    return this.t.call<DatabaseDump>("POST", "/v1/database/dump", { json: {} });
  }

  /** Deletes the database and its data; `confirm` must be the organization's id. */
  async delete(confirm: string): Promise<void> {
    await this.t.call("DELETE", "/v1/database", { json: { confirm } });
  }
}

export interface SubmitJobOptions {
  argv?: string[];
  command?: string;
  image?: string;
  cpu?: number;
  memoryMiB?: number;
  env?: Record<string, string>;
  secrets?: string[];
  egress?: string;
  cwd?: string;
  timeoutSeconds?: number;
  maxAttempts?: number;
  /** The same key returns the same job again. */
  idempotencyKey?: string;
}

export interface DeployAppOptions {
  sandboxId: string;
  startCommand: string;
  port: number;
  name?: string;
  sourcePath?: string;
  buildCommand?: string;
  buildPath?: string;
  replicas?: number;
  env?: Record<string, string>;
  /** A GET of it must answer 2xx or 3xx for a replica to be ready; unset, a TCP connect. */
  readinessPath?: string;
  readinessTimeoutSeconds?: number;
  /** How often a ready replica's check runs again (1-300 s, default 5). */
  readinessPeriodSeconds?: number;
  /** Failed checks in a row that take a ready replica's traffic until one passes (1-10, default 3). */
  readinessFailureThreshold?: number;
  /** Organization secrets by name; each replica sees each as the variable of its name. */
  secrets?: string[];
  /** How long the server waits before answering with the deploy's operation (0-600, default 60). */
  waitSeconds?: number;
  /** How long deploy() polls that operation (default 1 h). */
  timeoutMs?: number;
  /** The same key and request answer the same deploy (its operation, polled), not run again. */
  idempotencyKey?: string;
}

export interface RollbackAppOptions {
  /** How long the server waits before answering with the rollback's operation (0-600, default 60). */
  waitSeconds?: number;
  /** How long rollback() polls that operation (default 1 h). */
  timeoutMs?: number;
}

/** Deployed apps: a production copy of a sandbox's files on replicas behind one URL. */
export class Apps {
  constructor(private readonly t: Transport) {}

  /** Builds (optionally), packages and starts the app; answers once a replica serves. A deploy
   * that outlasts the server's wait is an operation: this polls it and throws its error when it
   * failed. */
  async deploy(options: DeployAppOptions): Promise<App> {
    const { timeoutMs, idempotencyKey, ...body } = options;
    const answer = await this.t.call<App | Operation>("POST", "/v1/apps", { json: { ...body }, idempotencyKey });
    return this.appOf(answer, "deploy", timeoutMs);
  }

  /** A deploy's or rollback's answer as the app: an operation (kind app.deploy or app.rollback)
   * is polled until it ends, and its error thrown when it failed. */
  private async appOf(answer: App | Operation, what: string, timeoutMs?: number): Promise<App> {
    if (!("kind" in answer) || (answer.kind !== "app.deploy" && answer.kind !== "app.rollback")) return answer as App;
    const deadline = Date.now() + (timeoutMs ?? 3_600_000);
    for (;;) {
      const op = await this.t.call<Operation>("GET", `/v1/operations/${encodeURIComponent(answer.id)}`);
      if (op.phase === "Completed") return this.get(op.appId ?? "");
      if (op.phase === "Failed") throw new AdaptError(`${what} ${op.id} failed: ${op.error ?? "no error recorded"}`, { code: "unavailable" });
      if (Date.now() > deadline) throw new RequestTimeout(`${what} ${op.id} is still ${op.phase} after ${(timeoutMs ?? 3_600_000) / 1000} s`, { code: "request_timeout" });
      await sleep(500);
    }
  }

  /** The organization's apps, newest first, following nextCursor page by page. */
  list(pageSize = 50): AsyncGenerator<App> {
    return paginate<App>(this.t, "/v1/apps", pageSize);
  }

  get(appId: string): Promise<App> {
    return this.t.call<App>("GET", `/v1/apps/${encodeURIComponent(appId)}`);
  }

  scale(appId: string, replicas: number): Promise<App> {
    return this.t.call<App>("POST", `/v1/apps/${encodeURIComponent(appId)}/scale`, { json: { replicas } });
  }

  /** Serves an earlier release again (default: the one before the current one); answers once a
   * replica of it serves. A rollback that outlasts the server's wait is an operation: this polls
   * it and throws its error when it failed. */
  async rollback(appId: string, releaseId?: string, options: RollbackAppOptions = {}): Promise<App> {
    const json: { releaseId?: string; waitSeconds?: number } = {};
    if (releaseId !== undefined) json.releaseId = releaseId;
    if (options.waitSeconds !== undefined) json.waitSeconds = options.waitSeconds;
    const answer = await this.t.call<App | Operation>("POST", `/v1/apps/${encodeURIComponent(appId)}/rollback`, { json });
    return this.appOf(answer, "rollback", options.timeoutMs);
  }

  /** The app's releases, newest first. */
  async releases(appId: string): Promise<AppRelease[]> {
    return collect(paginate<AppRelease>(this.t, `/v1/apps/${encodeURIComponent(appId)}/releases`, 200));
  }

  /** Each replica's latest output (bounded), and the last failed replica's. */
  async logs(appId: string): Promise<AppReplicaLog[]> {
    const page = await this.t.call<{ items: AppReplicaLog[] }>("GET", `/v1/apps/${encodeURIComponent(appId)}/logs`);
    return page.items;
  }

  /** Deletes the replicas, the route and the releases; the source sandbox stays. */
  async delete(appId: string): Promise<void> {
    await this.t.call("DELETE", `/v1/apps/${encodeURIComponent(appId)}`);
  }
}

/** One-shot jobs: a command run once in a fresh instant sandbox, retried only after
 * infrastructure failures (a non-zero exit is the command's result). */
export class Jobs {
  constructor(private readonly t: Transport) {}

  submit(options: SubmitJobOptions): Promise<Job> {
    const { idempotencyKey, egress, ...rest } = options;
    const json: Record<string, unknown> = { ...rest };
    if (egress !== undefined) json["network"] = { egress };
    return this.t.call<Job>("POST", "/v1/jobs", { json, idempotencyKey });
  }

  get(jobId: string): Promise<Job> {
    return this.t.call<Job>("GET", `/v1/jobs/${encodeURIComponent(jobId)}`);
  }

  list(pageSize = 50): AsyncGenerator<Job> {
    return paginate<Job>(this.t, "/v1/jobs", pageSize);
  }

  /** Keeps a queued job from starting (a running attempt is cancelled by its run). */
  cancel(jobId: string): Promise<Job> {
    return this.t.call<Job>("POST", `/v1/jobs/${encodeURIComponent(jobId)}/cancel`);
  }

  /** Deletes an ended job's record; its runs expire on their own. */
  async delete(jobId: string): Promise<void> {
    await this.t.call("DELETE", `/v1/jobs/${encodeURIComponent(jobId)}`);
  }
}

/** The runs of jobs: status, exit code and the latest 64 KiB of output. */
export class Runs {
  constructor(private readonly t: Transport) {}

  list(jobId?: string, pageSize = 50, automationId?: string): AsyncGenerator<Run> {
    const query: Record<string, string> = {};
    if (jobId) query["jobId"] = jobId;
    if (automationId) query["automationId"] = automationId;
    return paginate<Run>(this.t, "/v1/runs", pageSize, query);
  }

  get(runId: string): Promise<Run> {
    return this.t.call<Run>("GET", `/v1/runs/${encodeURIComponent(runId)}`);
  }

  /** Best effort: the command's process group gets SIGTERM, then SIGKILL after the grace
   * period (10 s); the run ends cancelled. */
  cancel(runId: string): Promise<Run> {
    return this.t.call<Run>("POST", `/v1/runs/${encodeURIComponent(runId)}/cancel`);
  }

  /** Status changes of the organization's runs (jobs' and automations'), from now on (or after
   * lastEventId), from GET /v1/events. Throws EventsReset when the server no longer keeps
   * lastEventId: list again, then follow again from its lastEventId. */
  events(options: { lastEventId?: string; signal?: AbortSignal } = {}): AsyncGenerator<RunEvent> {
    return eventFrames<RunEvent>(this.t, "/v1/events", "run", options.lastEventId, undefined, options.signal);
  }
}

/** Persistent storage, mounted at /workspace of durable sandboxes. */
export class StorageVolumes {
  constructor(private readonly t: Transport) {}

  create(name: string, sizeMiB?: number, options: IdempotencyOptions = {}): Promise<Storage> {
    return this.t.call<Storage>("POST", "/v1/storage", {
      json: sizeMiB === undefined ? { name } : { name, sizeMiB }, idempotencyKey: options.idempotencyKey,
    });
  }

  get(name: string): Promise<Storage> {
    return this.t.call<Storage>("GET", `/v1/storage/${name}`);
  }

  list(pageSize = 50): AsyncGenerator<Storage> {
    return paginate<Storage>(this.t, "/v1/storage", pageSize);
  }

  /** A file of the storage (relative to /workspace or under it), whether or not a sandbox that mounts it runs. */
  async read(name: string, path: string): Promise<Uint8Array> {
    const resp = await this.t.request("GET", `/v1/storage/${name}/files`, { query: { path }, headers: { Accept: "application/octet-stream" } });
    return new Uint8Array(await resp.arrayBuffer());
  }

  /** Deletes the storage and its files (the API's confirmation is the name itself). */
  async delete(name: string): Promise<void> {
    await this.t.call("DELETE", `/v1/storage/${name}`, { json: { confirm: name } });
  }
}

/** Object storage: keys and their bytes, streamed. */
export class Objects {
  constructor(private readonly t: Transport) {}

  put(key: string, data: Body, contentType = "application/octet-stream"): Promise<StoredObject> {
    return this.t.call<StoredObject>("PUT", "/v1/objects/content", { query: { key }, body: data, headers: { "Content-Type": contentType } });
  }

  async get(key: string): Promise<Uint8Array> {
    const resp = await this.t.request("GET", "/v1/objects/content", { query: { key }, headers: { Accept: "*/*" } });
    return new Uint8Array(await resp.arrayBuffer());
  }

  /** Whether the object exists (a HEAD: no bytes move). */
  async exists(key: string): Promise<boolean> {
    try {
      await this.t.request("HEAD", "/v1/objects/content", { query: { key } });
      return true;
    } catch (e) {
      if (e instanceof NotFound) return false;
      throw e;
    }
  }

  /** Streams an object into a local file; answers the bytes written. */
  async download(key: string, localPath: string): Promise<number> {
    const resp = await this.t.request("GET", "/v1/objects/content", { query: { key }, headers: { Accept: "*/*" } });
    return saveResponse(resp, localPath);
  }

  async delete(key: string): Promise<void> {
    await this.t.call("DELETE", "/v1/objects/content", { query: { key } });
  }

  /** A download link for one object that needs no credentials, until it expires. */
  link(key: string, ttlSeconds?: number): Promise<ObjectLink> {
    return this.t.call<ObjectLink>("POST", "/v1/objects/url", { json: ttlSeconds === undefined ? { key } : { key, ttlSeconds } });
  }

  /** A storage token: S3 credentials for the storage gateway only, expiring, revocable. A
   * replay of idempotencyKey answers the token without its secret (shown once). */
  createToken(options: { name?: string; ttlSeconds?: number } & IdempotencyOptions = {}): Promise<NewStorageToken> {
    const { idempotencyKey, ...json } = options;
    return this.t.call<NewStorageToken>("POST", "/v1/storage-tokens", { json, idempotencyKey });
  }

  /** Every storage token, revoked and expired ones too, newest first. */
  async listTokens(): Promise<StorageToken[]> {
    return collect(paginate<StorageToken>(this.t, "/v1/storage-tokens", 200));
  }

  async revokeToken(tokenId: string): Promise<void> {
    await this.t.call("DELETE", `/v1/storage-tokens/${tokenId}`);
  }

  /** Every object under prefix, in key order (S3's), following nextCursor page by page. */
  list(options: { prefix?: string; pageSize?: number } = {}): AsyncGenerator<StoredObject> {
    return paginate<StoredObject>(this.t, "/v1/objects", options.pageSize ?? 200, { prefix: options.prefix });
  }
}

/** Static websites published from object storage. */
export class Sites {
  constructor(private readonly t: Transport) {}

  publish(source: string, name?: string, options: IdempotencyOptions = {}): Promise<Site> {
    return this.t.call<Site>("POST", "/v1/sites", {
      json: name === undefined ? { source } : { source, name }, idempotencyKey: options.idempotencyKey,
    });
  }

  get(siteId: string): Promise<Site> {
    return this.t.call<Site>("GET", `/v1/sites/${siteId}`);
  }

  /** The organization's sites, newest first, following nextCursor page by page. */
  list(pageSize = 50): AsyncGenerator<Site> {
    return paginate<Site>(this.t, "/v1/sites", pageSize);
  }

  async delete(siteId: string): Promise<void> {
    await this.t.call("DELETE", `/v1/sites/${siteId}`);
  }
}

/** The API keys of the caller's own organization: any of its keys or users may manage them. */
export class Keys {
  constructor(private readonly t: Transport) {}

  /** A new key; its text (`key`) is answered this once. Without `ttlSeconds` it never expires.
   * A replay of idempotencyKey answers the key's record without its text. */
  create(options: { name?: string; ttlSeconds?: number } & IdempotencyOptions = {}): Promise<NewApiKey> {
    const json: Record<string, unknown> = {};
    if (options.name !== undefined) json.name = options.name;
    if (options.ttlSeconds !== undefined) json.ttlSeconds = options.ttlSeconds;
    return this.t.call<NewApiKey>("POST", "/v1/keys", { json, idempotencyKey: options.idempotencyKey });
  }

  list(): AsyncGenerator<ApiKey> {
    return paginate<ApiKey>(this.t, "/v1/keys", 200);
  }

  /** Deletes the key: it, and OAuth tokens issued with it, stop working at once. */
  async revoke(keyId: string): Promise<void> {
    await this.t.call("DELETE", `/v1/keys/${encodeURIComponent(keyId)}`);
  }
}

/** Organizations and their API keys (the admin key's organization only). */
export class Orgs {
  constructor(private readonly t: Transport) {}

  create(name: string): Promise<Org> {
    return this.t.call<Org>("POST", "/v1/orgs", { json: { name } });
  }

  list(): AsyncGenerator<Org> {
    return paginate<Org>(this.t, "/v1/orgs", 200);
  }

  createKey(orgId: string, name?: string, ttlSeconds?: number): Promise<NewApiKey> {
    const json: Record<string, unknown> = {};
    if (name !== undefined) json.name = name;
    if (ttlSeconds !== undefined) json.ttlSeconds = ttlSeconds;
    return this.t.call<NewApiKey>("POST", `/v1/orgs/${orgId}/keys`, { json });
  }

  listKeys(orgId: string): AsyncGenerator<ApiKey> {
    return paginate<ApiKey>(this.t, `/v1/orgs/${orgId}/keys`, 200);
  }

  /**
   * Deletes the organization and everything it holds; `confirm` must be its name. Refused (409)
   * while any of its sandboxes is not deleted, or it has apps, automations or unfinished jobs.
   */
  async delete(orgId: string, confirm: string): Promise<void> {
    await this.t.call("DELETE", `/v1/orgs/${orgId}`, { json: { confirm } });
  }

  async deleteKey(orgId: string, keyId: string): Promise<void> {
    await this.t.call("DELETE", `/v1/orgs/${orgId}/keys/${keyId}`);
  }

  /** Adds a user who signs in on the OAuth page; without `password`, adaptd chooses one. */
  createUser(orgId: string, email: string, password?: string): Promise<NewUser> {
    return this.t.call<NewUser>("POST", `/v1/orgs/${orgId}/users`, {
      json: password === undefined ? { email } : { email, password },
    });
  }

  /** Every organization's users, or `orgId`'s. */
  async listUsers(orgId?: string): Promise<User[]> {
    return collect(paginate<User>(this.t, "/v1/users", 200, orgId === undefined ? {} : { orgId }));
  }

  /** Deletes a user and ends its sign-ins; never an organization's last user (409). */
  async deleteUser(userId: string): Promise<void> {
    await this.t.call("DELETE", `/v1/users/${userId}`);
  }

  /** Sets a user's password (the user itself gives `currentPassword`) and ends its earlier sign-ins. */
  async setUserPassword(userId: string, password: string, currentPassword?: string): Promise<void> {
    await this.t.call("PUT", `/v1/users/${userId}/password`, {
      json: currentPassword === undefined ? { password } : { password, currentPassword },
    });
  }

  /** Puts the organization on a plan; answers its account. */
  setPlan(orgId: string, planId: string): Promise<Account> {
    return this.t.call<Account>("PUT", `/v1/orgs/${orgId}/plan`, { json: { planId } });
  }

  /** Appends a credit to the organization's ledger; a retry with the same `id` adds nothing. */
  addCredit(
    orgId: string,
    amountNanos: number,
    reason: string,
    options: { expiresInDays?: number; id?: string } = {},
  ): Promise<LedgerEntry> {
    return this.t.call<LedgerEntry>("POST", `/v1/orgs/${orgId}/credits`, {
      json: { amountNanos, reason, ...options },
    });
  }
}

/** The caller's own account: plan, limits, usage and balance. */
export class Accounts {
  constructor(private readonly t: Transport) {}

  get(): Promise<Account> {
    return this.t.call<Account>("GET", "/v1/account");
  }

  /** The account's ledger entries, oldest first. */
  ledger(): AsyncGenerator<LedgerEntry> {
    return paginate<LedgerEntry>(this.t, "/v1/account/ledger", 200);
  }

  /** The ledger as JSON lines (`jsonl`) or CSV (`csv`), for an external billing system. */
  async exportLedger(format: "jsonl" | "csv" = "jsonl"): Promise<string> {
    const resp = await this.t.request("GET", "/v1/account/ledger", { query: { format } });
    return resp.text();
  }

  /** Metered usage per sandbox (with its job) and volume, of the entries whose period starts
   * in [from, to): RFC 3339 UTC times or dates; default this month. */
  usage(options: { from?: string; to?: string } = {}): Promise<UsageReport> {
    return this.t.call<UsageReport>("GET", "/v1/account/usage", { query: { from: options.from, to: options.to } });
  }

  /** The organization's account alerts as they happen (GET /v1/events, its `alert` frames):
   * 80% / 100% of its credits used or of a plan limit, once per crossing. From now on, or after
   * lastEventId (an alert's `id`). Throws EventsReset when the server no longer keeps
   * lastEventId. The stream does not end by itself: stop iterating, or abort `signal`. */
  alerts(options: { lastEventId?: string; signal?: AbortSignal } = {}): AsyncGenerator<AlertEvent> {
    return eventFrames<AlertEvent>(this.t, "/v1/events", "alert", options.lastEventId, undefined, options.signal);
  }

  /** Accepts the operator's terms and makes the account ready; idempotent. */
  register(): Promise<Account> {
    return this.t.call<Account>("POST", "/v1/account/register", { json: {} });
  }
}

/** Plans: limits and prices (admin key). */
export class Plans {
  constructor(private readonly t: Transport) {}

  list(): AsyncGenerator<Plan> {
    return paginate<Plan>(this.t, "/v1/plans", 200);
  }

  get(planId: string): Promise<Plan> {
    return this.t.call<Plan>("GET", `/v1/plans/${planId}`);
  }

  /** Creates or replaces the plan; a limit left out or null is no limit. */
  put(
    planId: string,
    plan: { name?: string; limits?: Partial<PlanLimits>; prices?: Partial<PlanPrices> } = {},
  ): Promise<Plan> {
    return this.t.call<Plan>("PUT", `/v1/plans/${planId}`, { json: plan });
  }
}
