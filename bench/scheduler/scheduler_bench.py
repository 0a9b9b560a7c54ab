#!/usr/bin/env python3
"""The scheduler (issue 18): how late an automation's command starts after its slot is due, and
adaptd's CPU, against cron firing the same commands through `adapt sandbox exec`.

One adaptd. --orgs organizations, each holding one idle running sandbox and --per-org interval
automations (--interval seconds, default 60) targeting it, whose command prints the sandbox's
clock (`date +%s%N`). adapt side: for --minutes, the automations fire; each run's delay is the
printed time minus the run's scheduledAt (due time -> command start). Then they are disabled.
Peer side: for the same --minutes, cron (Debian's, started here in the foreground; installed
with apt-get when missing) runs one `* * * * *` line per automation, each
`adapt sandbox exec SBX -- date +%s%N`; a line's delay is the printed time minus the minute it
was due. CPU is adaptd's (utime+stime, /proc) over each side's window, plus, for the peer, cron's
and its children's (the shells and the `adapt` CLIs it reaped). Also: adaptd's CPU over
--idle-seconds with every automation present but none due (a 3600 s interval), beside the same
window before any automation existed (the scheduler sleeps until the next due time; it does
not poll).

The default is scaled to finish in a few minutes (2 organizations x 50 automations, 2 minutes a
side); the issue's full run is `--orgs 100 --per-org 100` (10,000 automations; an automation
may only target its own organization's sandboxes, so that is 100 idle sandboxes). Prints one
table (bench/figures.py) and writes bench/results/scheduler.json.

Standard library only. Needs root, build/bin/adaptd, build/bin/adapt and build/images/debian_12.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "create_latency"))
sys.path.insert(0, os.path.dirname(HERE))
import create_latency as cl  # noqa: E402
import figures  # noqa: E402

CLOCK = "date +%s%N"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid, children=False):
    """utime + stime (and, with children, the reaped children's) of `pid`, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / CLK_TCK


def new_org(admin, name):
    status, org = admin.call("POST", "/v1/orgs", {"name": name})
    if status != 201:
        raise cl.BenchError("POST /v1/orgs -> %s %r" % (status, org))
    status, key = admin.call("POST", "/v1/orgs/%s/keys" % org["id"], {"name": "bench"})
    if status != 201:
        raise cl.BenchError("POST keys -> %s %r" % (status, key))
    return cl.AdaptClient(admin.url, key["key"])


def running_sandbox(client):
    status, sbx = client.call("POST", "/v1/sandboxes", {"cpu": 1, "memoryMiB": 256, "ttlSeconds": 86400})
    if status != 201:
        raise cl.BenchError("POST /v1/sandboxes -> %s %r" % (status, sbx))
    deadline = time.monotonic() + cl.STEP_TIMEOUT_S
    while sbx["status"] == "provisioning" and time.monotonic() < deadline:
        time.sleep(0.1)
        _, sbx = client.call("GET", "/v1/sandboxes/" + sbx["id"])
    if sbx["status"] != "running":
        raise cl.BenchError("sandbox %s is %s" % (sbx["id"], sbx["status"]))
    return sbx["id"]


def create_automations(client, sid, n, interval):
    ids = []
    for i in range(n):
        status, a = client.call("POST", "/v1/automations", {
            "sandboxId": sid, "name": "bench-%d" % i, "intervalSeconds": interval, "command": CLOCK})
        if status != 201:
            raise cl.BenchError("POST /v1/automations -> %s %r" % (status, a))
        ids.append(a["id"])
    return ids


def all_runs(client):
    runs, cursor = [], None
    while True:
        path = "/v1/runs?limit=200" + ("&cursor=" + cursor if cursor else "")
        status, page = client.call("GET", path)
        if status != 200:
            raise cl.BenchError("GET /v1/runs -> %s %r" % (status, page))
        runs += page["items"]
        cursor = page.get("nextCursor")
        if not cursor:
            return runs


def iso_ms(text):
    from datetime import datetime
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000.0


def percentiles(delays_ms):
    if not delays_ms:
        raise cl.BenchError("no samples")
    return {"n": len(delays_ms), "p50_ms": round(cl.percentile(delays_ms, 50), 1),
            "p99_ms": round(cl.percentile(delays_ms, 99), 1)}


def adapt_side(side, orgs, args):
    """Enables every automation's schedule for --minutes; returns (delays in ms, CPU s, wall s)."""
    for client, _, automation_ids in orgs:
        for aid in automation_ids:
            status, a = client.call("POST", "/v1/automations/%s/enable" % aid)
            if status != 200:
                raise cl.BenchError("enable %s -> %s %r" % (aid, status, a))
    cpu0, t0 = cpu_seconds(side.proc.pid), time.monotonic()
    time.sleep(args.minutes * 60)
    cpu1, t1 = cpu_seconds(side.proc.pid), time.monotonic()
    delays = []
    for client, _, automation_ids in orgs:
        for aid in automation_ids:
            client.call("POST", "/v1/automations/%s/disable" % aid)
        for run in all_runs(client):
            if run["trigger"] != "schedule" or run["status"] != "succeeded":
                continue
            printed = run["stdout"].strip()
            if printed.isdigit():
                delays.append(int(printed) / 1e6 - iso_ms(run["scheduledAt"]))
    return delays, cpu1 - cpu0, t1 - t0


def cron_side(side, orgs, args, workdir):
    cron = shutil.which("cron")
    if not cron:
        subprocess.run(["apt-get", "install", "-y", "-q", "cron"], check=True,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"), stdout=sys.stderr)
        cron = shutil.which("cron")
    outdir = os.path.join(workdir, "cron-out")
    os.makedirs(outdir)
    lines = ["SHELL=/bin/sh", "PATH=/usr/bin:/bin"]
    n = 0
    for client, sid, automation_ids in orgs:
        for _ in automation_ids:
            # The minute it was due, then what the sandbox printed.
            lines.append("* * * * * root echo $(date +\\%%s) $(ADAPT_URL=%s ADAPT_API_KEY=%s %s sandbox "
                         "exec %s -- %s) >> %s/%d" % (client.url, client.key, args.adapt, sid,
                                                      CLOCK.replace("%", "\\%"), outdir, n))
            n += 1
    table = "/etc/cron.d/adapt-bench-scheduler"
    with open(table, "w") as f:
        f.write("\n".join(lines) + "\n")
    proc = subprocess.Popen([cron, "-f"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        cpu0, cron0, t0 = cpu_seconds(side.proc.pid), cpu_seconds(proc.pid, True), time.monotonic()
        time.sleep(args.minutes * 60)
        cpu1, cron1, t1 = cpu_seconds(side.proc.pid), cpu_seconds(proc.pid, True), time.monotonic()
    finally:
        os.remove(table)
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    delays = []
    for name in os.listdir(outdir):
        with open(os.path.join(outdir, name)) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
                    due_ms = int(parts[0]) // 60 * 60 * 1000.0
                    delays.append(int(parts[1]) / 1e6 - due_ms)
    return delays, (cpu1 - cpu0) + (cron1 - cron0), t1 - t0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--orgs", type=int, default=2)
    parser.add_argument("--per-org", type=int, default=50, help="automations per organization (<= 100)")
    parser.add_argument("--interval", type=int, default=60, help="seconds between an automation's slots")
    parser.add_argument("--minutes", type=float, default=2, help="each side's window")
    parser.add_argument("--idle-seconds", type=float, default=20)
    parser.add_argument("--adapt", default=os.path.join(cl.REPO, "build", "bin", "adapt"))
    cl.add_daemon_args(parser, "scheduler")
    args = cl.absolute_daemon_paths(parser.parse_args())
    args.adapt = os.path.abspath(args.adapt)
    workdir = tempfile.mkdtemp(prefix="adapt-bench-scheduler-")
    side = cl.AdaptSide(args, workdir)
    side.start()
    if not side.proc:
        raise cl.BenchError("needs an adaptd of its own (unset ADAPT_URL)")
    orgs = []  # (client, sandbox id, automation ids)
    try:
        for i in range(args.orgs):
            client = new_org(side.client, "bench-sched-%d-%d" % (os.getpid(), i))
            orgs.append((client, running_sandbox(client), []))
        # The idle baseline holds the same running sandboxes (their monitoring and agents cost
        # CPU of their own): only the automations differ between the two idle windows.
        idle0, t0 = cpu_seconds(side.proc.pid), time.monotonic()
        time.sleep(args.idle_seconds)
        idle_none = (cpu_seconds(side.proc.pid) - idle0) / (time.monotonic() - t0)
        for client, sid, ids in orgs:
            # Created with an hour's interval (idle), then paused until the adapt side's window.
            ids[:] = create_automations(client, sid, args.per_org, 3600)
        idle0, t0 = cpu_seconds(side.proc.pid), time.monotonic()
        time.sleep(args.idle_seconds)
        idle_many = (cpu_seconds(side.proc.pid) - idle0) / (time.monotonic() - t0)
        for client, sid, ids in orgs:
            for aid in ids:
                client.call("DELETE", "/v1/automations/" + aid)
            ids[:] = create_automations(client, sid, args.per_org, args.interval)
            for aid in ids:
                client.call("POST", "/v1/automations/%s/disable" % aid)
        cl.log("scheduler: %d automations, adapt's window (%.1f min)" % (args.orgs * args.per_org, args.minutes))
        ours, our_cpu, our_wall = adapt_side(side, orgs, args)
        cl.log("scheduler: cron's window (%.1f min)" % args.minutes)
        theirs, their_cpu, their_wall = cron_side(side, orgs, args, workdir)
        a, p = percentiles(ours), percentiles(theirs)
        rows = [
            figures.figure("due -> command start, p50", "ms", a["p50_ms"], "cron + adapt sandbox exec", p["p50_ms"], "lower"),
            figures.figure("due -> command start, p99", "ms", a["p99_ms"], "cron + adapt sandbox exec", p["p99_ms"], "lower"),
            figures.figure("CPU while firing", "% of a core", round(100 * our_cpu / our_wall, 2),
                           "cron + adapt sandbox exec", round(100 * their_cpu / their_wall, 2), "lower"),
            figures.figure("adaptd CPU, idle, %d automations" % (args.orgs * args.per_org), "% of a core",
                           round(100 * idle_many, 3), "same sandboxes, no automations", round(100 * idle_none, 3),
                           "lower"),
        ]
        figures.print_table(rows)
        figures.write_report(args.out, "scheduler", rows, {
            "adapt": a, "cron": p, "automations": args.orgs * args.per_org, "orgs": args.orgs,
            "interval_s": args.interval, "minutes": args.minutes})
    finally:
        for client, sid, ids in orgs:
            for aid in ids:
                client.call("DELETE", "/v1/automations/" + aid)
            client.call("DELETE", "/v1/sandboxes/" + sid)
        time.sleep(2)
        side.close()


if __name__ == "__main__":
    try:
        main()
    except cl.BenchError as e:
        cl.log("scheduler: %s" % e)
        sys.exit(1)
