// Sandboxes: `client.sandboxes` (create, get, list, delete) and the `Sandbox` handle, whose
// `commands`, `files`, `endpoints` and `artifacts` act inside it.
import type { Client } from "./client.js";
import { CommandHandle, Commands, type RunOptions } from "./commands.js";
import { EventsReset, RequestTimeout, SandboxFailed } from "./errors.js";
import { Files } from "./files.js";
import type { Artifact, ArtifactList, Checkpoint, CommandResult, Endpoint, ObjectStorageAttachment, SandboxInfo, SandboxStats, StatusEvent } from "./models.js";
import { collect, paginate } from "./pages.js";
import { parseEvents } from "./sse.js";
import { newIdempotencyKey, type Transport } from "./transport.js";

/** Statuses after which a sandbox never becomes running again by itself. */
export const ENDED = ["completed", "failed", "unresolved", "deleting", "deleted", "unavailable"];
const DEFAULT_WAIT_MS = 300_000;

export interface CreateSandboxOptions {
  image?: string;
  imageId?: string;
  cpu?: number;
  memoryMiB?: number;
  diskMiB?: number;
  /** Seconds; null: no expiry. */
  ttlSeconds?: number | null;
  labels?: Record<string, string>;
  /** labels.name, the display name list's query matches. */
  name?: string;
  env?: Record<string, string>;
  secrets?: string[];
  network?: Record<string, unknown>;
  startup?: { mode: "image" | "command"; [key: string]: unknown };
  securityProfile?: "restricted" | "developer";
  startupClass?: "durable" | "instant";
  storage?: string;
  /** Hibernate it after this many seconds unused (10 to 86400). */
  idleTimeoutSeconds?: number;
  /** The organization's database in the environment (DATABASE_URL, PG*). */
  database?: boolean;
  /** More request fields, sent as they are. */
  extra?: Record<string, unknown>;
  /** Wait until it runs (or, with a startup command, has ended). Default true. */
  wait?: boolean;
  /** Milliseconds for that wait. Default 5 minutes. */
  timeoutMs?: number;
  /** Default: a new one, so that a retry after a dropped connection makes no second sandbox. */
  idempotencyKey?: string;
}

export class Endpoints {
  constructor(private readonly t: Transport, readonly sandboxId: string) {}

  /** The same idempotencyKey answers the same endpoint. */
  create(port: number, options: { idempotencyKey?: string } = {}): Promise<Endpoint> {
    return this.t.call<Endpoint>("POST", `/v1/sandboxes/${this.sandboxId}/endpoints`, {
      json: { port }, idempotencyKey: options.idempotencyKey,
    });
  }

  /** The sandbox's endpoints, newest first, following nextCursor page by page. */
  async list(pageSize = 200): Promise<Endpoint[]> {
    return collect(paginate<Endpoint>(this.t, `/v1/sandboxes/${this.sandboxId}/endpoints`, pageSize));
  }

  async delete(endpointId: string): Promise<void> {
    await this.t.call("DELETE", `/v1/sandboxes/${this.sandboxId}/endpoints/${endpointId}`);
  }

  /** Removes every endpoint to port (their routes go at once; the sandbox runs on) and answers
   * the ids removed: none is no error. */
  async deleteByPort(port: number): Promise<string[]> {
    const path = `/v1/sandboxes/${this.sandboxId}/endpoints`;
    return (await this.t.call<{ removed: string[] }>("DELETE", path, { query: { port } })).removed;
  }
}

/** `sandbox.artifacts`: workspace files copied into object storage, under
 * artifacts/<sandbox id>/ unless given another key. */
export class Artifacts {
  constructor(private readonly t: Transport, readonly sandboxId: string) {}

  /** Copies one workspace file (relative to /workspace, at most 100 MiB) to object storage and
   * answers the object with a download link valid ttlSeconds (default an hour). A file that
   * looks like a credential is refused (InvalidArgument, field `path`). */
  save(path: string, options: { key?: string; ttlSeconds?: number } = {}): Promise<Artifact> {
    const body: Record<string, unknown> = { path };
    if (options.key !== undefined) body["key"] = options.key;
    if (options.ttlSeconds !== undefined) body["ttlSeconds"] = options.ttlSeconds;
    return this.t.call<Artifact>("POST", `/v1/sandboxes/${this.sandboxId}/artifacts`, { json: body });
  }

  /** One page of the artifacts in key order; pass its `nextCursor` for the next one. */
  list(options: { limit?: number; cursor?: string } = {}): Promise<ArtifactList> {
    return this.t.call<ArtifactList>("GET", `/v1/sandboxes/${this.sandboxId}/artifacts`, {
      query: { limit: options.limit, cursor: options.cursor },
    });
  }
}

function statusEvents(t: Transport, path: string, lastEventId?: string, timeoutMs?: number, signal?: AbortSignal): AsyncGenerator<StatusEvent> {
  return eventFrames<StatusEvent>(t, path, "status", lastEventId, timeoutMs, signal);
}

/** The frames named `kind` of an event stream, each with its SSE id; a `reset` frame throws
 * EventsReset. */
export async function* eventFrames<T extends { id?: string }>(t: Transport, path: string, kind: string, lastEventId?: string, timeoutMs?: number, signal?: AbortSignal): AsyncGenerator<T> {
  const headers: Record<string, string> = { Accept: "text/event-stream" };
  if (lastEventId) headers["Last-Event-ID"] = lastEventId;
  const options: { headers: Record<string, string>; timeoutMs?: number } = { headers };
  if (timeoutMs !== undefined) options.timeoutMs = timeoutMs;
  const resp = await t.request("GET", path, options);
  if (!resp.body) return;
  const body = resp.body;
  const onAbort = () => void body.cancel().catch(() => undefined);
  signal?.addEventListener("abort", onAbort);
  try {
    for await (const ev of parseEvents(body)) {
      if (ev.event === "reset") {
        const reset = JSON.parse(ev.data) as { reason?: string; lastEventId?: number };
        throw new EventsReset(reset.reason ?? "events were missed", String(reset.lastEventId ?? ev.id ?? ""));
      }
      if (ev.event !== kind) continue;
      const frame = JSON.parse(ev.data) as T;
      if (ev.id !== undefined) frame.id = ev.id;
      yield frame;
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

/** A sandbox of the client's organization. `info` is its record as last read. Use
 * `await using sb = await Sandbox.create()` (or try/finally with `sb.delete()`) to delete it
 * at the end of a block. */
export class Sandbox {
  readonly id: string;
  readonly commands: Commands;
  readonly files: Files;
  readonly endpoints: Endpoints;
  readonly artifacts: Artifacts;
  private readonly t: Transport;

  constructor(readonly client: Client, public info: SandboxInfo) {
    this.t = client.transport;
    this.id = info.id;
    this.commands = new Commands(this.t, this.id);
    this.files = new Files(this.t, this.id);
    this.endpoints = new Endpoints(this.t, this.id);
    this.artifacts = new Artifacts(this.t, this.id);
  }

  /** Creates a sandbox with a client from ADAPT_URL / ADAPT_API_KEY (or `client`). */
  static async create(options: CreateSandboxOptions & { client?: Client } = {}): Promise<Sandbox> {
    const { client, ...rest } = options;
    const { Client: ClientClass } = await import("./client.js");
    return (client ?? new ClientClass()).sandboxes.create(rest);
  }

  /** A handle for an existing sandbox (NotFound if the key's organization has none). */
  static async connect(sandboxId: string, client?: Client): Promise<Sandbox> {
    const { Client: ClientClass } = await import("./client.js");
    return (client ?? new ClientClass()).sandboxes.get(sandboxId);
  }

  get status(): string {
    return this.info.status;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.delete({ wait: false });
  }

  /** Reads the record again. waitSeconds (at most 60): while it is provisioning, adaptd
   * answers once it has left provisioning or after that long (MCP's wait_for_sandbox). */
  async refresh(waitSeconds = 0): Promise<SandboxInfo> {
    this.info = waitSeconds
      ? await this.t.call<SandboxInfo>("GET", `/v1/sandboxes/${this.id}`, {
          query: { waitSeconds: String(waitSeconds) },
          timeoutMs: this.t.timeoutMs + waitSeconds * 1000,
        })
      : await this.t.call<SandboxInfo>("GET", `/v1/sandboxes/${this.id}`);
    return this.info;
  }

  /** Deletes the sandbox (repeating is safe); wait: until its record says `deleted`. */
  async delete(options: { wait?: boolean; timeoutMs?: number } = {}): Promise<void> {
    const resp = await this.t.request("DELETE", `/v1/sandboxes/${this.id}`);
    await resp.body?.cancel();
    if (resp.status === 202 && options.wait !== false) {
      await this.waitUntil(["deleted"], { timeoutMs: options.timeoutMs ?? DEFAULT_WAIT_MS, failOnEnd: false });
    } else if (resp.status === 204) {
      this.info = { ...this.info, status: "deleted" }; // records answered earlier stay as they were
    }
  }

  /** Stops (hibernates) a running sandbox; answers once it is `hibernated`. */
  /** CPU time and memory of the running sandbox now; 409 unless it is running. */
  async stats(): Promise<SandboxStats> {
    return this.t.call<SandboxStats>("GET", `/v1/sandboxes/${this.id}/stats`);
  }

  async stop(): Promise<SandboxInfo> {
    this.info = await this.t.call<SandboxInfo>("POST", `/v1/sandboxes/${this.id}/stop`, { json: {} });
    return this.info;
  }

  /** Saves the running durable sandbox's processes, memory and disk as `name`; it keeps
   * running. keep: it outlives the sandbox's deletion. The answer carries its checkpoint
   * operation (`operationId`). The same idempotencyKey answers the same checkpoint and takes no
   * second one. */
  async createCheckpoint(name: string, options: { keep?: boolean; idempotencyKey?: string } = {}): Promise<Checkpoint> {
    const json: Record<string, unknown> = { name };
    if (options.keep) json["keep"] = true;
    return this.t.call<Checkpoint>("POST", `/v1/sandboxes/${this.id}/checkpoints`, { json, idempotencyKey: options.idempotencyKey });
  }

  /** The sandbox's checkpoints, newest first. */
  async listCheckpoints(): Promise<Checkpoint[]> {
    return collect(paginate<Checkpoint>(this.t, `/v1/sandboxes/${this.id}/checkpoints`, 200));
  }

  async deleteCheckpoint(name: string): Promise<void> {
    const resp = await this.t.request("DELETE", `/v1/sandboxes/${this.id}/checkpoints/${encodeURIComponent(name)}`);
    await resp.body?.cancel();
  }

  /** Rolls the running sandbox back to checkpoint `name` (processes, memory, files). */
  async restoreCheckpoint(name: string): Promise<SandboxInfo> {
    this.info = await this.t.call<SandboxInfo>("POST", `/v1/sandboxes/${this.id}/checkpoints/${encodeURIComponent(name)}/restore`, { json: {} });
    return this.info;
  }

  /** A new sandbox from this sandbox's checkpoint `name` (see `Sandboxes.fork`). */
  async forkCheckpoint(name: string, options: Parameters<Sandboxes["fork"]>[1] = {}): Promise<Sandbox> {
    return this.client.sandboxes.fork(`${this.id}/${name}`, options);
  }

  /** Starts a hibernated sandbox; wait: until it is running again. */
  async start(options: { wait?: boolean; timeoutMs?: number } = {}): Promise<SandboxInfo> {
    this.info = await this.t.call<SandboxInfo>("POST", `/v1/sandboxes/${this.id}/start`, { json: {} });
    if (options.wait !== false) await this.waitUntil(["running"], { timeoutMs: options.timeoutMs ?? DEFAULT_WAIT_MS });
    return this.info;
  }

  /** The sandbox's status events (SSE): its history from `provisioning`, then live. The stream
   * does not end by itself: break out of the loop (or abort `signal`) when done. */
  events(options: { lastEventId?: string; signal?: AbortSignal } = {}): AsyncGenerator<StatusEvent> {
    return statusEvents(this.t, `/v1/sandboxes/${this.id}/events`, options.lastEventId, undefined, options.signal);
  }

  /** The startup command's output as it is produced (SSE), as [stream, text] pairs: ["stdout",
   * text] and ["stderr", text] were appended; ["reset", ""] says the oldest output was dropped
   * (past 256 KiB) and the two pairs that follow hold all that is kept. It ends once the sandbox
   * no longer runs, with `info` its final record. Conflict for an interactive sandbox. */
  async *startupOutput(options: { timeoutMs?: number; signal?: AbortSignal } = {}): AsyncGenerator<[string, string]> {
    const request: { headers: Record<string, string>; timeoutMs?: number } = { headers: { Accept: "text/event-stream" } };
    if (options.timeoutMs !== undefined) request.timeoutMs = options.timeoutMs;
    const resp = await this.t.request("GET", `/v1/sandboxes/${this.id}/startup/stream`, request);
    if (!resp.body) return;
    const body = resp.body;
    const onAbort = () => void body.cancel().catch(() => undefined);
    options.signal?.addEventListener("abort", onAbort);
    try {
      for await (const ev of parseEvents(body)) {
        const data = JSON.parse(ev.data) as Record<string, unknown>;
        if (ev.event === "stdout" || ev.event === "stderr") {
          yield [ev.event, String(data.data ?? "")];
        } else if (ev.event === "reset") {
          yield ["reset", ""];
          yield ["stdout", String(data.stdout ?? "")];
          yield ["stderr", String(data.stderr ?? "")];
        } else if (ev.event === "result") {
          this.info = data as unknown as SandboxInfo;
          return;
        }
      }
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Waits, on the sandbox's event stream, until its status is one of statuses, and answers the
   * record. SandboxFailed when it ends otherwise (failOnEnd), RequestTimeout after timeoutMs. */
  async waitUntil(statuses: string[] = ["running"], options: { timeoutMs?: number; failOnEnd?: boolean } = {}): Promise<SandboxInfo> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_MS;
    const deadline = Date.now() + timeoutMs;
    let lastId: string | undefined;
    for (;;) {
      const info = await this.refresh();
      if (statuses.includes(info.status)) return info;
      if (options.failOnEnd !== false && ENDED.includes(info.status)) {
        const why = info.error ?? info.startup?.error ?? "no error recorded";
        throw new SandboxFailed(`sandbox ${this.id} is ${info.status}, not ${statuses.join("/")}: ${why}`, this.id, info.status);
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new RequestTimeout(`sandbox ${this.id} is still ${info.status} after ${timeoutMs / 1000} s (wanted ${statuses.join("/")})`, { code: "request_timeout" });
      }
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), Math.min(left, 30_000));
      try {
        for await (const ev of statusEvents(this.t, `/v1/sandboxes/${this.id}/events`, lastId, Math.min(left, 30_000), controller.signal)) {
          lastId = ev.id ?? lastId;
          if (statuses.includes(ev.status) || ENDED.includes(ev.status)) break;
        }
      } catch {
        // No event for a while, or the stream broke: re-read the record and go on.
      } finally {
        clearTimeout(timer);
      }
    }
  }

  /** Gives the sandbox a storage token (its previous one revoked) in its environment as
   * SANDBOX_STORAGE_ENDPOINT and SANDBOX_STORAGE_TOKEN. adaptd restarts the sandbox for it
   * (`restarted`; its processes end); unless wait is false, until it runs again. */
  async attachObjectStorage(options: { ttlSeconds?: number; wait?: boolean; timeoutMs?: number } = {}): Promise<ObjectStorageAttachment> {
    const attachment = await this.t.call<ObjectStorageAttachment>("POST", `/v1/sandboxes/${this.id}/object-storage`, {
      json: options.ttlSeconds === undefined ? {} : { ttlSeconds: options.ttlSeconds },
    });
    if (attachment.restarted && options.wait !== false) {
      await this.waitUntil(["running"], { timeoutMs: options.timeoutMs ?? DEFAULT_WAIT_MS });
    }
    return attachment;
  }

  /** Shorthand for `commands.run`. */
  run(cmd: string | string[], options: RunOptions = {}): Promise<CommandResult> {
    return this.commands.run(cmd, options);
  }

  runPython(code: string, options: RunOptions = {}): Promise<CommandResult> {
    return this.commands.runPython(code, options);
  }
}

/** `client.sandboxes`: the organization's sandboxes. */
export class Sandboxes {
  private readonly t: Transport;

  constructor(private readonly client: Client) {
    this.t = client.transport;
  }

  /** Creates a sandbox and, unless wait is false, waits until it runs (or, with a startup
   * command, has ended). The request carries an Idempotency-Key. */
  async create(options: CreateSandboxOptions = {}): Promise<Sandbox> {
    const body: Record<string, unknown> = {};
    const fields: [string, unknown][] = [
      ["image", options.image], ["imageId", options.imageId], ["cpu", options.cpu],
      ["memoryMiB", options.memoryMiB], ["diskMiB", options.diskMiB], ["env", options.env],
      ["secrets", options.secrets], ["network", options.network], ["startup", options.startup],
      ["securityProfile", options.securityProfile], ["startupClass", options.startupClass],
      ["storage", options.storage], ["idleTimeoutSeconds", options.idleTimeoutSeconds],
      ["storage", options.storage],
      ["database", options.database],
    ];
    for (const [k, v] of fields) if (v !== undefined) body[k] = v;
    if (options.ttlSeconds !== undefined) body["ttlSeconds"] = options.ttlSeconds;
    if (options.labels || options.name) {
      body["labels"] = { ...(options.labels ?? {}), ...(options.name ? { name: options.name } : {}) };
    }
    Object.assign(body, options.extra ?? {});
    const info = await this.t.call<SandboxInfo>("POST", "/v1/sandboxes", {
      json: body,
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
    });
    const sb = new Sandbox(this.client, info);
    if (options.wait !== false) {
      const targets = options.startup ? ["running", "completed"] : ["running"];
      await sb.waitUntil(targets, { timeoutMs: options.timeoutMs ?? DEFAULT_WAIT_MS });
    }
    return sb;
  }

  /** A new sandbox from named checkpoint `fromCheckpoint` ("<sandboxId>/<name>"): its
   * processes, memory and files, the settings of the checkpoint's sandbox and a network of its
   * own. ttlSeconds and labels default to the source's. `info.operationId` is the fork
   * operation; unless wait is false, waits until the fork runs. */
  async fork(fromCheckpoint: string, options: {
    ttlSeconds?: number | null; labels?: Record<string, string>; wait?: boolean; timeoutMs?: number;
    idempotencyKey?: string;
  } = {}): Promise<Sandbox> {
    const body: Record<string, unknown> = { fromCheckpoint };
    if (options.ttlSeconds !== undefined) body["ttlSeconds"] = options.ttlSeconds;
    if (options.labels !== undefined) body["labels"] = options.labels;
    const info = await this.t.call<SandboxInfo>("POST", "/v1/sandboxes", {
      json: body,
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
    });
    const sb = new Sandbox(this.client, info);
    if (options.wait !== false) {
      await sb.waitUntil(["running"], { timeoutMs: options.timeoutMs ?? DEFAULT_WAIT_MS });
      sb.info = { ...sb.info, operationId: info.operationId };
    }
    return sb;
  }

  async get(sandboxId: string): Promise<Sandbox> {
    return new Sandbox(this.client, await this.t.call<SandboxInfo>("GET", `/v1/sandboxes/${sandboxId}`));
  }

  /** The organization's sandboxes, newest first, following nextCursor page by page. query:
   * part of labels.name (ignoring case) or the start of an id. */
  async *list(options: { query?: string; pageSize?: number } = {}): AsyncGenerator<Sandbox> {
    for await (const info of paginate<SandboxInfo>(this.t, "/v1/sandboxes", options.pageSize ?? 50, { query: options.query })) {
      yield new Sandbox(this.client, info);
    }
  }

  async delete(sandboxId: string, options: { wait?: boolean } = {}): Promise<void> {
    await (await this.get(sandboxId)).delete(options);
  }

  /** The organization's checkpoints, newest first, following nextCursor page by page: those of
   * its live sandboxes and the kept ones of its deleted sandboxes (`sandboxDeleted`).
   * sandboxId: only that sandbox's; kept: only those taken with keep (true) or without (false). */
  async *checkpoints(options: { sandboxId?: string; kept?: boolean; pageSize?: number } = {}): AsyncGenerator<Checkpoint> {
    const kept = options.kept === undefined ? undefined : String(options.kept);
    yield* paginate<Checkpoint>(this.t, "/v1/checkpoints", options.pageSize ?? 50, { sandboxId: options.sandboxId, kept });
  }

  /** Every endpoint of the organization's sandboxes, newest first. */
  async endpoints(pageSize = 200): Promise<Endpoint[]> {
    return collect(paginate<Endpoint>(this.t, "/v1/endpoints", pageSize));
  }

  /** Status events of every sandbox of the organization, from now on (or after lastEventId).
   * Throws EventsReset when the server no longer keeps lastEventId (events were missed): list
   * again, then follow again from its lastEventId. */
  events(options: { lastEventId?: string; signal?: AbortSignal } = {}): AsyncGenerator<StatusEvent> {
    return statusEvents(this.t, "/v1/events", options.lastEventId, undefined, options.signal);
  }
}

export { CommandHandle };
