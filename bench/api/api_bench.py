#!/usr/bin/env python3
"""REST API throughput: requests/s and latency percentiles of GET /v1/sandboxes/{id} and of the
list (GET /v1/sandboxes?limit=50 over 50 sandboxes), measured with wrk on loopback.

The peer is the same server's GET /healthz, which has no key check, no store read and no JSON
of any size: the floor of adaptd's HTTP stack. So the ratios say what authentication, the store
and the sandbox JSON cost on top of it. wrk runs --threads 1, --connections 8 (a 2-core machine
shares its cores between wrk and adaptd) for --seconds each.

Needs root (adaptd), wrk (Debian package `wrk`), build/bin/adaptd and build/images/debian_12.
Writes bench/results/api.json.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "create_latency"))
import create_latency as cl  # noqa: E402
sys.path.insert(0, os.path.dirname(HERE))
import figures  # noqa: E402

UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def parse_wrk(text):
    """Requests/s and p50/p99 in ms from `wrk --latency` output."""
    rps = re.search(r"Requests/sec:\s+([\d.]+)", text)
    if not rps:
        raise cl.BenchError("wrk printed no Requests/sec:\n" + text)
    out = {"requests_per_s": float(rps.group(1))}
    for pct in ("50", "99"):
        m = re.search(r"^\s+%s(?:\.000)?%%\s+([\d.]+)(us|ms|s)\s*$" % pct, text, re.M)
        if not m:
            raise cl.BenchError("wrk printed no %s%% latency:\n%s" % (pct, text))
        out["p%s_ms" % pct] = round(float(m.group(1)) * UNITS[m.group(2)], 3)
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    out["non_2xx"] = int(errors.group(1)) if errors else 0
    return out


def wrk(url, key, seconds, connections):
    argv = ["wrk", "--latency", "-t", "1", "-c", str(connections), "-d", "%ds" % seconds]
    if key:
        argv += ["-H", "Authorization: Bearer " + key]
    r = subprocess.run(argv + [url], capture_output=True, text=True, timeout=seconds + 60)
    if r.returncode != 0:
        raise cl.BenchError("wrk %s: %s" % (url, r.stderr.strip()))
    result = parse_wrk(r.stdout)
    if result["non_2xx"]:
        raise cl.BenchError("wrk %s: %d answers were not 2xx" % (url, result["non_2xx"]))
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=int, default=10, help="wrk duration per URL (default 10)")
    p.add_argument("--connections", type=int, default=8)
    p.add_argument("--sandboxes", type=int, default=50, help="sandboxes in the org listed (default 50)")
    cl.add_daemon_args(p, "api")
    args = cl.absolute_daemon_paths(p.parse_known_args()[0])
    if os.geteuid() != 0:
        cl.log("api_bench needs root")
        return 2
    signal.signal(signal.SIGTERM, cl.interrupt)
    workdir = tempfile.mkdtemp(prefix="adapt-bench-api-")
    adapt = cl.AdaptSide(args, workdir)
    code = 0
    try:
        url = adapt.start()
        # Finished sandboxes (startup `true`) fill the list without holding memory.
        ids = []
        for _ in range(args.sandboxes):
            status, sbx = adapt.client.call("POST", "/v1/sandboxes", {
                "ttlSeconds": 900, "network": {"egress": "none"},
                "startup": {"mode": "command", "argv": ["/bin/true"]}})
            if status != 201:
                raise cl.BenchError("POST /v1/sandboxes -> %s %s" % (status, sbx))
            adapt.live.append(sbx["id"])
            ids.append(sbx["id"])
        deadline = time.monotonic() + 300
        for sid in ids:
            while adapt.client.call("GET", "/v1/sandboxes/" + sid)[1]["status"] == "provisioning":
                if time.monotonic() > deadline:
                    raise cl.BenchError("sandbox %s still provisioning" % sid)
                time.sleep(0.1)
        cl.log("adapt at %s; %d sandboxes; wrk %ds x %d connections each" %
               (url, len(ids), args.seconds, args.connections))
        key = adapt.client.key
        results = {
            "healthz": wrk(url + "/healthz", None, args.seconds, args.connections),
            "get_sandbox": wrk(url + "/v1/sandboxes/" + ids[0], key, args.seconds, args.connections),
            "list_sandboxes": wrk(url + "/v1/sandboxes?limit=50", key, args.seconds, args.connections),
        }
        floor = results["healthz"]
        rows = []
        for name, label in (("get_sandbox", "GET /v1/sandboxes/{id}"), ("list_sandboxes", "GET /v1/sandboxes?limit=50")):
            r = results[name]
            rows.append(figures.figure(label + " requests/s", "req/s", r["requests_per_s"],
                                       "GET /healthz", floor["requests_per_s"], "higher"))
            rows.append(figures.figure(label + " p99", "ms", r["p99_ms"], "GET /healthz", floor["p99_ms"], "lower"))
        figures.print_table(rows)
        figures.write_report(args.out, "api", rows, {"seconds": args.seconds, "connections": args.connections,
                                                     "sandboxes": len(ids), **results})
    except KeyboardInterrupt:
        code = 130
    except (cl.BenchError, OSError, ValueError, subprocess.SubprocessError) as e:
        cl.log("api_bench: %s" % e)
        code = 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        adapt.close()
        cl.remove_tree(workdir)
    return code


if __name__ == "__main__":
    sys.exit(main())
