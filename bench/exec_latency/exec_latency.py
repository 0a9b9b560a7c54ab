#!/usr/bin/env python3
"""Command latency in a running sandbox: adapt's in-sandbox agent against `runsc exec`.

In one run, on one adapt sandbox (debian_12, egress none), it times:
  round trip of `true`   agent: POST /v1/sandboxes/{id}/commands {"argv":["true"]} answered
                         with the result (servedBy "agent"), N times.
                         runsc exec: `runsc <the sandbox's global flags> exec ID true` on the
                         same sandbox, N times: what every command cost before the agent (and
                         what adapt's fallback costs, plus HTTP).
  stdout throughput      agent: `dd bs=1M` writing --mib MiB to stdout (adapt keeps the last
                         MiB), MB/s over the POST. runsc exec: the same command, its stdout
                         read by this script and discarded.
Prints p50/p99 and the ratios (bench/figures.py), and writes bench/results/exec_latency.json.

Standard library only; reuses create_latency's adaptd driver. Needs root, build/bin/adaptd and
build/images/debian_12. With ADAPT_URL and ADAPT_API_KEY set it measures that daemon (which
must run on this machine, for the runsc side).
"""

import argparse
import json
import os
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


def percentiles(samples_s):
    ms = [round(s * 1000.0, 2) for s in samples_s]
    return {"samples_ms": ms, "p50_ms": round(cl.percentile(ms, 50), 2),
            "p99_ms": round(cl.percentile(ms, 99), 2)}


def post_command(adapt, sid, body):
    status, cmd = adapt.client.call("POST", "/v1/sandboxes/%s/commands" % sid, body)
    if status != 200:
        raise cl.BenchError("POST commands -> %s %s" % (status, cmd))
    return cmd


def wait_for_agent(adapt, sid):
    deadline = time.monotonic() + 60
    while post_command(adapt, sid, {"argv": ["true"]})["servedBy"] != "agent":
        if time.monotonic() > deadline:
            raise cl.BenchError("the agent of %s never connected" % sid)
        time.sleep(0.1)


def runsc_exec_prefix(args, adapt, sid):
    state = adapt.state_dir or os.environ.get("ADAPT_STATE_DIR")
    if not state:
        raise cl.BenchError("set ADAPT_STATE_DIR to the daemon's state dir for the runsc side")
    with open(os.path.join(state, "sandboxes", sid, "shim-config.json")) as f:
        shim = json.load(f)
    return [shim["runsc"], *shim["globalFlags"], "exec"]


def time_runsc(prefix, sid, argv):
    start = time.monotonic()
    r = subprocess.run(prefix + [sid] + argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=120)
    elapsed = time.monotonic() - start
    if r.returncode != 0:
        raise cl.BenchError("runsc exec %s: %s" % (argv, r.stderr.decode(errors="replace")))
    return elapsed


def time_runsc_read(prefix, sid, argv):
    """Like time_runsc, but stdout is a pipe this script drains, as adaptd would."""
    start = time.monotonic()
    proc = subprocess.Popen(prefix + [sid] + argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    total = 0
    while True:
        chunk = proc.stdout.read1(1 << 20)
        if not chunk:
            break
        total += len(chunk)
    code = proc.wait(timeout=120)
    elapsed = time.monotonic() - start
    if code != 0:
        raise cl.BenchError("runsc exec %s exited %s" % (argv, code))
    return elapsed, total


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=50, help="round trips per side (default 50)")
    p.add_argument("--mib", type=int, default=256, help="MiB written for the throughput (default 256)")
    cl.add_daemon_args(p, "exec_latency")
    args = cl.absolute_daemon_paths(p.parse_known_args()[0])
    if os.geteuid() != 0:
        cl.log("exec_latency needs root")
        return 2
    signal.signal(signal.SIGTERM, cl.interrupt)
    workdir = tempfile.mkdtemp(prefix="adapt-bench-exec-")
    adapt = cl.AdaptSide(args, workdir)
    code = 0
    try:
        url = adapt.start()
        sid = adapt.create_running({"ttlSeconds": 900, "network": {"egress": "none"}})["id"]
        wait_for_agent(adapt, sid)
        prefix = runsc_exec_prefix(args, adapt, sid)
        cl.log("adapt at %s, sandbox %s; n=%d" % (url, sid, args.n))

        agent, runsc = [], []
        for _ in range(args.n):
            start = time.monotonic()
            cmd = post_command(adapt, sid, {"argv": ["true"]})
            agent.append(time.monotonic() - start)
            if cmd["servedBy"] != "agent" or cmd["exitCode"] != 0:
                raise cl.BenchError("not served by the agent: %s" % cmd)
            runsc.append(time_runsc(prefix, sid, ["true"]))

        # 1 MiB writes: with small ones (head's 8 KiB) the writer's own syscalls under the
        # ptrace platform, not the channel, set the pace.
        flood = "dd if=/dev/zero bs=1M count=%d 2>/dev/null" % args.mib
        start = time.monotonic()
        cmd = post_command(adapt, sid, {"command": flood, "waitSeconds": 60, "timeoutSeconds": 600})
        agent_s = time.monotonic() - start
        if cmd["exitCode"] != 0:
            raise cl.BenchError("flood failed: %s" % {k: cmd[k] for k in ("status", "stderr")})
        runsc_s, got = time_runsc_read(prefix, sid, ["/bin/sh", "-c", flood])
        if got != args.mib * 1024 * 1024:
            raise cl.BenchError("runsc exec flood gave %d bytes" % got)
        mb = args.mib * 1024 * 1024 / 1e6

        results = {
            "true_round_trip": {"agent": percentiles(agent), "runsc_exec": percentiles(runsc)},
            "stdout_throughput_mb_s": {"agent": round(mb / agent_s, 1), "runsc_exec": round(mb / runsc_s, 1)},
        }
        rt = results["true_round_trip"]
        results["ratio_agent_over_runsc_exec"] = {
            "p50": round(rt["agent"]["p50_ms"] / rt["runsc_exec"]["p50_ms"], 3),
            "p99": round(rt["agent"]["p99_ms"] / rt["runsc_exec"]["p99_ms"], 3),
            "throughput": round(results["stdout_throughput_mb_s"]["agent"] /
                                results["stdout_throughput_mb_s"]["runsc_exec"], 2),
        }
        tp = results["stdout_throughput_mb_s"]
        rows = [figures.figure("true round trip p50", "ms", rt["agent"]["p50_ms"], "runsc exec",
                               rt["runsc_exec"]["p50_ms"], "lower"),
                figures.figure("true round trip p99", "ms", rt["agent"]["p99_ms"], "runsc exec",
                               rt["runsc_exec"]["p99_ms"], "lower"),
                figures.figure("stdout throughput", "MB/s", tp["agent"], "runsc exec",
                               tp["runsc_exec"], "higher")]
        figures.print_table(rows)
        figures.write_report(args.out, "exec_latency", rows, {"n": args.n, "mib": args.mib, **results})
        cl.log("wrote %s" % args.out)
    except KeyboardInterrupt:
        code = 130
    except (cl.BenchError, OSError, ValueError, subprocess.SubprocessError) as e:
        cl.log("exec_latency: %s" % e)
        tail = adapt.log_tail()
        if tail:
            cl.log("--- adaptd log (tail) ---\n" + tail)
        code = 1
    finally:
        adapt.close()
        cl.remove_tree(workdir)
    return code


if __name__ == "__main__":
    sys.exit(main())
