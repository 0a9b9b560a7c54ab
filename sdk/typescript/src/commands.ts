// Commands inside a running sandbox: run and wait, or start, stream, wait and kill.
import { AdaptError, CommandFailed, RequestTimeout } from "./errors.js";
import type { CommandResult } from "./models.js";
import { paginate } from "./pages.js";
import { parseEvents } from "./sse.js";
import type { Transport } from "./transport.js";

export type OutputCallback = (text: string) => void;

export interface CommandOptions {
  cwd?: string;
  env?: Record<string, string>;
  stdin?: string;
  /** Seconds before the command's process group is killed (the API's timeoutSeconds). */
  timeout?: number;
  user?: string;
}

export interface RunOptions extends CommandOptions {
  onStdout?: OutputCallback;
  onStderr?: OutputCallback;
  /** Throw CommandFailed on a non-zero exit. */
  check?: boolean;
}

export interface WaitOptions {
  onStdout?: OutputCallback;
  onStderr?: OutputCallback;
  /** Milliseconds to wait (default: the command's timeout and a minute). */
  timeoutMs?: number;
}

/** What a python run's stderr says when the image has no python3 (adaptd's words); the shell
 * below says the same for runPython with cwd, env or user, which POST .../python lacks. */
export const PYTHON_MISSING = "adapt: python3 is not installed in this image";
const PYTHON_SCRIPT = `command -v python3 >/dev/null 2>&1 || { echo '${PYTHON_MISSING}' >&2; exit 127; }; exec python3 -`;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A command that was started; `wait()` follows its output until it ends. */
export class CommandHandle {
  readonly id: string;

  constructor(private readonly t: Transport, readonly sandboxId: string, public result: CommandResult) {
    this.id = result.id;
  }

  private path(suffix = ""): string {
    return `/v1/sandboxes/${this.sandboxId}/commands/${this.id}${suffix}`;
  }

  async refresh(): Promise<CommandResult> {
    this.result = await this.t.call<CommandResult>("GET", this.path());
    return this.result;
  }

  /** Kills the command's process tree; answers it once ended (`status` "killed"). */
  async kill(): Promise<CommandResult> {
    this.result = await this.t.call<CommandResult>("DELETE", this.path());
    return this.result;
  }

  /** Streams the output (SSE) to the callbacks as it comes and answers the ended command. */
  async wait(options: WaitOptions = {}): Promise<CommandResult> {
    const { onStdout, onStderr } = options;
    if (this.result.status !== "running" && !onStdout && !onStderr) return this.result;
    const limit = options.timeoutMs ?? ((this.result.timeoutSeconds ?? 600) + 60) * 1000;
    const deadline = Date.now() + limit;
    const seen = { stdout: 0, stderr: 0 };
    const callbacks = { stdout: onStdout, stderr: onStderr };
    const timedOut = () => new RequestTimeout(`command ${this.id} still running after ${limit / 1000} s`, { code: "request_timeout" });
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), limit);
    try {
      const resp = await this.t.request("GET", this.path("/stream"), { headers: { Accept: "text/event-stream" }, timeoutMs: limit });
      if (resp.body) {
        const onAbort = () => void resp.body?.cancel().catch(() => undefined);
        controller.signal.addEventListener("abort", onAbort);
        for await (const ev of parseEvents(resp.body)) {
          if (ev.event === "stdout" || ev.event === "stderr") {
            const text = String((JSON.parse(ev.data) as { data?: unknown }).data ?? "");
            seen[ev.event] += text.length;
            const cb = callbacks[ev.event];
            if (cb && text) cb(text);
          } else if (ev.event === "result") {
            this.result = JSON.parse(ev.data) as CommandResult;
            return this.result;
          }
        }
      }
    } catch (e) {
      if (controller.signal.aborted) throw timedOut();
      if (e instanceof AdaptError) throw e;
      // The stream broke: poll below, delivering only output not yet delivered.
    } finally {
      clearTimeout(timer);
    }
    for (;;) {
      const r = await this.refresh();
      for (const name of ["stdout", "stderr"] as const) {
        const cb = callbacks[name];
        if (cb && r[name].length > seen[name]) {
          cb(r[name].slice(seen[name]));
          seen[name] = r[name].length;
        }
      }
      if (r.status !== "running") return r;
      if (Date.now() > deadline) throw timedOut();
      await sleep(500);
    }
  }
}

/** run()'s check: CommandFailed on a non-zero exit. */
function checkExit(what: string, result: CommandResult): void {
  if (result.exitCode === 0) return;
  throw new CommandFailed(`${what} exited with ${result.exitCode ?? result.status}: ${(result.stderr || result.error || "").trim().slice(-500)}`, { code: "command_failed" });
}

/** `sandbox.commands`: processes run beside the sandbox's workload. */
export class Commands {
  constructor(private readonly t: Transport, readonly sandboxId: string) {}

  /** Starts a command (a string runs under `/bin/sh -c`, an array is argv with no shell) and
   * answers its handle without waiting (unless waitSeconds, at most 60). */
  async start(cmd: string | string[], options: CommandOptions & { waitSeconds?: number } = {}): Promise<CommandHandle> {
    const body: Record<string, unknown> = { waitSeconds: options.waitSeconds ?? 0 };
    if (typeof cmd === "string") body["command"] = cmd;
    else body["argv"] = cmd;
    if (options.cwd !== undefined) body["cwd"] = options.cwd;
    if (options.env !== undefined) body["env"] = options.env;
    if (options.stdin !== undefined) body["stdin"] = options.stdin;
    if (options.timeout !== undefined) body["timeoutSeconds"] = options.timeout;
    if (options.user !== undefined) body["user"] = options.user;
    // adaptd holds the answer up to waitSeconds: the request may take that much longer.
    const result = await this.t.call<CommandResult>("POST", `/v1/sandboxes/${this.sandboxId}/commands`, {
      json: body,
      timeoutMs: this.t.timeoutMs + (options.waitSeconds ?? 0) * 1000,
    });
    return new CommandHandle(this.t, this.sandboxId, result);
  }

  /** Runs a command to its end and answers the result; output streams to onStdout and
   * onStderr as it comes. */
  async run(cmd: string | string[], options: RunOptions = {}): Promise<CommandResult> {
    const { onStdout, onStderr, check, ...rest } = options;
    const streaming = onStdout !== undefined || onStderr !== undefined;
    const handle = await this.start(cmd, { ...rest, waitSeconds: streaming ? 0 : 60 });
    const waitOptions: WaitOptions = {};
    if (onStdout) waitOptions.onStdout = onStdout;
    if (onStderr) waitOptions.onStderr = onStderr;
    const result = await handle.wait(waitOptions);
    if (check) checkExit(typeof cmd === "string" ? cmd : cmd.join(" "), result);
    return result;
  }

  /** Runs Python code with the image's python3 (the program on its standard input) to its end,
   * as run() does: POST .../python, the verb of MCP's run_python and `adapt sandbox python`.
   * An image without python3 throws Unsupported; when output streams (callbacks), the answer
   * comes before the end, so the result says it instead: exit code 127 and PYTHON_MISSING on
   * stderr. cwd, env or user: run as a command, which has them (stdin is the code). */
  async runPython(code: string, options: RunOptions = {}): Promise<CommandResult> {
    const { onStdout, onStderr, check, cwd, env, user, timeout } = options;
    if (cwd !== undefined || env !== undefined || user !== undefined) {
      return this.run(["/bin/sh", "-c", PYTHON_SCRIPT], { ...options, stdin: code });
    }
    const waitSeconds = onStdout !== undefined || onStderr !== undefined ? 0 : 60;
    const body: Record<string, unknown> = { code, waitSeconds };
    if (timeout !== undefined) body["timeoutSeconds"] = timeout;
    const started = await this.t.call<CommandResult>("POST", `/v1/sandboxes/${this.sandboxId}/python`, {
      json: body,
      timeoutMs: this.t.timeoutMs + waitSeconds * 1000,
    });
    const waitOptions: WaitOptions = {};
    if (onStdout) waitOptions.onStdout = onStdout;
    if (onStderr) waitOptions.onStderr = onStderr;
    const result = await new CommandHandle(this.t, this.sandboxId, started).wait(waitOptions);
    if (check) checkExit("python", result);
    return result;
  }

  async get(commandId: string): Promise<CommandHandle> {
    const result = await this.t.call<CommandResult>("GET", `/v1/sandboxes/${this.sandboxId}/commands/${commandId}`);
    return new CommandHandle(this.t, this.sandboxId, result);
  }

  /** Every command of the sandbox, newest first, following nextCursor. */
  list(pageSize = 50): AsyncGenerator<CommandResult> {
    return paginate<CommandResult>(this.t, `/v1/sandboxes/${this.sandboxId}/commands`, pageSize);
  }
}
