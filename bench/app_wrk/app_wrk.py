#!/usr/bin/env python3
"""bench/app_wrk: a deployed app's URL (issue 20). Prints figures, never passes or fails.

One app (python3's threaded http.server answering a small file) is deployed from a sandbox;
wrk (--latency, 1 thread, --connections each, --seconds each, loopback) measures requests/s and
p99 through the app's URL on adaptd's ingress (Host routing, balanced over the ready replicas)
with 1 replica and then with 3, each against the same wrk run straight to one replica's address
and port from the host (no ingress). The ratios say what the ingress costs, and what two more
replicas give back (on a 2-core machine, wrk, adaptd and the replicas share the cores, so
expect little).

Needs root (adaptd), wrk (Debian package `wrk`; bench/run.sh installs it; without it this
prints why and exits 0), build/bin/adaptd and build/images/debian_12. Writes
bench/results/app_wrk.json.
"""

import argparse
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "api"))
sys.path.insert(0, os.path.dirname(HERE))

import api_bench  # noqa: E402
import figures  # noqa: E402
import harness  # noqa: E402

SERVER = r"""
import http.server
class H(http.server.SimpleHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(('', 8000), H).serve_forever()
"""


def sh(c, sid, command):
    status, cmd = c.api("POST", "/v1/sandboxes/%s/commands" % sid,
                        {"command": command, "timeoutSeconds": 60})
    assert status == 200 and cmd["exitCode"] == 0, cmd
    return cmd["stdout"]


def address(c, sid):
    """The sandbox's own IPv4 address, as its network stack reports it."""
    return sh(c, sid, "python3 -c \"import socket; s = socket.socket(socket.AF_INET, "
                      "socket.SOCK_DGRAM); s.connect(('198.51.100.10', 9)); "
                      "print(s.getsockname()[0])\"").strip()


def wait_ready(c, app_id, n, timeout=180):
    deadline = time.monotonic() + timeout
    while True:
        status, app = c.api("GET", "/v1/apps/" + app_id)
        assert status == 200, app
        if app["readyReplicas"] == n and len(app["replicaSandboxes"]) == n:
            return app
        assert time.monotonic() < deadline, app
        time.sleep(0.5)


def wrk(url, seconds, connections, host=None):
    argv = ["wrk", "--latency", "-t", "1", "-c", str(connections), "-d", "%ds" % seconds]
    if host:
        argv += ["-H", "Host: " + host]
    r = subprocess.run(argv + [url], capture_output=True, text=True, timeout=seconds + 60)
    if r.returncode != 0:
        raise RuntimeError("wrk %s: %s" % (url, r.stderr.strip()))
    result = api_bench.parse_wrk(r.stdout)
    if result["non_2xx"]:
        raise RuntimeError("wrk %s: %d answers were not 2xx" % (url, result["non_2xx"]))
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=10, help="wrk duration per run (default 10)")
    ap.add_argument("--connections", type=int, default=8)
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "results", "app_wrk.json"))
    args = ap.parse_args()
    if not shutil.which("wrk"):
        print("app_wrk: skipped: wrk is not installed (apt-get install wrk; bench/run.sh installs "
              "it)")
        return
    rows = []
    d = harness.Daemon()
    d.start()
    try:
        c = d.admin
        sbx = c.create({})
        c.wait_for_status(sbx["id"], "running", 90)
        sid = sbx["id"]
        sh(c, sid, "mkdir -p /workspace/site && head -c 512 /dev/zero | tr '\\0' x > "
                   "/workspace/site/index.html")
        sh(c, sid, "cat > /workspace/site/server.py <<'EOF'\n%sEOF" % SERVER)
        status, app = c.api("POST", "/v1/apps", {
            "sandboxId": sid, "name": "bench", "sourcePath": "/workspace/site",
            "startCommand": "exec python3 server.py", "port": 8000, "replicas": 1})
        assert status == 201, app
        port = int(app["httpUrl"].rsplit(":", 1)[1])
        url = "http://127.0.0.1:%d/index.html" % port
        for n in (1, 3):
            if n > 1:
                status, scaled = c.api("POST", "/v1/apps/%s/scale" % app["id"], {"replicas": n})
                assert status == 200, scaled
            now = wait_ready(c, app["id"], n)
            one = address(c, now["replicaSandboxes"][0]["sandboxId"])
            via = wrk(url, args.seconds, args.connections, host=app["hostname"])
            direct = wrk("http://%s:8000/index.html" % one, args.seconds, args.connections)
            peer = "straight to one replica"
            rows.append(figures.figure("app URL requests/s, %d replica%s" % (n, "s" if n > 1 else ""),
                                       "req/s", via["requests_per_s"], peer,
                                       direct["requests_per_s"], "higher"))
            rows.append(figures.figure("app URL p99, %d replica%s" % (n, "s" if n > 1 else ""),
                                       "ms", via["p99_ms"], peer, direct["p99_ms"], "lower"))
        c.api("DELETE", "/v1/apps/" + app["id"])
    finally:
        d.close()
    figures.print_table(rows)
    figures.write_report(args.out, "app_wrk", rows,
                         {"seconds": args.seconds, "connections": args.connections})


if __name__ == "__main__":
    main()
