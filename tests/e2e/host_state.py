"""What the end-to-end tests' adaptds may leave on the host (runsc containers, mounts, cgroups,
processes, network namespaces), how a test finds it, and how a run's abandoned bases are swept
and cleaned. harness.py re-exports every name here; tests use them through it."""

import os
import signal
import subprocess

RUNSC = os.environ.get("ADAPT_RUNSC", "runsc")


# --- test runs that ended without closing their adaptd --------------------------------------

BASE_PARENT = "/tmp"
BASE_PREFIX = "adapt-e2e-"
OWNER_FILE = "owner"        # the test process that made the base: its pid and start time
NETWORKS_FILE = "networks"  # every --network-name an adaptd of the base was started with
KEPT_FILE = "kept"          # closed with keep (a failure, ADAPT_E2E_KEEP): left for reading
_swept = [False]


def process_identity(pid):
    """'PID START': a pid with its start time, so that a reused pid is not taken for it."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return "%d %s" % (pid, fields[19])  # field 22 of stat, after pid and comm
    except (OSError, IndexError):
        return ""


def sweep_abandoned_bases(parent=BASE_PARENT):
    """Cleans up the bases of test processes that are gone without closing their adaptd (a run
    killed by a timeout or a restart of the machine's session): their sandboxes, mounts and
    loop devices, network namespaces and nftables tables, then the directory unless it was
    kept. A base whose owner still runs (the other e2e shard) or that names no owner is not
    touched. Returns the bases it cleaned."""
    def read_lines(path):
        try:
            with open(path) as f:
                return [line.strip() for line in f if line.strip()]
        except OSError:
            return []

    abandoned, live_networks = [], set()
    for name in sorted(os.listdir(parent)):
        base = os.path.join(parent, name)
        identity = " ".join(read_lines(os.path.join(base, OWNER_FILE)))
        if not name.startswith(BASE_PREFIX) or not identity:
            continue
        pid = identity.split()[0]
        if pid.isdigit() and process_identity(int(pid)) != identity:
            abandoned.append(base)
        else:
            live_networks.update(read_lines(os.path.join(base, NETWORKS_FILE)))
    cleaned = []
    for base in abandoned:
        force_cleanup(os.path.join(base, "state"))
        # A live process's adaptd may have the same name (its pid reused the dead one's).
        networks = [n for n in read_lines(os.path.join(base, NETWORKS_FILE))
                    if n not in live_networks]
        for network in networks:
            remove_network(network)
        if mounts_under(base):
            continue
        if os.path.exists(os.path.join(base, KEPT_FILE)):
            # Leftovers gone; log and state stay. The other e2e shard may sweep the same base
            # at the same time and remove the owner first (the full run errored 19 tests so).
            try:
                os.remove(os.path.join(base, OWNER_FILE))
            except FileNotFoundError:
                pass
        else:
            subprocess.run(["rm", "-rf", "--one-file-system", base], check=False)
        cleaned.append(base)
    return cleaned


# --- what a stopped adaptd may have left behind -----------------------------------------------

def sweep_abandoned_bases_once():
    """sweep_abandoned_bases, the first time this test process starts an adaptd."""
    if not _swept[0]:
        _swept[0] = True
        sweep_abandoned_bases()


def runsc_root(state_dir):
    return os.path.join(state_dir, "runsc")


def runsc_containers(state_dir):
    root = runsc_root(state_dir)
    if not os.path.isdir(root):
        return []
    r = subprocess.run([RUNSC, "--root", root, "list", "-quiet"], capture_output=True, text=True, timeout=60)
    return [line.strip() for line in r.stdout.splitlines() if line.strip()]


def mounts_under(path):
    prefix = os.path.realpath(path).rstrip("/") + "/"
    found = []
    with open("/proc/mounts") as f:
        for line in f:
            target = line.split()[1].replace("\\040", " ")
            if target.startswith(prefix) or target == prefix.rstrip("/"):
                found.append(target)
    return found


def cgroups_named(ids):
    """Cgroup directories under /sys/fs/cgroup/*/adapt/ (or the v2 adapt/) naming one of ids."""
    found = []
    roots = []
    base = "/sys/fs/cgroup"
    if os.path.isdir(os.path.join(base, "adapt")):
        roots.append(os.path.join(base, "adapt"))
    if os.path.isdir(base):
        for ctrl in os.listdir(base):
            d = os.path.join(base, ctrl, "adapt")
            if os.path.isdir(d):
                roots.append(d)
    for root in roots:
        for dirpath, dirnames, _ in os.walk(root):
            for d in dirnames:
                if any(i in d for i in ids):
                    found.append(os.path.join(dirpath, d))
    return found


def processes_mentioning(text):
    found = []
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if text in cmd:
            found.append((int(pid), cmd.strip()))
    return found


def netns_named(prefix):
    """Network namespaces (ip netns) whose name starts with prefix."""
    try:
        return sorted(n for n in os.listdir("/run/netns") if n.startswith(prefix))
    except OSError:
        return []


def remove_network(network_name):
    """An adaptd's network namespaces and nftables table, given its --network-name."""
    for ns in netns_named(network_name + "-"):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=60)
    subprocess.run(["nft", "delete", "table", "inet", network_name], capture_output=True,
                   timeout=60)


def leftovers(state_dir, ids=()):
    return {
        "runsc": runsc_containers(state_dir),
        "mounts": mounts_under(state_dir),
        "cgroups": cgroups_named(ids) if ids else [],
        "processes": processes_mentioning(state_dir),
    }


def force_cleanup(state_dir):
    """Best effort, so one broken run does not spoil the machine for the next."""
    root = runsc_root(state_dir)
    for cid in runsc_containers(state_dir):
        subprocess.run([RUNSC, "--root", root, "kill", cid, "KILL"], capture_output=True, timeout=60)
        subprocess.run([RUNSC, "--root", root, "delete", "-force", cid], capture_output=True, timeout=60)
    for pid, _ in processes_mentioning(state_dir):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for target in sorted(mounts_under(state_dir), key=len, reverse=True):
        subprocess.run(["umount", "-l", target], capture_output=True, timeout=60)
