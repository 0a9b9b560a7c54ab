"""Sandbox stop and start (POST /v1/sandboxes/{id}/stop|start, CLI, MCP): a durable sandbox
is checkpointed and restored with its processes and files; an instant one loses its files;
a kill -9 of adaptd mid-way leaves a state a restart makes consistent."""

import json
import threading
import time

from harness import EventStream
from harness import run_command as run

from test_agent import wait_for_agent

# A background loop whose pid and counter survive a checkpoint; its file is on the disk.
BACKGROUND = ("nohup sh -c 'i=0; while true; do i=$((i+1)); echo $i > /root/t.tmp; "
              "mv /root/t.tmp /root/ticks; sleep 0.2; done' >/dev/null 2>&1 & echo $!")


def running_sandbox(client, body):
    sid = client.create(body)["id"]
    client.wait_for_status(sid, "running", 120)
    wait_for_agent(client, sid)
    return sid


def stop(client, sid, expect=200):
    status, body = client.api("POST", "/v1/sandboxes/%s/stop" % sid)
    assert status == expect, (status, body)
    return body


def start(client, sid, expect=202):
    status, body = client.api("POST", "/v1/sandboxes/%s/start" % sid)
    assert status == expect, (status, body)
    return body


def out(client, sid, command):
    cmd = run(client, sid, command=command)
    assert cmd["exitCode"] == 0, cmd
    return cmd


def test_durable_stop_and_start_restores_files_and_processes(org):
    sid = running_sandbox(org, {"startupClass": "durable", "labels": {"name": "durable"}})
    out(org, sid, "echo kept > /root/note.txt")
    pid = out(org, sid, BACKGROUND)["stdout"].strip()
    assert pid.isdigit()
    time.sleep(1)
    before = int(out(org, sid, "cat /root/ticks")["stdout"])

    stopped = stop(org, sid)
    assert stopped["status"] == "hibernated"
    assert stopped["hibernation"]["workspace"] == "kept"
    assert stopped["hibernation"]["processes"] == "saved", stopped
    # Nothing runs while it is stopped: commands are refused.
    status, body = org.api("POST", "/v1/sandboxes/%s/commands" % sid, {"command": "true"})
    assert status == 409, (status, body)

    started = start(org, sid)
    assert started["status"] in ("provisioning", "running")
    sbx = org.wait_for_status(sid, "running", 120)
    assert sbx["hibernation"] is None
    wait_for_agent(org, sid)
    cmd = out(org, sid, "cat /root/note.txt; kill -0 %s && echo alive" % pid)
    assert cmd["servedBy"] == "agent", cmd
    assert cmd["stdout"] == "kept\nalive\n", cmd
    # The restored loop carries on from where it was, not from 1.
    time.sleep(1)
    after = int(out(org, sid, "cat /root/ticks")["stdout"])
    assert after > before, (before, after)
    # A second cycle works as well (a fresh checkpoint each time).
    assert stop(org, sid)["hibernation"]["processes"] == "saved"
    start(org, sid)
    org.wait_for_status(sid, "running", 120)
    wait_for_agent(org, sid)
    assert out(org, sid, "kill -0 %s && cat /root/note.txt" % pid)["stdout"] == "kept\n"


def test_instant_stop_discards_the_workspace_and_start_boots_fresh(org):
    sid = running_sandbox(org, {})  # instant is the default
    out(org, sid, "echo gone > /root/note.txt")
    stopped = stop(org, sid)
    assert stopped["status"] == "hibernated"
    assert stopped["hibernation"]["workspace"] == "discarded"
    assert stopped["hibernation"]["processes"] == "discarded"
    start(org, sid)
    org.wait_for_status(sid, "running", 120)
    wait_for_agent(org, sid)
    cmd = run(org, sid, command="cat /root/note.txt")
    assert cmd["exitCode"] != 0 and "No such file" in cmd["stderr"], cmd
    # The image's files are all there again.
    assert out(org, sid, "test -x /bin/sh && echo ok")["stdout"] == "ok\n"


def test_conflicts_and_bad_requests_change_nothing(org, daemon):
    sid = running_sandbox(org, {})
    status, body = org.api("POST", "/v1/sandboxes/%s/start" % sid)
    assert status == 409 and body["error"]["code"] == "conflict", body
    assert "running" in body["error"]["message"]
    status, body = org.api("POST", "/v1/sandboxes/%s/stop" % sid, {"force": True})
    assert status == 400 and body["error"]["field"] == "force", body
    assert org.get(sid)["status"] == "running"
    stop(org, sid)
    for _ in range(2):  # repeating is safe: 409, nothing changes
        status, body = org.api("POST", "/v1/sandboxes/%s/stop" % sid)
        assert status == 409 and "stopped" in body["error"]["message"], body
        assert org.get(sid)["status"] == "hibernated"
    # Another organization's id and unknown ids: 404.
    other = daemon.new_org()
    for path in ("/v1/sandboxes/%s/start" % sid, "/v1/sandboxes/%s/stop" % sid,
                 "/v1/sandboxes/sbx_nope/start", "/v1/sandboxes/nonsense/stop"):
        status, body = other.api("POST", path)
        assert status == 404, (path, status, body)
    assert org.get(sid)["status"] == "hibernated"
    # A finished sandbox cannot be started or stopped.
    done = org.run(["true"])
    for verb in ("start", "stop"):
        status, body = org.api("POST", "/v1/sandboxes/%s/%s" % (done["id"], verb))
        assert status == 409 and "completed" in body["error"]["message"], body
    # A stopped sandbox is deleted like any other.
    org.delete(sid)
    status, body = org.api("POST", "/v1/sandboxes/%s/start" % sid)
    assert status == 409 and "deleted" in body["error"]["message"], body


def test_events_announce_each_transition(org):
    sid = running_sandbox(org, {"startupClass": "durable"})
    with EventStream(org, "/v1/sandboxes/%s/events" % sid) as stream:
        stop(org, sid)
        start(org, sid)
        org.wait_for_status(sid, "running", 120)
        seen = []
        for event in stream.events():
            if not isinstance(event.get("data"), dict) or "status" not in event["data"]:
                continue
            seen.append(event["data"]["status"])
            if seen[-3:] == ["hibernated", "provisioning", "running"]:
                break
    assert seen[-3:] == ["hibernated", "provisioning", "running"], seen


def test_cli_stop_and_start(org):
    sid = running_sandbox(org, {"startupClass": "durable"})
    out(org, sid, "echo via-cli > /root/cli.txt")
    r = org.cli("sandbox", "stop", sid)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "stopped %s (hibernated; workspace kept, processes saved)\n" % sid
    r = org.cli("sandbox", "stop", sid)
    assert r.returncode == 1 and "already stopped" in r.stderr, (r.stdout, r.stderr)
    r = org.cli("--json", "sandbox", "start", sid, "--wait", "120", timeout=180)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"] == "running"
    wait_for_agent(org, sid)
    assert out(org, sid, "cat /root/cli.txt")["stdout"] == "via-cli\n"


def test_kill_during_stop_then_restart_is_consistent(fresh_daemon):
    d = fresh_daemon
    admin = d.admin
    sid = running_sandbox(admin, {"startupClass": "durable"})
    out(admin, sid, "echo survived > /root/crash.txt")
    # Kill adaptd while the stop runs: the record says hibernated (stopping) or is still
    # running, depending on where the kill landed; the restart finishes or undoes it.
    def stop_in_background():
        try:
            admin.api("POST", "/v1/sandboxes/%s/stop" % sid)
        except OSError:
            pass  # adaptd is killed under it

    threading.Thread(target=stop_in_background, daemon=True).start()
    deadline = time.monotonic() + 30
    while admin.get(sid)["status"] == "running" and time.monotonic() < deadline:
        time.sleep(0.01)
    d.kill()
    d.start(port=d.port)
    sbx = admin.get(sid)
    assert sbx["status"] in ("hibernated", "running"), sbx
    if sbx["status"] == "hibernated":
        assert sbx["hibernation"]["processes"] in ("saved", "lost"), sbx
        start(admin, sid)
    admin.wait_for_status(sid, "running", 120)
    wait_for_agent(admin, sid)
    assert out(admin, sid, "cat /root/crash.txt")["stdout"] == "survived\n"

    # Killed right after a completed stop: still stopped after the restart, and it starts.
    stop(admin, sid)
    d.kill()
    d.start(port=d.port)
    assert admin.get(sid)["status"] == "hibernated"
    start(admin, sid)
    admin.wait_for_status(sid, "running", 120)
    wait_for_agent(admin, sid)
    assert out(admin, sid, "cat /root/crash.txt")["stdout"] == "survived\n"

    # Killed right after a start was accepted: the restart finishes or undoes the start.
    stop(admin, sid)
    start(admin, sid)
    d.kill()
    d.start(port=d.port)
    sbx = admin.get(sid)
    assert sbx["status"] in ("hibernated", "running", "provisioning"), sbx
    if sbx["status"] == "hibernated":
        start(admin, sid)
    admin.wait_for_status(sid, "running", 120)
    wait_for_agent(admin, sid)
    assert out(admin, sid, "cat /root/crash.txt")["stdout"] == "survived\n"
    admin.delete(sid)
