"""Isolation posture: the exact runsc flags of every sandbox, and what a sandbox can see.

From inside: no host Unix socket but the agent's session socket, none of the state dir's
files, none of another sandbox's files, and no raw or packet sockets.
"""

import json
import os
import uuid

import pytest

from harness import delete_concurrently, poll_command, processes_mentioning, run_command


def expected_flags(daemon, egress_none):
    return [
        "--root=%s/runsc" % daemon.state_dir,
        "--platform=ptrace",
        "--network=%s" % ("none" if egress_none else "sandbox"),
        "--host-uds=open",
    ]


# Flags that would weaken the sandbox; none may appear on any runsc process of a sandbox.
FORBIDDEN = ("--network=host", "--host-uds=all", "--host-uds=create", "--net-raw", "--TESTONLY",
             "--unsafe", "--rootless", "--ignore-cgroups", "--nvproxy", "--overlay=false",
             "--debug", "--strace", "--allow-", "--profile")


# runsc 20221219's defaults: its re-executed processes omit them.
RUNSC_DEFAULTS = ("--platform=ptrace", "--network=sandbox")


def sh(client, sid, script, timeout=60):
    cmd = run_command(client, sid, command=script, timeoutSeconds=timeout, waitSeconds=60)
    if cmd["status"] == "running":
        cmd = poll_command(client, sid, cmd["id"], timeout=timeout + 30)
    return cmd


@pytest.fixture(scope="module")
def pair(daemon):
    """Two running sandboxes of two organizations: one networked, one with egress none."""
    a_client = daemon.new_org()
    b_client = daemon.new_org()
    a = a_client.create({"labels": {"iso": "a"}})["id"]
    b = b_client.create({"labels": {"iso": "b"}, "network": {"egress": "none"}})["id"]
    a_client.wait_for_status(a, "running", 120)
    b_client.wait_for_status(b, "running", 120)
    yield (a_client, a), (b_client, b)
    delete_concurrently([(a_client, a), (b_client, b)])


@pytest.mark.parametrize("which,egress_none", [(0, False), (1, True)], ids=["networked", "egress-none"])
def test_runsc_global_flags_are_exactly_the_expected_set(daemon, pair, which, egress_none):
    _, sid = pair[which]
    expected = expected_flags(daemon, egress_none)
    with open(os.path.join(daemon.state_dir, "sandboxes", sid, "shim-config.json")) as f:
        config = json.load(f)
    assert config["globalFlags"] == expected, config
    # Every runsc process of the sandbox (sandbox, gofer) runs with exactly these global
    # flags: runsc passes its re-executed children only the ones that differ from its
    # defaults (ptrace, network sandbox), so those two may be absent, nothing else may.
    required = [f for f in expected if f not in RUNSC_DEFAULTS]
    procs = [(pid, cmd) for pid, cmd in processes_mentioning(sid) if "runsc" in cmd.split(" ")[0]]
    assert procs, "no runsc process found for %s" % sid
    for pid, cmd in procs:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            argv = [a.decode() for a in f.read().split(b"\0") if a]
        global_flags = []
        for arg in argv[1:]:
            if not arg.startswith("-"):
                break  # the subcommand: what follows are its own flags
            global_flags.append(arg)
        assert set(global_flags) <= set(expected), "pid %d: global flags %r, allowed %r" % (
            pid, global_flags, expected)
        for flag in required:
            assert flag in global_flags, "pid %d lacks %s: %r" % (pid, flag, argv)
        bad = [a for a in argv if a.startswith(FORBIDDEN)]
        assert bad == [], "pid %d runs with %r: %r" % (pid, bad, argv)


def test_no_host_socket_but_the_agent_session(pair):
    client, sid = pair[0]
    cmd = sh(client, sid, "find / -xdev -type s 2>/dev/null; find /.adapt -type s 2>/dev/null; true")
    sockets = sorted(set(cmd["stdout"].split()))
    assert sockets == ["/.adapt/agent.sock"], cmd


def test_no_state_dir_file_is_visible(daemon, pair):
    client, sid = pair[0]
    state = daemon.state_dir
    # (test -e, not ls: this runsc answers coreutils 9's statx with EINVAL for every path.)
    cmd = sh(client, sid, "for p in %s %s/admin.key %s/adapt.db %s/runsc; do test -e $p && echo visible $p; done; "
             "true" % (state, state, state, state))
    assert cmd["stdout"] == "", cmd
    cmd = sh(client, sid,
             "find / -xdev \\( -name admin.key -o -name 'adapt.db*' -o -name shim-config.json \\) 2>/dev/null; "
             "grep -c %s /proc/self/mountinfo; true" % state)
    assert cmd["stdout"] == "0\n", "state-dir files or paths visible inside: %r" % cmd["stdout"]


def test_no_other_sandbox_file_is_visible(pair):
    (a_client, a), (b_client, b) = pair
    marker = "marker-" + uuid.uuid4().hex
    made = sh(a_client, a, "echo secret > /tmp/%s && cat /tmp/%s" % (marker, marker))
    assert made["exitCode"] == 0, (made["stdout"], made["stderr"])
    seen = sh(b_client, b, "find / -xdev -name '%s*' 2>/dev/null; echo /tmp/*; true" % marker[:20])
    assert marker not in seen["stdout"], seen
    # Nor by its id: no path of the other sandbox exists in this one.
    seen = sh(b_client, b, "find / -xdev -name '*%s*' 2>/dev/null; true" % a)
    assert seen["stdout"].strip() == "", seen


@pytest.mark.parametrize("which", [0, 1], ids=["networked", "egress-none"])
def test_raw_and_packet_sockets_are_refused(pair, which):
    client, sid = pair[which]
    script = r"""
import socket
for name, args in [("raw-icmp", (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)),
                   ("raw-tcp", (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)),
                   ("packet", (socket.AF_PACKET, socket.SOCK_RAW, 0x0300))]:
    try:
        s = socket.socket(*args)
        print(name, "OPEN")
        s.close()
    except OSError as e:
        print(name, "refused", e.errno)
"""
    cmd = run_command(client, sid, argv=["python3", "-c", script], timeoutSeconds=60, waitSeconds=60)
    if cmd["status"] == "running":
        cmd = poll_command(client, sid, cmd["id"])
    assert cmd["exitCode"] == 0, cmd
    lines = cmd["stdout"].split("\n")
    assert len([l for l in lines if " refused " in l]) == 3, cmd
    assert "OPEN" not in cmd["stdout"], cmd
