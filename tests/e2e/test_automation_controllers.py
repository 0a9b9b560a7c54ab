"""Controllers (issue 18; seed 000's "desired-state SandboxController", create_sandbox_automation
with kind controller) against real sandboxes: a running durable sandbox hibernated, a sandbox
stopped by hand started again, windows of a few seconds flipping a sandbox, an instant target
killed (runsc kill) recreated and followed, a deleted target pausing its controller, other
organizations' ids, bad input, the MCP tool through the official SDK client, and the CLI."""

import json
import os
import subprocess
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
import yaml

import harness
from harness import REPO
from mcp_support import sdk
from test_automations import automation, create, parse_time, runs_of, running_sandbox, wait_until
from test_openapi import assert_matches, schema

SPEC = yaml.safe_load(open(os.path.join(REPO, "docs", "openapi.yaml")))


def controller(client, body, expect=201):
    body = dict(body, kind="controller")
    assert_matches(SPEC, schema(SPEC, "AutomationCreate"), body)
    return create(client, body, expect)


def actions(client, aid, action, status="succeeded"):
    """The controller's runs that did `action` ("start", "stop", "recreate"), oldest first."""
    out = []
    for r in reversed(runs_of(client, aid)):
        assert r["trigger"] == "controller" and r["exitCode"] is None, r
        if r["stdout"].startswith(action + ":") and r["status"] == status:
            out.append(r)
    return out


def test_hibernated_stops_a_running_durable_sandbox_and_running_starts_it_after_a_stop(
        daemon, org):
    sid = running_sandbox(org, {"startupClass": "durable"})
    out = harness.run_command(org, sid, command="echo kept > /root/state")
    assert out["exitCode"] == 0, out
    a = controller(org, {"sandboxId": sid, "desiredState": "hibernated", "name": "night"})
    assert a["kind"] == "controller" and a["desiredState"] == "hibernated", a
    assert a["nextChanges"] == [] and a["windowSeconds"] is None, a
    org.wait_for_status(sid, "hibernated", timeout=120)
    stop = wait_until("the stop run", lambda: actions(org, a["id"], "stop"))
    assert len(stop) == 1 and stop[0]["sandboxId"] == sid, stop
    assert "was running, wanted hibernated" in stop[0]["stdout"], stop
    # Durable: hibernated with its storage, as stop_sandbox does.
    hib = org.get(sid)["hibernation"]
    assert hib["workspace"] == "kept", hib
    assert org.api("DELETE", "/v1/automations/" + a["id"])[0] == 204

    b = controller(org, {"sandboxId": sid, "desiredState": "running"})
    org.wait_for_status(sid, "running", timeout=180)
    wait_until("the start run", lambda: actions(org, b["id"], "start"))
    # Stopped by hand: the controller starts it again.
    status, body = org.api("POST", "/v1/sandboxes/%s/stop" % sid)
    assert status == 200 and body["status"] == "hibernated", (status, body)
    wait_until("a second start", lambda: len(actions(org, b["id"], "start")) >= 2, timeout=180)
    org.wait_for_status(sid, "running", timeout=180)
    out = harness.run_command(org, sid, command="cat /root/state")
    assert out["stdout"] == "kept\n", out
    after = automation(org, b["id"])
    assert after["enabled"] and after["consecutiveFailures"] == 0, after


def test_windows_of_a_few_seconds_flip_the_sandbox(daemon, org):
    sid = running_sandbox(org)
    # Running for 6 s of every 12 s from creation, hibernated in between.
    a = controller(org, {"sandboxId": sid, "desiredState": "running", "intervalSeconds": 12,
                         "windowSeconds": 6})
    changes = a["nextChanges"]
    assert [c["state"] for c in changes] == ["hibernated", "running", "hibernated", "running",
                                             "hibernated"], changes
    at = [parse_time(c["at"]) for c in changes]
    assert all(abs(y - x - 6) < 0.01 for x, y in zip(at, at[1:])), changes
    stop = wait_until("the window closing", lambda: actions(org, a["id"], "stop"), timeout=60)
    start = wait_until("the next window opening", lambda: [
        r for r in actions(org, a["id"], "start") if r["startedAt"] > stop[0]["startedAt"]],
        timeout=90)
    assert start[0]["sandboxId"] == sid and stop[0]["sandboxId"] == sid, (start, stop)
    # The actions fall on the window boundaries the create answered (not on a poll).
    assert abs(parse_time(stop[0]["startedAt"]) - at[0]) < 10, (stop, at)
    status, _ = org.api("POST", "/v1/automations/%s/disable" % a["id"])
    assert status == 200


def test_an_instant_target_killed_is_recreated_and_the_controller_follows_it(daemon, org):
    sid = running_sandbox(org, {"env": {"WHO": "kept-setting"}})
    a = controller(org, {"sandboxId": sid, "desiredState": "running"})
    killed = subprocess.run([harness.RUNSC, "--root", harness.runsc_root(daemon.state_dir),
                             "kill", sid, "KILL"], capture_output=True, text=True, timeout=60)
    assert killed.returncode == 0, killed.stderr
    moved = wait_until("the controller following a new sandbox", lambda: (
        lambda x: x if x["sandboxId"] != sid else None)(automation(org, a["id"])), timeout=120)
    fresh = moved["sandboxId"]
    assert moved["enabled"] and moved["version"] == a["version"] + 1, moved
    run = wait_until("the recreate run", lambda: actions(org, a["id"], "recreate"))
    assert run[0]["sandboxId"] == fresh and sid in run[0]["stdout"], run
    org.wait_for_status(fresh, "running", timeout=120)
    # Env values are redacted from output, so the sandbox compares it itself.
    out = harness.run_command(org, fresh, command='[ "$WHO" = kept-setting ] && echo carried')
    assert out["stdout"] == "carried\n", out
    wait_until("the killed target deleted", lambda: org.api("GET", "/v1/sandboxes/" + sid)[0] == 404
               or org.api("GET", "/v1/sandboxes/" + sid)[1].get("status") == "deleted", timeout=60)
    status, _ = org.api("DELETE", "/v1/automations/" + a["id"])
    assert status == 204
    org.delete(fresh)


def test_deleting_the_target_pauses_its_controller(daemon, org):
    sid = running_sandbox(org)
    a = controller(org, {"sandboxId": sid, "desiredState": "running"})
    org.delete(sid)
    paused = wait_until("the controller paused", lambda: (
        lambda x: x if not x["enabled"] else None)(automation(org, a["id"])), timeout=60)
    assert "was deleted" in paused["pausedReason"] and paused["version"] == 2, paused
    status, err = org.api("POST", "/v1/automations/%s/enable" % a["id"])
    assert status == 409, (status, err)


def test_the_seeds_words_for_the_kinds_are_accepted(daemon, org):
    sid = running_sandbox(org)
    a = create(org, {"kind": "SandboxController", "sandboxId": sid, "desiredState": "running"})
    assert a["kind"] == "controller" and a["desiredState"] == "running", a
    s = create(org, {"kind": "SandboxSchedule", "sandboxId": sid, "command": "true",
                     "intervalSeconds": 3600})
    assert s["kind"] == "schedule", s
    status, err = org.api("POST", "/v1/automations",
                          {"kind": "sandboxcontroller", "sandboxId": sid, "desiredState": "running"})
    assert status == 400 and err["error"]["field"] == "kind", (status, err)


def test_other_organizations_ids_and_a_manual_run_are_refused(daemon, org):
    sid = running_sandbox(org)
    a = controller(org, {"sandboxId": sid, "desiredState": "running"})
    status, err = org.api("POST", "/v1/automations/%s/trigger" % a["id"])
    assert status == 409 and "controller" in err["error"]["message"], (status, err)
    other = daemon.new_org()
    for method, path in [("GET", "/v1/automations/" + a["id"]),
                         ("DELETE", "/v1/automations/" + a["id"]),
                         ("POST", "/v1/automations/%s/enable" % a["id"]),
                         ("POST", "/v1/automations/%s/disable" % a["id"]),
                         ("POST", "/v1/automations/%s/trigger" % a["id"])]:
        status, body = other.api(method, path)
        assert status == 404, (method, path, status, body)
    status, body = other.api("POST", "/v1/automations",
                             {"kind": "controller", "sandboxId": sid, "desiredState": "hibernated"})
    assert status == 404, (status, body)
    assert other.api("GET", "/v1/automations")[1]["items"] == []
    assert automation(org, a["id"])["enabled"]
    assert org.get(sid)["status"] == "running"


@pytest.mark.parametrize("body,field", [
    ({"sandboxId": "SBX"}, "desiredState"),
    ({"sandboxId": "SBX", "desiredState": "asleep"}, "desiredState"),
    ({"sandboxId": "SBX", "desiredState": "running", "windowSeconds": 60}, "windowSeconds"),
    ({"sandboxId": "SBX", "desiredState": "running", "intervalSeconds": 60}, "windowSeconds"),
    ({"sandboxId": "SBX", "desiredState": "running", "intervalSeconds": 60, "windowSeconds": 60},
     "windowSeconds"),
    ({"sandboxId": "SBX", "desiredState": "running", "cron": "* * * * *", "windowSeconds": 120},
     "windowSeconds"),
    ({"sandboxId": "SBX", "desiredState": "running", "cron": "0 9 * * *", "windowSeconds": 60,
      "timeZone": "Mars/Base"}, "timeZone"),
    ({"sandboxId": "SBX", "desiredState": "running", "command": "true"}, "command"),
    ({"sandboxId": "SBX", "desiredState": "running", "overlap": "allow"}, "overlap"),
    ({"sandboxId": "SBX", "desiredState": "running", "kind": "watcher"}, "kind"),
    ({"sandboxId": "SBX", "desiredState": "running", "kind": "schedule", "command": "true",
      "intervalSeconds": 5}, "desiredState"),
])
def test_bad_controller_input_is_refused_naming_the_field(daemon, org, body, field):
    sid = running_sandbox(org)
    body = dict({"kind": "controller"}, **dict(body, sandboxId=sid))
    status, err = org.api("POST", "/v1/automations", body)
    assert status in (400, 422), (status, err)
    assert_matches(SPEC, schema(SPEC, "Error"), err)
    assert err["error"]["field"] == field, err
    assert org.api("GET", "/v1/automations")[1]["items"] == []


@pytest.mark.parametrize("mode", ["http"])
def test_the_mcp_tool_creates_a_controller_through_the_official_sdk(daemon, org, mode):
    sid = running_sandbox(org)
    report = sdk(daemon, org, mode, "calls", [
        ["create_sandbox_automation", {"kind": "controller", "sandbox_id": sid,
                                       "desired_state": "running", "cron": "0 9 * * mon-fri",
                                       "time_zone": "Europe/Berlin", "window_seconds": 32400}],
        ["list_sandbox_automations", {}],
        ["create_sandbox_automation", {"kind": "controller", "sandbox_id": sid,
                                       "desired_state": "running", "command": "true"}],
        ["create_sandbox_automation", {"kind": "controller", "sandbox_id": "sbx_nope",
                                       "desired_state": "running"}],
        ["create_sandbox_automation", {"sandbox_id": sid, "interval_seconds": 60}],
        ["create_sandbox_automation", {"kind": "SandboxController", "sandbox_id": sid,
                                       "desired_state": "running"}],
        ["create_sandbox_automation", {"kind": "SandboxSchedule", "sandbox_id": sid,
                                       "command": "true", "interval_seconds": 3600}],
    ])
    calls = report["calls"]
    for c in calls:
        if not c["isError"]:
            assert c["schemaValid"], (c["name"], c["schemaErrors"])
    made = calls[0]["structuredContent"]
    assert made["kind"] == "controller" and made["desired_state"] == "running", made
    assert made["window_seconds"] == 32400 and made["next_runs"] == [], made
    changes = made["next_changes"]
    assert len(changes) == 5 and {c["state"] for c in changes} == {"running", "hibernated"}, made
    for c in changes:
        local = datetime.fromtimestamp(parse_time(c["at"]), ZoneInfo("Europe/Berlin"))
        assert local.weekday() < 5 and (local.hour, local.minute) == (
            (9, 0) if c["state"] == "running" else (18, 0)), c
    listed = calls[1]["structuredContent"]["automations"]
    assert [x["automation_id"] for x in listed] == [made["automation_id"]]
    assert calls[2]["isError"], "a controller takes no command"
    assert calls[3]["isError"], "an unknown sandbox is not found"
    assert calls[4]["isError"], "a schedule needs its command"
    # Seed 000's words for the two kinds are the same kinds.
    assert calls[5]["structuredContent"]["kind"] == "controller", calls[5]
    assert calls[6]["structuredContent"]["kind"] == "schedule", calls[6]


def test_the_cli_creates_a_controller(daemon, org):
    sid = running_sandbox(org)
    p = org.cli("--json", "automation", "create", "--sandbox", sid, "--controller", "running",
                "--every", "3600", "--window", "1800", "--name", "half-hours")
    assert p.returncode == 0, p.stderr
    a = json.loads(p.stdout)
    assert a["kind"] == "controller" and a["windowSeconds"] == 1800, a
    assert a["nextChanges"][0]["state"] == "hibernated", a
    p = org.cli("automation", "get", a["id"])
    assert p.returncode == 0 and "holds" in p.stdout and "next changes" in p.stdout, p.stdout
    p = org.cli("automation", "create", "--sandbox", sid, "--controller", "running", "--", "true")
    assert p.returncode == 2 and "no command" in p.stderr, (p.stdout, p.stderr)
    p = org.cli("automation", "rm", a["id"])
    assert p.returncode == 0, p.stderr
    assert org.get(sid)["status"] == "running"
