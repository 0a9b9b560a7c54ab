#!/usr/bin/env python3
"""Checkpoint and restore time by touched memory: adapt's stop and start of a durable sandbox,
and a named checkpoint, against raw `runsc checkpoint` / `runsc restore` of the same workload.

For each size (default 128 and 1024 MiB), in one run:
  adapt    a durable sandbox (debian_12, egress none, memoryMiB = size + 512) runs a python3
           process that allocates SIZE MiB and writes to every page of it, then sleeps.
           checkpoint: POST /v1/sandboxes/{id}/stop answered (hibernated, processes saved);
           restore: POST .../start until GET shows running (the process is checked alive).
           named: POST .../checkpoints answered (runsc checkpoint, a copy of the image and the
           disk, runsc restore: what a named checkpoint costs a running sandbox).
  runsc    the same process in a runsc container on the same root filesystem, with adaptd's
           flags (--platform=ptrace --network=none): `runsc checkpoint --image-path` returned;
           `runsc restore --detach` returned and `runsc state` running; the named figure's peer
           is the two together.
Each measured --runs times (default 2); p50 reported, with the ratio adapt/runsc
(bench/figures.py); JSON to bench/results/checkpoint.json.

Standard library only; reuses create_latency's drivers. Needs root, build/bin/adaptd and
build/images/debian_12, and about 2.5 GiB of free memory for the 1 GiB size.
"""

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "create_latency"))
import create_latency as cl  # noqa: E402

sys.path.insert(0, os.path.dirname(HERE))
import figures  # noqa: E402

# Allocates and writes every page of SIZE MiB (bytearray's zeroed pages are not touched until
# written), marks itself ready, then sleeps holding it.
TOUCHER = ("import time; b = bytearray(%d << 20)\n"
           "for i in range(0, len(b), 4096): b[i] = 1\n"
           "open('%s', 'w').write('ready'); time.sleep(1e6)")


def p50_ms(samples_s):
    return round(cl.percentile([s * 1000.0 for s in samples_s], 50), 1)


class AdaptCheckpoints:
    def __init__(self, args, workdir):
        self.side = cl.AdaptSide(args, workdir)

    def start(self):
        self.side.start()

    def call(self, method, path, body=None, want=(200,)):
        status, out = self.side.client.call(method, path, body)
        if status not in want:
            raise cl.BenchError("%s %s -> %s %s" % (method, path, status, out))
        return out

    def command(self, sid, command):
        deadline = time.monotonic() + 60
        while True:
            status, cmd = self.side.client.call("POST", "/v1/sandboxes/%s/commands" % sid,
                                                {"command": command})
            if status == 200 and cmd.get("exitCode") == 0:
                return cmd["stdout"]
            if time.monotonic() > deadline:
                raise cl.BenchError("command %r in %s: %s %s" % (command, sid, status, cmd))
            time.sleep(0.2)  # the agent reconnects just after a restore

    def sandbox(self, mib):
        sbx = self.side.create_running({"startupClass": "durable", "memoryMiB": mib + 512,
                                        "network": {"egress": "none"}, "ttlSeconds": 3600})
        sid = sbx["id"]
        script = TOUCHER % (mib, "/root/ready")
        self.command(sid, "cat > /root/toucher.py <<'EOF'\n%s\nEOF\n"
                          "nohup python3 /root/toucher.py >/dev/null 2>&1 & echo $! > /root/pid; "
                          "for i in $(seq 1200); do [ -f /root/ready ] && exit 0; sleep 0.1; done; "
                          "exit 1" % script)
        return sid

    def measure(self, mib, runs):
        sid = self.sandbox(mib)
        stops, starts, named = [], [], []
        for run in range(runs):
            t0 = time.monotonic()
            stopped = self.call("POST", "/v1/sandboxes/%s/stop" % sid)
            stops.append(time.monotonic() - t0)
            if stopped["hibernation"]["processes"] != "saved":
                raise cl.BenchError("the stop did not save the processes: %s" % stopped["hibernation"])
            t0 = time.monotonic()
            self.call("POST", "/v1/sandboxes/%s/start" % sid, want=(202,))
            while self.call("GET", "/v1/sandboxes/" + sid)["status"] == "provisioning":
                time.sleep(cl.POLL_S)
            starts.append(time.monotonic() - t0)
            self.command(sid, "kill -0 $(cat /root/pid)")
            t0 = time.monotonic()
            self.call("POST", "/v1/sandboxes/%s/checkpoints" % sid, {"name": "bench-%d" % run},
                      want=(201,))
            named.append(time.monotonic() - t0)
            self.command(sid, "kill -0 $(cat /root/pid)")
            self.call("DELETE", "/v1/sandboxes/%s/checkpoints/bench-%d" % (sid, run), want=(204,))
        self.side.delete(sid)
        return {"checkpoint": stops, "restore": starts, "named": named}

    def close(self):
        for sid in list(self.side.live):
            try:
                self.side.delete(sid)
            except cl.BenchError as e:
                cl.log("warning: %s" % e)
        self.side.close()


class RunscCheckpoints:
    def __init__(self, args, workdir):
        self.side = cl.RunscSide(args, workdir)
        self.workdir = workdir
        self.rootfs = None

    def start(self):
        self.rootfs = self.side.start()

    def bundle(self, mib):
        bundle = os.path.join(self.workdir, "bundle-toucher-%d" % mib)
        if not os.path.isdir(bundle):
            os.makedirs(bundle)
            env = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
            spec = cl.oci_spec(self.rootfs, ["python3", "-c", TOUCHER % (mib, "/dev/ready")], env)
            with open(os.path.join(bundle, "config.json"), "w") as f:
                json.dump(spec, f, indent=2)
        return bundle

    def wait_running(self, cid):
        deadline = time.monotonic() + cl.STEP_TIMEOUT_S
        while json.loads(self.side.checked("state", cid)).get("status") != "running":
            if time.monotonic() > deadline:
                raise cl.BenchError("runsc container %s not running" % cid)
            time.sleep(cl.POLL_S)

    def measure(self, mib, runs):
        bundle = self.bundle(mib)
        stops, starts = [], []
        for _ in range(runs):
            cid = self.side.new_id()
            self.side.checked("create", "--bundle", bundle, cid)
            self.side.checked("start", cid)
            deadline = time.monotonic() + cl.STEP_TIMEOUT_S
            while cl.run_quiet(self.side.runsc("exec", cid, "test", "-e", "/dev/ready")).returncode != 0:
                if time.monotonic() > deadline:
                    raise cl.BenchError("the toucher in %s never got ready" % cid)
                time.sleep(0.2)
            image = os.path.join(self.workdir, "image-" + cid)
            t0 = time.monotonic()
            self.side.checked("checkpoint", "--image-path", image, cid)
            stops.append(time.monotonic() - t0)
            cl.run_quiet(self.side.runsc("delete", "-force", cid))
            t0 = time.monotonic()
            self.side.checked("restore", "--image-path", image, "--bundle", bundle, "--detach", cid)
            self.wait_running(cid)
            starts.append(time.monotonic() - t0)
            self.side.checked("exec", cid, "test", "-e", "/dev/ready")
            self.side.delete(cid)
            shutil.rmtree(image, ignore_errors=True)
        return {"checkpoint": stops, "restore": starts,
                "named": [a + b for a, b in zip(stops, starts)]}

    def close(self):
        self.side.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="128,1024", help="touched MiB, comma-separated")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--image", default="debian_12")
    cl.add_daemon_args(parser, "checkpoint")
    args = cl.absolute_daemon_paths(parser.parse_args())
    sizes = [int(s) for s in args.sizes.split(",")]
    workdir = tempfile.mkdtemp(prefix="adapt-bench-checkpoint-")
    adapt, runsc = AdaptCheckpoints(args, workdir), RunscCheckpoints(args, workdir)
    signal.signal(signal.SIGTERM, cl.interrupt)
    rows, details = [], {"sizes_mib": sizes, "runs": args.runs, "samples_ms": {}}
    try:
        adapt.start()
        runsc.start()
        for mib in sizes:
            cl.log("%d MiB: adapt" % mib)
            mine = adapt.measure(mib, args.runs)
            cl.log("%d MiB: runsc" % mib)
            peer = runsc.measure(mib, args.runs)
            labels = {"checkpoint": ("stop (checkpoint)", "runsc checkpoint"),
                      "restore": ("start (restore) -> running", "runsc restore -> running"),
                      "named": ("named checkpoint (sandbox runs on)", "runsc checkpoint + restore")}
            for key, (metric, peer_name) in labels.items():
                rows.append(figures.figure("%s, %d MiB touched" % (metric, mib), "ms",
                                           p50_ms(mine[key]), peer_name, p50_ms(peer[key]), "lower"))
            details["samples_ms"][str(mib)] = {
                side: {k: [round(s * 1000.0, 1) for s in v] for k, v in got.items()}
                for side, got in (("adapt", mine), ("runsc", peer))}
    finally:
        runsc.close()
        adapt.close()
        shutil.rmtree(workdir, ignore_errors=True)
    figures.print_table(rows)
    figures.write_report(args.out, "checkpoint", rows, details)


if __name__ == "__main__":
    main()
