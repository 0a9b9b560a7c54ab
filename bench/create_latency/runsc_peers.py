"""The peers create_latency.py (and the benches that import it) measure adapt against: raw runsc on
an OCI bundle, and podman with runsc as its runtime. create_latency.py re-exports both."""

import json
import os
import shutil
import subprocess
import tempfile
import time

from bench_support import POLL_S, STEP_TIMEOUT_S, BenchError, log, run_quiet


# --- raw runsc --------------------------------------------------------------------------------

def oci_spec(rootfs, argv, env):
    return {
        "ociVersion": "1.0.2",
        "process": {"terminal": False, "user": {"uid": 0, "gid": 0}, "args": argv, "env": env, "cwd": "/"},
        "root": {"path": rootfs, "readonly": True},
        "hostname": "bench",
        "mounts": [
            {"destination": "/proc", "type": "proc", "source": "proc"},
            {"destination": "/dev", "type": "tmpfs", "source": "tmpfs"},
            {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]},
        ],
        "linux": {"namespaces": [{"type": t} for t in ("pid", "network", "ipc", "uts", "mount")]},
    }


class RunscSide:
    def __init__(self, args, workdir):
        self.args = args
        self.root = os.path.join(workdir, "runsc-root")
        self.bundles = {}
        self.live = []
        self.seq = 0

    def start(self):
        rootfs = os.path.abspath(os.path.join(self.args.images_dir, self.args.image, "rootfs"))
        if not os.path.isdir(rootfs):
            raise BenchError("no image at %s (run scripts/build-image.sh)" % rootfs)
        env = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
        os.makedirs(self.root)
        for name, argv in (("true", ["/bin/true"]), ("sleep", ["sleep", "1000"])):
            bundle = os.path.join(os.path.dirname(self.root), "bundle-" + name)
            os.makedirs(bundle)
            with open(os.path.join(bundle, "config.json"), "w") as f:
                json.dump(oci_spec(rootfs, argv, env), f, indent=2)
            self.bundles[name] = bundle
        return rootfs

    def runsc(self, *argv):
        return [self.args.runsc, "--root", self.root, "--platform=ptrace", "--network=none"] + list(argv)

    def checked(self, *argv):
        # Files, not pipes: the sandbox `runsc create` forks keeps its stdio open, so reading a
        # pipe to EOF would wait for the container to end.
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            r = subprocess.run(self.runsc(*argv), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                               timeout=STEP_TIMEOUT_S, start_new_session=True)
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
        if r.returncode != 0:
            raise BenchError("runsc %s -> exit %s: %s" % (" ".join(argv), r.returncode, stderr.strip()[-2000:]))
        return stdout

    def new_id(self):
        self.seq += 1
        cid = "bench-%d-%d" % (os.getpid(), self.seq)
        self.live.append(cid)
        return cid

    def measure(self, metric):
        cid = self.new_id()
        start = time.monotonic()
        if metric == "create_to_command_finished":
            self.checked("run", "--bundle", self.bundles["true"], cid)
        elif metric == "create_to_first_command":
            self.checked("create", "--bundle", self.bundles["sleep"], cid)
            self.checked("start", cid)
            self.checked("exec", cid, "/bin/true")
        else:
            self.checked("create", "--bundle", self.bundles["sleep"], cid)
            self.checked("start", cid)
            deadline = start + STEP_TIMEOUT_S
            while json.loads(self.checked("state", cid)).get("status") != "running":
                if time.monotonic() > deadline:
                    raise BenchError("runsc container %s not running after %s s" % (cid, STEP_TIMEOUT_S))
                time.sleep(POLL_S)
        elapsed = time.monotonic() - start
        self.delete(cid)
        return elapsed

    def delete(self, cid):
        run_quiet(self.runsc("delete", "-force", cid))
        self.live.remove(cid)

    def close(self):
        for cid in list(self.live):
            self.delete(cid)
        if os.path.isdir(self.root):
            for cid in run_quiet(self.runsc("list", "-quiet")).stdout.split():
                log("warning: runsc container %s survived delete; retrying" % cid)
                run_quiet(self.runsc("delete", "-force", cid))


# --- podman with runsc as its runtime -------------------------------------------------------

class PodmanSide:
    IMAGE = "localhost/adapt-bench/rootfs"

    def __init__(self, args):
        self.args = args
        self.live = []
        self.seq = 0

    def podman(self, *argv):
        return ["podman", "--runtime", shutil.which(self.args.runsc) or self.args.runsc,
                "--runtime-flag", "platform=ptrace", "--runtime-flag", "network=none"] + list(argv)

    def checked(self, *argv):
        r = subprocess.run(self.podman(*argv), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=STEP_TIMEOUT_S)
        if r.returncode != 0:
            raise BenchError("podman %s -> exit %s: %s" % (" ".join(argv), r.returncode, r.stderr.strip()[-2000:]))
        return r.stdout

    def start(self, rootfs):
        """Imports the root filesystem as an image (untimed, once per run)."""
        run_quiet(["podman", "rmi", "-f", self.IMAGE])
        tar = subprocess.Popen(["tar", "-C", rootfs, "-c", "."], stdout=subprocess.PIPE)
        r = subprocess.run(["podman", "import", "-q", "-", self.IMAGE], stdin=tar.stdout, capture_output=True,
                           text=True, timeout=600)
        tar.stdout.close()
        tar.wait()
        if r.returncode != 0:
            raise BenchError("podman import: %s" % r.stderr.strip())
        return self.IMAGE

    def measure(self, metric):
        self.seq += 1
        name = "adapt-bench-%d-%d" % (os.getpid(), self.seq)
        self.live.append(name)
        start = time.monotonic()
        if metric == "create_to_command_finished":
            self.checked("run", "--name", name, "--network=none", self.IMAGE, "/bin/true")
        else:
            self.checked("run", "-d", "--name", name, "--network=none", self.IMAGE, "sleep", "1000")
            if metric == "create_to_first_command":
                self.checked("exec", name, "/bin/true")
            else:
                deadline = start + STEP_TIMEOUT_S
                while self.checked("inspect", "--format", "{{.State.Status}}", name).strip() != "running":
                    if time.monotonic() > deadline:
                        raise BenchError("podman container %s not running" % name)
                    time.sleep(POLL_S)
        elapsed = time.monotonic() - start
        self.delete(name)
        return elapsed

    def delete(self, name):
        run_quiet(self.podman("rm", "-f", "-t", "0", name))
        self.live.remove(name)

    def close(self):
        for name in list(self.live):
            self.delete(name)
        run_quiet(["podman", "rmi", "-f", self.IMAGE])
