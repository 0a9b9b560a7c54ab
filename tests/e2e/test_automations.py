"""Automations (issue 18; seed 000's create_sandbox_automation, list_sandbox_automations,
set_sandbox_automation_enabled, delete_sandbox_automation): interval schedules of 1-2 s against
a real sandbox, the runs they record, a hibernated target started and stopped again, a
non-zero exit not retried and five failures pausing, a stale version refused, other
organizations' ids, a deleted target pausing its automations, delete leaving the sandbox, the
MCP tools through the official SDK client, and the CLI."""

import json
import os
import subprocess
import time
from datetime import datetime

import pytest
import yaml

import harness
from harness import REPO
from mcp_support import sdk
from test_openapi import assert_matches, schema

SPEC = yaml.safe_load(open(os.path.join(REPO, "docs", "openapi.yaml")))


def running_sandbox(client, body=None):
    sbx = client.create(body or {})
    return client.wait_for_status(sbx["id"], "running")["id"]


def create(client, body, expect=201):
    status, a = client.api("POST", "/v1/automations", body)
    assert status == expect, (status, a)
    if status == 201:
        assert_matches(SPEC, schema(SPEC, "Automation"), a)
    return a


def automation(client, aid):
    status, a = client.api("GET", "/v1/automations/" + aid)
    assert status == 200, (status, a)
    assert_matches(SPEC, schema(SPEC, "Automation"), a)
    return a


def runs_of(client, aid):
    status, page = client.api("GET", "/v1/runs?limit=200&automationId=" + aid)
    assert status == 200, (status, page)
    for r in page["items"]:
        assert_matches(SPEC, schema(SPEC, "Run"), r)
        assert r["automationId"] == aid
    return page["items"]


def wait_until(what, fn, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.3)


def parse_time(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def test_an_interval_schedule_runs_in_its_sandbox_and_delete_leaves_the_sandbox(daemon, org):
    sid = running_sandbox(org)
    a = create(org, {"sandboxId": sid, "name": "ticker", "intervalSeconds": 1,
                     "command": "echo tick >> /tmp/ticks; wc -l < /tmp/ticks",
                     "env": {"TOKEN": "kept-secret"}})
    assert a["enabled"] and a["version"] == 1 and a["overlap"] == "skip", a
    assert a["envNames"] == ["TOKEN"] and "kept-secret" not in json.dumps(a)
    times = [parse_time(t) for t in a["nextRuns"]]
    assert len(times) == 5 and all(abs(b - x - 1) < 0.01 for x, b in zip(times, times[1:])), a
    def succeeded():
        return [r for r in runs_of(org, a["id"]) if r["status"] == "succeeded"]

    done = wait_until("two succeeded runs", lambda: (lambda s: s if len(s) >= 2 else None)(
        succeeded()))
    for r in done:
        assert r["trigger"] in ("schedule", "catch_up") and r["sandboxId"] == sid, r
        assert r["exitCode"] == 0 and r["stdout"].strip().isdigit(), r
    # The runs share the sandbox: the file grows, one line per run.
    assert len({r["stdout"] for r in done}) == len(done), done

    status, manual = org.api("POST", "/v1/automations/%s/trigger" % a["id"])
    assert status == 202 and manual["trigger"] == "manual", (status, manual)
    assert_matches(SPEC, schema(SPEC, "Run"), manual)
    status, listed = org.api("GET", "/v1/automations")
    assert status == 200 and [x["id"] for x in listed["items"]] == [a["id"]], listed
    for x in listed["items"]:
        assert_matches(SPEC, schema(SPEC, "Automation"), x)

    status, _ = org.api("DELETE", "/v1/automations/" + a["id"])
    assert status == 204
    assert org.api("GET", "/v1/automations/" + a["id"])[0] == 404
    assert org.get(sid)["status"] == "running", "delete leaves the sandbox"
    # No new slot fires once it is deleted.
    time.sleep(1.5)
    count = len(runs_of(org, a["id"]))
    time.sleep(2.5)
    assert len(runs_of(org, a["id"])) == count


def test_a_hibernated_target_is_started_for_the_run_and_stopped_again(daemon, org):
    sid = running_sandbox(org)
    status, body = org.api("POST", "/v1/sandboxes/%s/stop" % sid)
    assert status == 200 and body["status"] == "hibernated", (status, body)
    a = create(org, {"sandboxId": sid, "intervalSeconds": 2, "command": "echo woke-up"})
    run = wait_until("a succeeded run", lambda: next(
        (r for r in runs_of(org, a["id"]) if r["status"] == "succeeded"), None), timeout=180)
    assert run["stdout"] == "woke-up\n", run
    status, _ = org.api("POST", "/v1/automations/%s/disable" % a["id"])
    assert status == 200
    # The schedule started it, so the schedule stopped it again before recording the run.
    sbx = org.wait_for_status(sid, "hibernated", timeout=60)
    assert sbx["status"] == "hibernated"


def test_a_non_zero_exit_is_not_retried_and_five_failures_pause(daemon, org):
    sid = running_sandbox(org)
    a = create(org, {"sandboxId": sid, "intervalSeconds": 1, "argv": ["sh", "-c", "exit 3"]})
    paused = wait_until("the automation paused", lambda: (
        lambda x: x if not x["enabled"] else None)(automation(org, a["id"])), timeout=120)
    assert "5 consecutive failed runs" in paused["pausedReason"], paused
    assert paused["version"] == 2, paused
    failed = [r for r in runs_of(org, a["id"]) if r["status"] == "failed"]
    assert len(failed) == 5, runs_of(org, a["id"])
    for r in failed:
        assert r["exitCode"] == 3 and r["attempt"] == 1 and r["trigger"] != "retry", r
    # One run per slot: the scheduled times are distinct.
    assert len({r["scheduledAt"] for r in failed}) == 5


def test_a_stale_version_is_refused_and_changes_nothing(daemon, org):
    sid = running_sandbox(org)
    a = create(org, {"sandboxId": sid, "intervalSeconds": 3600, "command": "true"})
    status, off = org.api("POST", "/v1/automations/%s/disable" % a["id"],
                          headers={"If-Match": '"1"'})
    assert status == 200 and not off["enabled"] and off["version"] == 2 and off["nextRuns"] == []
    assert_matches(SPEC, schema(SPEC, "Automation"), off)
    status, err = org.api("POST", "/v1/automations/%s/enable" % a["id"], headers={"If-Match": "1"})
    assert status == 409, (status, err)
    assert_matches(SPEC, schema(SPEC, "Error"), err)
    assert not automation(org, a["id"])["enabled"]
    status, err = org.api("POST", "/v1/automations/%s/enable" % a["id"],
                          headers={"If-Match": "nope"})
    assert status == 400 and err["error"]["field"] == "If-Match", (status, err)
    status, on = org.api("POST", "/v1/automations/%s/enable" % a["id"], headers={"If-Match": "2"})
    assert status == 200 and on["enabled"] and on["version"] == 3 and len(on["nextRuns"]) == 5
    assert_matches(SPEC, schema(SPEC, "Automation"), on)


def test_another_organizations_ids_are_not_found(daemon, org):
    sid = running_sandbox(org)
    a = create(org, {"sandboxId": sid, "intervalSeconds": 3600, "command": "true"})
    status, run = org.api("POST", "/v1/automations/%s/trigger" % a["id"])
    assert status == 202
    other = daemon.new_org()
    for method, path in [("GET", "/v1/automations/" + a["id"]),
                         ("DELETE", "/v1/automations/" + a["id"]),
                         ("POST", "/v1/automations/%s/enable" % a["id"]),
                         ("POST", "/v1/automations/%s/disable" % a["id"]),
                         ("POST", "/v1/automations/%s/trigger" % a["id"]),
                         ("GET", "/v1/runs/" + run["id"]),
                         ("POST", "/v1/runs/%s/cancel" % run["id"]),
                         ("GET", "/v1/automations/aut_doesnotexist")]:
        status, body = other.api(method, path)
        assert status == 404, (method, path, status, body)
    # Nor can it aim a schedule at this organization's sandbox.
    status, body = other.api("POST", "/v1/automations",
                             {"sandboxId": sid, "intervalSeconds": 1, "command": "true"})
    assert status == 404, (status, body)
    assert other.api("GET", "/v1/automations")[1]["items"] == []
    assert other.api("GET", "/v1/runs?automationId=" + a["id"])[1]["items"] == []
    assert automation(org, a["id"])["enabled"]


@pytest.mark.parametrize("body,field", [
    ({"intervalSeconds": 1, "command": "true"}, "sandboxId"),
    ({"sandboxId": "SBX", "intervalSeconds": 0, "command": "true"}, "intervalSeconds"),
    ({"sandboxId": "SBX", "command": "true"}, "intervalSeconds"),
    ({"sandboxId": "SBX", "cron": "TZ=UTC 0 9 * * *", "command": "true"}, "cron"),
    ({"sandboxId": "SBX", "cron": "0 9 * *", "command": "true"}, "cron"),
    ({"sandboxId": "SBX", "cron": "0 9 * * *", "timeZone": "Mars/Base", "command": "true"},
     "timeZone"),
    ({"sandboxId": "SBX", "cron": "0 9 * * *", "intervalSeconds": 5, "command": "true"}, "cron"),
    ({"sandboxId": "SBX", "intervalSeconds": 1, "command": "true", "overlap": "queue"}, "overlap"),
    ({"sandboxId": "SBX", "intervalSeconds": 1, "command": "true", "image": "x"}, "image"),
    ({"sandboxId": "SBX", "intervalSeconds": 1}, "command"),
    ({"sandboxId": "SBX", "intervalSeconds": 1, "command": "true", "maxAttempts": 0},
     "maxAttempts"),
    ({"sandboxId": "SBX", "intervalSeconds": 1, "command": "true", "maxAttempts": 11},
     "maxAttempts"),
    ({"sandboxId": "SBX", "cron": "0 9 * * Monday", "command": "true"}, "cron"),
    ({"sandboxId": "SBX", "cron": "@reboot", "command": "true"}, "cron"),
    # Past 256 bytes, however valid the rest (spaces separate fields).
    ({"sandboxId": "SBX", "cron": "0 9 * * *" + " " * 248, "command": "true"}, "cron"),
])
def test_bad_input_is_refused_naming_the_field_and_creates_nothing(daemon, org, body, field):
    sid = running_sandbox(org)
    if body.get("sandboxId") == "SBX":
        body = dict(body, sandboxId=sid)
    status, err = org.api("POST", "/v1/automations", body)
    assert status in (400, 422), (status, err)
    assert_matches(SPEC, schema(SPEC, "Error"), err)
    assert err["error"]["field"] == field, err
    assert org.api("GET", "/v1/automations")[1]["items"] == []


def test_a_cron_schedule_in_a_time_zone_answers_its_next_runs(daemon, org):
    sid = running_sandbox(org)
    a = create(org, {"sandboxId": sid, "cron": "30 9 * * 1-5", "timeZone": "Asia/Tokyo",
                     "command": "true"})
    assert a["cron"] == "30 9 * * 1-5" and a["timeZone"] == "Asia/Tokyo" and a["intervalSeconds"] is None
    for t in a["nextRuns"]:
        # 09:30 in Tokyo is 00:30 UTC, on weekdays.
        d = datetime.fromisoformat(t.replace("Z", "+00:00"))
        assert (d.hour, d.minute) == (0, 30) and d.weekday() < 5, a["nextRuns"]


def test_deleting_the_target_pauses_its_automations(daemon, org):
    sid = running_sandbox(org)
    a = create(org, {"sandboxId": sid, "intervalSeconds": 3600, "command": "true"})
    org.delete(sid)
    paused = wait_until("the automation paused", lambda: (
        lambda x: x if not x["enabled"] else None)(automation(org, a["id"])), timeout=30)
    assert "was deleted" in paused["pausedReason"] and sid in paused["pausedReason"], paused
    status, err = org.api("POST", "/v1/automations/%s/enable" % a["id"])
    assert status == 409 and "gone" in err["error"]["message"], (status, err)


def test_month_and_weekday_names_and_shortcuts_are_read(daemon, org):
    sid = running_sandbox(org)
    a = create(org, {"sandboxId": sid, "cron": "0 6 * jan-DEC Sat,sun", "command": "true"})
    for t in a["nextRuns"]:
        d = datetime.fromisoformat(t.replace("Z", "+00:00"))
        assert (d.hour, d.minute) == (6, 0) and d.weekday() >= 5, a["nextRuns"]
    hourly = create(org, {"sandboxId": sid, "cron": "@hourly", "command": "true"})
    times = [parse_time(t) for t in hourly["nextRuns"]]
    assert all(t % 3600 == 0 for t in times) and all(b - x == 3600 for x, b in zip(times, times[1:]))


def test_an_instant_target_killed_under_its_command_is_retried_in_a_fresh_sandbox(daemon, org):
    sid = running_sandbox(org)
    # Only the first sandbox has /tmp/hang: its attempt hangs until killed, the retry's does not.
    out = harness.run_command(org, sid, command="touch /tmp/hang")
    assert out["exitCode"] == 0, out
    a = create(org, {"sandboxId": sid, "intervalSeconds": 3600, "maxAttempts": 2,
                     "env": {"WHO": "automation"},
                     "command": "if [ -e /tmp/hang ]; then sleep 600; fi; echo retried by $WHO"})
    assert a["maxAttempts"] == 2, a
    status, first = org.api("POST", "/v1/automations/%s/trigger" % a["id"])
    assert status == 202, (status, first)

    def run(rid):
        status, r = org.api("GET", "/v1/runs/" + rid)
        assert status == 200, (status, r)
        assert_matches(SPEC, schema(SPEC, "Run"), r)
        return r

    wait_until("the first attempt running", lambda: run(first["id"])["status"] == "running")
    killed = subprocess.run([harness.RUNSC, "--root", harness.runsc_root(daemon.state_dir),
                             "kill", sid, "KILL"], capture_output=True, text=True, timeout=60)
    assert killed.returncode == 0, killed.stderr
    failed = wait_until("the first attempt cut", lambda: (
        lambda r: r if r["status"] == "infrastructure_failed" else None)(run(first["id"])))
    assert failed["attempt"] == 1 and failed["sandboxId"] == sid, failed
    retry = wait_until("the retry succeeded", lambda: [
        r for r in runs_of(org, a["id"]) if r["trigger"] == "retry" and r["status"] == "succeeded"])
    assert len(retry) == 1, retry
    retry = retry[0]
    fresh = retry["sandboxId"]
    assert retry["attempt"] == 2 and fresh != sid, retry
    assert retry["stdout"] == "retried by automation\n", retry
    # The automation follows the fresh sandbox; the killed one is deleted.
    after = automation(org, a["id"])
    assert after["sandboxId"] == fresh and after["enabled"] and after["version"] == 2, after
    assert org.api("GET", "/v1/sandboxes/" + fresh)[1]["status"] == "running"
    wait_until("the killed target deleted", lambda: org.api("GET", "/v1/sandboxes/" + sid)[0] == 404
               or org.api("GET", "/v1/sandboxes/" + sid)[1].get("status") == "deleted", timeout=60)
    org.delete(fresh)


@pytest.mark.parametrize("mode", ["http"])
def test_the_mcp_automation_tools_through_the_official_sdk(daemon, org, mode):
    sid = running_sandbox(org)
    report = sdk(daemon, org, mode, "calls", [
        ["create_sandbox_automation", {"sandbox_id": sid, "command": "echo from-mcp",
                                       "interval_seconds": 3600, "name": "mcp"}],
        ["list_sandbox_automations", {}],
        ["create_sandbox_automation", {"sandbox_id": sid, "command": "true",
                                       "interval_seconds": 1, "image": "python:3.12-slim"}],
        ["create_sandbox_automation", {"sandbox_id": "sbx_nope", "command": "true",
                                       "interval_seconds": 1}],
    ])
    calls = report["calls"]
    for c in calls:
        if not c["isError"]:
            assert c["schemaValid"], (c["name"], c["schemaErrors"])
    created = calls[0]["structuredContent"]
    assert created["version"] == 1 and created["enabled"] and len(created["next_runs"]) == 5
    listed = calls[1]["structuredContent"]["automations"]
    assert [x["automation_id"] for x in listed] == [created["automation_id"]]
    assert calls[2]["isError"], "placement fields are not accepted"
    assert calls[3]["isError"], "an unknown sandbox is not found"

    aid = created["automation_id"]
    status, run = org.api("POST", "/v1/automations/%s/trigger" % aid)
    assert status == 202
    report = sdk(daemon, org, mode, "calls", [
        ["set_sandbox_automation_enabled", {"automation_id": aid, "enabled": False, "version": 1}],
        ["set_sandbox_automation_enabled", {"automation_id": aid, "enabled": True, "version": 1}],
        ["list_automation_runs", {"automation_id": aid}],
        ["delete_sandbox_automation", {"automation_id": aid}],
        ["delete_sandbox_automation", {"automation_id": aid}],
    ])
    calls = report["calls"]
    for c in calls:
        if not c["isError"]:
            assert c["schemaValid"], (c["name"], c["schemaErrors"])
    paused = calls[0]["structuredContent"]
    assert not paused["enabled"] and paused["version"] == 2, paused
    assert calls[1]["isError"], "a stale version is refused"
    runs = calls[2]["structuredContent"]["runs"]
    assert [r["run_id"] for r in runs] == [run["id"]] and runs[0]["automation_id"] == aid
    assert calls[3]["structuredContent"] == {"automation_id": aid, "deleted": True}
    assert calls[4]["isError"], "deleted once"
    assert org.get(sid)["status"] == "running", "delete_sandbox_automation leaves the sandbox"


def test_the_cli_creates_pauses_triggers_and_deletes_automations(daemon, org):
    sid = running_sandbox(org)
    p = org.cli("--json", "automation", "create", "--sandbox", sid, "--every", "3600", "--name",
                "cli", "--env", "GREETING=hi", "--", "sh", "-c", "echo $GREETING-cli")
    assert p.returncode == 0, p.stderr
    a = json.loads(p.stdout)
    assert a["intervalSeconds"] == 3600 and a["envNames"] == ["GREETING"], a
    p = org.cli("automation", "ls")
    assert p.returncode == 0 and a["id"] in p.stdout and "cli" in p.stdout, p.stdout
    p = org.cli("automation", "get", a["id"])
    assert p.returncode == 0 and "next runs" in p.stdout, p.stdout
    p = org.cli("automation", "disable", a["id"], "--version", "1")
    assert p.returncode == 0 and "false" in p.stdout, (p.stdout, p.stderr)
    p = org.cli("automation", "enable", a["id"], "--version", "1")
    assert p.returncode == 1 and "version" in p.stderr, (p.stdout, p.stderr)
    p = org.cli("--json", "automation", "trigger", a["id"])
    assert p.returncode == 0, p.stderr
    run = json.loads(p.stdout)
    done = wait_until("the manual run", lambda: (lambda r: r if r["status"] == "succeeded" else None)(
        org.api("GET", "/v1/runs/" + run["id"])[1]))
    assert done["stdout"] == "hi-cli\n", done
    p = org.cli("run", "ls", "--automation", a["id"])
    assert p.returncode == 0 and run["id"] in p.stdout and "manual" in p.stdout, p.stdout
    p = org.cli("automation", "create", "--sandbox", sid, "--cron", "0 9 * * *", "--tz", "Nowhere/X",
                "--", "true")
    assert p.returncode == 1 and "timeZone" in p.stderr, p.stderr
    p = org.cli("automation", "rm", a["id"])
    assert p.returncode == 0 and "deleted" in p.stdout, p.stderr
    assert org.api("GET", "/v1/automations/" + a["id"])[0] == 404
    assert org.get(sid)["status"] == "running"


def test_slots_missed_while_adaptd_was_down_run_once_as_a_catch_up(fresh_daemon):
    d = fresh_daemon
    admin = d.admin
    sid = running_sandbox(admin)
    a = create(admin, {"sandboxId": sid, "intervalSeconds": 1, "command": "echo caught-up",
                       "overlap": "allow"})
    wait_until("a first run", lambda: runs_of(admin, a["id"]))
    d.kill()
    time.sleep(4)
    d.start(port=d.port)
    admin.wait_for_status(sid, "running", 60)
    run = wait_until("a catch_up run that ended", lambda: next(
        (r for r in runs_of(admin, a["id"])
         if r["trigger"] == "catch_up" and r["status"] == "succeeded"), None), timeout=60)
    # One run stands for the slots missed during the downtime (four or more), and says so.
    assert run["stdout"] == "caught-up\n", run
    covered = int(run["error"].split("catches up ")[1].split(" ")[0])
    assert covered >= 3, run
    status, _ = admin.api("POST", "/v1/automations/%s/disable" % a["id"])
    assert status == 200
    assert d.stop() == 0, d.log_tail()
