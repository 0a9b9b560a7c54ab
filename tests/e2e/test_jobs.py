"""One-shot jobs and their runs (issue 18; seed 000's submit_sandbox_job, list_sandbox_jobs,
cancel_sandbox_job, delete_sandbox_job, list_automation_runs, get_automation_run,
cancel_automation_run): a fresh instant sandbox per attempt, output kept, non-zero exits final,
infrastructure failures retried in a fresh sandbox, the per-organization queue, cancel and
delete rules, other organizations' ids, idempotent submits, the MCP tools through the official
SDK client, and a restart of adaptd in the middle of a job."""

import json
import os
import subprocess
import time

import pytest
import yaml

import harness
from harness import REPO, unique
from mcp_support import sdk
from test_openapi import assert_matches, schema
from test_recovery import wait_for_recorded_end

SPEC = yaml.safe_load(open(os.path.join(REPO, "docs", "openapi.yaml")))
TERMINAL = ("succeeded", "failed", "cancelled", "infrastructure_failed")


def submit(client, body, headers=None, expect=201):
    status, job = client.api("POST", "/v1/jobs", body, headers=headers)
    assert status == expect, (status, job)
    if status < 300:
        assert_matches(SPEC, schema(SPEC, "Job"), job)
    return job


def job_of(client, job_id):
    status, job = client.api("GET", "/v1/jobs/" + job_id)
    assert status == 200, (status, job)
    return job


def wait_job(client, job_id, statuses=TERMINAL, timeout=180):
    deadline = time.monotonic() + timeout
    while True:
        job = job_of(client, job_id)
        if job["status"] in statuses:
            return job
        assert time.monotonic() < deadline, "job %s still %s" % (job_id, job)
        time.sleep(0.3)


def runs_of(client, job_id):
    status, page = client.api("GET", "/v1/runs?jobId=" + job_id)
    assert status == 200, (status, page)
    for r in page["items"]:
        assert_matches(SPEC, schema(SPEC, "Run"), r)
    return page["items"]


def wait_run(client, job_id, pred, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        runs = runs_of(client, job_id)
        if runs and pred(runs[0]):
            return runs[0]
        assert time.monotonic() < deadline, "no run of %s as expected: %r" % (job_id, runs)
        time.sleep(0.3)


def wait_sandbox_gone(client, sid, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        status, body = client.api("GET", "/v1/sandboxes/" + sid)
        if status == 404 or body.get("status") == "deleted":
            return
        assert time.monotonic() < deadline, "sandbox %s still %r" % (sid, body)
        time.sleep(0.3)


def test_a_job_succeeds_with_its_output_in_a_sandbox_deleted_afterwards(daemon, org):
    job = submit(org, {"command": "echo out-$ADAPT_JOB_ATTEMPT; echo err >&2",
                       "memoryMiB": 512, "network": {"egress": "none"}})
    assert job["status"] in ("queued", "running") and job["maxAttempts"] == 3
    done = wait_job(org, job["id"])
    assert done["status"] == "succeeded" and done["exitCode"] == 0 and done["attempts"] == 1, done
    assert done["finishedAt"] and done["egress"] == "none"
    runs = runs_of(org, job["id"])
    assert len(runs) == 1
    run = runs[0]
    assert run["status"] == "succeeded" and run["trigger"] == "manual" and run["attempt"] == 1
    assert run["stdout"] == "out-1\n" and run["stderr"] == "err\n" and run["exitCode"] == 0
    assert run["jobId"] == job["id"] and run["endedAt"] and run["sandboxId"]
    status, got = org.api("GET", "/v1/runs/" + run["id"])
    assert status == 200 and got == run
    wait_sandbox_gone(org, run["sandboxId"])


def test_a_non_zero_exit_is_the_commands_result_and_is_not_retried(daemon, org):
    job = submit(org, {"argv": ["sh", "-c", "echo no; exit 3"], "maxAttempts": 3})
    done = wait_job(org, job["id"])
    assert done["status"] == "failed" and done["exitCode"] == 3 and done["attempts"] == 1, done
    runs = runs_of(org, job["id"])
    assert [(r["status"], r["exitCode"], r["stdout"]) for r in runs] == [("failed", 3, "no\n")]


def test_an_infrastructure_failure_is_retried_in_a_fresh_sandbox(daemon, org):
    # The first attempt's sandbox is deleted under its command: the infrastructure's failure.
    job = submit(org, {"command": "echo attempt-$ADAPT_JOB_ATTEMPT; "
                                  "if [ $ADAPT_JOB_ATTEMPT = 1 ]; then sleep 120; fi"})
    first = wait_run(org, job["id"], lambda r: r["status"] == "running" and r["sandboxId"])
    status, _ = org.api("DELETE", "/v1/sandboxes/" + first["sandboxId"])
    assert status in (202, 204)
    done = wait_job(org, job["id"])
    runs = runs_of(org, job["id"])
    assert done["status"] == "succeeded" and done["attempts"] == 2, (done, runs)
    assert [(r["attempt"], r["trigger"], r["status"]) for r in runs] == [
        (2, "retry", "succeeded"), (1, "manual", "infrastructure_failed")], runs
    assert runs[0]["stdout"] == "attempt-2\n"
    assert runs[0]["sandboxId"] != runs[1]["sandboxId"]
    assert runs[1]["error"]


def test_the_queue_holds_the_limit_cancels_queued_jobs_and_deletes_only_ended_ones(daemon, org):
    sleepers = [submit(org, {"command": "sleep 60", "network": {"egress": "none"}}) for _ in range(4)]
    later = submit(org, {"command": "echo later"})
    dropped = submit(org, {"command": "echo never"})
    # The organization's four slots are taken: the next jobs wait, in order.
    assert job_of(org, later["id"])["status"] == "queued"
    assert job_of(org, dropped["id"])["status"] == "queued"

    status, cancelled = org.api("POST", "/v1/jobs/%s/cancel" % dropped["id"])
    assert status == 200 and cancelled["status"] == "cancelled", cancelled
    status, body = org.api("POST", "/v1/jobs/%s/cancel" % dropped["id"])
    assert status == 409 and body["error"]["code"] == "conflict"

    running = wait_job(org, sleepers[0]["id"], ("running",))
    status, body = org.api("POST", "/v1/jobs/%s/cancel" % running["id"])
    assert status == 409 and running["lastRunId"] in body["error"]["message"], body
    status, body = org.api("DELETE", "/v1/jobs/" + running["id"])
    assert status == 409, body
    assert job_of(org, later["id"])["status"] == "queued"

    # Cancelling a run ends it cancelled, not retried; its slot goes to the next job.
    status, run = org.api("POST", "/v1/runs/%s/cancel" % running["lastRunId"])
    assert status == 202, run
    assert_matches(SPEC, schema(SPEC, "Run"), run)
    ended = wait_job(org, running["id"])
    assert ended["status"] == "cancelled" and ended["attempts"] == 1, ended
    assert wait_job(org, later["id"])["status"] == "succeeded"
    status, page = org.api("GET", "/v1/jobs?limit=200")
    live = [j for j in page["items"] if j["status"] == "running"]
    assert len(live) <= 4

    for s in sleepers[1:]:
        run_id = wait_job(org, s["id"], ("running",))["lastRunId"]
        assert org.api("POST", "/v1/runs/%s/cancel" % run_id)[0] == 202
    for s in sleepers:
        assert wait_job(org, s["id"])["status"] == "cancelled"

    assert runs_of(org, dropped["id"]) == []
    status, _ = org.api("DELETE", "/v1/jobs/" + dropped["id"])
    assert status == 204
    assert org.api("GET", "/v1/jobs/" + dropped["id"])[0] == 404
    # The deleted job's runs stay to expire on their own.
    status, _ = org.api("DELETE", "/v1/jobs/" + running["id"])
    assert status == 204
    assert len(runs_of(org, running["id"])) == 1


def test_another_organizations_jobs_and_runs_are_not_found(daemon, org):
    job = submit(org, {"command": "true"})
    done = wait_job(org, job["id"])
    other = daemon.new_org()
    for method, path in [("GET", "/v1/jobs/" + job["id"]), ("DELETE", "/v1/jobs/" + job["id"]),
                         ("POST", "/v1/jobs/%s/cancel" % job["id"]),
                         ("GET", "/v1/runs/" + done["lastRunId"]),
                         ("POST", "/v1/runs/%s/cancel" % done["lastRunId"]),
                         ("GET", "/v1/jobs/job_doesnotexist")]:
        status, body = other.api(method, path)
        assert status == 404, (method, path, status, body)
    assert other.api("GET", "/v1/jobs")[1]["items"] == []
    assert other.api("GET", "/v1/runs?jobId=" + job["id"])[1]["items"] == []
    assert job_of(org, job["id"])["status"] == "succeeded"


def test_an_idempotency_key_makes_submit_repeatable(daemon, org):
    key = unique("job-key")
    body = {"command": "echo once"}
    first = submit(org, body, headers={"Idempotency-Key": key})
    again = submit(org, body, headers={"Idempotency-Key": key}, expect=200)
    assert again["id"] == first["id"]
    status, err = org.api("POST", "/v1/jobs", {"command": "echo other"}, headers={"Idempotency-Key": key})
    assert status == 409, err
    wait_job(org, first["id"])
    assert [j["id"] for j in org.api("GET", "/v1/jobs")[1]["items"]] == [first["id"]]
    assert len(runs_of(org, first["id"])) == 1


@pytest.mark.parametrize("body, field", [
    ({"command": "true", "maxAttempts": 11}, "maxAttempts"),
    ({"command": "true", "maxAttempts": 0}, "maxAttempts"),
    ({"command": "true", "timeoutSeconds": 0}, "timeoutSeconds"),
    ({"command": "true", "memoryMiB": 1}, "memoryMiB"),
    ({"command": "true", "colour": "red"}, "colour"),
    ({"command": "true", "argv": ["true"]}, "command"),
    ({}, "command"),
    ({"argv": []}, "argv"),
    ({"command": "true", "network": {"egress": "allowlist", "allow": []}}, "network"),
])
def test_bad_input_is_refused_naming_the_field_and_queues_nothing(daemon, org, body, field):
    status, err = org.api("POST", "/v1/jobs", body)
    assert status in (400, 422), (status, err)
    assert_matches(SPEC, schema(SPEC, "Error"), err)
    assert err["error"]["field"] == field, err
    assert org.api("GET", "/v1/jobs")[1]["items"] == []


@pytest.mark.parametrize("mode", ["http"])
def test_the_mcp_job_tools_through_the_official_sdk(daemon, org, mode):
    report = sdk(daemon, org, mode, "jobs")
    by_name = {}
    for c in report["calls"]:
        if not c["isError"]:
            assert c["schemaValid"], (c["name"], c["schemaErrors"])
        by_name.setdefault(c["name"], []).append(c)
    submitted = by_name["submit_sandbox_job"][0]["structuredContent"]
    assert submitted["status"] in ("queued", "running")
    done = by_name["get_automation_run"][0]
    assert not done["isError"], done
    run = done["structuredContent"]
    assert run["status"] == "succeeded" and run["stdout"] == "from-mcp 1\n", run
    assert run["job_id"] == submitted["job_id"]
    again = by_name["submit_sandbox_job"][1]["structuredContent"]
    assert again["job_id"] == submitted["job_id"], "the idempotency_key returned the same job"
    listed = by_name["list_sandbox_jobs"][0]["structuredContent"]["jobs"]
    assert [j["job_id"] for j in listed] == [submitted["job_id"]]
    assert by_name["cancel_sandbox_job"][0]["isError"], "a job that ran cannot be cancelled"
    assert not by_name["cancel_automation_run"][0]["isError"]
    assert by_name["cancel_automation_run"][0]["structuredContent"]["status"] == "succeeded"
    assert not by_name["delete_sandbox_job"][0]["isError"]
    assert by_name["get_automation_run"][1]["isError"], "an unknown run is not found"
    assert org.api("GET", "/v1/jobs/" + submitted["job_id"])[0] == 404


def test_a_restarted_adaptd_records_a_run_whose_sandbox_died_meanwhile_and_retries_the_job(
        fresh_daemon):
    d = fresh_daemon
    admin = d.admin
    marker = unique("restart")
    job = submit(admin, {"command": "echo %s-$ADAPT_JOB_ATTEMPT; if [ $ADAPT_JOB_ATTEMPT = 1 ]; "
                                    "then sleep 120; fi" % marker, "maxAttempts": 2})
    first = wait_run(admin, job["id"], lambda r: r["status"] == "running" and r["commandId"])
    d.kill()
    # The attempt's sandbox dies while adaptd is down (a run still running through the agent is
    # re-attached instead: tests/e2e/test_automation_reattach.py).
    killed = subprocess.run([harness.RUNSC, "--root", harness.runsc_root(d.state_dir),
                             "kill", first["sandboxId"], "KILL"], capture_output=True, text=True,
                            timeout=60)
    assert killed.returncode == 0, killed.stderr
    wait_for_recorded_end(d, first["sandboxId"])
    d.start(port=d.port)
    done = wait_job(admin, job["id"])
    assert done["status"] == "succeeded" and done["attempts"] == 2, done
    runs = runs_of(admin, job["id"])
    assert [(r["attempt"], r["status"]) for r in runs] == [(2, "succeeded"),
                                                           (1, "infrastructure_failed")], runs
    assert runs[0]["stdout"] == "%s-2\n" % marker
    assert runs[1]["error"] and runs[1]["exitCode"] is None, runs[1]
    # The interrupted attempt's sandbox does not outlive it.
    wait_sandbox_gone(admin, first["sandboxId"])
    assert d.stop() == 0, d.log_tail()


def test_the_cli_submits_lists_and_shows_jobs_and_runs(daemon, org):
    key = unique("cli-job")
    p = org.cli("--json", "job", "submit", "--memory", "512", "--egress", "none", "--env", "GREETING=hi",
                "--idempotency-key", key, "--", "sh", "-c", "echo $GREETING-$ADAPT_JOB_ATTEMPT")
    assert p.returncode == 0, p.stderr
    job = json.loads(p.stdout)
    assert job["memoryMiB"] == 512 and job["egress"] == "none" and job["envNames"] == ["GREETING"]
    again = org.cli("--json", "job", "submit", "--memory", "512", "--egress", "none", "--env",
                    "GREETING=hi", "--idempotency-key", key, "--", "sh", "-c",
                    "echo $GREETING-$ADAPT_JOB_ATTEMPT")
    assert again.returncode == 0 and json.loads(again.stdout)["id"] == job["id"], again.stderr
    done = wait_job(org, job["id"])
    assert done["status"] == "succeeded", done
    p = org.cli("job", "ls")
    assert p.returncode == 0 and job["id"] in p.stdout and "succeeded" in p.stdout, p.stdout
    p = org.cli("run", "ls", "--job", job["id"])
    assert p.returncode == 0 and done["lastRunId"] in p.stdout and "manual" in p.stdout, p.stdout
    p = org.cli("--json", "run", "get", done["lastRunId"])
    assert p.returncode == 0 and json.loads(p.stdout)["stdout"] == "hi-1\n", p.stdout
    p = org.cli("run", "get", done["lastRunId"])
    assert p.returncode == 0 and "stdout:\n  hi-1\n" in p.stdout, p.stdout
    p = org.cli("job", "cancel", job["id"])
    assert p.returncode == 1 and "already ended" in p.stderr, (p.stdout, p.stderr)
    p = org.cli("job", "submit", "--max-attempts", "11", "--", "true")
    assert p.returncode == 1 and "maxAttempts" in p.stderr, p.stderr
    p = org.cli("job", "rm", job["id"])
    assert p.returncode == 0 and "deleted" in p.stdout, p.stderr
    assert org.api("GET", "/v1/jobs/" + job["id"])[0] == 404
