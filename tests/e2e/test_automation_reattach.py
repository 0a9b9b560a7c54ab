"""Runs executing when adaptd is killed with -9 (issue 18, crash safety): a restarted adaptd
re-attaches the runs whose command the sandbox's agent still runs and records them as if nothing
happened (exit code, output, status; a job's sandbox deleted after, a hibernated target the
schedule started stopped again); a run whose sandbox died while adaptd was down ends
infrastructure_failed; a re-attached run can be cancelled (SIGTERM, then SIGKILL after
--run-cancel-grace-seconds); a re-attached run keeps the output adaptd had saved before the kill."""

import json
import os
import sqlite3
import subprocess

import pytest
import yaml

import harness
from conftest import close_daemon
from harness import REPO, run_command
from test_openapi import assert_matches, schema
from test_automations import wait_until
from test_recovery import wait_for_recorded_end

SPEC = yaml.safe_load(open(os.path.join(REPO, "docs", "openapi.yaml")))
EXECUTING = ("queued", "starting", "running")


@pytest.fixture
def reattach_daemon():
    d = harness.Daemon(extra_args=["--run-cancel-grace-seconds", "2"])
    d.start()
    yield d
    close_daemon(d)


def running_sandbox(client):
    sbx = client.create({})
    return client.wait_for_status(sbx["id"], "running")["id"]


def get_run(client, run_id):
    status, run = client.api("GET", "/v1/runs/" + run_id)
    assert status == 200, (status, run)
    assert_matches(SPEC, schema(SPEC, "Run"), run)
    return run


def runs_of(client, query):
    status, page = client.api("GET", "/v1/runs?limit=200&" + query)
    assert status == 200, (status, page)
    return page["items"]


def automation_run(client, body):
    """Creates an hourly automation and triggers a run of it now; returns (automation, run)."""
    status, a = client.api("POST", "/v1/automations", dict(body, intervalSeconds=3600))
    assert status == 201, (status, a)
    status, run = client.api("POST", "/v1/automations/%s/trigger" % a["id"])
    assert status == 202, (status, run)
    return a, run


def wait_running(client, run_id):
    return wait_until("run %s running" % run_id, lambda: (
        lambda r: r if r["status"] == "running" and r["commandId"] else None)(get_run(client, run_id)))


def wait_ended(client, run_id, timeout=120):
    return wait_until("run %s ended" % run_id, lambda: (
        lambda r: r if r["status"] not in EXECUTING else None)(get_run(client, run_id)), timeout)


def restart(d):
    d.kill()
    d.start(port=d.port)


def test_runs_executing_through_the_agent_end_as_if_adaptd_had_not_been_killed(reattach_daemon):
    d = reattach_daemon
    org = d.new_org()
    target = running_sandbox(org)
    sleeper = running_sandbox(org)
    status, body = org.api("POST", "/v1/sandboxes/%s/stop" % sleeper)
    assert status == 200 and body["status"] == "hibernated", (status, body)

    # The slower ones first (a target to wake, a sandbox to make), so that all three still run
    # when adaptd is killed.
    woken, woken_run = automation_run(org, {"sandboxId": sleeper, "command": "sleep 10; echo done"})
    status, job = org.api("POST", "/v1/jobs", {"command": "sleep 10; echo done", "maxAttempts": 1})
    assert status == 201, job
    woken_run = wait_running(org, woken_run["id"])
    job_run = wait_until("the job's run", lambda: job_run_running(org, job["id"]))
    plain, plain_run = automation_run(org, {"sandboxId": target, "command": "sleep 6; echo done"})
    plain_run = wait_running(org, plain_run["id"])
    before = {r["id"]: r for r in (woken_run, job_run, plain_run)}
    for r in before.values():
        assert get_run(org, r["id"])["status"] == "running", "ended before adaptd was killed: %r" % r

    restart(d)

    for run_id, was in before.items():
        run = wait_ended(org, run_id)
        assert run["status"] == "succeeded", run
        assert run["exitCode"] == 0 and run["stdout"] == "done\n" and run["error"] in ("", None), run
        assert run["commandId"] == was["commandId"] and run["attempt"] == 1, run
        assert run["sandboxId"] == was["sandboxId"], run
    # Nothing was retried: one run each.
    assert [r["id"] for r in runs_of(org, "automationId=" + plain["id"])] == [plain_run["id"]]
    assert [r["id"] for r in runs_of(org, "automationId=" + woken["id"])] == [woken_run["id"]]
    done = org.api("GET", "/v1/jobs/" + job["id"])[1]
    assert done["status"] == "succeeded" and done["exitCode"] == 0 and done["attempts"] == 1, done
    # The job's sandbox is deleted after its attempt, as without the restart.
    wait_until("the job's sandbox deleted", lambda: sandbox_gone(org, job_run["sandboxId"]), 60)
    # The schedule started the hibernated target, so it stopped it again; the other target runs.
    assert org.wait_for_status(sleeper, "hibernated", 60)["status"] == "hibernated"
    assert org.get(target)["status"] == "running"


def test_a_run_whose_sandbox_died_while_adaptd_was_down_fails_and_a_reattached_run_cancels(
        reattach_daemon):
    d = reattach_daemon
    org = d.new_org()
    doomed = running_sandbox(org)
    target = running_sandbox(org)
    lost, lost_run = automation_run(org, {"sandboxId": doomed, "maxAttempts": 1,
                                          "command": "sleep 60; echo done"})
    stubborn, stubborn_run = automation_run(org, {
        "sandboxId": target,
        "command": "trap '' TERM; while true; do echo alive >> /tmp/alive; sleep 0.5; done"})
    lost_run = wait_running(org, lost_run["id"])
    stubborn_run = wait_running(org, stubborn_run["id"])

    d.kill()
    killed = subprocess.run([harness.RUNSC, "--root", harness.runsc_root(d.state_dir),
                             "kill", doomed, "KILL"], capture_output=True, text=True, timeout=60)
    assert killed.returncode == 0, killed.stderr
    wait_for_recorded_end(d, doomed)
    d.start(port=d.port)

    failed = wait_ended(org, lost_run["id"])
    assert failed["status"] == "infrastructure_failed" and failed["exitCode"] is None, failed
    assert failed["error"], failed
    assert [r["id"] for r in runs_of(org, "automationId=" + lost["id"])] == [lost_run["id"]], \
        "maxAttempts 1: not retried"

    # The command that ignores TERM was re-attached: cancel ends it with SIGKILL after the grace.
    assert get_run(org, stubborn_run["id"])["status"] == "running"
    status, answer = org.api("POST", "/v1/runs/%s/cancel" % stubborn_run["id"])
    assert status == 202, (status, answer)
    ended = wait_ended(org, stubborn_run["id"], timeout=60)
    assert ended["status"] == "cancelled" and ended["exitCode"] is None, ended
    status, cmd = org.api("GET", "/v1/sandboxes/%s/commands/%s" % (target, ended["commandId"]))
    assert status == 200 and cmd["status"] == "killed" and cmd["signal"] == 9, cmd


def saved_output(d, command_id):
    """The stdout adaptd saved to the command's record so far (read from its store)."""
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(d.state_dir, "adapt.db"), uri=True)
    try:
        row = db.execute("SELECT stdout, data FROM commands WHERE id = ?",
                         (command_id,)).fetchone()
    finally:
        db.close()
    if not row:
        return ""
    # Its own column since migration 38; a row written before keeps it in the JSON.
    return row[0] if row[0] is not None else json.loads(row[1]).get("stdout", "")


def test_a_reattached_run_keeps_the_output_adaptd_had_received_before_it_was_killed(
        reattach_daemon):
    d = reattach_daemon
    org = d.new_org()
    target = running_sandbox(org)
    # Each command prints a line, waits for a file the test makes after the restart, then
    # prints another.
    command = "echo before; while [ ! -e /tmp/go ]; do sleep 0.2; done; echo after"
    _, run = automation_run(org, {"sandboxId": target, "command": command})
    status, job = org.api("POST", "/v1/jobs", {"command": command, "maxAttempts": 1})
    assert status == 201, job
    runs = [wait_running(org, run["id"]),
            wait_until("the job's run", lambda: job_run_running(org, job["id"]))]
    # adaptd writes a running command's output to its record as it comes (once a second at
    # most): the first line is there before the kill.
    for r in runs:
        wait_until("the first line saved", lambda: saved_output(d, r["commandId"]) == "before\n")
        assert get_run(org, r["id"])["status"] == "running", "ended before adaptd was killed"

    restart(d)

    for r in runs:
        run_command(org, r["sandboxId"], argv=["touch", "/tmp/go"], waitSeconds=30)
    for r in runs:
        ended = wait_ended(org, r["id"])
        assert ended["status"] == "succeeded" and ended["exitCode"] == 0, ended
        assert ended["stdout"] == "before\nafter\n", ended
        status, cmd = org.api("GET", "/v1/sandboxes/%s/commands/%s" % (r["sandboxId"],
                                                                       r["commandId"]))
        assert status == 200 and cmd["stdout"] == "before\nafter\n", cmd


def job_run_running(client, job_id):
    j = client.api("GET", "/v1/jobs/" + job_id)[1]
    run_id = j.get("lastRunId")
    if not run_id:
        return None
    run = get_run(client, run_id)
    return run if run["status"] == "running" and run["commandId"] else None


def sandbox_gone(client, sid):
    status, body = client.api("GET", "/v1/sandboxes/" + sid)
    return status == 404 or body.get("status") == "deleted"
