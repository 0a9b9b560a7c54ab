"""What create_latency.py and the peers it runs share: the polling and timeout constants, the
bench's error, its log, percentiles, and the teardown of a temp dir left with mounts or loop
devices. create_latency.py re-exports every name here (the other benches use it as `cl`)."""

import os
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
POLL_S = 0.010
HTTP_TIMEOUT_S = 60
STEP_TIMEOUT_S = 180


class BenchError(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def percentile(samples, pct):
    ordered = sorted(samples)
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[pct - 1]


def summarize(samples_s):
    ms = [round(s * 1000.0, 1) for s in samples_s]
    return {"samples_ms": ms, "p50_ms": round(percentile(ms, 50), 1), "p95_ms": round(percentile(ms, 95), 1)}


def run_quiet(argv, timeout=60):
    """Runs a teardown command; failures are reported by the caller's checks, not raised."""
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout, start_new_session=True)
    except (OSError, subprocess.TimeoutExpired) as e:
        return subprocess.CompletedProcess(argv, -1, "", str(e))


def mounts_under(path):
    prefix = os.path.realpath(path).rstrip("/") + "/"
    found = []
    with open("/proc/self/mounts") as f:
        for line in f:
            target = line.split()[1].replace("\\040", " ")
            if target.startswith(prefix):
                found.append(target)
    return found


def loop_devices_under(path):
    prefix = os.path.realpath(path).rstrip("/") + "/"
    found = []
    for dev in os.listdir("/sys/block"):
        try:
            with open("/sys/block/%s/loop/backing_file" % dev) as f:
                backing = f.read().strip()
        except OSError:
            continue
        if backing.startswith(prefix):
            found.append("/dev/" + dev)
    return found


def remove_tree(path):
    """Removes a temp dir, first undoing any mount or loop device left inside it."""
    for target in sorted(mounts_under(path), key=len, reverse=True):
        if run_quiet(["umount", target]).returncode != 0:
            run_quiet(["umount", "-l", target])
    for dev in loop_devices_under(path):
        run_quiet(["losetup", "-d", dev])
    if mounts_under(path):
        log("warning: mounts remain under %s; leaving it in place" % path)
        return
    run_quiet(["rm", "-rf", "--one-file-system", path], timeout=300)
