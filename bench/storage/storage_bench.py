#!/usr/bin/env python3
"""Storage throughput: object PUT/GET through adaptd's storage gateway against writing and
reading the same bytes as a local file, and workspace writes on an encrypted volume against the
same writes on the sandbox's unencrypted disk.

  object PUT / GET     adapt: `PUT /objects/<key>` and `GET` on the storage gateway (bearer
                       storage token, the body streamed from/to this process), --mib MiB of random
                       bytes. Peer: the same bytes written to a file beside adaptd's state dir
                       (write + fsync, as the object store does) and read back.
  workspace write      adapt: `dd if=/dev/zero of=/workspace/f bs=1M count=--mib conv=fsync` in
                       a durable sandbox, /workspace on its fscrypt-encrypted volume. Peer: the
                       same dd into /var/tmp, on the sandbox's own (unencrypted) ext4 disk.
                       Both read from dd's own report.
Medians of --runs; writes bench/results/storage.json.
"""

import argparse
import http.client
import os
import re
import signal
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "create_latency"))
import create_latency as cl  # noqa: E402
sys.path.insert(0, os.path.dirname(HERE))
import figures  # noqa: E402

CHUNK = 1 << 20


def gateway(port, token, method, key, body_path=None, size=0):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    headers = {"Authorization": "Bearer " + token}
    start = time.monotonic()
    if body_path:
        headers["Content-Length"] = str(size)
        conn.putrequest(method, "/objects/" + key)
        for k, v in headers.items():
            conn.putheader(k, v)
        conn.endheaders()
        with open(body_path, "rb") as f:
            while True:
                block = f.read(CHUNK)
                if not block:
                    break
                conn.send(block)
    else:
        conn.request(method, "/objects/" + key, headers=headers)
    resp = conn.getresponse()
    got = 0
    while True:
        block = resp.read(CHUNK)
        if not block:
            break
        got += len(block)
    elapsed = time.monotonic() - start
    conn.close()
    if resp.status != 200:
        raise cl.BenchError("gateway %s %s -> %s" % (method, key, resp.status))
    return elapsed, got


def local_write(src, dst):
    start = time.monotonic()
    with open(src, "rb") as f, open(dst, "wb") as out:
        while True:
            block = f.read(CHUNK)
            if not block:
                break
            out.write(block)
        out.flush()
        os.fsync(out.fileno())
    return time.monotonic() - start


def local_read(path):
    start = time.monotonic()
    with open(path, "rb") as f:
        while f.read(CHUNK):
            pass
    return time.monotonic() - start


def dd_mbps(client, sid, path, mib):
    status, r = client.call("POST", "/v1/sandboxes/%s/commands" % sid, {
        "command": "dd if=/dev/zero of=%s bs=1M count=%d conv=fsync 2>&1; rm -f %s" % (path, mib, path),
        "timeoutSeconds": 600, "waitSeconds": 60})
    while status == 200 and r.get("status") == "running":
        time.sleep(0.5)
        status, r = client.call("GET", "/v1/sandboxes/%s/commands/%s" % (sid, r["id"]))
    if status != 200 or r.get("exitCode") != 0:
        raise cl.BenchError("dd into %s -> %s %s" % (path, status, r))
    m = re.search(r"(\d+) bytes .* copied, ([\d.]+) s", r["stdout"])
    if not m:
        raise cl.BenchError("no dd report in %r" % r["stdout"])
    return int(m.group(1)) / float(m.group(2)) / 1e6


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mib", type=int, default=256)
    p.add_argument("--runs", type=int, default=3)
    cl.add_daemon_args(p, "storage")
    args = cl.absolute_daemon_paths(p.parse_known_args()[0])
    if os.geteuid() != 0:
        cl.log("storage_bench needs root")
        return 2
    signal.signal(signal.SIGTERM, cl.interrupt)
    workdir = tempfile.mkdtemp(prefix="adapt-bench-storage-")
    adapt = cl.AdaptSide(args, workdir)
    code = 0
    try:
        adapt.start()
        client = adapt.client
        size = args.mib << 20
        src = os.path.join(workdir, "source.bin")
        with open(src, "wb") as f:
            for _ in range(args.mib):
                f.write(os.urandom(CHUNK))
        status, tok = client.call("POST", "/v1/storage-tokens", {"name": "bench"})
        if status != 201:
            raise cl.BenchError("POST /v1/storage-tokens -> %s %s" % (status, tok))
        port = int(tok["endpoint"].rsplit(":", 1)[1])
        put, get, lput, lget = [], [], [], []
        for i in range(args.runs):
            t, _ = gateway(port, tok["token"], "PUT", "bench/object-%d" % i, src, size)
            put.append(size / t / 1e6)
            t, got = gateway(port, tok["token"], "GET", "bench/object-%d" % i)
            if got != size:
                raise cl.BenchError("GET returned %d bytes, not %d" % (got, size))
            get.append(size / t / 1e6)
            dst = os.path.join(adapt.state_dir, "bench-local-%d.bin" % i)
            lput.append(size / local_write(src, dst) / 1e6)
            lget.append(size / local_read(dst) / 1e6)
            os.unlink(dst)
            cl.log("  run %d: gateway PUT %.0f GET %.0f MB/s; local write %.0f read %.0f MB/s" %
                   (i + 1, put[-1], get[-1], lput[-1], lget[-1]))

        status, vol = client.call("POST", "/v1/storage", {"name": "bench", "sizeMiB": max(1024, args.mib * 2)})
        if status != 201:
            raise cl.BenchError("POST /v1/storage -> %s %s" % (status, vol))
        sid = adapt.create_running({
            "ttlSeconds": 1800, "network": {"egress": "none"}, "startupClass": "durable", "storage": "bench",
            "diskMiB": max(2048, args.mib * 4)})["id"]
        enc, plain = [], []
        for i in range(args.runs):
            enc.append(dd_mbps(client, sid, "/workspace/bench.bin", args.mib))
            plain.append(dd_mbps(client, sid, "/var/tmp/bench.bin", args.mib))
            cl.log("  run %d: encrypted workspace %.0f MB/s; unencrypted disk %.0f MB/s" % (i + 1, enc[-1], plain[-1]))
        med = lambda xs: round(statistics.median(xs), 1)  # noqa: E731
        rows = [
            figures.figure("object PUT through the gateway", "MB/s", med(put), "local file write+fsync", med(lput), "higher"),
            figures.figure("object GET through the gateway", "MB/s", med(get), "local file read", med(lget), "higher"),
            figures.figure("workspace write (fscrypt volume)", "MB/s", med(enc), "unencrypted sandbox disk", med(plain),
                           "higher"),
        ]
        figures.print_table(rows)
        figures.write_report(args.out, "storage", rows, {"mib": args.mib, "runs": args.runs})
    except KeyboardInterrupt:
        code = 130
    except (cl.BenchError, OSError, ValueError) as e:
        cl.log("storage_bench: %s" % e)
        code = 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        adapt.close()
        cl.remove_tree(workdir)
    return code


if __name__ == "__main__":
    sys.exit(main())
