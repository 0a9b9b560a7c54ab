"""Abuse inside a sandbox: each workload stays inside its sandbox.

Fork bomb, memory beyond memoryMiB, disk fill beyond diskMiB, descriptor exhaustion, a stdout
flood and a CPU burn. After each: adaptd still answers, a neighbour sandbox still runs
commands, the abusive sandbox's outcome is what the API says, and adaptd's own memory stayed
flat through the flood. A sandbox that the kernel's OOM killer stops at memoryMiB says so in
its `error` (and its startup result's `error`, and the `error` of the command it ran), not
just "stopped unexpectedly".
"""

import time

import pytest

from harness import poll_command, wait_for_agent


def brief(cmd):
    """A command record for an assertion message, its output cut short."""
    return {k: (v[:300] if isinstance(v, str) else v) for k, v in cmd.items()}


def run_command(client, sid, **body):
    """POSTs a command; 200 (finished within waitSeconds) or 202 (still running)."""
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % sid, body)
    assert status in (200, 202), "POST commands %.300r -> %s %.500r" % (body, status, cmd)
    return cmd


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for %d" % pid)


def command(client, sid, script, timeout_s=60, wait=60):
    """Runs `script` in sandbox sid; returns the finished command record."""
    cmd = run_command(client, sid, command=script, timeoutSeconds=timeout_s, waitSeconds=min(wait, 60))
    if cmd["status"] == "running":
        cmd = poll_command(client, sid, cmd["id"], timeout=timeout_s + 60)
    return cmd


@pytest.fixture(scope="module")
def neighbour(daemon):
    sid = daemon.admin.create({"labels": {"role": "neighbour"}, "network": {"egress": "none"}})["id"]
    daemon.admin.wait_for_status(sid, "running", 120)
    yield sid
    daemon.admin.api("DELETE", "/v1/sandboxes/" + sid)


def assert_host_fine(daemon, neighbour):
    status, health = daemon.admin.api("GET", "/healthz")
    assert status == 200 and health["status"] == "ok", (status, health)
    assert daemon.proc.poll() is None, "adaptd died:\n" + daemon.log_tail()
    cmd = command(daemon.admin, neighbour, "echo neighbour-ok", timeout_s=60)
    assert cmd["exitCode"] == 0 and cmd["stdout"] == "neighbour-ok\n", brief(cmd)


def abusive(daemon, **limits):
    body = {"network": {"egress": "none"}, "labels": {"role": "abuse"}}
    body.update(limits)
    sid = daemon.admin.create(body)["id"]
    daemon.admin.wait_for_status(sid, "running", 120)
    return sid


def end_state(daemon, sid):
    """The sandbox after the abuse: running (it survived) or failed with a reason."""
    sbx = daemon.admin.get(sid)
    assert sbx["status"] in ("running", "failed"), sbx
    if sbx["status"] == "failed":
        assert sbx["error"], sbx
    return sbx


def test_fork_bomb_is_contained(daemon, neighbour):
    sid = abusive(daemon, memoryMiB=256)
    cmd = command(daemon.admin, sid, "bomb() { bomb | bomb & }; bomb; sleep 10", timeout_s=10)
    # The command hit its timeout or the sandbox's limits; it did not succeed quietly.
    assert cmd["status"] != "running", brief(cmd)
    assert_host_fine(daemon, neighbour)
    end_state(daemon, sid)
    daemon.admin.delete(sid)


def test_memory_beyond_the_limit_is_refused_or_reported(daemon, neighbour):
    sid = abusive(daemon, memoryMiB=128)
    # Through the agent, whose end with the sandbox is what the command's reason tells.
    wait_for_agent(daemon.admin, sid)
    # 512 MiB written (every page touched), 4x the limit.
    cmd = command(daemon.admin, sid, "python3 -c 'x = b\"a\" * (512 << 20); print(\"allocated\", len(x))'; "
                  "echo rc=$?", timeout_s=120)
    if cmd["status"] == "lost":
        # Its sandbox died under it (the agent with it): the monitor records that at once.
        daemon.admin.wait_for_status(sid, ("failed",), 60)
    sbx = end_state(daemon, sid)
    if sbx["status"] == "running":
        # The allocation failed inside the sandbox: not a success.
        assert "allocated" not in cmd["stdout"], brief(cmd)
        assert "rc=0" not in cmd["stdout"], brief(cmd)
    else:
        # The kernel's OOM killer stopped the sandbox (its sentry) at memoryMiB: the API says
        # so, not just "stopped unexpectedly", and the command it ran did not finish.
        assert sbx["terminationReason"] == "failed", sbx
        assert "ran out of memory" in sbx["error"] and "128 MiB (memoryMiB)" in sbx["error"], sbx
        assert cmd["status"] != "exited" or cmd["exitCode"] != 0, brief(cmd)
        # The command, lost with the sandbox's agent, carries the sandbox's reason: memory.
        status, cmd = daemon.admin.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, cmd["id"]))
        assert status == 200, cmd
        assert cmd["servedBy"] == "agent", brief(cmd)
        assert cmd["status"] == "lost" and cmd["terminationReason"] == "lost", brief(cmd)
        assert "ran out of memory" in cmd["error"] and cmd["error"] == sbx["error"], brief(cmd)
    assert_host_fine(daemon, neighbour)
    daemon.admin.delete(sid)


def test_startup_beyond_the_memory_limit_reports_the_oom_kill(daemon, neighbour):
    body = {"network": {"egress": "none"}, "labels": {"role": "abuse"}, "memoryMiB": 128,
            "startup": {"mode": "command",
                        "argv": ["python3", "-c", "x = b'a' * (512 << 20); print('allocated')"]}}
    sid = daemon.admin.create(body)["id"]
    sbx = daemon.admin.wait_for_status(sid, ("completed", "failed"), 180)
    assert sbx["status"] == "failed" and sbx["terminationReason"] == "failed", sbx
    assert "allocated" not in sbx["startup"]["stdout"], sbx["startup"]
    # The startup result says why: killed by the OOM killer at its memory limit.
    assert "ran out of memory" in sbx["startup"]["error"], sbx["startup"]
    assert sbx["startup"]["signal"] == "SIGKILL" or sbx["startup"]["exitCode"] != 0, sbx["startup"]
    assert "ran out of memory" in sbx["error"], sbx
    assert_host_fine(daemon, neighbour)
    daemon.admin.delete(sid)
    daemon.admin.delete(sid)


def test_disk_fill_ends_with_enospc_within_disk_mib(daemon, neighbour):
    sid = abusive(daemon, diskMiB=64)
    cmd = command(daemon.admin, sid, "dd if=/dev/zero of=/fill bs=1M count=512 2>&1; echo rc=$?; sync; "
                  "df -m / | tail -1", timeout_s=120)
    assert cmd["exitCode"] == 0, brief(cmd)
    assert "No space left on device" in cmd["stdout"], brief(cmd)
    assert "rc=1" in cmd["stdout"], brief(cmd)
    # Deleting the file gives the space back: the sandbox keeps working.
    again = command(daemon.admin, sid, "rm /fill && echo x > /after && cat /after")
    assert again["exitCode"] == 0 and again["stdout"] == "x\n", brief(again)
    assert_host_fine(daemon, neighbour)
    daemon.admin.delete(sid)


def test_fd_exhaustion_is_refused_inside(daemon, neighbour):
    sid = abusive(daemon)
    # Opens descriptors until the sandbox refuses; then the sandbox still runs commands.
    script = ("ulimit -n 1048576 2>/dev/null; i=0; "
              "while [ $i -lt 200000 ]; do exec 3</dev/null; eval \"exec $((i % 60000 + 10))</dev/null\" "
              "2>/dev/null || break; i=$((i+1)); done; echo opened=$i")
    cmd = command(daemon.admin, sid, "sh -c '%s'" % script.replace("'", "'\\''"), timeout_s=120)
    assert cmd["status"] in ("exited", "timeout"), brief(cmd)
    again = command(daemon.admin, sid, "echo still-here")
    assert again["exitCode"] == 0 and again["stdout"] == "still-here\n", brief(again)
    assert_host_fine(daemon, neighbour)
    daemon.admin.delete(sid)


def test_stdout_flood_keeps_adaptd_memory_flat(daemon, neighbour):
    sid = abusive(daemon)
    warm = command(daemon.admin, sid, "head -c 10485760 /dev/zero | tr '\\0' a", timeout_s=60)
    assert warm["truncated"] is True, brief(warm)
    before = rss_kib(daemon.proc.pid)
    # 128 MiB of output: adaptd keeps 1 MiB per stream and must not buffer the rest.
    cmd = command(daemon.admin, sid, "head -c 134217728 /dev/zero | tr '\\0' a; echo done >&2", timeout_s=300)
    after = rss_kib(daemon.proc.pid)
    assert cmd["exitCode"] == 0, brief(cmd)
    assert cmd["truncated"] is True
    assert len(cmd["stdout"]) <= 1024 * 1024 + 16, len(cmd["stdout"])
    # Flat: adaptd grew by far less than the flood (128 MiB); 32 MiB covers allocator noise.
    assert after - before < 32 * 1024, "adaptd grew from %d KiB to %d KiB during a 128 MiB flood" % (before, after)
    assert_host_fine(daemon, neighbour)
    daemon.admin.delete(sid)


def test_cpu_burn_beyond_quota_stays_inside(daemon, neighbour):
    sid = abusive(daemon, cpu=1)
    # 10 s: the spinners start within a second or two, and the checks below take a few more.
    burn = run_command(daemon.admin, sid, command="for i in 1 2 3 4; do (while :; do :; done) & done; wait",
                       timeoutSeconds=10, waitSeconds=0)
    assert burn["status"] == "running", brief(burn)
    time.sleep(3)
    # While four spinners run against a one-CPU quota, the host and the neighbour answer.
    assert_host_fine(daemon, neighbour)
    done = poll_command(daemon.admin, sid, burn["id"], timeout=120)
    assert done["status"] != "running"
    assert done["exitCode"] != 0 or done["signal"], brief(done)
    assert end_state(daemon, sid)["status"] == "running"
    daemon.admin.delete(sid)


FLOOD = r'''
import socket, time
me = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
me.connect(("198.51.100.10", 9))
a = me.getsockname()[0].split(".")
gateway = ".".join(a[:3] + [str(int(a[3]) - 1)])
held = []
for _ in range(%d):
    try:
        held.append(socket.create_connection((gateway, %d), timeout=4))
    except OSError:
        break
time.sleep(1)
def open_(s):
    s.settimeout(0.01)
    try:
        return s.recv(1) != b""
    except socket.timeout:
        return True
    except OSError:
        return False
print(len(held), sum(open_(s) for s in held))
'''


def test_a_connection_flood_to_the_storage_gateway_holds_only_its_cap(daemon, neighbour):
    """Idle connections from one sandbox to the storage gateway (the one host port it
    reaches): adaptd keeps --max-connections-per-client (256 by default) and closes the rest
    at once, so the flood cannot use up its descriptors."""
    status, tok = daemon.admin.api("POST", "/v1/storage-tokens", {})
    assert status == 201, tok
    port = int(tok["endpoint"].rsplit(":", 1)[1])
    sid = daemon.admin.create({"network": {"egress": "allowlist"}, "labels": {"role": "abuse"}})["id"]
    daemon.admin.wait_for_status(sid, "running", 120)
    cmd = command(daemon.admin, sid, "python3 -c '%s'" % (FLOOD % (600, port)).replace("'", "'\\''"),
                  timeout_s=120)
    assert cmd["exitCode"] == 0, brief(cmd)
    made, still_open = map(int, cmd["stdout"].split())
    assert made == 600, brief(cmd)
    assert still_open == 256, brief(cmd)
    assert_host_fine(daemon, neighbour)
    daemon.admin.delete(sid)
