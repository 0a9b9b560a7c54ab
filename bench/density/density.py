#!/usr/bin/env python3
"""Density: how much memory an idle sandbox holds, so how many fit on this machine, and the
API's p99 while they run.

adapt: interactive sandboxes (egress none, the default image) created one after another until
--max of them run or the host's MemAvailable falls under --keep-free-percent of its total
(a bounded run: it stops well before the machine is short of memory). Every --every sandboxes
it times --requests GET /v1/sandboxes/{id}. Peer: raw runsc (`runsc create` + `start` of
`sleep 1000` on the same root filesystem, the flags adaptd uses), the same count. Reports
MiB per idle sandbox (MemAvailable drop / count) for both, the sandboxes that would fit in
the MemAvailable measured at the start, and the API p99 with the sandboxes running against the
p99 with none. Writes bench/results/density.json.
"""

import argparse
import os
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "create_latency"))
import create_latency as cl  # noqa: E402
sys.path.insert(0, os.path.dirname(HERE))
import figures  # noqa: E402


def meminfo_mib(field):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    raise cl.BenchError("no %s in /proc/meminfo" % field)


def settle():
    """Lets page cache and lazily freed memory settle before MemAvailable is read."""
    time.sleep(2)
    return meminfo_mib("MemAvailable")


def api_p99(client, sid, n):
    samples = []
    for _ in range(n):
        start = time.monotonic()
        status, _ = client.call("GET", "/v1/sandboxes/" + sid)
        samples.append(time.monotonic() - start)
        if status != 200:
            raise cl.BenchError("GET /v1/sandboxes/%s -> %s" % (sid, status))
    samples.sort()
    return round(samples[min(len(samples) - 1, int(len(samples) * 0.99))] * 1000, 3)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--max", type=int, default=30, help="most sandboxes per side (default 30)")
    p.add_argument("--keep-free-percent", type=float, default=40.0,
                   help="stop when MemAvailable falls below this share of MemTotal (default 40)")
    p.add_argument("--every", type=int, default=10, help="time the API every N sandboxes")
    p.add_argument("--requests", type=int, default=200, help="GETs per API timing (default 200)")
    p.add_argument("--image", default="debian_12")
    cl.add_daemon_args(p, "density")
    args = cl.absolute_daemon_paths(p.parse_known_args()[0])
    if os.geteuid() != 0:
        cl.log("density needs root")
        return 2
    signal.signal(signal.SIGTERM, cl.interrupt)
    workdir = tempfile.mkdtemp(prefix="adapt-bench-density-")
    adapt, runsc = cl.AdaptSide(args, workdir), cl.RunscSide(args, workdir)
    total = meminfo_mib("MemTotal")
    floor = total * args.keep_free_percent / 100.0
    code = 0
    try:
        adapt.start()
        runsc.start()
        # A finished sandbox to time the API against, holding no memory.
        status, probe = adapt.client.call("POST", "/v1/sandboxes", {
            "ttlSeconds": 1800, "network": {"egress": "none"}, "startup": {"mode": "command", "argv": ["/bin/true"]}})
        if status != 201:
            raise cl.BenchError("POST /v1/sandboxes -> %s %s" % (status, probe))
        adapt.live.append(probe["id"])
        p99_idle = api_p99(adapt.client, probe["id"], args.requests)
        before = settle()
        p99_series = []
        count = 0
        while count < args.max and meminfo_mib("MemAvailable") > floor:
            adapt.create_running({"ttlSeconds": 1800, "network": {"egress": "none"}})
            count += 1
            if count % args.every == 0:
                p99_series.append({"sandboxes": count, "p99_ms": api_p99(adapt.client, probe["id"], args.requests)})
                cl.log("  adapt: %d sandboxes, API p99 %.1f ms" % (count, p99_series[-1]["p99_ms"]))
        after = settle()
        p99_loaded = api_p99(adapt.client, probe["id"], args.requests)
        adapt_mib = (before - after) / max(count, 1)
        for sid in list(adapt.live):
            adapt.delete(sid)

        before_runsc = settle()
        for _ in range(count):
            cid = runsc.new_id()
            runsc.checked("create", "--bundle", runsc.bundles["sleep"], cid)
            runsc.checked("start", cid)
        after_runsc = settle()
        runsc_mib = (before_runsc - after_runsc) / max(count, 1)
        cl.log("adapt: %d sandboxes, %.1f MiB each; runsc: %.1f MiB each" % (count, adapt_mib, runsc_mib))

        rows = [
            figures.figure("MiB per idle sandbox", "MiB", round(adapt_mib, 1), "raw runsc", round(runsc_mib, 1), "lower"),
            figures.figure("idle sandboxes that fit in MemAvailable", "sandboxes", int(before / max(adapt_mib, 0.1)),
                           "raw runsc", int(before / max(runsc_mib, 0.1)), "higher"),
            figures.figure("API p99 with %d sandboxes running" % count, "ms", p99_loaded, "API p99 with none",
                           p99_idle, "lower"),
        ]
        figures.print_table(rows)
        figures.write_report(args.out, "density", rows, {
            "sandboxes": count, "mem_total_mib": round(total), "mem_available_start_mib": round(before),
            "stopped_by": "max" if count >= args.max else "memory floor", "api_p99_series": p99_series})
    except KeyboardInterrupt:
        code = 130
    except (cl.BenchError, OSError, ValueError) as e:
        cl.log("density: %s" % e)
        code = 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        runsc.close()
        adapt.close()
        cl.remove_tree(workdir)
    return code


if __name__ == "__main__":
    sys.exit(main())
