#!/usr/bin/env python3
"""The scheduler (issue 18): how late an automation's command starts after its slot is due, and
the CPU it costs, against cron firing the same commands through `adapt sandbox exec`.

One adaptd. --orgs organizations, each holding one idle running sandbox and --per-org interval
automations (--interval seconds, default 60) targeting it, whose command prints the sandbox's
clock (`date +%s%N`). An interval schedule's slots are anchored at the automation's creation, so
the automations' slots fall across the minute as they were created; the cron side is given the
same spread (below), so both sides fire the same commands at the same seconds.

adapt side: every automation is enabled; each slot due within --minutes after the last enable is
measured, and the automations stay enabled until every such slot has a finished run (at most
--drain-seconds), so a slot that fired late is counted, not dropped. Each succeeded run's delay
is the printed time minus its scheduledAt (due time -> command start). Every run's status is
counted; runs of slots past the window are counted apart and not measured.

cron side (Debian's cron, started here in the foreground; installed with apt-get when missing):
the commands are grouped by the second of the minute their automation's first slot fell on; one
`* * * * *` line per second sleeps to it and starts that second's commands at once, each an
`adapt sandbox exec SBX -- date +%s%N` in the background. A command's delay is the printed time
minus its second of the minute. After --minutes cron is stopped and the run waits until every
command it started has ended. cron and everything it starts live in a cgroup of their own
(adapt/bench-cron-PID, memory capped at --cron-memory-gib), so their CPU is counted whole and a
peer that outgrows the machine is stopped there, not by the kernel elsewhere.

CPU: adaptd's (utime+stime, /proc) from the first enable until the last run ended, against
adaptd's plus the cron cgroup's (cpuacct) from cron's start until its last command ended; shown
as a share of a core over that time and per command. The sandboxes' own CPU is the same on both
sides and not counted. Also: adaptd's CPU over --idle-seconds with every automation present but
none due (a 3600 s interval), beside the same window with the same running sandboxes before any
automation existed (the scheduler sleeps until the next due time; it does not poll).

The default is scaled to finish in a few minutes (2 organizations x 50 automations, 1 minute a
side); the issue's full run is `--orgs 100 --per-org 100` (10,000 automations; an automation
may only target its own organization's sandboxes, so that is 100 idle sandboxes). Prints one
table (bench/figures.py) and writes bench/results/scheduler.json.

Standard library only. Needs root, build/bin/adaptd, build/bin/adapt and build/images/debian_12.
"""

import argparse
import concurrent.futures
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
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


class Org:
    def __init__(self, client, sandbox_id):
        self.client = client
        self.sandbox_id = sandbox_id
        self.automations = []  # (id, first slot in epoch ms)


def each_org(orgs, fn):
    """fn(org) for every organization, eight at a time (setting up 10,000 automations one request
    after another would take longer than the measurement)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        for f in [pool.submit(fn, o) for o in orgs]:
            f.result()


def create_automations(org, n, interval):
    org.automations = []
    for i in range(n):
        org.automations.append(create_automation(org, i, interval))


def create_automation(org, i, interval):
    status, a = org.client.call("POST", "/v1/automations", {
        "sandboxId": org.sandbox_id, "name": "bench-%d" % i, "intervalSeconds": interval, "command": CLOCK})
    if status != 201:
        raise cl.BenchError("POST /v1/automations -> %s %r" % (status, a))
    return a["id"], iso_ms(a["nextRuns"][0])


def create_spread(orgs, n, interval):
    """Creates n automations per organization, one every interval / (orgs * n) seconds: an
    interval schedule is anchored at its creation, so their slots fall evenly across the
    interval, as independently made automations' would (made all at once, they would all fall
    due in the same second). Each is disabled as soon as it is made."""
    total = len(orgs) * n
    start = time.monotonic() + 1
    todo = queue.Queue()
    for k in range(total):
        todo.put((k, orgs[k % len(orgs)], k // len(orgs)))
    made = [None] * total

    def work():
        while True:
            try:
                k, org, i = todo.get_nowait()
            except queue.Empty:
                return
            time.sleep(max(0, start + k * interval / total - time.monotonic()))
            made[k] = (org, create_automation(org, i, interval))
            # Paused at once (its first slot is an interval away), so that no slot fires while
            # the others are made: the window starts on an idle machine, with the enables.
            aid = made[k][1][0]
            status, body = org.client.call("POST", "/v1/automations/%s/disable" % aid)
            if status != 200:
                raise cl.BenchError("POST /v1/automations/%s/disable -> %s %r" % (aid, status, body))
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        for f in [pool.submit(work) for _ in range(8)]:
            f.result()
    for org in orgs:
        org.automations = []
    for org, automation in made:
        org.automations.append(automation)


def delete_automations(org):
    for aid, _ in org.automations:
        org.client.call("DELETE", "/v1/automations/" + aid)
    org.automations = []


def set_enabled(org, enabled):
    """Enables or disables every automation of `org`; enabling returns {id: its first slot, ms}."""
    verb = "enable" if enabled else "disable"
    first = {}
    for aid, _ in org.automations:
        status, a = org.client.call("POST", "/v1/automations/%s/%s" % (aid, verb))
        if status != 200:
            raise cl.BenchError("%s %s -> %s %r" % (verb, aid, status, a))
        if enabled:
            first[aid] = iso_ms(a["nextRuns"][0])
    return first


class TaskPeak:
    """The most tasks (processes and threads) the host held while it ran: /proc/loadavg's
    second figure of its fourth field, read every half second on a thread of its own."""

    def __init__(self):
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self):
        while not self._stop.wait(0.5):
            with open("/proc/loadavg") as f:
                self.peak = max(self.peak, int(f.read().split()[3].split("/")[1]))

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.peak


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


UNFINISHED = ("queued", "starting", "running")


def adapt_side(side, orgs, args):
    """Enables every automation; each slot due within --minutes after the last enable is
    measured, and the automations stay enabled until every such slot has a finished run (a
    slot that fired late is not dropped from the figures), then are disabled. Returns (delays in
    ms, {status: count} of those slots' runs, CPU s, wall s, runs started in all, peak tasks)."""
    peak = TaskPeak()
    cpu0, t0 = cpu_seconds(side.proc.pid), time.monotonic()
    first = {}
    window_start = time.time() * 1000
    each_org(orgs, lambda o: first.update(set_enabled(o, True)))
    window_end = time.time() * 1000 + args.minutes * 60000
    # Each automation's last slot inside the window (its first one is always inside).
    last = {aid: f + (window_end - f) // (args.interval * 1000) * args.interval * 1000
            for aid, f in first.items()}
    time.sleep(args.minutes * 60)
    deadline = time.monotonic() + args.drain_seconds
    while True:
        runs = []
        each_org(orgs, lambda o: runs.extend(
            r for r in all_runs(o.client) if r["trigger"] in ("schedule", "catch_up")))
        settled = {}
        for r in runs:
            if r["status"] not in UNFINISHED:
                settled[r["automationId"]] = max(settled.get(r["automationId"], 0), iso_ms(r["scheduledAt"]))
        waiting = sum(1 for aid, slot in last.items() if settled.get(aid, 0) < slot)
        if not waiting:
            break
        if time.monotonic() > deadline:
            cl.log("scheduler: %d automations' slots had not run %d s after the window" %
                   (waiting, args.drain_seconds))
            break
        time.sleep(10)
    each_org(orgs, lambda o: set_enabled(o, False))
    cpu1, t1 = cpu_seconds(side.proc.pid), time.monotonic()
    delays, statuses = [], {}
    runs = [r for r in runs if iso_ms(r["scheduledAt"]) >= window_start]  # not those of the set-up
    for run in runs:
        if iso_ms(run["scheduledAt"]) > window_end:
            statuses["after the window"] = statuses.get("after the window", 0) + 1
            continue
        statuses[run["status"]] = statuses.get(run["status"], 0) + 1
        printed = (run.get("stdout") or "").strip()
        if run["status"] == "succeeded" and printed.isdigit():
            delays.append(int(printed) / 1e6 - iso_ms(run["scheduledAt"]))
    started = sum(1 for r in runs if r["status"] in ("succeeded", "failed"))
    return delays, statuses, cpu1 - cpu0, t1 - t0, started, peak.stop()


class CronGroup:
    """A memory and a cpuacct cgroup under adapt/ for cron and all it starts."""

    def __init__(self, memory_bytes):
        name = "adapt/bench-cron-%d" % os.getpid()
        self.memory = os.path.join("/sys/fs/cgroup/memory", name)
        self.cpuacct = os.path.join("/sys/fs/cgroup/cpuacct", name)
        for d in (self.memory, self.cpuacct):
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(self.memory, "memory.limit_in_bytes"), "w") as f:
            f.write(str(memory_bytes))

    def join(self):
        """Runs in the child between fork and exec."""
        for d in (self.memory, self.cpuacct):
            with open(os.path.join(d, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))

    def pids(self):
        with open(os.path.join(self.cpuacct, "cgroup.procs")) as f:
            return [int(p) for p in f.read().split()]

    def cpu_seconds(self):
        with open(os.path.join(self.cpuacct, "cpuacct.usage")) as f:
            return int(f.read()) / 1e9

    def oom_kills(self):
        with open(os.path.join(self.memory, "memory.oom_control")) as f:
            for line in f:
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
        return 0

    def close(self):
        for _ in range(50):
            pids = self.pids()
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        for d in (self.memory, self.cpuacct):
            try:
                os.rmdir(d)
            except OSError as e:
                cl.log("warning: removing %s: %s" % (d, e))


def cron_side(side, orgs, args, workdir):
    """cron fires the same commands at the same seconds of the minute, from each minute that
    begins within --minutes; returns (delays in ms, {outcome: count}, CPU s, wall s, commands
    started, peak tasks)."""
    cron = shutil.which("cron")
    if not cron:
        subprocess.run(["apt-get", "install", "-y", "-q", "cron"], check=True,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"), stdout=sys.stderr)
        cron = shutil.which("cron")
    outdir, errdir = os.path.join(workdir, "cron-out"), os.path.join(workdir, "cron-err")
    os.makedirs(outdir)
    os.makedirs(errdir)
    seconds = {}  # second of the minute -> script lines
    n = 0
    for org in orgs:
        for _, first_ms in org.automations:
            second = int(first_ms % 60000) // 1000
            seconds.setdefault(second, []).append(
                "ADAPT_URL=%s ADAPT_API_KEY=%s %s sandbox exec %s -- %s > %s/%d.$1 2> %s/%d.$1 &" % (
                    org.client.url, org.client.key, args.adapt, org.sandbox_id, CLOCK, outdir, n, errdir, n))
            n += 1
    lines = ["SHELL=/bin/sh", "PATH=/usr/bin:/bin"]
    for second, commands in sorted(seconds.items()):
        script = os.path.join(workdir, "second-%d.sh" % second)
        with open(script, "w") as f:
            f.write("\n".join(commands) + "\nwait\n")
        # $1 is the minute the line was started in; the commands are due at its second `second`.
        lines.append("* * * * * root m=$(date +\\%%s); sleep %d; /bin/sh %s $((m / 60 * 60 + %d))" % (
            second, script, second))
    table = "/etc/cron.d/adapt-bench-scheduler"
    group = CronGroup(int(args.cron_memory_gib * (1 << 30)))
    proc = None
    peak = TaskPeak()
    try:
        cpu0, cron0, t0 = cpu_seconds(side.proc.pid), group.cpu_seconds(), time.monotonic()
        start_s = time.time()
        with open(table, "w") as f:
            f.write("\n".join(lines) + "\n")
        proc = subprocess.Popen([cron, "-f"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, preexec_fn=group.join)
        time.sleep(args.minutes * 60)
        # The commands of every minute that began in the window have been started by now (each
        # line sleeps to its second, then starts them): cron itself is done.
        os.remove(table)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        minutes = int((start_s + args.minutes * 60) // 60) - int(start_s // 60)
        deadline = time.monotonic() + args.drain_seconds
        while group.pids() and time.monotonic() < deadline:
            time.sleep(1)
        left = len(group.pids())
        cpu1, cron1, t1 = cpu_seconds(side.proc.pid), group.cpu_seconds(), time.monotonic()
        oom_kills = group.oom_kills()
    finally:
        if os.path.exists(table):
            os.remove(table)
        if proc and proc.poll() is None:
            proc.kill()
        group.close()
    delays, started, errors = [], 0, {}
    for name in os.listdir(outdir):
        started += 1
        due_s = int(name.split(".")[1])
        with open(os.path.join(outdir, name)) as f:
            printed = f.read().strip()
        if printed.isdigit():
            delays.append(int(printed) / 1e6 - due_s * 1000.0)
            continue
        with open(os.path.join(errdir, name)) as f:
            why = (f.read().strip().splitlines() or ["(nothing on stderr)"])[-1][:120]
        errors[why] = errors.get(why, 0) + 1
    outcome = {"due": n * minutes, "succeeded": len(delays), "failed": started - len(delays),
               "never started (fork failed)": n * minutes - started, "still running at the drain's end": left,
               "oom kills": oom_kills, "failures, by last stderr line": errors}
    return delays, outcome, (cpu1 - cpu0) + (cron1 - cron0), t1 - t0, started, peak.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--orgs", type=int, default=2)
    parser.add_argument("--per-org", type=int, default=50, help="automations per organization (<= 100)")
    parser.add_argument("--interval", type=int, default=60, help="seconds between an automation's slots")
    parser.add_argument("--minutes", type=float, default=1, help="each side's window")
    parser.add_argument("--drain-seconds", type=float, default=900,
                        help="at most this long, after a window, for its commands to end")
    parser.add_argument("--idle-seconds", type=float, default=20)
    parser.add_argument("--cron-memory-gib", type=float, default=8,
                        help="memory cap of the cgroup cron and its commands run in")
    parser.add_argument("--adapt", default=os.path.join(cl.REPO, "build", "bin", "adapt"))
    cl.add_daemon_args(parser, "scheduler")
    args = cl.absolute_daemon_paths(parser.parse_args())
    args.adapt = os.path.abspath(args.adapt)
    workdir = tempfile.mkdtemp(prefix="adapt-bench-scheduler-")
    side = cl.AdaptSide(args, workdir)
    # cron's commands are all one loopback client: adaptd's per-client cap (256 by default)
    # would refuse most of the peer's connections at 10,000 a minute, measuring the cap, not
    # cron. An operator running cron against their own adaptd would raise it too.
    side.extra_args = ["--max-connections-per-client", "0", "--max-connections", "0"]
    side.start()
    if not side.proc:
        raise cl.BenchError("needs an adaptd of its own (unset ADAPT_URL)")
    orgs = [None] * args.orgs
    total = args.orgs * args.per_org
    try:
        def make_org(i):
            client = new_org(side.client, "bench-sched-%d-%d" % (os.getpid(), i))
            orgs[i] = Org(client, running_sandbox(client))
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            for f in [pool.submit(make_org, i) for i in range(args.orgs)]:
                f.result()
        cl.log("scheduler: %d sandboxes running" % args.orgs)
        # The idle baseline holds the same running sandboxes (their monitoring and agents cost
        # CPU of their own): only the automations differ between the two idle windows.
        idle0, t0 = cpu_seconds(side.proc.pid), time.monotonic()
        time.sleep(args.idle_seconds)
        idle_none = (cpu_seconds(side.proc.pid) - idle0) / (time.monotonic() - t0)
        each_org(orgs, lambda o: create_automations(o, args.per_org, 3600))
        idle0, t0 = cpu_seconds(side.proc.pid), time.monotonic()
        time.sleep(args.idle_seconds)
        idle_many = (cpu_seconds(side.proc.pid) - idle0) / (time.monotonic() - t0)
        each_org(orgs, delete_automations)

        create_spread(orgs, args.per_org, args.interval)
        cl.log("scheduler: %d automations, adapt's window (%.1f min)" % (total, args.minutes))
        ours, our_status, our_cpu, our_wall, our_started, our_peak = adapt_side(side, orgs, args)
        cl.log("scheduler: adapt's runs: %r; cron's window (%.1f min)" % (our_status, args.minutes))
        theirs, their_status, their_cpu, their_wall, their_started, their_peak = cron_side(side, orgs, args, workdir)
        cl.log("scheduler: cron's commands: %r" % their_status)
        a, p = percentiles(ours), percentiles(theirs)
        peer = "cron + adapt sandbox exec"
        rows = [
            figures.figure("due -> command start, p50", "ms", a["p50_ms"], peer, p["p50_ms"], "lower"),
            figures.figure("due -> command start, p99", "ms", a["p99_ms"], peer, p["p99_ms"], "lower"),
            figures.figure("CPU while firing", "% of a core", round(100 * our_cpu / our_wall, 2),
                           peer, round(100 * their_cpu / their_wall, 2), "lower"),
            figures.figure("CPU per command started", "ms", round(1000 * our_cpu / max(1, our_started), 2),
                           peer, round(1000 * their_cpu / max(1, their_started), 2), "lower"),
            figures.figure("host tasks at the peak", "tasks", our_peak, peer, their_peak, "lower"),
            figures.figure("adaptd CPU, idle, %d automations" % total, "% of a core",
                           round(100 * idle_many, 3), "same sandboxes, no automations", round(100 * idle_none, 3),
                           "lower"),
        ]
        figures.print_table(rows)
        print("adapt's runs: %r\ncron's commands: %r" % (our_status, their_status))
        figures.write_report(args.out, "scheduler", rows, {
            "adapt": dict(a, runs=our_status, started=our_started, cpu_s=round(our_cpu, 2), wall_s=round(our_wall, 1)),
            "cron": dict(p, commands=their_status, started=their_started, cpu_s=round(their_cpu, 2),
                         wall_s=round(their_wall, 1)),
            "automations": total, "orgs": args.orgs, "interval_s": args.interval, "minutes": args.minutes})
    finally:
        def teardown(o):
            delete_automations(o)
            o.client.call("DELETE", "/v1/sandboxes/" + o.sandbox_id)
        each_org([o for o in orgs if o], teardown)
        time.sleep(2)
        side.close()


if __name__ == "__main__":
    try:
        main()
    except cl.BenchError as e:
        cl.log("scheduler: %s" % e)
        sys.exit(1)
