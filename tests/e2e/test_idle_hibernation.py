"""Idle auto-hibernation (idleTimeoutSeconds on create): a sandbox nobody used for that long is
stopped as POST .../stop stops it (durable: checkpointed; instant: its workspace discarded).
A running or just-ended command and a file transfer count as use.

Timing: every assertion on when the stop came is a lower bound that holds by construction
(the stop's `stoppedAt` is at least the timeout after the last use the test started); the
waits for the stop itself are generous upper bounds, not races."""

import datetime
import json
import time

from harness import run_command, wait_for_agent
from mcp_support import sdk

import test_network_endpoints as endpoints
from test_files import get, put
from test_stop_start import out, running_sandbox, start

TIMEOUT = 10  # the smallest idleTimeoutSeconds allowed


def millis(rfc3339):
    return int(datetime.datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp() * 1000)


def now_ms():
    return int(time.time() * 1000)


def wait_hibernated(org, sid, timeout=120):
    """The sandbox once its idle stop finished (status hibernated comes first, while the
    checkpoint is still `saving`)."""
    deadline = time.monotonic() + timeout
    while True:
        sbx = org.wait_for_status(sid, "hibernated", timeout)
        if sbx["hibernation"]["processes"] != "saving":
            return sbx
        assert time.monotonic() < deadline, sbx
        time.sleep(0.25)


def test_idle_timeout_is_validated_and_shown_in_the_record(org):
    for bad in (9, 86401, "60", 1.5):
        status, body = org.api("POST", "/v1/sandboxes", {"idleTimeoutSeconds": bad})
        assert status == 400, (bad, status, body)
        assert body["error"]["field"] == "idleTimeoutSeconds", body
    sbx = org.create({"idleTimeoutSeconds": 600})
    assert sbx["idleTimeoutSeconds"] == 600
    assert org.get(sbx["id"])["idleTimeoutSeconds"] == 600
    plain = org.create({})
    assert plain["idleTimeoutSeconds"] is None
    null = org.create({"idleTimeoutSeconds": None})
    assert null["idleTimeoutSeconds"] is None
    p = org.cli("sandbox", "create", "--idle-timeout", "900", "--json")
    assert p.returncode == 0, (p.stdout, p.stderr)
    created = json.loads(p.stdout)
    org.daemon.created.append((org, created["id"]))
    assert created["idleTimeoutSeconds"] == 900, created
    # MCP's get_sandbox shows it too (in its own vocabulary).
    report = sdk(org.daemon, org, "http", "calls", [["get_sandbox", {"sandbox_id": sbx["id"]}],
                                                    ["get_sandbox", {"sandbox_id": plain["id"]}]])
    got = [c["structuredContent"] for c in report["calls"]]
    assert got[0]["idle_timeout_seconds"] == 600 and got[1]["idle_timeout_seconds"] is None, got
    p = org.cli("sandbox", "create", "--idle-timeout", "5")
    assert p.returncode != 0 and "idleTimeoutSeconds must be between 10 and 86400" in p.stderr, (
        p.stdout, p.stderr)


def test_instant_sandbox_is_stopped_once_idle_and_a_running_command_keeps_it_up(org):
    sid = running_sandbox(org, {"idleTimeoutSeconds": TIMEOUT})
    out(org, sid, "echo scratch > /root/scratch.txt")
    # A command that runs longer than the timeout: the sandbox is in use all along.
    cmd = run_command(org, sid, command="sleep %d; echo done" % (TIMEOUT + 4), waitSeconds=60)
    assert cmd["exitCode"] == 0 and cmd["stdout"] == "done\n", cmd
    assert org.get(sid)["status"] == "running"
    finished = millis(cmd["finishedAt"])

    sbx = wait_hibernated(org, sid)
    h = sbx["hibernation"]
    assert h["workspace"] == "discarded" and h["processes"] == "discarded", h
    assert "idleTimeoutSeconds %d" % TIMEOUT in h["note"], h
    # Counted from the command's end, not from its start.
    assert millis(h["stoppedAt"]) - finished >= TIMEOUT * 1000, (h, cmd["finishedAt"])

    # Started again, it boots fresh (an instant sandbox) and is watched again.
    start(org, sid)
    org.wait_for_status(sid, "running", 120)
    status, cmd = org.api("POST", "/v1/sandboxes/%s/commands" % sid,
                          {"command": "cat /root/scratch.txt", "waitSeconds": 30})
    assert status == 200 and cmd["exitCode"] != 0, cmd
    assert wait_hibernated(org, sid)["hibernation"]["note"]


def test_durable_sandbox_is_checkpointed_once_idle_and_file_transfers_count_as_use(org):
    sid = running_sandbox(org, {"startupClass": "durable", "idleTimeoutSeconds": TIMEOUT})
    pid = out(org, sid, "nohup sleep 100000 >/dev/null 2>&1 & echo $!")["stdout"].strip()
    status, _ = put(org, sid, "/root/kept.txt", b"kept\n")
    assert status in (200, 201), status
    # File reads every 2 s for longer than the timeout keep it running.
    last_use = now_ms()
    until = time.monotonic() + TIMEOUT + 6
    while time.monotonic() < until:
        last_use = now_ms()
        status, raw, _, _ = get(org, sid, "/root/kept.txt")
        assert status == 200 and raw == b"kept\n", status
        assert org.get(sid)["status"] == "running"
        time.sleep(2)

    sbx = wait_hibernated(org, sid)
    h = sbx["hibernation"]
    assert h["workspace"] == "kept" and h["processes"] == "saved", h
    assert "idleTimeoutSeconds" in h["note"], h
    assert millis(h["stoppedAt"]) - last_use >= TIMEOUT * 1000, (h, last_use)

    start(org, sid)
    org.wait_for_status(sid, "running", 120)
    wait_for_agent(org, sid)
    assert out(org, sid, "kill -0 %s && cat /root/kept.txt" % pid)["stdout"] == "kept\n"


def test_ingress_connections_count_as_use(org):
    sid = running_sandbox(org, {"idleTimeoutSeconds": TIMEOUT})
    endpoints.start_server(org, sid)
    ep = endpoints.expose(org, sid)
    last_use = now_ms()
    until = time.monotonic() + TIMEOUT + 6
    while time.monotonic() < until:
        last_use = now_ms()
        status, _ = endpoints.get(ep)
        assert status == 200, status
        assert org.get(sid)["status"] == "running"
        time.sleep(2)
    h = wait_hibernated(org, sid)["hibernation"]
    assert millis(h["stoppedAt"]) - last_use >= TIMEOUT * 1000, (h, last_use)


# adaptd does not persist last use: a restart counts every running sandbox as used when it
# comes back, so a sandbox left idle while adaptd was down is not hibernated at start-up.
def test_a_restart_of_adaptd_counts_as_use_rather_than_hibernating_at_once(fresh_daemon):
    d = fresh_daemon
    admin = d.admin
    sid = running_sandbox(admin, {"idleTimeoutSeconds": TIMEOUT})
    d.stop()
    time.sleep(TIMEOUT + 2)  # longer than its timeout without adaptd
    restarted = now_ms()
    d.start(port=d.port)
    h = wait_hibernated(admin, sid)["hibernation"]
    assert "idleTimeoutSeconds" in h["note"], h
    assert millis(h["stoppedAt"]) - restarted >= TIMEOUT * 1000, (h, restarted)
