"""What one adaptd holds on the host, snapshotted so that a test can assert zero growth.

A snapshot lists, for one daemon (scoped by its state directory, nftables table, netns prefix
and address pool, so that other adaptds on the machine do not count): network namespaces,
veth interfaces, nftables chains and map elements in its table, mounts under the state dir,
loop devices backed by state-dir files, cgroups under adapt/ named after its sandboxes, runsc
containers and state files, processes naming the state dir (shim, runsc, gofer, sandbox),
files in the state dir, and adaptd's open file descriptors.
"""

import ipaddress
import json
import os
import sqlite3
import subprocess
import time

import harness

# Files whose presence is expected to change with every sandbox ever made: the store.
_STORE_FILES = ("adapt.db", "adapt.db-wal", "adapt.db-shm", "adapt.db-journal")
# Formatted disk templates (src/runtime/disk_templates.h) are kept on purpose, one per disk size
# (at most four): made by the first create of a size, whether or not that create survives. An
# unfinished one (`.new`) still counts.
_TEMPLATE_DIR = "disk-templates"


def _kept(rel):
    if rel in _STORE_FILES or rel == _TEMPLATE_DIR:
        return True
    head, name = os.path.split(rel)
    return head == _TEMPLATE_DIR and name.startswith("ext4-") and name.endswith(".img")


def _run(argv):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    return r.stdout if r.returncode == 0 else ""


def sandbox_ids(daemon):
    """Every sandbox id the daemon's store has ever recorded (read-only, alongside adaptd)."""
    path = os.path.join(daemon.state_dir, "adapt.db")
    if not os.path.exists(path):
        return set()
    conn = sqlite3.connect("file:%s?mode=ro" % path, uri=True, timeout=30)
    try:
        return {row[0] for row in conn.execute("SELECT id FROM sandboxes")}
    finally:
        conn.close()


def netns(daemon):
    return set(harness.netns_named(daemon.network_name + "-"))


def _veth_prefixes(daemon):
    # Host ends are "ad" + the hex of their pool address (src/net/ruleset.cc); a /20 pool
    # fixes the first 20 bits, so the first five hex digits name this daemon's. "ap" was a
    # sandbox end on the host before it moved into its namespace (adaptd now makes it there):
    # one showing up again would be a leak too.
    net = ipaddress.ip_network(daemon.network_pool)
    digits = "%08x" % int(net.network_address)
    fixed = digits[: net.prefixlen // 4]
    return ("ad" + fixed, "ap" + fixed)


def veths(daemon):
    prefixes = _veth_prefixes(daemon)
    out = set()
    for line in _run(["ip", "-o", "link", "show"]).splitlines():
        parts = line.split(":")
        if len(parts) < 2:
            continue
        name = parts[1].strip().split("@")[0]
        if name.startswith(prefixes):
            out.add(name)
    return out


def nft_objects(daemon):
    """Chains, and elements of sets/maps, in the daemon's own nftables table."""
    text = _run(["nft", "-j", "list", "table", "inet", daemon.network_name])
    out = set()
    if not text:
        return out
    for item in json.loads(text).get("nftables", []):
        if "chain" in item:
            out.add("chain " + item["chain"]["name"])
        for kind in ("set", "map"):
            if kind in item:
                for elem in item[kind].get("elem", []) or []:
                    out.add("%s %s %s" % (kind, item[kind]["name"], json.dumps(elem, sort_keys=True)))
    return out


def mounts(daemon):
    return set(harness.mounts_under(daemon.state_dir))


def loop_devices(daemon):
    prefix = os.path.realpath(daemon.state_dir).rstrip("/") + "/"
    out = set()
    text = _run(["losetup", "-l", "-n", "-J", "-O", "NAME,BACK-FILE"])
    if not text:
        return out
    # Counted per backing file, not by device name: a volume unmounted (adaptd's shutdown) and
    # mounted again may get another /dev/loopN, which is no leak; two devices on one file are.
    seen = {}
    for dev in json.loads(text).get("loopdevices", []):
        back = dev.get("back-file") or ""
        if back.startswith(prefix):
            seen[back] = seen.get(back, 0) + 1
            out.add("%s #%d" % (back, seen[back]))
    return out


def cgroups(daemon):
    ids = sandbox_ids(daemon)
    return set(harness.cgroups_named(ids)) if ids else set()


def runsc_state(daemon):
    root = harness.runsc_root(daemon.state_dir)
    out = {"container " + c for c in harness.runsc_containers(daemon.state_dir)}
    if os.path.isdir(root):
        out.update("file " + f for f in os.listdir(root))
    return out


def processes(daemon):
    me = daemon.proc.pid if daemon.proc else None
    return {"%d %s" % (pid, cmd[:200]) for pid, cmd in harness.processes_mentioning(daemon.state_dir)
            if pid != me}


def state_files(daemon):
    out = set()
    base = daemon.state_dir
    for dirpath, dirnames, filenames in os.walk(base):
        # Mounted sandbox filesystems are counted as mounts, not walked.
        dirnames[:] = [d for d in dirnames if not os.path.ismount(os.path.join(dirpath, d))]
        for name in filenames + dirnames:
            rel = os.path.relpath(os.path.join(dirpath, name), base)
            if _kept(rel):
                continue
            out.add(rel)
    return out


def adaptd_fds(daemon):
    """adaptd's open descriptors, as "fd -> target" (sockets and pipes by kind only)."""
    if not daemon.proc or daemon.proc.poll() is not None:
        return set()
    base = "/proc/%d/fd" % daemon.proc.pid
    out = set()
    for fd in os.listdir(base):
        try:
            target = os.readlink(os.path.join(base, fd))
        except OSError:
            continue
        out.add("%s -> %s" % (fd, target))
    return out


KINDS = {
    "netns": netns,
    "veth": veths,
    "nftables": nft_objects,
    "mounts": mounts,
    "loop": loop_devices,
    "cgroups": cgroups,
    "runsc": runsc_state,
    "processes": processes,
    "files": state_files,
    "fds": adaptd_fds,
}


def snapshot(daemon):
    return {kind: fn(daemon) for kind, fn in KINDS.items()}


def growth(before, after):
    """What `after` holds that `before` did not, per kind (only kinds that grew).

    File descriptors are compared by count: a number may be reused for another object
    (a connection, a log), which is not a leak; more descriptors than before is.
    """
    out = {}
    for kind in KINDS:
        if kind == "fds":
            if len(after[kind]) > len(before[kind]):
                out[kind] = sorted(after[kind] - before[kind])
            continue
        extra = after[kind] - before[kind]
        if extra:
            out[kind] = sorted(extra)
    return out


def settled_growth(daemon, before, timeout=30):
    """growth() once it stops shrinking: processes and mounts go away asynchronously after a
    delete answers, so poll until nothing grew or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        g = growth(before, snapshot(daemon))
        if not g or time.monotonic() > deadline:
            return g
        time.sleep(0.5)


def holdings(daemon, ids):
    """What the host still holds for the given sandboxes (after they are deleted: nothing)."""
    out = {}
    snap = snapshot(daemon)
    for kind, items in snap.items():
        if kind == "fds":
            continue
        hits = sorted(i for i in items if any(sid in i for sid in ids))
        if hits:
            out[kind] = hits
    return out


def settled_holdings(daemon, ids, timeout=30):
    """holdings() once it is empty or `timeout` seconds passed: a loop device is detached
    only when the last process holding its mount (runsc's gofer) is gone."""
    deadline = time.monotonic() + timeout
    while True:
        held = holdings(daemon, ids)
        if not held or time.monotonic() > deadline:
            return held
        time.sleep(0.5)
