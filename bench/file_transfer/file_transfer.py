#!/usr/bin/env python3
"""File transfer throughput: adapt's /files API against `runsc exec ... cat` in one run.

Starts its own adaptd (build/bin/adaptd) with one interactive sandbox, then for each of
--runs rounds moves --mib MiB of random bytes:
  upload    adapt: PUT /v1/sandboxes/{id}/files (streamed).  peer: runsc exec -i ... sh -c 'cat > F'
  download  adapt: GET /v1/sandboxes/{id}/files (streamed).  peer: runsc exec ... cat F
The peer uses the sandbox's own runsc flags (its shim-config.json), so both sides cross the
same gVisor boundary; adapt's figures include HTTP and the in-sandbox agent (its session's data
connection; the runs wait until the agent serves, checked by Adapt-Served-By). Prints MB/s
(median of the runs) for both sides and adapt/peer ratios; writes
bench/results/file_transfer.json. Standard library only; needs root and build/images.
"""

import argparse
import hashlib
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "bench"))
import figures  # noqa: E402
CHUNK = 1 << 20


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    def __init__(self, args, workdir):
        self.args, self.workdir = args, workdir
        self.state_dir = os.path.join(workdir, "state")
        self.port = free_port()
        log_path = os.path.join(workdir, "adaptd.log")
        with open(log_path, "wb") as out:
            self.proc = subprocess.Popen(
                [args.adaptd, "--listen", "127.0.0.1:%d" % self.port, "--state-dir", self.state_dir,
                 "--images-dir", args.images_dir, "--storage-listen", "127.0.0.1:0",
                 # Every listener on a free port: the adaptd that setup.sh started holds the defaults.
                 "--ingress-http", "127.0.0.1:0", "--ingress-https", "127.0.0.1:0",
                 # Its own nftables table and addresses too (adaptd refuses another's).
                 "--network-name", "adaptbench", "--network-pool", "10.87.0.0/16"],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while b"adaptd listening on" not in open(log_path, "rb").read():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("adaptd did not start; see " + log_path)
            time.sleep(0.05)
        with open(os.path.join(self.state_dir, "admin.key")) as f:
            self.key = f.read().strip()

    def call(self, method, path, body=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        data = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=data, headers={"Authorization": "Bearer " + self.key})
        resp = conn.getresponse()
        payload = resp.read()
        conn.close()
        return resp.status, (json.loads(payload) if payload else None)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(60)


def upload(d, sid, path, data):
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=600)
    start = time.monotonic()
    conn.putrequest("PUT", "/v1/sandboxes/%s/files?path=%s" % (sid, path))
    conn.putheader("Authorization", "Bearer " + d.key)
    conn.putheader("Content-Length", str(len(data)))
    conn.endheaders()
    view = memoryview(data)
    for off in range(0, len(data), CHUNK):
        conn.send(view[off:off + CHUNK])
    resp = conn.getresponse()
    resp.read()
    took = time.monotonic() - start
    conn.close()
    if resp.status != 200:
        raise SystemExit("upload -> %s" % resp.status)
    return took


def served_by(d, sid):
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
    conn.request("GET", "/v1/sandboxes/%s/files?path=/&stat=1" % sid,
                 headers={"Authorization": "Bearer " + d.key})
    resp = conn.getresponse()
    resp.read()
    conn.close()
    return resp.getheader("Adapt-Served-By")


def download(d, sid, path, want):
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=600)
    start = time.monotonic()
    conn.request("GET", "/v1/sandboxes/%s/files?path=%s" % (sid, path),
                 headers={"Authorization": "Bearer " + d.key})
    resp = conn.getresponse()
    h = hashlib.sha256()
    while True:
        chunk = resp.read(CHUNK)
        if not chunk:
            break
        h.update(chunk)
    took = time.monotonic() - start
    conn.close()
    if resp.status != 200 or h.hexdigest() != want:
        raise SystemExit("download -> %s (checksum %s)" % (resp.status, h.hexdigest() == want))
    return took


def peer_prefix(d, sid):
    with open(os.path.join(d.state_dir, "sandboxes", sid, "shim-config.json")) as f:
        shim = json.load(f)
    return [shim["runsc"], *shim["globalFlags"], "exec"]


def peer_upload(prefix, sid, path, data):
    start = time.monotonic()
    p = subprocess.run([*prefix, sid, "sh", "-c", "cat > " + path], input=data, capture_output=True)
    took = time.monotonic() - start
    if p.returncode != 0:
        raise SystemExit("runsc exec cat > failed: %s" % p.stderr[-500:])
    return took


def peer_download(prefix, sid, path, want):
    start = time.monotonic()
    p = subprocess.Popen([*prefix, sid, "cat", path], stdout=subprocess.PIPE)
    h = hashlib.sha256()
    while True:
        chunk = p.stdout.read(CHUNK)
        if not chunk:
            break
        h.update(chunk)
    p.wait()
    took = time.monotonic() - start
    if p.returncode != 0 or h.hexdigest() != want:
        raise SystemExit("runsc exec cat failed")
    return took


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mib", type=int, default=256, help="MiB per transfer (default 256)")
    p.add_argument("--runs", type=int, default=3, help="rounds (default 3)")
    p.add_argument("--n", type=int, help="ignored (bench/run.sh passes it to every benchmark)")
    p.add_argument("--adaptd", default=os.path.join(REPO, "build", "bin", "adaptd"))
    p.add_argument("--images-dir", default=os.path.join(REPO, "build", "images"))
    p.add_argument("--out", default=os.path.join(REPO, "bench", "results", "file_transfer.json"))
    args = p.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root (runsc)")
    workdir = tempfile.mkdtemp(prefix="adapt-bench-files-", dir="/tmp")
    d = Daemon(args, workdir)
    sid = None
    try:
        status, sbx = d.call("POST", "/v1/sandboxes", {"diskMiB": max(4096, args.mib * 4)})
        assert status == 201, sbx
        sid = sbx["id"]
        deadline = time.monotonic() + 120
        while sbx["status"] != "running":
            assert time.monotonic() < deadline and sbx["status"] == "provisioning", sbx
            time.sleep(0.1)
            _, sbx = d.call("GET", "/v1/sandboxes/" + sid)
        # The agent connects just after the start; until then runsc exec serves (the fallback).
        deadline = time.monotonic() + 30
        while served_by(d, sid) != "agent":
            assert time.monotonic() < deadline, "the agent never served the sandbox's files"
            time.sleep(0.2)
        prefix = peer_prefix(d, sid)
        data = os.urandom(args.mib * CHUNK)
        want = hashlib.sha256(data).hexdigest()
        mb = len(data) / 1e6
        rates = {k: [] for k in ("adapt_upload", "peer_upload", "adapt_download", "peer_download")}
        for i in range(args.runs):
            rates["adapt_upload"].append(mb / upload(d, sid, "/var/tmp/adapt.bin", data))
            rates["peer_upload"].append(mb / peer_upload(prefix, sid, "/var/tmp/peer.bin", data))
            rates["adapt_download"].append(mb / download(d, sid, "/var/tmp/adapt.bin", want))
            rates["peer_download"].append(mb / peer_download(prefix, sid, "/var/tmp/peer.bin", want))
            log("run %d: %s" % (i + 1, {k: round(v[-1], 1) for k, v in rates.items()}))
        med = {k: round(statistics.median(v), 1) for k, v in rates.items()}
        result = {
            "mib": args.mib, "runs": args.runs, "median_mb_per_s": med,
            "ratio_upload": round(med["adapt_upload"] / med["peer_upload"], 2),
            "ratio_download": round(med["adapt_download"] / med["peer_download"], 2),
            "samples_mb_per_s": {k: [round(x, 1) for x in v] for k, v in rates.items()},
        }
        rows = [figures.figure("upload %d MiB (median of %d)" % (args.mib, args.runs), "MB/s",
                               med["adapt_upload"], "runsc exec cat", med["peer_upload"], "higher"),
                figures.figure("download %d MiB (median of %d)" % (args.mib, args.runs), "MB/s",
                               med["adapt_download"], "runsc exec cat", med["peer_download"], "higher")]
        figures.print_table(rows)
        figures.write_report(args.out, "file_transfer", rows, result)
    finally:
        if sid:
            d.call("DELETE", "/v1/sandboxes/" + sid)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                status, sbx = d.call("GET", "/v1/sandboxes/" + sid)
                if status != 200 or sbx["status"] == "deleted":
                    break
                time.sleep(0.2)
        d.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
