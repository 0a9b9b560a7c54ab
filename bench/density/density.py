#!/usr/bin/env python3
"""Density: how much memory an idle sandbox holds, so how many fit on this machine, and the
API's p99 while they run.

adapt: interactive sandboxes (egress none, the default image) created one after another until
--max of them run or the host's MemAvailable falls under --keep-free-percent of its total
(a bounded run: it stops well before the machine is short of memory). Every --every sandboxes
it times --requests GET /v1/sandboxes/{id}. Peer: raw runsc (`runsc create` + `start` of
`sleep 1000` on the same root filesystem, the flags adaptd uses), the same count.

Memory per idle sandbox is the sum of the PSS (/proc/PID/smaps_rollup) of every process that
belongs to the sandboxes, over their count: for adapt, each sandbox's adapt-shim and its process
tree (runsc-gofer, runsc-sandbox and its ptrace stubs, the `runsc exec` that runs the agent) and
anything else in its memory cgroup adapt/<id>, plus adaptd's own PSS growth; for raw runsc,
every process started with its --root (gofer, sandbox, stubs). PSS splits shared pages (the
runsc binary, shared libraries) among the processes mapping them, so the figure neither counts
page cache nor moves with what other processes on the host do, unlike the drop of MemAvailable
(kept in the JSON and on stderr as a secondary, noisy figure). The sandboxes that fit are
MemAvailable at the start over that PSS. The API p99 with the sandboxes running is compared with
the same measurement with none running: each is taken twice (with none: before the creates and
after the deletes; with them: right after the last create and after the PSS read), each time
--runs timings of --requests GETs after 50 untimed ones, and the figure is the median of those
p99s. Writes bench/results/density.json.
"""

import argparse
import os
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


# --- processes and their PSS ------------------------------------------------------------------

def processes():
    """{pid: (ppid, argv)} of every process readable now."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
            with open("/proc/%s/cmdline" % name, "rb") as f:
                argv = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
        except OSError:  # it exited meanwhile
            continue
        # The command name in parentheses may hold spaces: the fields after it are fixed.
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        out[int(name)] = (ppid, argv)
    return out


def with_descendants(procs, roots):
    children = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    seen, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid in seen or pid not in procs:
            continue
        seen.add(pid)
        todo += children.get(pid, [])
    return seen


def pss_mib(pids):
    """Sum of the PSS of `pids` (zombies and processes gone meanwhile count 0)."""
    total_kib = 0
    for pid in pids:
        try:
            with open("/proc/%d/smaps_rollup" % pid) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total_kib += int(line.split()[1])
                        break
        except (OSError, ValueError):
            continue
    return total_kib / 1024.0


def pss_by_program(pids):
    """{program: MiB}: where the PSS goes ("runsc exec" is the one holding an agent, "[exe]"
    the ptrace stubs that run the sandbox's own processes)."""
    out = {}
    procs = processes()
    for pid in pids:
        argv = procs.get(pid, (0, []))[1]
        if not argv:
            name = "[exe]"
        else:
            name = os.path.basename(argv[0])
            if name == "runsc":
                name += " " + next((a for a in argv[1:] if not a.startswith("-")), "")
        out[name] = round(out.get(name, 0.0) + pss_mib([pid]), 1)
    return out


def cgroup_pids(sandbox_id):
    """The processes in the sandbox's memory cgroup (runsc puts its sandbox process there)."""
    pids = set()
    for path in ("/sys/fs/cgroup/memory/adapt/%s" % sandbox_id, "/sys/fs/cgroup/adapt/%s" % sandbox_id):
        try:
            with open(os.path.join(path, "cgroup.procs")) as f:
                pids |= {int(x) for x in f.read().split()}
        except OSError:
            continue
    return pids


def adapt_sandbox_pids(sandbox_ids):
    """Every process of these adapt sandboxes: the shim whose argument is the sandbox's
    directory, its process tree, and whatever else is in the sandbox's cgroup."""
    procs = processes()
    wanted = {"/sandboxes/" + sid for sid in sandbox_ids}
    roots = set()
    for pid, (_, argv) in procs.items():
        if argv and os.path.basename(argv[0]) == "adapt-shim" and any(
                a.rstrip("/").endswith(w) for a in argv[1:] for w in wanted):
            roots.add(pid)
    shims = len(roots)
    for sid in sandbox_ids:
        roots |= cgroup_pids(sid)
    return with_descendants(procs, roots), shims


def runsc_pids(root):
    """Every process raw runsc started with --root `root` (gofer, sandbox) and their children."""
    procs = processes()
    flag = "--root=" + root
    roots = {pid for pid, (_, argv) in procs.items()
             if flag in argv or any(a == "--root" and b == root for a, b in zip(argv, argv[1:]))}
    return with_descendants(procs, roots)


# --- the API's latency ------------------------------------------------------------------------

def p99_once(client, sid, n):
    samples = []
    for _ in range(n):
        start = time.monotonic()
        status, _ = client.call("GET", "/v1/sandboxes/" + sid)
        samples.append(time.monotonic() - start)
        if status != 200:
            raise cl.BenchError("GET /v1/sandboxes/%s -> %s" % (sid, status))
    samples.sort()
    return samples[min(len(samples) - 1, int(len(samples) * 0.99))] * 1000


def api_p99s(client, sid, n, runs, warmup=50):
    """The p99 of `n` GETs, `runs` times, after `warmup` untimed ones: every measurement (with
    none running or with many) is taken exactly this way, and twice (the figure is the median
    of both), so neither side catches the daemon cold."""
    p99_once(client, sid, warmup)
    return [round(p99_once(client, sid, n), 3) for _ in range(runs)]


def wait_finished(adapt, sid, timeout=120):
    """Waits until the probe's /bin/true has finished, so it holds no processes."""
    deadline = time.monotonic() + timeout
    while True:
        status, sbx = adapt.client.call("GET", "/v1/sandboxes/" + sid)
        if status != 200:
            raise cl.BenchError("GET /v1/sandboxes/%s -> %s %s" % (sid, status, sbx))
        if sbx["status"] in ("completed", "failed"):
            return
        if time.monotonic() > deadline:
            raise cl.BenchError("probe sandbox %s still %s" % (sid, sbx["status"]))
        time.sleep(0.1)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--max", type=int, default=30, help="most sandboxes per side (default 30)")
    p.add_argument("--keep-free-percent", type=float, default=40.0,
                   help="stop when MemAvailable falls below this share of MemTotal (default 40)")
    p.add_argument("--every", type=int, default=10, help="time the API every N sandboxes")
    p.add_argument("--requests", type=int, default=200, help="GETs per API timing (default 200)")
    p.add_argument("--runs", type=int, default=3, help="API timings per measurement, median taken (default 3)")
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
        probe_id = probe["id"]
        wait_finished(adapt, probe_id)
        adaptd_pid = adapt.proc.pid if adapt.proc else None
        time.sleep(2)  # whatever adaptd does right after its start and the probe's end, done
        p99_none = api_p99s(adapt.client, probe_id, args.requests, args.runs)
        adaptd_before = pss_mib([adaptd_pid]) if adaptd_pid else 0.0
        before = settle()
        p99_series = []
        count = 0
        while count < args.max and meminfo_mib("MemAvailable") > floor:
            adapt.create_running({"ttlSeconds": 1800, "network": {"egress": "none"}})
            count += 1
            if count % args.every == 0 and count < args.max:
                p99_series.append({"sandboxes": count,
                                   "p99_ms": api_p99s(adapt.client, probe_id, args.requests, 1)[0]})
                cl.log("  adapt: %d sandboxes, API p99 %.1f ms" % (count, p99_series[-1]["p99_ms"]))
        after = settle()
        p99_loaded = api_p99s(adapt.client, probe_id, args.requests, args.runs)
        running = [sid for sid in adapt.live if sid != probe_id]
        pids, shims = adapt_sandbox_pids(running)
        if shims != len(running):
            raise cl.BenchError("found %d adapt-shim processes for %d sandboxes" % (shims, len(running)))
        sandboxes_pss = pss_mib(pids)
        adapt_programs = pss_by_program(pids)
        adaptd_growth = max(0.0, pss_mib([adaptd_pid]) - adaptd_before) if adaptd_pid else 0.0
        adapt_pss = (sandboxes_pss + adaptd_growth) / max(count, 1)
        p99_loaded += api_p99s(adapt.client, probe_id, args.requests, args.runs)
        adapt_avail = (before - after) / max(count, 1)
        cl.log("adapt: %d sandboxes, %d processes, PSS %.1f MiB + adaptd growth %.1f MiB; "
               "MemAvailable drop %.1f MiB" % (count, len(pids), sandboxes_pss, adaptd_growth, before - after))
        for sid in running:
            adapt.delete(sid)
        time.sleep(2)
        p99_none += api_p99s(adapt.client, probe_id, args.requests, args.runs)
        cl.log("API p99s (ms) with none: %s; with %d running: %s" % (p99_none, count, p99_loaded))

        before_runsc = settle()
        for _ in range(count):
            cid = runsc.new_id()
            runsc.checked("create", "--bundle", runsc.bundles["sleep"], cid)
            runsc.checked("start", cid)
        after_runsc = settle()
        runsc_procs = runsc_pids(runsc.root)
        runsc_pss = pss_mib(runsc_procs) / max(count, 1)
        runsc_programs = pss_by_program(runsc_procs)
        runsc_avail = (before_runsc - after_runsc) / max(count, 1)
        cl.log("raw runsc: %d containers, %d processes, PSS %.1f MiB; MemAvailable drop %.1f MiB" %
               (count, len(runsc_procs), runsc_pss * count, before_runsc - after_runsc))
        cl.log("per sandbox: adapt %.1f MiB PSS (MemAvailable drop %.1f), raw runsc %.1f MiB PSS "
               "(MemAvailable drop %.1f); the drops are noisy on a busy host" %
               (adapt_pss, adapt_avail, runsc_pss, runsc_avail))
        cl.log("PSS by program, MiB for all %d: adapt %s; raw runsc %s" % (count, adapt_programs, runsc_programs))

        # PSS is never near 0 for a live sandbox; the floor only keeps a broken read from
        # turning into an absurd count.
        rows = [
            figures.figure("MiB per idle sandbox (PSS of its processes)", "MiB", round(adapt_pss, 1), "raw runsc",
                           round(runsc_pss, 1), "lower"),
            figures.figure("idle sandboxes that fit in MemAvailable", "sandboxes", int(before / max(adapt_pss, 1.0)),
                           "raw runsc", int(before / max(runsc_pss, 1.0)), "higher"),
            figures.figure("API p99 with %d sandboxes running" % count, "ms", round(statistics.median(p99_loaded), 3),
                           "API p99 with none", round(statistics.median(p99_none), 3), "lower"),
        ]
        figures.print_table(rows)
        figures.write_report(args.out, "density", rows, {
            "sandboxes": count, "mem_total_mib": round(total), "mem_available_start_mib": round(before),
            "stopped_by": "max" if count >= args.max else "memory floor",
            "adapt": {"processes": len(pids), "pss_mib": round(sandboxes_pss, 1),
                      "pss_by_program_mib": adapt_programs, "adaptd_pss_growth_mib": round(adaptd_growth, 1),
                      "mem_available_drop_mib_per_sandbox": round(adapt_avail, 1)},
            "runsc": {"processes": len(runsc_procs), "pss_mib": round(runsc_pss * count, 1),
                      "pss_by_program_mib": runsc_programs,
                      "mem_available_drop_mib_per_sandbox": round(runsc_avail, 1)},
            "api": {"requests": args.requests, "runs": args.runs, "p99_none_ms": p99_none,
                    "p99_loaded_ms": p99_loaded, "series": p99_series}})
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
