"""Posture: what a sandbox's root can reach on the host, tried from inside (docs/SECURITY.md).

Lists every host-backed mount a sandbox sees and what it allows, then mounts each attack a
sandbox can mount against the host (fill a host-backed mount, flood the agent's socket with
fake hellos, connect to the host's own addresses and its gateway on a port the host listens on)
and checks that adaptd, the sandbox's own agent and a neighbour sandbox of another organization
keep answering.
"""

import os
import socket
import subprocess
import threading
import time

import pytest

from harness import delete_concurrently, poll_command, run_command, wait_for_agent

# Mounts a sandbox sees that gVisor itself serves (no host file behind them).
VIRTUAL = {"tmpfs", "proc", "sysfs", "devpts", "mqueue", "cgroup", "devtmpfs"}

# Every host-backed mount a default sandbox may have, and why it is there.
HOST_BACKED = {
    "/": "the sandbox's rootfs, an overlay on its own sparse disk of diskMiB",
    "/.adapt": "adaptd's helpers (the agent, the statx shim) and the agent's socket, read-only",
    "/etc/resolv.conf": "the DNS proxy's address, read-only",
    "/etc/ld.so.preload": "names the statx shim, read-only",
    # The restricted profile: the image's own package database, bound read-only over itself
    # from the sandbox's rootfs (so dpkg/apt-get cannot install; README "Security profiles").
    "/var/lib/dpkg": "the image's package database, read-only (restricted profile)",
    "/var/lib/rpm": "the image's package database, read-only (restricted profile)",
    "/lib/apk/db": "the image's package database, read-only (restricted profile)",
}


def sh(client, sid, script, timeout=60):
    cmd = run_command(client, sid, command=script, timeoutSeconds=timeout, waitSeconds=60)
    if cmd["status"] == "running":
        cmd = poll_command(client, sid, cmd["id"], timeout=timeout + 30)
    return cmd


def mounts(client, sid):
    """(mount point, fs type, options) of every mount the sandbox sees."""
    out = sh(client, sid, "cat /proc/self/mounts")
    assert out["exitCode"] == 0, out
    rows = []
    for line in out["stdout"].splitlines():
        fields = line.split()
        if len(fields) >= 4:
            rows.append((fields[1], fields[2], fields[3].split(",")))
    return rows


def healthy(daemon):
    status, body = daemon.admin.api("GET", "/healthz")
    return status == 200


def adaptd_threads(daemon):
    with open("/proc/%d/status" % daemon.proc.pid) as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    raise AssertionError("no Threads line")


def du_bytes(path):
    out = subprocess.run(["du", "-sb", path], capture_output=True, text=True, check=True).stdout
    return int(out.split()[0])


@pytest.fixture(scope="module")
def victims(daemon):
    """A networked sandbox (the attacker) and a neighbour of another organization."""
    attacker_client = daemon.new_org()
    neighbour_client = daemon.new_org()
    a = attacker_client.create({"labels": {"posture": "attacker"}})["id"]
    n = neighbour_client.create({"labels": {"posture": "neighbour"}})["id"]
    attacker_client.wait_for_status(a, "running", 120)
    neighbour_client.wait_for_status(n, "running", 120)
    wait_for_agent(attacker_client, a)
    wait_for_agent(neighbour_client, n)
    yield (attacker_client, a), (neighbour_client, n)
    delete_concurrently([(attacker_client, a), (neighbour_client, n)])


def assert_everyone_answers(daemon, victims):
    assert healthy(daemon), "adaptd stopped answering:\n" + daemon.log_tail()
    for client, sid in victims:
        out = sh(client, sid, "echo alive")
        assert out["exitCode"] == 0 and out["stdout"].strip() == "alive", out


def test_every_host_backed_mount_is_known_and_read_only_or_not_host_fillable(daemon, victims):
    (client, sid), _ = victims
    seen = mounts(client, sid)
    host_backed = [(point, opts) for point, fstype, opts in seen if fstype not in VIRTUAL]
    print("\nhost-backed mounts of a default sandbox:")
    for point, opts in host_backed:
        print("  %-20s %-3s %s" % (point, "ro" if "ro" in opts else "rw",
                                   HOST_BACKED.get(point, "UNKNOWN")))
    unknown = [p for p, _ in host_backed if p not in HOST_BACKED]
    assert not unknown, "host-backed mounts with no stated purpose: %s" % unknown
    writable = [p for p, opts in host_backed if "rw" in opts and p != "/"]
    assert writable == [], writable
    for point in ("/.adapt", "/etc/resolv.conf"):
        out = sh(client, sid, "touch %s/x 2>&1 || echo refused; echo data >> %s 2>&1 || echo refused"
                 % (point if point != "/etc/resolv.conf" else "/etc", point))
        assert "refused" in out["stdout"], (point, out)


def test_the_socket_mount_cannot_fill_the_hosts_state_dir(daemon, victims):
    (client, sid), _ = victims
    state = daemon.state_dir
    before = du_bytes(state)
    # 300 MiB, what the review wrote into the host's state dir.
    out = sh(client, sid, "dd if=/dev/zero of=/.adapt/fill bs=1M count=300 2>&1; "
                          "echo rc=$?", timeout=120)
    grown = du_bytes(state) - before
    sh(client, sid, "rm -f /.adapt/fill")
    assert grown < 32 << 20, "the state dir grew by %d bytes while the sandbox wrote into "\
                             "/.adapt: %s" % (grown, out["stdout"])
    assert "rc=0" not in out["stdout"], "300 MiB fit into /.adapt: %s" % out["stdout"]
    assert_everyone_answers(daemon, victims)


def test_a_flood_of_fake_agents_on_the_session_socket_changes_nothing(daemon, victims):
    (client, sid), _ = victims
    threads_before = adaptd_threads(daemon)
    # 400 connections held open, each saying a hello that is not the agent's.
    script = r"""
import socket, json, time
socks = []
for i in range(400):
    try:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(2)
        s.connect("/.adapt/agent.sock")
        s.sendall(b'{"type":"hello","version":1}\n')
        socks.append(s)
    except OSError:
        pass
time.sleep(3)
print("held", len(socks))
"""
    out = sh(client, sid, "python3 -c '%s'" % script.replace("'", "'\"'\"'"), timeout=90)
    assert "held" in out["stdout"], out
    threads_after = adaptd_threads(daemon)
    assert threads_after < threads_before + 64, \
        "adaptd went from %d to %d threads under the flood" % (threads_before, threads_after)
    assert_everyone_answers(daemon, victims)


def host_addresses():
    out = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True,
                         check=True).stdout
    return sorted({line.split()[3].split("/")[0] for line in out.splitlines()
                   if " lo " not in line and not line.split()[1].startswith("lo")})


def test_host_ports_are_refused_at_every_host_address_and_the_gateway(daemon, victims):
    (client, sid), _ = victims
    # A port the host listens on for every address: the test's own listener.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    accepted = []

    def accept():
        listener.settimeout(1)
        end = time.monotonic() + 30
        while time.monotonic() < end:
            try:
                conn, peer = listener.accept()
                accepted.append(peer)
                conn.close()
            except OSError:
                pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        targets = host_addresses()
        # The gateway (the host's end of the sandbox's veth) too.
        gw = sh(client, sid, "ip route 2>/dev/null | awk '/default/ {print $3}' || "
                             "awk '$2==\"00000000\" {print $3}' /proc/net/route")
        targets += [a for a in gw["stdout"].split() if a.count(".") == 3]
        assert targets, "no host address found"
        probe = r"""
import socket, sys
for host in sys.argv[2:]:
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect((host, int(sys.argv[1])))
        print("CONNECTED", host)
    except OSError as e:
        print("refused", host, e)
"""
        out = sh(client, sid, "python3 -c '%s' %d %s" % (probe.replace("'", "'\"'\"'"), port,
                                                         " ".join(targets)), timeout=60)
        assert "CONNECTED" not in out["stdout"], out["stdout"]
        assert out["stdout"].count("refused") == len(targets), out
        assert not accepted, "the host accepted connections from the sandbox: %s" % accepted
    finally:
        listener.close()
    assert_everyone_answers(daemon, victims)
