"""Drives a real adaptd and the adapt CLI for the end-to-end tests (standard library only).

`Daemon` starts adaptd on a free loopback port with its own state directory and speaks its REST
API; `Client` is one API key's view of it. Both are created by the fixtures in conftest.py.
"""

import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest
import uuid
from concurrent.futures import ThreadPoolExecutor

from host_state import (  # noqa: F401  (re-exported: the tests reach them as harness.X)
    RUNSC, BASE_PARENT, BASE_PREFIX, OWNER_FILE, NETWORKS_FILE, KEPT_FILE, process_identity,
    sweep_abandoned_bases, sweep_abandoned_bases_once, runsc_root, runsc_containers,
    mounts_under, cgroups_named, processes_mentioning, netns_named, remove_network, leftovers,
    force_cleanup)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD_DIR = os.path.abspath(os.environ.get("ADAPT_BUILD_DIR", os.path.join(REPO, "build")))
IMAGES_DIR = os.path.abspath(os.environ.get("ADAPT_IMAGES_DIR", os.path.join(BUILD_DIR, "images")))
ADAPTD = os.path.join(BUILD_DIR, "bin", "adaptd")
ADAPT = os.path.join(BUILD_DIR, "bin", "adapt")

# Sandboxes boot in about a second here, but the machine has two cores and gVisor's ptrace
# platform is slow: every wait is generous and no test asserts speed.
START_TIMEOUT = 60
END_TIMEOUT = 180
HTTP_TIMEOUT = 120

TERMINAL = ("completed", "failed", "deleted", "unresolved")


def free_port():
    """A free loopback port below the kernel's ephemeral range: a port chosen here and
    bound later (a daemon's restart on the same port) is never handed to a listener on
    port 0 in between, in this process or in the shard running beside it."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            ephemeral_low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral_low = 32768
    low = 10000 if ephemeral_low > 12000 else 1024
    for _ in range(200):
        port = random.randrange(low, ephemeral_low)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError("no free port in %d-%d" % (low, ephemeral_low - 1))


def latest_operation_id(state_dir, sandbox_id, kind):
    """The id of the sandbox's latest operation of `kind`, read from adapt.db (read-only): for
    a test whose crash cut the answer that would have carried it."""
    import sqlite3

    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(state_dir, "adapt.db"), uri=True)
    try:
        row = db.execute("SELECT id FROM operations WHERE sandbox_id = ? AND kind = ? "
                         "ORDER BY seq DESC LIMIT 1", (sandbox_id, kind)).fetchone()
    finally:
        db.close()
    assert row, "no %s operation recorded for %s" % (kind, sandbox_id)
    return row[0]


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


class Client:
    """One API key's view of a running adaptd."""

    def __init__(self, daemon, key, org_id=None):
        self.daemon = daemon
        self.key = key
        self.org_id = org_id

    # --- raw HTTP ----------------------------------------------------------------------------
    def request(self, method, path, body=None, key=None, headers=None, raw=None, timeout=HTTP_TIMEOUT):
        """Sends one request; returns (status, parsed JSON or None, raw body bytes, headers).

        body is encoded as JSON; raw (bytes or str) is sent as is instead. key=None uses this
        client's key, key="" sends no Authorization header.
        """
        hdrs = {"Accept": "application/json"}
        k = self.key if key is None else key
        if k:
            hdrs["Authorization"] = "Bearer " + k
        data = None
        if raw is not None:
            data = raw.encode() if isinstance(raw, str) else raw
            hdrs["Content-Type"] = "application/json"
        elif body is not None:
            data = json.dumps(body).encode()
            hdrs["Content-Type"] = "application/json"
        if headers:
            hdrs.update(headers)
        conn = http.client.HTTPConnection("127.0.0.1", self.daemon.port, timeout=timeout)
        try:
            try:
                conn.request(method, path, body=data, headers=hdrs)
            except (BrokenPipeError, ConnectionResetError):
                # The server may answer (413) and close before it has read a large body.
                pass
            resp = conn.getresponse()
            payload = resp.read()
            status = resp.status
            rheaders = {k.lower(): v for k, v in resp.getheaders()}
        finally:
            conn.close()
        parsed = None
        if payload:
            try:
                parsed = json.loads(payload)
            except ValueError:
                parsed = None
        return status, parsed, payload, rheaders

    def api(self, method, path, body=None, key=None, headers=None, raw=None):
        """Returns (status, JSON body or None)."""
        status, parsed, _, _ = self.request(method, path, body=body, key=key, headers=headers, raw=raw)
        return status, parsed

    # --- sandboxes ---------------------------------------------------------------------------
    def create(self, body=None, headers=None, expect=201):
        status, sbx = self.api("POST", "/v1/sandboxes", body if body is not None else {}, headers=headers)
        assert status == expect, "POST /v1/sandboxes %r -> %s %r" % (body, status, sbx)
        if status == 201:
            self.daemon.created.append((self, sbx["id"]))
        return sbx

    def get(self, sandbox_id):
        status, sbx = self.api("GET", "/v1/sandboxes/" + sandbox_id)
        assert status == 200, "GET %s -> %s %r" % (sandbox_id, status, sbx)
        return sbx

    def wait_for_status(self, sandbox_id, statuses, timeout=END_TIMEOUT):
        """Polls until the sandbox's status is one of statuses; returns the sandbox."""
        if isinstance(statuses, str):
            statuses = (statuses,)
        deadline = time.monotonic() + timeout
        sbx = None
        while True:
            sbx = self.get(sandbox_id)
            if sbx["status"] in statuses:
                return sbx
            if time.monotonic() > deadline:
                raise AssertionError(
                    "sandbox %s still %r after %s s, wanted %r: %s"
                    % (sandbox_id, sbx["status"], timeout, statuses, json.dumps(sbx)[:2000])
                )
            time.sleep(0.25)

    def wait_end(self, sandbox_id, timeout=END_TIMEOUT):
        return self.wait_for_status(sandbox_id, TERMINAL, timeout)

    def run(self, argv=None, timeout=END_TIMEOUT, **fields):
        """Creates a command-mode sandbox (or whatever `startup` says) and waits for its end."""
        body = dict(fields)
        if argv is not None:
            startup = dict(body.pop("startup", {}))
            startup.setdefault("mode", "command")
            startup["argv"] = argv
            body["startup"] = startup
        sbx = self.create(body)
        return self.wait_end(sbx["id"], timeout)

    def delete(self, sandbox_id, timeout=END_TIMEOUT):
        """Deletes and waits until the record says deleted; returns the DELETE status."""
        status, body = self.api("DELETE", "/v1/sandboxes/" + sandbox_id)
        assert status in (202, 204), "DELETE %s -> %s %r" % (sandbox_id, status, body)
        self.wait_for_status(sandbox_id, "deleted", timeout)
        return status

    def list_all(self, query=None, limit=200):
        """Every listed sandbox, following nextCursor."""
        items, cursor = [], None
        for _ in range(1000):
            path = "/v1/sandboxes?limit=%d" % limit
            if query is not None:
                path += "&query=" + urllib.request.quote(query)
            if cursor:
                path += "&cursor=" + urllib.request.quote(cursor)
            status, page = self.api("GET", path)
            assert status == 200, "GET %s -> %s %r" % (path, status, page)
            items.extend(page["items"])
            cursor = page.get("nextCursor")
            if not cursor:
                return items
        raise AssertionError("list pagination did not end")

    # --- CLI ---------------------------------------------------------------------------------
    def cli(self, *args, input=None, timeout=HTTP_TIMEOUT, env=None):
        """Runs the adapt CLI against this daemon with this key; returns CompletedProcess."""
        assert os.access(ADAPT, os.X_OK), "adapt CLI not built at %s" % ADAPT
        e = dict(os.environ)
        e.update({"ADAPT_URL": self.daemon.url, "ADAPT_API_KEY": self.key})
        e.pop("ADAPT_CONFIG", None)
        if env:
            e.update(env)
        return subprocess.run(
            [ADAPT, *args], input=input, capture_output=True, text=True, timeout=timeout, env=e
        )


def delete_concurrently(targets):
    """Sends DELETE for each (client, sandbox id) at once, from a few threads: a DELETE
    answers when the teardown is done or after some seconds, so one after another they add
    up. Returns, per target, whether the delete was accepted; never raises."""
    def one(target):
        client, sid = target
        try:
            return client.api("DELETE", "/v1/sandboxes/" + sid)[0] in (202, 204)
        except Exception:
            return False

    if len(targets) <= 1:
        return [one(t) for t in targets]
    with ThreadPoolExecutor(max_workers=min(8, len(targets))) as pool:
        return list(pool.map(one, targets))


_daemon_count = [0]


class Daemon:
    """A real adaptd with its own state directory, on a free loopback port."""

    def __init__(self, base_dir=None, extra_args=None, allow_registries=("127.0.0.1",),
                 images_dir=IMAGES_DIR):
        # Every adaptd of the tests gets its own nftables table and address pool, so that
        # several can run side by side; `dns` never names a real resolver.
        n = _daemon_count[0] = _daemon_count[0] + 1
        self.network_name = "e2e%dx%d" % (os.getpid() % 100000, n)
        # The pytest processes of one run (scripts/test.sh: three) set ADAPT_E2E_SHARD
        # 0..N-1 and ADAPT_E2E_SHARDS=N: their second octets differ modulo N, so their pools
        # never overlap. Within one process every adaptd's pool differs too: sixteen /20s per
        # second octet, then the shard's next octet (the session's adaptd lives all along, and
        # a seventeenth adaptd sharing its pool had its replicas' addresses routed to it).
        shard = os.environ.get("ADAPT_E2E_SHARD")
        shards = int(os.environ.get("ADAPT_E2E_SHARDS", "2"))
        if shard is None:
            octet = 100 + os.getpid() % 100
            step = 2
        else:
            octet = 100 + (os.getpid() % (100 // shards)) * shards + int(shard) % shards
            step = shards
        octet += step * (n // 16)
        assert octet <= 255, "more adaptds than address pools in one test process"
        self.network_pool = "10.%d.%d.0/20" % (octet, (n % 16) * 16)
        self.dns = "203.0.113.53"
        self.extra_args = list(extra_args or [])
        self.images_dir = images_dir
        # The test registries listen on loopback, which adaptd refuses to pull from unless
        # allowed (test_images_ssrf.py allows one port only).
        for host in allow_registries:
            self.extra_args += ["--allow-registry", host]
        sweep_abandoned_bases_once()
        self.base = base_dir or tempfile.mkdtemp(prefix=BASE_PREFIX, dir=BASE_PARENT)
        if not base_dir:
            with open(os.path.join(self.base, OWNER_FILE), "w") as f:
                f.write(process_identity(os.getpid()))
        self.state_dir = os.path.join(self.base, "state")
        self.log_path = os.path.join(self.base, "adaptd.log")
        self.proc = None
        self.port = None
        self.admin = None
        self.clients = []
        self.created = []

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def start(self, port=None):
        assert os.access(ADAPTD, os.X_OK), "adaptd not built at %s" % ADAPTD
        assert os.path.isdir(os.path.join(self.images_dir, "debian_12", "rootfs")), (
            "default image missing: run scripts/build-image.sh %s" % self.images_dir
        )
        self.port = port or free_port()
        # What a sweep of an abandoned base removes besides its mounts (sweep_abandoned_bases).
        with open(os.path.join(self.base, NETWORKS_FILE), "a") as f:
            f.write(self.network_name + "\n")
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [
                ADAPTD,
                "--state-dir", self.state_dir,
                "--images-dir", self.images_dir,
                "--listen", "127.0.0.1:%d" % self.port,
                "--network-name", self.network_name,
                "--network-pool", self.network_pool,
                "--dns", self.dns,
                "--ingress-http", "127.0.0.1:0",
                "--ingress-https", "127.0.0.1:0",
                "--storage-listen", "0.0.0.0:0",
                *self.extra_args,
            ],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise AssertionError("adaptd exited with %s during start-up:\n%s" % (self.proc.returncode, self.log_tail()))
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=5) as r:
                    if r.status == 200 and json.loads(r.read()).get("status") == "ok":
                        break
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise AssertionError("adaptd did not answer /healthz in %s s:\n%s" % (START_TIMEOUT, self.log_tail()))
            time.sleep(0.2)
        with open(os.path.join(self.state_dir, "admin.key")) as f:
            key = f.read().strip()
        assert key, "empty admin.key"
        if self.admin is None:
            self.admin = Client(self, key)
            self.clients.append(self.admin)
        else:
            self.admin.key = key
        return self

    def log_tail(self, n=60):
        try:
            with open(self.log_path, "rb") as f:
                return b"\n".join(f.read().splitlines()[-n:]).decode("utf-8", "replace")
        except OSError:
            return "(no log)"

    def new_org(self, name=None):
        """Creates an organization and a key for it through the admin API; returns its Client."""
        status, org = self.admin.api("POST", "/v1/orgs", {"name": name or unique("org")})
        assert status == 201, "POST /v1/orgs -> %s %r" % (status, org)
        status, key = self.admin.api("POST", "/v1/orgs/%s/keys" % org["id"], {"name": "e2e"})
        assert status == 201, "POST /v1/orgs/%s/keys -> %s %r" % (org["id"], status, key)
        client = Client(self, key["key"], org["id"])
        self.clients.append(client)
        return client

    def delete_everything(self, timeout=END_TIMEOUT):
        """Deletes every sandbox of every known key and waits for them to be deleted. Apps and
        automations go first: an app replaces a replica deleted under it, and an automation
        may start a sandbox at any moment. Sandboxes made while the first round ran (a replica
        an app started just before its delete) are deleted in a second round."""
        for client in self.clients:
            for path in ("/v1/apps", "/v1/automations"):
                try:
                    status, page = client.api("GET", path + "?limit=200")
                    for item in page.get("items", []) if status == 200 else []:
                        client.api("DELETE", "%s/%s" % (path, item["id"]))
                except Exception:  # the daemon may be broken, or the key an admin's
                    pass
        deadline = time.monotonic() + timeout
        deleted = set()
        for _ in range(2):
            targets = []
            for client in self.clients:
                ids = set()
                try:
                    ids.update(s["id"] for s in client.list_all())
                except Exception:  # the daemon may be broken; still try what we created
                    pass
                ids.update(i for c, i in self.created if c is client)
                targets.extend((client, sid) for sid in sorted(ids - deleted))
            if not targets:
                break
            deleted.update(sid for _, sid in targets)
            pending = [t for t, ok in zip(targets, delete_concurrently(targets)) if ok]
            for client, sid in pending:
                while time.monotonic() < deadline:
                    try:
                        status, sbx = client.api("GET", "/v1/sandboxes/" + sid)
                        if status != 200 or sbx["status"] == "deleted":
                            break
                    except Exception:
                        break
                    time.sleep(0.25)

    def kill(self):
        """SIGKILL, as a crash would."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)

    def stop(self, timeout=60):
        """SIGTERM, then SIGKILL if it does not exit in time. Returns the exit status."""
        if not self.proc:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.dump_threads()
                self.proc.kill()
                self.proc.wait(timeout=30)
        return self.proc.returncode

    HUNG_FILE = "threads-when-sigterm-timed-out.txt"

    def dump_threads(self):
        """Every thread's stack of an adaptd that did not stop on SIGTERM (where gdb is
        installed), into its base dir, which close then keeps: a hung stop says nothing else
        of why."""
        gdb = shutil.which("gdb")
        with open(os.path.join(self.base, self.HUNG_FILE), "w") as out:
            if not gdb:
                out.write("no gdb on this machine: no stacks\n")
                return
            subprocess.run([gdb, "-p", str(self.proc.pid), "-batch", "-ex", "thread apply all bt"],
                           stdout=out, stderr=subprocess.STDOUT, timeout=120, check=False)

    def close(self, keep=False):
        """Deletes all sandboxes, stops adaptd, removes whatever it left behind."""
        if self.proc and self.proc.poll() is None:
            self.delete_everything()
        self.stop()
        # A stop that needed SIGKILL keeps the log and the threads' stacks for reading.
        keep = keep or os.path.exists(os.path.join(self.base, self.HUNG_FILE))
        left = leftovers(self.state_dir)
        left["netns"] = netns_named(self.network_name + "-")
        force_cleanup(self.state_dir)
        # The rules outlive adaptd on purpose (a restart finds them); a test daemon's go now.
        remove_network(self.network_name)
        if not keep and not leftovers(self.state_dir)["mounts"]:
            subprocess.run(["rm", "-rf", "--one-file-system", self.base], check=False)
        elif keep:
            open(os.path.join(self.base, KEPT_FILE), "w").close()
        return left


# --- Server-Sent Events -----------------------------------------------------------------------

class EventStream:
    """Reads an SSE stream with a deadline. Use as a context manager."""

    def __init__(self, client, path, timeout=END_TIMEOUT):
        self.conn = http.client.HTTPConnection("127.0.0.1", client.daemon.port, timeout=timeout)
        self.conn.request("GET", path, headers={"Authorization": "Bearer " + client.key, "Accept": "text/event-stream"})
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.content_type = self.resp.getheader("Content-Type", "")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.conn.close()

    def events(self):
        """Yields dicts {id, event, data (parsed JSON when it is)} until the stream ends."""
        event = {}
        data = []
        while True:
            line = self.resp.fp.readline()
            if not line:
                return
            line = line.decode("utf-8").rstrip("\r\n")
            if line == "":
                if data or event:
                    text = "\n".join(data)
                    try:
                        event["data"] = json.loads(text)
                    except ValueError:
                        event["data"] = text
                    yield event
                event, data = {}, []
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if field == "data":
                data.append(value)
            elif field in ("id", "event", "retry"):
                event[field] = value


def run_command(client, sid, expect=200, **body):
    """POSTs a command to sandbox `sid` and asserts the answer's status."""
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % sid, body)
    assert status == expect, "POST commands %.300r -> %s %r" % (body, status, cmd)
    return cmd


def env_values(client, sid, *names):
    """The values of the sandbox's environment variables `names`, as the sandbox has them.
    adapt redacts every environment value of 3 characters or more from a command's output, so
    they are printed one character at a time (a JSON list): no value can match there, where
    a reversed value still could (a palindromic port was redacted once)."""
    code = "import json,os,sys;print(json.dumps([list(os.environ[n]) for n in sys.argv[1:]]))"
    cmd = run_command(client, sid, argv=["python3", "-c", code, *names], waitSeconds=30)
    assert cmd["exitCode"] == 0, (cmd["stdout"], cmd["stderr"])
    values = ["".join(chars) for chars in json.loads(cmd["stdout"])]
    return values[0] if len(values) == 1 else values


def wait_for_agent(client, sid, timeout=30):
    """Runs `true` until the agent serves it: the agent connects just after the start."""
    deadline = time.monotonic() + timeout
    while True:
        cmd = run_command(client, sid, argv=["true"], waitSeconds=30)
        if cmd["servedBy"] == "agent":
            return
        assert cmd["servedBy"] == "runsc-exec", cmd
        assert time.monotonic() < deadline, "the agent never connected"
        time.sleep(0.2)


def poll_command(client, sid, cid, timeout=60):
    """Polls a command until it is no longer running; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        status, cmd = client.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, cid))
        assert status == 200, (status, cmd)
        if cmd["status"] != "running":
            return cmd
        assert time.monotonic() < deadline, "command still running: %r" % cmd
        time.sleep(0.2)


# --- a module's own adaptd ---------------------------------------------------------------------

def module_daemon(extra_args=None):
    """A fixture (bind it as `d`): an adaptd of the module's own, closed at the module's end
    with none of its network namespaces left."""
    @pytest.fixture(scope="module")
    def d():
        daemon = Daemon(extra_args=extra_args)
        daemon.start()
        yield daemon
        left = daemon.close()
        assert not left["netns"], left
    return d


@pytest.fixture(scope="module")
def module_org(d):
    """A fixture (bind it as `client`): an organization of the module's adaptd."""
    return d.new_org()
