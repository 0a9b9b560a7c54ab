"""A sandbox's root against its agent socket and the mount it is on, /.adapt (issue 14, items
3.6 and 3.7): a flood of connections and forged hellos must not kill adaptd, grow its threads
without bound, or take the session from the real agent; that mount must not let the sandbox
write to the host's state filesystem."""

import os
import stat
import time

from harness import run_command as run
from harness import wait_for_agent

# From inside the sandbox, as root: 200 connections that say nothing, then forged hellos
# (the agent's own first frame, protocol 2 and 3, with no or a guessed key) sent again and
# again for as long as the flood runs, each on a connection of its own.
FLOOD = r"""
import socket, struct, sys, time
PATH = '/.adapt/agent.sock'
def dial():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(2)
    s.connect(PATH)
    return s
def frame(kind, payload):
    return struct.pack('>IBI', len(payload), kind, 0) + payload
hellos = [struct.pack('>II', 2, 0), struct.pack('>II', 3, 0),
          struct.pack('>II', 3, 32) + b'0' * 32 + struct.pack('>I', 0)]
silent, refused = [], 0
for i in range(200):
    try:
        silent.append(dial())
    except OSError:
        refused += 1
print('silent', len(silent), 'refused', refused, flush=True)
forged = 0
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    for h in hellos:
        try:
            s = dial()
            s.sendall(frame(1, h))
            silent.append(s)
            forged += 1
        except OSError:
            pass
    time.sleep(0.05)
    if len(silent) > 400:
        for s in silent[:100]:
            s.close()
        del silent[:100]
print('forged', forged, flush=True)
"""


def threads_of(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    raise AssertionError("no Threads line for pid %d" % pid)


def healthy(daemon):
    status, body = daemon.admin.api("GET", "/healthz")
    return status == 200 and body.get("status") == "ok"


def test_a_connection_flood_and_forged_hellos_leave_adaptd_and_the_agent_serving(daemon):
    client = daemon.new_org()
    sbx = client.create({})
    sid = sbx["id"]
    client.wait_for_status(sid, "running", 60)
    wait_for_agent(client, sid)
    pid = daemon.proc.pid
    before = threads_of(pid)
    flood = run(client, sid, expect=202, argv=["python3", "-c", FLOOD, "25"], waitSeconds=0)
    assert flood["servedBy"] == "agent", flood
    peak = before
    served = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        peak = max(peak, threads_of(pid))
        assert healthy(daemon), daemon.log_tail()
        cmd = run(client, sid, argv=["sh", "-c", "sleep 0.3; echo alive"], waitSeconds=30)
        served.append((cmd["servedBy"], cmd["status"], cmd["stdout"]))
        peak = max(peak, threads_of(pid))
    # Every command of the flood's time was the real agent's, and ran to its end: no
    # forged hello took the session (a command sent to a forger is lost or hangs).
    assert len(served) >= 5, served
    assert set(served) == {("agent", "exited", "alive\n")}, served
    # Pending connections are capped per sandbox: a few threads, not one per connection.
    assert peak - before < 40, "adaptd went from %d to %d threads" % (before, peak)
    status, out = client.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, flood["id"]))
    assert status == 200 and out["status"] == "running" and "silent" in out["stdout"], out
    assert daemon.proc.poll() is None
    client.delete(sid)


def test_the_socket_mount_cannot_fill_the_hosts_state_filesystem(daemon):
    client = daemon.new_org()
    sbx = client.create({})
    sid = sbx["id"]
    client.wait_for_status(sid, "running", 60)
    wait_for_agent(client, sid)
    session = os.path.join(daemon.state_dir, "sandboxes", sid, "adapt")
    started = time.monotonic()
    cmd = run(client, sid, command="dd if=/dev/zero of=/.adapt/fill bs=1M count=300",
              waitSeconds=60)
    took = time.monotonic() - started
    assert cmd["status"] == "exited" and cmd["exitCode"] != 0, cmd
    assert "No space left" in cmd["stderr"] or "Read-only file system" in cmd["stderr"], cmd
    assert took < 20, "dd took %.1f s" % took
    assert not os.path.exists(os.path.join(session, "fill"))
    for where in ("/.adapt/link", "/.adapt/agent.sock", "/.adapt/adapt-agent"):
        evil = run(client, sid, command="rm -f %s; ln -s /etc/shadow %s" % (where, where))
        assert evil["exitCode"] != 0, evil
    # The agent's socket: the host's, 0600, beside the helpers in the sandbox's 0700
    # directory; it still serves.
    st = os.lstat(os.path.join(session, "agent.sock"))
    assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600, oct(st.st_mode)
    assert stat.S_IMODE(os.stat(os.path.dirname(session)).st_mode) == 0o700
    assert sorted(os.listdir(session)) == ["adapt-agent", "adapt-pause", "adapt-statx.so",
                                           "agent.sock"], os.listdir(session)
    assert run(client, sid, argv=["echo", "ok"])["servedBy"] == "agent"
    client.delete(sid)


def test_the_workloads_user_can_see_the_socket_but_not_connect_to_it(daemon):
    """/.adapt is readable by every user of the sandbox (the statx shim is loaded from it), so
    the socket's own mode (0600, root's) is what keeps a non-root workload off it."""
    client = daemon.new_org()
    sid = client.create({})["id"]
    client.wait_for_status(sid, "running", 60)
    wait_for_agent(client, sid)
    probe = ("import socket\n"
             "s = socket.socket(socket.AF_UNIX)\n"
             "try:\n"
             "    s.connect('/.adapt/agent.sock')\n"
             "    print('connected')\n"
             "except OSError as e:\n"
             "    print('refused', e.errno)\n")
    as_nobody = run(client, sid, argv=["python3", "-c", probe], user="nobody")
    assert as_nobody["exitCode"] == 0 and as_nobody["stdout"].startswith("refused 13"), as_nobody
    # The same probe as root connects, so the refusal is the mode's, not a missing socket.
    as_root = run(client, sid, argv=["python3", "-c", probe])
    assert as_root["stdout"] == "connected\n", as_root
    client.delete(sid)


def read_key_file(daemon, sid):
    with open(os.path.join(daemon.state_dir, "sandboxes", sid, "agent.key")) as f:
        return f.read()


def wait_key_settled(daemon, sid, timeout=20):
    """The agent's key once the agent confirmed the last one handed over (a single line)."""
    deadline = time.monotonic() + timeout
    while True:
        key = read_key_file(daemon, sid)
        if "\n" not in key:
            return key
        assert time.monotonic() < deadline, "the agent never confirmed its new key"
        time.sleep(0.1)


def test_a_restored_agent_is_handed_a_fresh_key(daemon):
    client = daemon.new_org()
    sid = client.create({"startupClass": "durable"})["id"]
    client.wait_for_status(sid, "running", 120)
    wait_for_agent(client, sid)
    path = os.path.join(daemon.state_dir, "sandboxes", sid, "agent.key")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    booted = wait_key_settled(daemon, sid)
    # The key is nowhere the workload can read it: not the agent's argv or environment.
    agent = run(client, sid, command="for p in /proc/[0-9]*; do tr '\\000' ' ' < $p/cmdline "
                "2>/dev/null | grep -q '^/.adapt/adapt-agent serve' && echo ${p#/proc/}; done")
    pid = agent["stdout"].strip()
    assert pid.isdigit(), agent
    probe = run(client, sid, command="cat /proc/%s/environ /proc/%s/cmdline; "
                "head -c 1 /proc/%s/mem; ls /proc/%s/fd" % (pid, pid, pid, pid))
    assert booted not in probe["stdout"], probe
    # Non-dumpable: its memory is closed to the sandbox's root (which lacks CAP_SYS_PTRACE).
    assert "/proc/%s/mem' for reading: Permission denied" % pid in probe["stderr"], probe
    status, body = client.api("POST", "/v1/sandboxes/%s/stop" % sid)
    assert status == 200 and body["hibernation"]["processes"] == "saved", (status, body)
    status, body = client.api("POST", "/v1/sandboxes/%s/start" % sid)
    assert status == 202, (status, body)
    client.wait_for_status(sid, "running", 120)
    wait_for_agent(client, sid)
    # The restored agent came back with the checkpointed key and was handed a fresh one.
    restored = wait_key_settled(daemon, sid)
    assert restored != booted and len(restored) >= 32
    cmd = run(client, sid, argv=["echo", "back"])
    assert cmd["servedBy"] == "agent" and cmd["stdout"] == "back\n", cmd
    client.delete(sid)
