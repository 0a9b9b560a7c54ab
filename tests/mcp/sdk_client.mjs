// Drives adaptd's MCP server with the official TypeScript SDK client, over Streamable HTTP
// or over stdio (`adapt mcp`), and prints one JSON report on stdout for the pytest side.
// Usage: node sdk_client.mjs http|stdio URL KEY ADAPT_BINARY SCENARIO
//   SCENARIO: tools (initialize + every page of tools/list), flow (a sandbox's life),
//             cancel (cancel a running call), calls (the calls listed in ADAPT_MCP_CALLS),
//             checkpoint (stop, start and their operations)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import Ajv from "ajv";

const [mode, url, key, adapt, scenario] = process.argv.slice(2);
const report = { mode, scenario, calls: [] };
const ajv = new Ajv({ strict: false, allErrors: true });

function transport() {
  if (mode === "stdio")
    return new StdioClientTransport({
      command: adapt,
      args: ["mcp", "--url", url, "--api-key", key],
      stderr: "inherit",
    });
  return new StreamableHTTPClientTransport(new URL(url + "/mcp"), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
}

const client = new Client({ name: "adapt-e2e", version: "1.0.0" });
await client.connect(transport());
report.serverVersion = client.getServerVersion();
report.capabilities = client.getServerCapabilities();

// Every page of tools/list (this also primes the SDK's outputSchema validators).
const tools = [];
let cursor;
report.pages = 0;
do {
  const page = await client.listTools(cursor ? { cursor } : {});
  report.pages += 1;
  tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor);
report.tools = tools;
const validators = Object.fromEntries(tools.map((t) => [t.name, ajv.compile(t.outputSchema)]));

async function call(name, args, options = {}) {
  const result = await client.callTool({ name, arguments: args }, undefined, options);
  const entry = { name, args, isError: !!result.isError, structuredContent: result.structuredContent };
  entry.text = result.content?.[0]?.text;
  entry.content = result.content;
  if (!result.isError) {
    entry.schemaValid = validators[name](result.structuredContent);
    entry.schemaErrors = validators[name].errors;
    entry.textMatches = JSON.stringify(JSON.parse(entry.text)) === JSON.stringify(result.structuredContent);
  }
  report.calls.push(entry);
  return entry;
}


const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const ENDED = ["succeeded", "failed", "cancelled", "infrastructure_failed"];

// Polls list_automation_runs until the job's newest run ended; returns that run.
async function awaitRun(jobId) {
  for (let i = 0; i < 360; i++) {
    const runs = (await call("list_automation_runs", { job_id: jobId })).structuredContent?.runs ?? [];
    if (runs.length && ENDED.includes(runs[0].status)) return runs[0];
    await sleep(500);
  }
  return undefined;
}

// Polls list_sandbox_jobs until the job ended (its run is recorded just before it).
async function awaitJob(jobId) {
  for (let i = 0; i < 60; i++) {
    const jobs = (await call("list_sandbox_jobs", {})).structuredContent?.jobs ?? [];
    const job = jobs.find((j) => j.job_id === jobId);
    if (job && ENDED.includes(job.status)) return job;
    await sleep(250);
  }
  return undefined;
}

if (scenario === "jobs") {
  const args = { command: "echo from-mcp $ADAPT_JOB_ATTEMPT", egress: "none", idempotency_key: "mcp-job" };
  const job = await call("submit_sandbox_job", args);
  const jobId = job.structuredContent?.job_id ?? "job_none";
  await call("submit_sandbox_job", args);
  const run = await awaitRun(jobId);
  await awaitJob(jobId);
  await call("get_automation_run", { run_id: run?.run_id ?? "run_none" });
  await call("list_sandbox_jobs", {});
  await call("cancel_sandbox_job", { job_id: jobId });
  await call("cancel_automation_run", { run_id: run?.run_id ?? "run_none" });
  await call("get_automation_run", { run_id: "run_doesnotexist" });
  await call("delete_sandbox_job", { job_id: jobId });
}

if (scenario === "flow") {
  await call("register_user", {});
  await call("get_billing_account", {});
  await call("get_user_database", {});  // not_created: a status, never a host or password
  await call("list_sandbox_environments", {});
  await call("list_gpu_types", {});
  await call("create_gpu_sandbox", { gpu_type: "l4-3gb" });
  await call("get_sandbox", { sandbox_id: "sbx_doesnotexist" });
  await call("create_sandbox", { image: "debian:12", memory_gib: 0.5, unknown_thing: 1 });
  const created = await call("create_sandbox", { image: "debian:12", memory_gib: 0.5, name: "mcp-flow" });
  const id = created.structuredContent.sandbox_id;
  report.sandbox_id = id;
  let ready = created.structuredContent.ready;
  for (let i = 0; i < 5 && !ready; i++)
    ready = (await call("wait_for_sandbox", { sandbox_id: id })).structuredContent.ready;
  await call("wait_for_sandbox", { sandbox_id: id, timeout_seconds: 5 });  // ready: returns at once
  await call("get_sandbox", { sandbox_id: id });
  await call("list_sandboxes", { query: "mcp-flow" });
  await call("run_command", { sandbox_id: id, command: "echo hello; echo oops >&2; exit 3" });
  const progress = [];
  const py = await call(
    "run_python",
    {
      sandbox_id: id,
      code: "import time\nfor i in range(4):\n    print('tick', i, flush=True)\n    time.sleep(1)\nprint('done')\n",
      wait_seconds: 1,
    },
    { onprogress: (p) => progress.push(p) },
  );
  report.progress = progress;
  let result = py.structuredContent;
  for (let i = 0; i < 60 && !result.done; i++)
    result = (await call("get_command_result", { request_id: result.request_id, wait_seconds: 2 })).structuredContent;
  report.python = result;
  await call("run_command", { sandbox_id: id, command: "printf 'note: caf\\303\\251\\n' > /tmp/mcp-note.txt; printf 'bin\\000ary' > /tmp/mcp-binary" });
  await call("read_workspace_file", { sandbox_id: id, workspace_path: "/tmp/mcp-note.txt" });
  await call("read_workspace_file", { sandbox_id: id, workspace_path: "/tmp/mcp-binary" });
  await call("list_public_apps", {});
  const app = await call("expose_sandbox_app", { sandbox_id: id, port: 8000 });
  await call("list_public_apps", {});
  await call("disable_sandbox_app", { sandbox_id: id, app_id: app.structuredContent?.app_id ?? "none" });
  await call("list_public_apps", {});
  // Object storage: artifacts, text reads, links, a refused secret, a site, attachment.
  await call("run_command", { sandbox_id: id, command: "mkdir -p /workspace && printf 'report\\n' > /workspace/mcp-report.txt && printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\\nabc\\n' > /workspace/notes.txt && printf '<h1>hi</h1>' > /workspace/index.html" });
  await call("save_workspace_file_to_object_storage", { sandbox_id: id, workspace_path: "mcp-report.txt" });
  report.secret = await call("save_workspace_file_to_object_storage", { sandbox_id: id, workspace_path: "notes.txt" });
  await call("download_workspace_artifact", { sandbox_id: id, workspace_path: "/workspace/mcp-report.txt" });
  await call("list_object_artifacts", { sandbox_id: id });
  await call("read_object_text_artifact", { sandbox_id: id, name: "mcp-report.txt" });
  await call("list_object_storage", {});
  await call("read_object_storage_text", { key: `artifacts/${id}/mcp-report.txt` });
  await call("download_object_artifact", { key: `artifacts/${id}/mcp-report.txt` });
  await call("save_workspace_file_to_object_storage", { sandbox_id: id, workspace_path: "index.html", key: "mcp-site/index.html" });
  await call("publish_static_website", { source: "mcp-site" });
  // A production copy of /workspace: built, deployed, listed, scaled to none and deleted.
  const deployed = await call("deploy_sandbox_app", {
    sandbox_id: id, name: "mcp-flow", source_path: "/workspace", build_command: "echo built > built.txt",
    start_command: "exec python3 -m http.server 8000", port: 8000,
  });
  const deployedId = deployed.structuredContent?.app_id ?? "app_none";
  await call("list_public_apps", {});
  await call("scale_deployed_app", { app_id: deployedId, replicas: 0 });
  await call("delete_deployed_app", { app_id: deployedId });
  // The attach restarts the running sandbox and answers once it runs again (ready), so the
  // stop that follows finds it running.
  await call("attach_sandbox_object_storage", { sandbox_id: id });
  const stopped = await call("stop_sandbox", { sandbox_id: id });
  await call("get_checkpoint_operation", { operation_id: stopped.structuredContent?.operation_id ?? "none" });
  await call("start_sandbox", { sandbox_id: id });
  await call("create_persistent_storage", { name: "mcp-flow-data", size_gib: 0.125 });
  await call("list_persistent_storage", {});
  await call("delete_persistent_storage", { name: "mcp-flow-data", confirm: "wrong" });
  await call("delete_persistent_storage", { name: "mcp-flow-data", confirm: "mcp-flow-data" });
  // Jobs: four sleepers take the organization's slots, so a fifth waits and can be cancelled.
  const sleepers = [];
  for (let i = 0; i < 4; i++)
    sleepers.push((await call("submit_sandbox_job", { command: "sleep 60", egress: "none" })).structuredContent?.job_id);
  const queued = (await call("submit_sandbox_job", { command: "true" })).structuredContent?.job_id ?? "job_none";
  await call("cancel_sandbox_job", { job_id: queued });
  await call("list_sandbox_jobs", {});
  await call("delete_sandbox_job", { job_id: queued });
  for (const sleeper of sleepers) {
    let runId;
    for (let i = 0; i < 60 && !runId; i++) {
      const runs = (await call("list_automation_runs", { job_id: sleeper })).structuredContent?.runs ?? [];
      runId = runs[0]?.run_id;
      if (!runId) await sleep(250);
    }
    await call("cancel_automation_run", { run_id: runId ?? "run_none" });
    await call("get_automation_run", { run_id: runId ?? "run_none" });
  }
  // Automations: a schedule on the flow's sandbox, paused with the version it answered, deleted.
  const automation = (await call("create_sandbox_automation", { sandbox_id: id, command: "true", interval_seconds: 3600 })).structuredContent;
  const automationId = automation?.automation_id ?? "aut_none";
  await call("list_sandbox_automations", {});
  await call("set_sandbox_automation_enabled", { automation_id: automationId, enabled: false, version: automation?.version ?? 1 });
  await call("delete_sandbox_automation", { automation_id: automationId });
  await call("delete_sandbox_keep_storage", { sandbox_id: id, confirm: id });
  await call("delete_sandbox", { sandbox_id: id });
}

if (scenario === "calls") {
  // ADAPT_MCP_CALLS: a JSON list of [tool, arguments], called in order (the tests check the
  // report's calls).
  for (const [name, args] of JSON.parse(process.env.ADAPT_MCP_CALLS || "[]")) await call(name, args);
}

if (scenario === "checkpoint") {
  // A durable sandbox stopped and started, each operation polled until it is finished.
  const created = await call("create_sandbox", { image: "debian:12", startup_class: "durable", name: "mcp-checkpoint" });
  const id = created.structuredContent.sandbox_id;
  report.sandbox_id = id;
  let ready = created.structuredContent.ready;
  for (let i = 0; i < 5 && !ready; i++)
    ready = (await call("wait_for_sandbox", { sandbox_id: id })).structuredContent.ready;
  await call("get_checkpoint_operation", { operation_id: "op_doesnotexist0000000" });
  const poll = async (opId) => {
    for (let i = 0; i < 600; i++) {
      const op = await call("get_checkpoint_operation", { operation_id: opId });
      if (op.isError || ["Completed", "Failed"].includes(op.structuredContent.phase)) return op;
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const stopped = await call("stop_sandbox", { sandbox_id: id });
  await poll(stopped.structuredContent.operation_id);
  const started = await call("start_sandbox", { sandbox_id: id });
  await poll(started.structuredContent.operation_id);
  ready = false;
  for (let i = 0; i < 5 && !ready; i++)
    ready = (await call("wait_for_sandbox", { sandbox_id: id })).structuredContent.ready;
}

if (scenario === "account") {
  report.before = await call("get_billing_account", {});
  report.first = await call("register_user", {});
  report.second = await call("register_user", {});
  report.after = await call("get_billing_account", {});
  report.refused = await call("create_sandbox", { image: "debian:12", name: "over-the-limit" });
}

if (scenario === "cancel") {
  const created = await call("create_sandbox", { image: "debian:12", name: "mcp-cancel" });
  const id = created.structuredContent.sandbox_id;
  report.sandbox_id = id;
  let ready = created.structuredContent.ready;
  for (let i = 0; i < 5 && !ready; i++)
    ready = (await call("wait_for_sandbox", { sandbox_id: id })).structuredContent.ready;
  const controller = new AbortController();
  setTimeout(() => controller.abort("test cancels"), 2000);
  try {
    await call("run_command", { sandbox_id: id, command: "sleep 45", wait_seconds: 60 }, { signal: controller.signal });
    report.cancelled = false;
  } catch (e) {
    report.cancelled = true;
    report.cancelError = String(e);
  }
  // The session still works after a cancellation.
  report.pingAfterCancel = await client.ping();
}

await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
