// The TypeScript SDK's e2e scenarios, run by tests/e2e/test_sdk_typescript.py with system
// node: `node scenarios.mjs NAME`, ADAPT_URL and ADAPT_API_KEY set. Each prints one JSON line
// of what it observed, which the pytest side asserts; an exception exits non-zero.
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, openSync, writeSync, closeSync } from "node:fs";

import * as adapt from "../dist/index.js";

const MIB = 1 << 20;
const name = process.argv[2];
const out = {};

function errorInfo(e) {
  return { cls: e?.constructor?.name, code: e?.code, field: e?.field ?? null, status: e?.status ?? null, message: String(e?.message) };
}

async function caught(fn) {
  try {
    await fn();
    return { cls: null };
  } catch (e) {
    return errorInfo(e);
  }
}

async function sha256File(path) {
  const h = createHash("sha256");
  for await (const chunk of createReadStream(path)) h.update(chunk);
  return h.digest("hex");
}

const scenarios = {
  async basic() {
    const sb = await adapt.Sandbox.create({ name: "sdk-ts", memoryMiB: 512, labels: { team: "sdk" } });
    try {
      out.id = sb.id;
      out.status = sb.status;
      out.memoryMiB = sb.info.memoryMiB;
      out.labels = sb.info.labels;
      out.echo = await sb.commands.run(["echo", "hello"]);
      out.shell = await sb.commands.run("echo out; echo err >&2; exit 3");
      out.check = await caught(() => sb.commands.run("exit 3", { check: true }));
      await sb.files.mkdir("/tmp/sdk", true);
      out.written = await sb.files.write("/tmp/sdk/note.txt", "from typescript", "0600");
      out.text = await sb.files.readText("/tmp/sdk/note.txt");
      const binary = new Uint8Array(768).map((_, i) => i % 256);
      await sb.files.write("/tmp/sdk/bin", binary);
      out.binaryRoundTrip = Buffer.from(await sb.files.read("/tmp/sdk/bin")).equals(Buffer.from(binary));
      out.entries = await sb.files.list("/tmp/sdk");
      out.stat = await sb.files.stat("/tmp/sdk/note.txt");
      await sb.files.remove("/tmp/sdk", true);
      out.existsAfterRemove = await sb.files.exists("/tmp/sdk");
      out.python = await sb.runPython("import sys; print(sys.version_info[0]); sys.exit(4)");
    } finally {
      await sb[Symbol.asyncDispose]();
    }
  },

  async stream() {
    const sb = await adapt.Sandbox.create();
    const chunks = [];
    const r = await sb.commands.run("echo first; sleep 3; echo second >&2; echo third", {
      onStdout: (t) => chunks.push(["out", t, Date.now()]),
      onStderr: (t) => chunks.push(["err", t, Date.now()]),
    });
    out.result = r;
    out.firstChunkLeadMs = Date.now() - chunks[0][2];
    out.streamedStdout = chunks.filter((c) => c[0] === "out").map((c) => c[1]).join("");
    out.streamedStderr = chunks.filter((c) => c[0] === "err").map((c) => c[1]).join("");
    const handle = await sb.commands.start(["sh", "-c", "sleep 2; echo done"]);
    out.startedStatus = handle.result.status;
    out.waited = await handle.wait();
    const sleeper = await sb.commands.start(["sleep", "600"]);
    out.killed = await sleeper.kill();
    const listed = [];
    for await (const c of sb.commands.list(1)) listed.push(c.id);
    out.listed = listed.slice(0, 3);
    out.expectedList = [sleeper.id, handle.id, r.id];
    // A command longer than the client's HTTP timeout: adaptd holds the POST up to waitSeconds.
    const short = new adapt.Sandbox(new adapt.Client({ timeoutMs: 3000 }), sb.info);
    out.slow = (await short.commands.run("sleep 6; echo slow")).stdout;
    await sb.delete();
    out.afterDelete = (await sb.refresh()).status;
  },

  async errors() {
    const client = new adapt.Client();
    out.memory = await caught(() => client.sandboxes.create({ memoryMiB: 1 }));
    out.platformLabel = await caught(() => client.sandboxes.create({ labels: { "platform.x": "y" } }));
    out.listed = [];
    for await (const s of client.sandboxes.list()) out.listed.push(s.id);
    const theirs = process.env.OTHER_SANDBOX_ID;
    out.get = await caught(() => client.sandboxes.get(theirs));
    const forged = new adapt.Sandbox(client, { id: theirs, status: "running" });
    out.run = await caught(() => forged.commands.run(["true"]));
    out.read = await caught(() => forged.files.read("/etc/hostname"));
    out.delete = await caught(() => forged.delete());
    out.badKey = await caught(async () => {
      for await (const s of new adapt.Client({ apiKey: "adapt_wrong" }).sandboxes.list()) void s;
    });
    out.unreachable = await caught(() => new adapt.Client({ url: "http://127.0.0.1:1", apiKey: "k", maxRetries: 0 }).sandboxes.get("sbx_x"));
    out.isAdaptError = (await caught(() => client.sandboxes.get(theirs))).cls === "NotFound";
  },

  async pages() {
    const client = new adapt.Client();
    const created = [];
    for (let i = 0; i < 3; i++) created.push(await client.sandboxes.create({ wait: false, name: `page-${i}-${process.pid}` }));
    out.created = created.map((s) => s.id);
    out.listed = [];
    for await (const s of client.sandboxes.list({ pageSize: 2 })) out.listed.push(s.id);
    out.queried = [];
    for await (const s of client.sandboxes.list({ query: `page-1-${process.pid}` })) out.queried.push(s.id);
    for (const s of created) await s.delete({ wait: false });
  },

  async retry() {
    const sb = await new adapt.Client({ url: process.env.PROXY_URL }).sandboxes.create({ wait: false, name: "retried" });
    out.id = sb.id;
  },

  async big() {
    const sb = await adapt.Sandbox.create({ diskMiB: 1024 });
    try {
      const src = process.env.WORK_DIR + "/up.bin";
      const dst = process.env.WORK_DIR + "/down.bin";
      const block = randomBytes(MIB);
      const fd = openSync(src, "w");
      for (let i = 0; i < 100; i++) writeSync(fd, block);
      closeSync(fd);
      out.sha256 = await sha256File(src);
      // RSS growth over each transfer, after a collection: a buffered 100 MiB would show.
      const growth = {};
      async function measured(label, fn) {
        globalThis.gc?.();
        const before = process.memoryUsage().rss;
        let peak = before;
        const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 10);
        try {
          return await fn();
        } finally {
          clearInterval(sampler);
          growth[label] = (Math.max(peak, process.memoryUsage().rss) - before) / MIB;
        }
      }
      out.written = await measured("upload", () => sb.files.upload(src, "/tmp/big.bin"));
      async function* chunks() {
        for await (const c of createReadStream(src, { highWaterMark: MIB })) yield c;
      }
      out.writtenChunked = await measured("chunked", () => sb.files.write("/tmp/big2.bin", chunks()));
      out.downloaded = await measured("download", () => sb.files.download("/tmp/big.bin", dst));
      out.rssGrowthMiB = growth;
      out.downSha256 = await sha256File(dst);
      out.remote = (await sb.commands.run("sha256sum /tmp/big.bin /tmp/big2.bin | cut -d' ' -f1 | uniq")).stdout.split(/\s+/).filter(Boolean);
    } finally {
      await sb.delete();
    }
  },

  async transient() {
    const started = Date.now();
    out.listed = [];
    for await (const s of new adapt.Client({ url: process.env.PROXY_URL }).sandboxes.list()) out.listed.push(s.id);
    out.tookMs = Date.now() - started;
  },

  async transientNoRetry() {
    out.error = await caught(async () => {
      for await (const s of new adapt.Client({ url: process.env.PROXY_URL, maxRetries: 0 }).sandboxes.list()) void s;
    });
  },

  async resources() {
    const client = new adapt.Client();
    const name = process.env.SECRET_NAME;
    out.v1 = (await client.secrets.set(name, "first-value")).version;
    out.v2 = (await client.secrets.set(name, "second-value")).version;
    out.got = (await client.secrets.get(name)).version;
    out.secretNames = [];
    for await (const s of client.secrets.list()) out.secretNames.push(s.name);
    await client.secrets.delete(name);
    out.secretAfterDelete = await caught(() => client.secrets.get(name));
    out.object = await client.objects.put("sdk/a.txt", new TextEncoder().encode("object bytes"), "text/plain");
    out.objectText = new TextDecoder().decode(await client.objects.get("sdk/a.txt"));
    out.exists = [await client.objects.exists("sdk/a.txt"), await client.objects.exists("sdk/none.txt")];
    out.downloadedBytes = await client.objects.download("sdk/a.txt", process.env.WORK_DIR + "/obj.txt");
    out.health = await client.health();
    out.objectKeys = [];
    for await (const o of client.objects.list({ prefix: "sdk/" })) out.objectKeys.push(o.key);
    out.link = await client.objects.link("sdk/a.txt", 60);
    const linkUrl = out.link.url.includes("://") ? out.link.url : client.url + out.link.url;
    out.linkText = await (await fetch(linkUrl)).text();
    out.token = await client.objects.createToken({ name: "sdk", ttlSeconds: 600 });
    out.tokens = (await client.objects.listTokens()).map((t) => [t.id, t.revoked]);
    await client.objects.revokeToken(out.token.id);
    out.tokensAfterRevoke = (await client.objects.listTokens()).filter((t) => t.id === out.token.id).map((t) => t.revoked);
    await client.objects.delete("sdk/a.txt");
    out.objectAfterDelete = await caught(() => client.objects.get("sdk/a.txt"));
    out.volume = await client.storage.create("sdk-notes", 64);
    out.volumeGot = (await client.storage.get("sdk-notes")).id;
    out.storage = [];
    for await (const v of client.storage.list()) out.storage.push([v.name, v.default]);
    await client.storage.delete("sdk-notes");
    out.volumeAfterDelete = await caught(() => client.storage.get("sdk-notes"));
    const sb = await client.sandboxes.create();
    try {
      out.endpoint = await sb.endpoints.create(8000);
      out.endpointIds = (await sb.endpoints.list()).map((e) => e.id);
      await sb.endpoints.delete(out.endpoint.id);
      out.attached = await sb.attachObjectStorage({ ttlSeconds: 600 });
      out.statusAfterAttach = sb.status;
      out.endpointVariable = (await sb.commands.run("echo SANDBOX_STORAGE_ENDPOINT=$SANDBOX_STORAGE_ENDPOINT")).stdout;
      out.endpointsAfterDelete = await sb.endpoints.list();
      out.badPort = await caught(() => sb.endpoints.create(0));
    } finally {
      await sb.delete();
    }
  },

  async extras() {
    const client = new adapt.Client();
    const sb = await client.sandboxes.create();
    try {
      const made = [await sb.endpoints.create(8000), await sb.endpoints.create(8000), await sb.endpoints.create(9000)];
      out.endpointIds = made.map((e) => e.id);
      out.every = await client.sandboxes.endpoints();
      out.removed = await sb.endpoints.deleteByPort(8000);
      out.left = (await sb.endpoints.list()).map((e) => e.id);
      out.removedAgain = await sb.endpoints.deleteByPort(8000);
      out.badPort = await caught(() => sb.endpoints.deleteByPort(0));
      await sb.commands.run("mkdir -p /workspace/out && printf 'report\\n' > /workspace/out/report.txt && printf x > /workspace/.env", { check: true });
      out.artifact = await sb.artifacts.save("out/report.txt", { ttlSeconds: 60 });
      out.artifactText = await (await fetch(out.artifact.url)).text();
      out.mine = await sb.artifacts.save("/workspace/out/report.txt", { key: "sdk/mine.txt" });
      out.mineText = new TextDecoder().decode(await client.objects.get("sdk/mine.txt"));
      out.credential = await caught(() => sb.artifacts.save(".env"));
      out.artifacts = await sb.artifacts.list();
      out.python = await sb.runPython("import sys; print(6 * 7); sys.exit(3)");
      out.pythonById = (await sb.commands.get(out.python.id)).result.stdout;
      const chunks = [];
      out.pythonStreamed = await sb.runPython("print('a', flush=True)\nimport time\ntime.sleep(1)\nprint('b')", {
        onStdout: (t) => chunks.push(t), timeout: 30,
      });
      out.pythonChunks = chunks.join("");
      out.pythonCheck = await caught(() => sb.runPython("raise SystemExit(2)", { check: true }));
      out.pythonCwd = (await sb.runPython("import os; print(os.getcwd())", { cwd: "/tmp" })).stdout;
    } finally {
      await sb.delete();
    }
    // No python3 on the sandbox's PATH: what an image without Python looks like to the run.
    const nopy = await client.sandboxes.create({ env: { PATH: "/tmp/nopy" } });
    try {
      out.nopyId = nopy.id;
      out.noPython = await caught(() => nopy.runPython("print(1)"));
      out.noPythonStreamed = await nopy.runPython("print(1)", { onStderr: () => undefined });
      out.pythonMissing = adapt.PYTHON_MISSING;
    } finally {
      await nopy.delete({ wait: false });
    }
  },

  async images() {
    const client = new adapt.Client();
    const progress = [];
    const pulled = await client.images.pull(process.env.REF, { onProgress: (p) => progress.push(p) });
    out.pulled = pulled;
    out.lastProgress = progress.at(-1);
    out.progressCalls = progress.length;
    const imported = await client.images.importArchive(process.env.ARCHIVE);
    out.imported = imported;
    out.listed = [];
    for await (const i of client.images.list()) out.listed.push(i.id);
    out.runs = [];
    for (const image of [pulled, imported]) {
      const sb = await client.sandboxes.create({ imageId: image.id, startup: { mode: "image" } });
      const info = await sb.waitUntil(["completed"]);
      out.runs.push([info.status, info.startup?.stdout]);
      await sb.delete();
      await client.images.delete(image.id);
    }
    out.afterDelete = await caught(() => client.images.get(pulled.id));
  },

  async lifecycle() {
    const client = new adapt.Client();
    const waited = await client.sandboxes.create({ wait: false });
    out.waitedStatus = (await waited.refresh(60)).status;
    await waited.delete();
    out.gpuTypes = await client.gpuTypes();
    const sb = await client.sandboxes.create({ startupClass: "instant" });
    out.events = [];
    for await (const ev of sb.events()) {
      out.events.push(ev);
      if (ev.status === "running") break;
    }
    out.stopped = await sb.stop();
    out.stopAgain = await caught(() => sb.stop());
    out.started = await sb.start();
    out.echo = (await sb.commands.run(["echo", "back"])).stdout;
    await sb.delete();
    await client.objects.put("web/index.html", new TextEncoder().encode("<h1>sdk</h1>"), "text/html");
    const site = await client.sites.publish("web", "sdk-site");
    out.site = site;
    out.siteIds = [];
    for await (const s of client.sites.list()) out.siteIds.push(s.id);
    out.siteRelease = (await client.sites.get(site.id)).releaseId;
    await client.sites.delete(site.id);
    out.siteAfterDelete = await caught(() => client.sites.get(site.id));
  },

  async fork() {
    const client = new adapt.Client();
    const sb = await client.sandboxes.create({ startupClass: "durable" });
    await sb.files.write("/root/ts.txt", new TextEncoder().encode("from ts\n"));
    out.taken = await sb.createCheckpoint("ts-base", { keep: true });
    const fork = await sb.forkCheckpoint("ts-base");
    out.forkStatus = fork.info.status;
    out.operation = await client.images.operation(fork.info.operationId);
    out.forkId = fork.id;
    out.file = new TextDecoder().decode(await fork.files.read("/root/ts.txt"));
    await fork.delete();
    await sb.delete();
    out.keptAfterDelete = (await sb.listCheckpoints()).map((c) => c.name);
    // The organization's listing, a page of one at a time: the deleted sandbox's kept one.
    out.orgKept = [];
    for await (const c of client.sandboxes.checkpoints({ kept: true, pageSize: 1 })) {
      if (c.sandboxId === sb.id) out.orgKept.push([c.name, c.sandboxDeleted]);
    }
    await sb.deleteCheckpoint("ts-base");
    out.orgAfterDelete = [];
    for await (const c of client.sandboxes.checkpoints({ sandboxId: sb.id })) out.orgAfterDelete.push(c.name);
  },

  async appRollback() {
    const client = new adapt.Client();
    const sb = await client.sandboxes.create({ startupClass: "instant" });
    await sb.commands.run("mkdir -p /workspace/site && echo v1 > /workspace/site/index.html", { check: true });
    const deploy = { sandboxId: sb.id, name: "tsroll", sourcePath: "/workspace/site", startCommand: "exec python3 -m http.server 8000", port: 8000 };
    const first = await client.apps.deploy(deploy);
    try {
      await sb.commands.run("echo v2 > /workspace/site/index.html", { check: true });
      const second = await client.apps.deploy(deploy);
      out.first = first.releaseId;
      out.second = second.releaseId;
      out.sameApp = second.id === first.id;
      // A server wait of 0: the answer is the operation, which rollback() polls to the app.
      out.back = await client.apps.rollback(first.id, undefined, { waitSeconds: 0 });
      out.noneBefore = await caught(() => client.apps.rollback(first.id));
      out.again = await client.apps.rollback(first.id, second.releaseId, { waitSeconds: 0 });
      out.badWait = await caught(() => client.apps.rollback(first.id, undefined, { waitSeconds: 601 }));
    } finally {
      await client.apps.delete(first.id);
      await sb.delete();
    }
  },

  async runEvents() {
    const client = new adapt.Client();
    const job = await client.jobs.submit({ command: "exit 3", maxAttempts: 1 });
    for (let i = 0; i < 600; i++) {
      const now = await client.jobs.get(job.id);
      if (now.status !== "queued" && now.status !== "running") break;
      await new Promise((r) => setTimeout(r, 200));
    }
    out.jobId = job.id;
    out.events = [];
    for await (const ev of client.runs.events({ lastEventId: "0" })) {
      out.events.push(ev);
      if (!["queued", "starting", "running"].includes(ev.status)) break;
    }
  },

  async eventsReset() {
    const client = new adapt.Client();
    try {
      for await (const ev of client.sandboxes.events({ lastEventId: "999999999999" })) out.event = ev;
    } catch (e) {
      out.reset = { ...errorInfo(e), lastEventId: e.lastEventId };
    }
  },

  async alerts() {
    // The first account alert after LAST_EVENT_ID (client.account.alerts()).
    const client = new adapt.Client();
    const controller = new AbortController();
    for await (const ev of client.account.alerts({ lastEventId: process.env.LAST_EVENT_ID, signal: controller.signal })) {
      out.alert = ev;
      controller.abort();
      break;
    }
  },

  async orgs() {
    const admin = new adapt.Client();
    const made = await admin.orgs.create(process.env.ORG_NAME);
    out.made = made;
    out.orgIds = [];
    for await (const o of admin.orgs.list()) out.orgIds.push(o.id);
    const key = await admin.orgs.createKey(made.id, "ci");
    out.key = key;
    const theirs = new adapt.Client({ apiKey: key.key });
    out.theirList = [];
    for await (const s of theirs.sandboxes.list()) out.theirList.push(s.id);
    out.keyIds = [];
    for await (const k of admin.orgs.listKeys(made.id)) out.keyIds.push(k.id);
    await admin.orgs.deleteKey(made.id, key.id);
    out.afterDelete = await caught(async () => {
      for await (const s of theirs.sandboxes.list()) void s;
    });
    out.again = await caught(() => admin.orgs.create(made.name));
  },

  async ownKeys() {
    const client = new adapt.Client();
    const key = await client.keys.create({ name: "ts-own", ttlSeconds: 3600 });
    out.key = key;
    const made = new adapt.Client({ apiKey: key.key });
    out.listed = [];
    for await (const k of made.keys.list()) out.listed.push(k);
    await made.keys.revoke(key.id);
    out.afterRevoke = await caught(async () => {
      for await (const k of made.keys.list()) void k;
    });
    out.again = await caught(() => client.keys.revoke(key.id));
  },

  async startup() {
    // SANDBOX_ID's startup prints, then waits for /tmp/go; the first piece arrives before it ends.
    const sb = await adapt.Sandbox.connect(process.env.SANDBOX_ID);
    out.pieces = [];
    for await (const piece of sb.startupOutput()) {
      out.pieces.push(piece);
      if (out.pieces.length === 1) {
        out.statusAtFirst = (await sb.refresh()).status;
        await sb.commands.run("touch /tmp/go");
        // refresh() replaced info; the stream's end sets it again below.
      }
    }
    out.status = sb.info.status;
    out.stdout = sb.info.startup?.stdout;
    const interactive = await adapt.Sandbox.connect(process.env.INTERACTIVE_ID);
    out.interactive = await caught(async () => {
      for await (const piece of interactive.startupOutput()) void piece;
    });
  },

  async archive() {
    const sb = await adapt.Sandbox.create();
    try {
      await sb.files.uploadArchive(process.env.TAR_IN, "/tmp/tree");
      out.beta = await sb.files.readText("/tmp/tree/d/b.txt");
      out.bytes = await sb.files.downloadArchive("/tmp/tree", process.env.TAR_OUT);
      // GOT's old temporary name is a symlink the test made: never followed.
      out.got = await sb.files.download("/tmp/tree/a.txt", process.env.GOT);
    } finally {
      await sb.delete();
    }
  },
};

if (!scenarios[name]) {
  console.error(`unknown scenario ${name}`);
  process.exit(2);
}
await scenarios[name]();
console.log(JSON.stringify(out));
