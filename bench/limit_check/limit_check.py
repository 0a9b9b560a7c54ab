#!/usr/bin/env python3
"""The cost of plan limits on the create path (issue 16): POST /v1/sandboxes answered (201),
for an organization whose plan sets every limit a create enforces (concurrent sandboxes, cpu,
memory: counted in the transaction that inserts the row; maxRunSeconds against the ttl)
against one whose plan sets none (nothing counted). One adaptd, started with --max-sandboxes-per-org 0 so that the second organization
has no limit at all; both hold the same number of live sandboxes (--live, default 10) while the
samples are taken, so the count has rows to read. Samples alternate between the two, one
create at a time (each a /bin/true startup command that completes at once and still counts),
all deleted at the end, untimed. Reports p50, p95 and p99 of both and their ratios (the check
should be within noise), and writes bench/results/limit_check.json.

Standard library only. Needs root, build/bin/adaptd and build/images/debian_12.
"""

import argparse
import math
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "create_latency"))
sys.path.insert(0, os.path.dirname(HERE))
import create_latency as cl  # noqa: E402
import figures  # noqa: E402

BODY = {"cpu": 1, "memoryMiB": 128, "ttlSeconds": 600,
        "startup": {"mode": "command", "argv": ["/bin/true"]}}
LIMITED = {"concurrentSandboxes": 1000, "cpu": 100000, "memoryMiB": 100000000,
           "maxRunSeconds": 86400}


def org_on_plan(admin, name, limits):
    status, plan = admin.call("PUT", "/v1/plans/" + name, {"name": name, "limits": limits})
    if status != 200:
        raise cl.BenchError("PUT /v1/plans/%s -> %s %r" % (name, status, plan))
    status, org = admin.call("POST", "/v1/orgs", {"name": "%s-%d" % (name, os.getpid())})
    if status != 201:
        raise cl.BenchError("POST /v1/orgs -> %s %r" % (status, org))
    status, key = admin.call("POST", "/v1/orgs/%s/keys" % org["id"], {"name": "bench"})
    if status != 201:
        raise cl.BenchError("POST keys -> %s %r" % (status, key))
    status, account = admin.call("PUT", "/v1/orgs/%s/plan" % org["id"], {"planId": name})
    if status != 200:
        raise cl.BenchError("PUT plan -> %s %r" % (status, account))
    return cl.AdaptClient(admin.url, key["key"])


def summarize(samples_s):
    """create_latency's p50 and p95, and the p99 (with --n 50, the worst but one)."""
    out = cl.summarize(samples_s)
    out["p99_ms"] = round(cl.percentile(out["samples_ms"], 99), 1)
    return out


def rank_sum_p(a, b):
    """Two-sided p-value of the Mann-Whitney U test (normal approximation, ties ranked by their
    mean): how likely samples this far apart are if both come from one distribution."""
    pooled = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks = [0.0] * len(pooled)
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        i = j + 1
    n1, n2 = len(a), len(b)
    r1 = sum(r for r, (_, side) in zip(ranks, pooled) if side == 0)
    u = r1 - n1 * (n1 + 1) / 2
    mean = n1 * n2 / 2
    sd = math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12)
    z = abs(u - mean) / sd if sd else 0.0
    return math.erfc(z / math.sqrt(2))


def create(client):
    start = time.monotonic()
    status, sbx = client.call("POST", "/v1/sandboxes", BODY)
    took = time.monotonic() - start
    if status != 201:
        raise cl.BenchError("POST /v1/sandboxes -> %s %r" % (status, sbx))
    return sbx["id"], took


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=50, help="samples per side")
    parser.add_argument("--live", type=int, default=10, help="live sandboxes each org holds")
    cl.add_daemon_args(parser, "limit_check")
    args = cl.absolute_daemon_paths(parser.parse_args())
    workdir = tempfile.mkdtemp(prefix="adapt-bench-limit-")
    side = cl.AdaptSide(args, workdir)
    side.extra_args = ["--max-sandboxes-per-org", "0"]
    side.start()
    clients = {}
    owned = []  # (client, sandbox id): only its own organization's key deletes a sandbox
    try:
        clients = {"with plan limits": org_on_plan(side.client, "bench-limited", LIMITED),
                   "without": org_on_plan(side.client, "bench-unlimited", {})}
        for client in clients.values():
            for _ in range(args.live):
                sid, _ = create(client)
                owned.append((client, sid))
        samples = {name: [] for name in clients}
        for _ in range(args.n):
            for name, client in clients.items():
                sid, took = create(client)
                samples[name].append(took)
                owned.append((client, sid))
        with_check = summarize(samples["with plan limits"])
        without = summarize(samples["without"])
        rows = [figures.figure("create answered, p%d" % p, "ms", with_check["p%d_ms" % p],
                               "same, plan without limits", without["p%d_ms" % p], "lower")
                for p in (50, 95, 99)]
        # The noise to read those ratios against: the plan without limits against itself (its
        # odd samples against its even ones), and how likely the two plans' samples are to
        # come from one distribution (a p-value above 0.05: no difference this run can show).
        odd = summarize(samples["without"][1::2])
        even = summarize(samples["without"][0::2])
        rows.append(figures.figure("noise: without limits, odd samples p50", "ms", odd["p50_ms"],
                                   "its even samples p50", even["p50_ms"], "lower"))
        p_value = rank_sum_p(samples["with plan limits"], samples["without"])
        load = os.getloadavg()
        figures.print_table(rows)
        print("rank-sum test, with against without limits: p = %.2f (%s); load average %.2f %.2f %.2f"
              % (p_value, "within noise" if p_value > 0.05 else "a difference beyond noise", *load))
        figures.write_report(args.out, "limit_check", rows,
                             {"with_limits": with_check, "without": without, "live": args.live,
                              "rank_sum_p": round(p_value, 3), "load_average": load})
    finally:
        for client, sid in owned:
            client.call("DELETE", "/v1/sandboxes/" + sid)
        deadline = time.monotonic() + cl.STEP_TIMEOUT_S
        for client, sid in owned:
            while time.monotonic() < deadline:
                status, sbx = client.call("GET", "/v1/sandboxes/" + sid)
                if status != 200 or sbx["status"] == "deleted":
                    break
                time.sleep(0.1)
        side.close()


if __name__ == "__main__":
    try:
        main()
    except cl.BenchError as e:
        cl.log("limit_check: %s" % e)
        sys.exit(1)
