#!/usr/bin/env python3
"""Sandbox creation latency: adapt against raw runsc and podman (runtime runsc) on the same root filesystem.

For each side it times, over N sandboxes created one after another:
  create -> running            adapt: POST an interactive sandbox, poll GET every 10 ms until
                               "running". runsc: `runsc create` + `runsc start` of `sleep 1000`,
                               then `runsc state` every 10 ms until "running". podman:
                               `podman run -d` of `sleep 1000`, then `podman inspect` until running.
  create -> command finished   adapt: POST with startup {"mode":"command","argv":["/bin/true"]},
                               poll until "completed". runsc: `runsc run` of /bin/true. podman:
                               `podman run` of /bin/true.
  create -> first command      adapt: POST an interactive sandbox, poll until "running", then
                               POST .../commands {"argv":["/bin/true"]} answered with its result.
                               runsc: create + start of `sleep 1000`, then `runsc exec ... /bin/true`.
                               podman: `podman run -d` of `sleep 1000`, then `podman exec ... /bin/true`.
  warm pool: create -> first command, from a warm pool
                               a second adaptd, started with --warm-pool debian:12=2 after the
                               cold runs: the same create + first command, each create claiming
                               a pooled sandbox (its record must say pool.used); between samples
                               the run waits, untimed, until the pool is full again. Compared
                               with the peers' create -> first command, p50 and p95.
Teardown (DELETE, `runsc delete`, `podman rm`) is not timed. Prints p50/p95 of each side and the
ratios of the p50s, and writes bench/results/create_latency.json. The podman side (podman from
Debian, `--runtime runsc --runtime-flag platform=ptrace --runtime-flag network=none
--network=none`, the image imported once from the same root filesystem) is skipped with a note
when podman is not installed (`--no-podman` skips it too).

Standard library only. Needs root, build/bin/adaptd (scripts/build.sh) and build/images/debian_12
(scripts/build-image.sh build/images). With ADAPT_URL and ADAPT_API_KEY set, it measures that
daemon instead of starting one.
"""

import argparse
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_support import (  # noqa: E402,F401  (re-exported: other benches use them as cl.X)
    REPO, POLL_S, HTTP_TIMEOUT_S, STEP_TIMEOUT_S, BenchError, log, percentile, summarize,
    run_quiet, mounts_under, loop_devices_under, remove_tree)
from runsc_peers import PodmanSide, RunscSide, oci_spec  # noqa: E402,F401

METRICS = (
    ("create_to_running", "create -> running"),
    ("create_to_command_finished", "create -> command finished"),
    ("create_to_first_command", "create -> first command"),
)


# --- adapt ------------------------------------------------------------------------------------

class AdaptClient:
    def __init__(self, url, key):
        self.url = url.rstrip("/")
        self.key = key

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self.key)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S) as resp:
                status, payload = resp.status, resp.read()
        except urllib.error.HTTPError as e:
            status, payload = e.code, e.read()
        return status, json.loads(payload) if payload else None


class AdaptSide:
    """Either a daemon this run starts (and stops) or the one ADAPT_URL names."""

    def __init__(self, args, workdir):
        self.args = args
        self.workdir = workdir
        self.proc = None
        self.state_dir = None
        self.client = None
        self.live = []  # sandbox ids not yet seen deleted
        self.extra_args = []
        self.log_path = None

    def start(self):
        url, key = os.environ.get("ADAPT_URL"), os.environ.get("ADAPT_API_KEY")
        if url and key:
            self.client = AdaptClient(url, key)
            return url
        if not os.access(self.args.adaptd, os.X_OK):
            raise BenchError("adaptd not built at %s (run scripts/build.sh)" % self.args.adaptd)
        self.state_dir = os.path.join(self.workdir, "adaptd-state")
        port = free_port()
        self.log_path = os.path.join(self.workdir, "adaptd.log")
        with open(self.log_path, "wb") as out:
            # Its own session, so the terminal's Ctrl-C reaches only us and cleanup can still use it.
            self.proc = subprocess.Popen(
                [self.args.adaptd, "--listen", "127.0.0.1:%d" % port, "--state-dir", self.state_dir,
                 "--images-dir", self.args.images_dir, "--runsc", self.args.runsc,
                 # Any free port for the storage gateway and ingress, so a second adaptd on the
                 # host is fine.
                 "--storage-listen", "127.0.0.1:0", "--ingress-http", "127.0.0.1:0",
                 "--ingress-https", "127.0.0.1:0",
                 # Its own nftables table and addresses too (adaptd refuses another's).
                 "--network-name", "adaptbench", "--network-pool", "10.87.0.0/16", *self.extra_args],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while not self.log_says("adaptd listening on"):
            if self.proc.poll() is not None:
                raise BenchError("adaptd exited with %s:\n%s" % (self.proc.returncode, self.log_tail()))
            if time.monotonic() > deadline:
                raise BenchError("adaptd not ready after 60 s:\n%s" % self.log_tail())
            time.sleep(0.05)
        with open(os.path.join(self.state_dir, "admin.key")) as f:
            self.client = AdaptClient("http://127.0.0.1:%d" % port, f.read().strip())
        return self.client.url

    def log_says(self, text):
        if not self.log_path:
            return False
        with open(self.log_path, "rb") as f:
            return text.encode() in f.read()

    def log_tail(self, lines=40):
        if not self.proc or not self.log_path:
            return ""
        with open(self.log_path, "rb") as f:
            return b"\n".join(f.read().splitlines()[-lines:]).decode("utf-8", "replace")

    def time_until(self, body, wanted):
        """Seconds from POST to the first GET that shows status `wanted`; deletes the sandbox."""
        start = time.monotonic()
        status, sbx = self.client.call("POST", "/v1/sandboxes", body)
        if status != 201:
            raise BenchError("POST /v1/sandboxes -> %s %s" % (status, sbx))
        sid = sbx["id"]
        self.live.append(sid)
        deadline = start + STEP_TIMEOUT_S
        while sbx["status"] != wanted:
            if sbx["status"] in ("completed", "failed", "unresolved", "deleting", "deleted"):
                raise BenchError("sandbox %s ended %s, wanted %s: %s" % (sid, sbx["status"], wanted, sbx))
            if time.monotonic() > deadline:
                raise BenchError("sandbox %s still %s after %s s" % (sid, sbx["status"], STEP_TIMEOUT_S))
            time.sleep(POLL_S)
            status, sbx = self.client.call("GET", "/v1/sandboxes/" + sid)
            if status != 200:
                raise BenchError("GET /v1/sandboxes/%s -> %s %s" % (sid, status, sbx))
        elapsed = time.monotonic() - start
        startup = sbx.get("startup")
        if startup and startup.get("exitCode") != 0:
            raise BenchError("sandbox %s: startup command did not exit 0: %s" % (sid, startup))
        self.delete(sid)
        return elapsed

    def create_running(self, body, timeout=STEP_TIMEOUT_S):
        """POSTs a sandbox and waits until it runs; returns it (deleted on close)."""
        status, sbx = self.client.call("POST", "/v1/sandboxes", body)
        if status != 201:
            raise BenchError("POST /v1/sandboxes -> %s %s" % (status, sbx))
        self.live.append(sbx["id"])
        deadline = time.monotonic() + timeout
        while sbx["status"] == "provisioning" and time.monotonic() < deadline:
            time.sleep(0.05)
            _, sbx = self.client.call("GET", "/v1/sandboxes/" + sbx["id"])
        if sbx["status"] != "running":
            raise BenchError("sandbox %s is %s, not running" % (sbx["id"], sbx["status"]))
        return sbx

    def delete(self, sid, timeout=STEP_TIMEOUT_S):
        status, body = self.client.call("DELETE", "/v1/sandboxes/" + sid)
        if status not in (202, 204, 404):
            raise BenchError("DELETE %s -> %s %s" % (sid, status, body))
        deadline = time.monotonic() + timeout
        while status != 404:
            status, sbx = self.client.call("GET", "/v1/sandboxes/" + sid)
            if status != 200 or sbx["status"] == "deleted":
                break
            if time.monotonic() > deadline:
                raise BenchError("sandbox %s not deleted after %s s" % (sid, timeout))
            time.sleep(0.1)
        self.live.remove(sid)

    def first_command(self, pooled=False):
        """POST an interactive sandbox, wait for running, run /bin/true in it: seconds."""
        start = time.monotonic()
        status, sbx = self.client.call("POST", "/v1/sandboxes", {"ttlSeconds": 600})
        if status != 201:
            raise BenchError("POST /v1/sandboxes -> %s %s" % (status, sbx))
        if pooled and not (sbx.get("pool") or {}).get("used"):
            raise BenchError("the create did not claim a pooled sandbox: %s" % sbx.get("pool"))
        sid = sbx["id"]
        self.live.append(sid)
        deadline = start + STEP_TIMEOUT_S
        while sbx["status"] != "running":
            if sbx["status"] not in ("provisioning",) or time.monotonic() > deadline:
                raise BenchError("sandbox %s is %s, not running" % (sid, sbx["status"]))
            time.sleep(POLL_S)
            status, sbx = self.client.call("GET", "/v1/sandboxes/" + sid)
        status, result = self.client.call("POST", "/v1/sandboxes/%s/commands" % sid,
                                          {"argv": ["/bin/true"], "waitSeconds": 60})
        elapsed = time.monotonic() - start
        if status != 200 or result.get("exitCode") != 0:
            raise BenchError("command in %s -> %s %s" % (sid, status, result))
        self.delete(sid)
        return elapsed

    def measure(self, metric):
        # A ttl is a backstop should this run die before its own cleanup.
        if metric == "create_to_running":
            return self.time_until({"ttlSeconds": 600}, "running")
        if metric == "create_to_first_command":
            return self.first_command()
        body = {"ttlSeconds": 600, "startup": {"mode": "command", "argv": ["/bin/true"]}}
        return self.time_until(body, "completed")

    def close(self):
        for sid in list(self.live):
            try:
                self.delete(sid, timeout=60)
            except (BenchError, OSError, ValueError) as e:
                log("warning: deleting %s: %s" % (sid, e))
        if not self.proc:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                log("warning: adaptd ignored SIGTERM for 60 s; killing it")
                self.proc.kill()
                self.proc.wait(timeout=30)
        # Whatever a failed delete left behind lives under its state dir.
        root = os.path.join(self.state_dir, "runsc")
        if os.path.isdir(root):
            for cid in run_quiet([self.args.runsc, "--root", root, "list", "-quiet"]).stdout.split():
                log("warning: adaptd left runsc container %s; deleting it" % cid)
                run_quiet([self.args.runsc, "--root", root, "delete", "-force", cid])


class WarmPoolSide(AdaptSide):
    """A second local adaptd with a warm pool for the default image."""

    POOL_SIZE = 2

    def __init__(self, args, workdir):
        super().__init__(args, os.path.join(workdir, "warm"))
        os.makedirs(self.workdir, exist_ok=True)
        self.extra_args = ["--warm-pool", "debian:12=%d" % self.POOL_SIZE]

    def ready_members(self):
        import sqlite3
        db = sqlite3.connect("file:%s?mode=ro" % os.path.join(self.state_dir, "adapt.db"), uri=True,
                             timeout=30)
        try:
            return db.execute("SELECT COUNT(*) FROM pool_members WHERE state = 'ready'").fetchone()[0]
        finally:
            db.close()

    def wait_full(self, timeout=STEP_TIMEOUT_S):
        deadline = time.monotonic() + timeout
        while self.ready_members() < self.POOL_SIZE:
            if time.monotonic() > deadline:
                raise BenchError("the warm pool did not fill in %s s" % timeout)
            time.sleep(0.05)

    def measure(self, metric):
        self.wait_full()
        return self.first_command(pooled=True)


def add_daemon_args(parser, out_name):
    """The flags every benchmark that starts its own adaptd takes."""
    parser.add_argument("--adaptd", default=os.path.join(REPO, "build", "bin", "adaptd"))
    parser.add_argument("--images-dir", default=os.path.join(REPO, "build", "images"))
    parser.add_argument("--runsc", default=os.environ.get("ADAPT_RUNSC", "runsc"))
    parser.add_argument("--out", default=os.path.join(REPO, "bench", "results", out_name + ".json"))


def absolute_daemon_paths(args):
    args.adaptd = os.path.abspath(args.adaptd)
    args.images_dir = os.path.abspath(args.images_dir)
    return args


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- the run ----------------------------------------------------------------------------------

def sample(side, name, metric, n, warmup):
    samples = []
    for i in range(warmup + n):
        elapsed = side.measure(metric)
        if i >= warmup:
            samples.append(elapsed)
        log("  %-5s %-28s %s %7.1f ms" % (name, metric, "warmup" if i < warmup else "%2d/%d " % (i - warmup + 1, n),
                                          elapsed * 1000))
    return summarize(samples)


def print_warm_table(results):
    peers = [p for p in ("runsc", "podman") if p in results]
    a = results["warm_pool"]["create_to_first_command"]
    print("warm pool: create -> first command  p50 %.1f ms  p95 %.1f ms  (target p50 <= 30 ms)"
          % (a["p50_ms"], a["p95_ms"]))
    for p in peers:
        r = results[p]["create_to_first_command"]
        print("  vs %-6s create -> first command  p50 %.1f ms (%.2fx)  p95 %.1f ms (%.2fx)"
              % (p, r["p50_ms"], a["p50_ms"] / r["p50_ms"], r["p95_ms"], a["p95_ms"] / r["p95_ms"]))


def print_table(results):
    peers = [p for p in ("runsc", "podman") if p in results]
    header = ("metric", "adapt p50", "adapt p95") + tuple(
        h for p in peers for h in ("%s p50" % p, "%s p95" % p, "adapt/%s p50" % p))
    rows = []
    for key, label in METRICS:
        a = results["adapt"][key]
        row = (label, "%.1f ms" % a["p50_ms"], "%.1f ms" % a["p95_ms"])
        for p in peers:
            r = results[p][key]
            row += ("%.1f ms" % r["p50_ms"], "%.1f ms" % r["p95_ms"],
                    "%.2fx" % results["ratio_adapt_over_%s_p50" % p][key])
        rows.append(row)
    widths = [max(len(row[i]) for row in rows + [header]) for i in range(len(header))]
    for row in [header] + rows:
        print("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=10, help="sandboxes per metric and side (default 10)")
    p.add_argument("--warmup", type=int, default=1, help="untimed runs first, per metric and side (default 1)")
    p.add_argument("--adaptd", default=os.path.join(REPO, "build", "bin", "adaptd"))
    p.add_argument("--images-dir", default=os.path.join(REPO, "build", "images"))
    p.add_argument("--image", default="debian_12", help="directory under --images-dir for the runsc peer")
    p.add_argument("--runsc", default=os.environ.get("ADAPT_RUNSC", "runsc"))
    p.add_argument("--no-podman", action="store_true", help="skip the podman peer")
    p.add_argument("--no-warm-pool", action="store_true", help="skip the warm pool figure")
    p.add_argument("--out", default=os.path.join(REPO, "bench", "results", "create_latency.json"))
    args = p.parse_args()
    if args.n < 1 or args.warmup < 0:
        p.error("--n must be at least 1 and --warmup at least 0")
    args.adaptd = os.path.abspath(args.adaptd)
    args.images_dir = os.path.abspath(args.images_dir)
    return args


def interrupt(signum, _frame):
    raise KeyboardInterrupt("signal %d" % signum)


def main():
    args = parse_args()
    if os.geteuid() != 0:
        log("create_latency needs root (adaptd and runsc mount, loop-mount and create namespaces)")
        return 2
    signal.signal(signal.SIGTERM, interrupt)
    workdir = tempfile.mkdtemp(prefix="adapt-bench-create-")
    adapt, runsc = AdaptSide(args, workdir), RunscSide(args, workdir)
    podman = None
    warm = None
    if not args.no_warm_pool and "ADAPT_URL" not in os.environ:
        warm = WarmPoolSide(args, workdir)
    if not args.no_podman:
        if shutil.which("podman"):
            podman = PodmanSide(args)
        else:
            log("podman is not installed: the podman peer is skipped (apt-get install podman)")
    code = 0
    try:
        url = adapt.start()
        rootfs = runsc.start()
        log("adapt at %s; runsc peer on %s; n=%d warmup=%d" % (url, rootfs, args.n, args.warmup))
        sides = {"adapt": adapt, "runsc": runsc}
        if podman:
            podman.start(rootfs)
            sides["podman"] = podman
        results = {name: {} for name in sides}
        for key, _ in METRICS:
            for name, side in sides.items():
                results[name][key] = sample(side, name, key, args.n, args.warmup)
        figures = []
        for peer in [p for p in sides if p != "adapt"]:
            results["ratio_adapt_over_%s_p50" % peer] = {
                key: round(results["adapt"][key]["p50_ms"] / results[peer][key]["p50_ms"], 2) for key, _ in METRICS}
            figures += [{"metric": label + " p50", "unit": "ms", "adapt": results["adapt"][key]["p50_ms"],
                         "peer": peer, "peer_value": results[peer][key]["p50_ms"],
                         "ratio": results["ratio_adapt_over_%s_p50" % peer][key], "better": "lower",
                         "load": round(os.getloadavg()[0], 2)}
                        for key, label in METRICS]
        if warm:
            # After the cold runs, so that the pool's background boots do not disturb them.
            adapt.close()
            warm.start()
            results["warm_pool"] = {"create_to_first_command": sample(
                warm, "warm", "create_to_first_command", args.n, args.warmup)}
            w = results["warm_pool"]["create_to_first_command"]
            for peer in [p for p in sides if p != "adapt"]:
                r = results[peer]["create_to_first_command"]
                for q in ("p50", "p95"):
                    figures.append({"metric": "create -> first command (warm pool) " + q, "unit": "ms",
                                    "adapt": w[q + "_ms"], "peer": peer, "peer_value": r[q + "_ms"],
                                    "ratio": round(w[q + "_ms"] / r[q + "_ms"], 2), "better": "lower",
                                    "load": round(os.getloadavg()[0], 2)})
        results["figures"] = figures
        print_table(results)
        if warm:
            print_warm_table(results)
        version = run_quiet([args.runsc, "--version"]).stdout.splitlines()
        report = {
            "benchmark": "create_latency",
            "n": args.n,
            "warmup": args.warmup,
            "poll_interval_ms": POLL_S * 1000,
            "adapt_url": url if "ADAPT_URL" in os.environ else "local adaptd",
            "runsc_version": version[0] if version else None,
            "runsc_flags": ["--platform=ptrace", "--network=none"],
            "host": {"kernel": platform.release(), "cpus": os.cpu_count()},
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **results,
        }
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out + ".tmp", "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
        os.replace(args.out + ".tmp", args.out)
        log("wrote %s" % args.out)
    except KeyboardInterrupt:
        log("interrupted; cleaning up")
        code = 130
    except (BenchError, OSError, ValueError, subprocess.SubprocessError) as e:
        log("create_latency: %s" % e)
        for side in (adapt, warm):
            tail = side.log_tail() if side else ""
            if tail:
                log("--- adaptd log (tail) ---\n" + tail)
        code = 1
    finally:
        # Cleanup runs to the end: a second Ctrl-C must not leave sandboxes or mounts behind.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        runsc.close()
        if podman:
            podman.close()
        adapt.close()
        if warm:
            warm.close()
        remove_tree(workdir)
    return code


if __name__ == "__main__":
    sys.exit(main())
