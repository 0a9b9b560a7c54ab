// Automations: a command run in a sandbox of the organization on a schedule, or a controller
// holding one running or hibernated. Their runs are read with Client.runs
// (runs.list(undefined, 50, automationId)).
import type { Automation, Run } from "./models.js";
import { paginate } from "./pages.js";
import type { Transport } from "./transport.js";

export interface CreateAutomationOptions {
  sandboxId: string;
  /** Give argv, or a shell command. */
  argv?: string[];
  command?: string;
  /** Give intervalSeconds, or cron (+ timeZone). */
  intervalSeconds?: number;
  cron?: string;
  timeZone?: string;
  name?: string;
  cwd?: string;
  env?: Record<string, string>;
  timeoutSeconds?: number;
  overlap?: "skip" | "buffer_one" | "allow" | "cancel_previous";
  catchUpSeconds?: number;
  /** Attempts of one slot on an instant target (1-10, default 3). */
  maxAttempts?: number;
}

export interface CreateControllerOptions {
  sandboxId: string;
  /** The state held (inside the windows, when a schedule is given). */
  desiredState: "running" | "hibernated";
  /** Windows: intervalSeconds or cron (+ timeZone), each windowSeconds long. */
  intervalSeconds?: number;
  cron?: string;
  timeZone?: string;
  windowSeconds?: number;
  name?: string;
}

export class Automations {
  constructor(private readonly t: Transport) {}

  /** Schedules the command; the answer lists the next five run times. */
  create(options: CreateAutomationOptions): Promise<Automation> {
    return this.t.call<Automation>("POST", "/v1/automations", { json: { ...options } });
  }

  /** A controller holding the sandbox in a state; the answer lists the next five changes. */
  createController(options: CreateControllerOptions): Promise<Automation> {
    return this.t.call<Automation>("POST", "/v1/automations", {
      json: { kind: "controller", ...options },
    });
  }

  /** The organization's automations, newest first, following nextCursor page by page. */
  list(pageSize = 50): AsyncGenerator<Automation> {
    return paginate<Automation>(this.t, "/v1/automations", pageSize);
  }

  get(automationId: string): Promise<Automation> {
    return this.t.call<Automation>("GET", `/v1/automations/${encodeURIComponent(automationId)}`);
  }

  /** Resumes it; with version, only if it is still at that version (else Conflict). */
  enable(automationId: string, version?: number): Promise<Automation> {
    return this.set(automationId, "enable", version);
  }

  /** Pauses it; with version, only if it is still at that version (else Conflict). */
  disable(automationId: string, version?: number): Promise<Automation> {
    return this.set(automationId, "disable", version);
  }

  /** A manual run now; the schedule does not shift. */
  trigger(automationId: string): Promise<Run> {
    return this.t.call<Run>("POST", `/v1/automations/${encodeURIComponent(automationId)}/trigger`);
  }

  /** Deletes the automation, never its sandbox. */
  async delete(automationId: string): Promise<void> {
    await this.t.call("DELETE", `/v1/automations/${encodeURIComponent(automationId)}`);
  }

  private set(automationId: string, verb: string, version?: number): Promise<Automation> {
    const headers: Record<string, string> = version !== undefined ? { "If-Match": `"${version}"` } : {};
    return this.t.call<Automation>("POST", `/v1/automations/${encodeURIComponent(automationId)}/${verb}`, { headers });
  }
}
