"""Runs of automations and jobs as they change (issue 18): every status change of a run is an
`event: run` frame on the organization's /v1/events (stored, so Last-Event-ID resumes it; other
organizations never see it; the Python SDK's client.runs.events reads it), cancel_automation_run
with its grace period (SIGTERM to the command's process group, SIGKILL 10 s later), and the
buffer_one overlap policy with a 1 s interval and a 3 s command."""

import contextlib
import http.client
import os
import sys
import time

import yaml

from harness import REPO, EventStream, run_command
from sdk_support import SDK_PY
from test_openapi import assert_matches, schema

SPEC = yaml.safe_load(open(os.path.join(REPO, "docs", "openapi.yaml")))
EXECUTING = ("queued", "starting", "running")


def running_sandbox(client):
    sbx = client.create({})
    return client.wait_for_status(sbx["id"], "running")["id"]


def create_automation(client, body):
    status, a = client.api("POST", "/v1/automations", body)
    assert status == 201, (status, a)
    return a


def wait_until(what, fn, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.3)


def get_run(client, run_id):
    status, run = client.api("GET", "/v1/runs/" + run_id)
    assert status == 200, (status, run)
    return run


def runs_of(client, aid):
    status, page = client.api("GET", "/v1/runs?limit=200&automationId=" + aid)
    assert status == 200, (status, page)
    return page["items"]


def sh(client, sid, command):
    cmd = run_command(client, sid, command=command, waitSeconds=30)
    assert cmd["status"] == "exited", cmd
    return cmd["stdout"]


class ResumedStream(EventStream):
    """An EventStream that resumes after `last_event_id`."""

    def __init__(self, client, last_event_id, timeout=60):
        self.conn = http.client.HTTPConnection("127.0.0.1", client.daemon.port, timeout=timeout)
        self.conn.request("GET", "/v1/events", headers={
            "Authorization": "Bearer " + client.key, "Accept": "text/event-stream",
            "Last-Event-ID": str(last_event_id)})
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.content_type = self.resp.getheader("Content-Type", "")


def run_frames(stream, until, limit=500):
    """The `run` frames of an EventStream (checked against the spec's RunEvent) until one
    matches `until`; a sandbox's status frame ends nothing."""
    seen = []
    for ev in stream.events():
        if ev.get("event") != "run":
            continue
        assert ev.get("id"), "run events carry an id so clients can resume"
        assert_matches(SPEC, schema(SPEC, "RunEvent"), ev["data"])
        seen.append(ev)
        if until(ev["data"]) or len(seen) >= limit:
            return seen
    raise AssertionError("the stream ended after %r" % seen)


def test_an_interval_automations_runs_are_events_of_its_organization_only(daemon, org):
    other = daemon.new_org()
    sid = running_sandbox(org)
    with EventStream(org, "/v1/events", timeout=120) as mine, \
            EventStream(other, "/v1/events", timeout=120) as theirs:
        a = create_automation(org, {"sandboxId": sid, "intervalSeconds": 1, "command": "echo tick"})
        frames = run_frames(mine, lambda d: d["status"] == "succeeded")
        ours = [f for f in frames if f["data"].get("automationId") == a["id"]]
        assert ours == frames, frames
        first_run = ours[0]["data"]["runId"]
        one = [f["data"] for f in ours if f["data"]["runId"] == first_run]
        assert [d["status"] for d in one] == ["starting", "running", "succeeded"], one
        for d in one:
            assert d["attempt"] == 1 and d["sandboxId"] == sid and "jobId" not in d, d
            assert ("exitCode" in d) == (d["status"] == "succeeded"), d
        assert one[-1]["exitCode"] == 0
        ids = [int(f["id"]) for f in frames]
        assert ids == sorted(ids) and len(set(ids)) == len(ids), ids
        # As the API answers the run.
        run = get_run(org, first_run)
        assert run["status"] == "succeeded" and run["automationId"] == a["id"], run

        # Resuming after the first frame replays the rest, in order, from the store.
        with ResumedStream(org, frames[0]["id"]) as resumed:
            replay = run_frames(resumed, lambda d: False, limit=len(frames) - 1)
        assert [f["id"] for f in replay] == [f["id"] for f in frames[1:]], (replay, frames)

        # The other organization's stream: its own sandbox's status arrives, no run of ours.
        sbx = other.create({})
        for ev in theirs.events():
            assert ev.get("event") != "run", ev
            data = ev.get("data")
            if ev.get("event") == "status" and data.get("sandboxId") == sbx["id"] and \
                    data.get("status") == "running":
                break
    assert org.api("POST", "/v1/automations/%s/disable" % a["id"])[0] == 200


def test_the_python_sdk_reads_run_events(daemon, org):
    sys.path.insert(0, os.path.join(SDK_PY, "src"))
    try:
        import adapt
    finally:
        sys.path.remove(os.path.join(SDK_PY, "src"))
    client = adapt.Client(url=daemon.url, api_key=org.key)
    status, job = org.api("POST", "/v1/jobs", {"command": "exit 3", "maxAttempts": 1})
    assert status == 201, job
    wait_until("the job's end", lambda: org.api("GET", "/v1/jobs/" + job["id"])[1]["status"]
               not in ("queued", "running"))
    seen = []
    with contextlib.closing(client.runs.events(last_event_id="0", timeout=30)) as events:
        for ev in events:
            assert isinstance(ev, adapt.RunEvent) and ev.id, ev
            seen.append(ev)
            if ev.status not in EXECUTING:
                break
    assert [e.status for e in seen] == ["starting", "running", "failed"], seen
    assert all(e.job_id == job["id"] and e.automation_id is None for e in seen), seen
    assert seen[-1].exit_code == 3 and seen[-1].sandbox_id, seen[-1]


def trigger(client, aid):
    status, run = client.api("POST", "/v1/automations/%s/trigger" % aid)
    assert status == 202, (status, run)
    return run


def test_cancel_sends_term_first_and_kills_after_the_grace(daemon, org):
    sid = running_sandbox(org)
    # Traps TERM: it writes its marker and exits; the run still ends cancelled.
    polite = create_automation(org, {
        "sandboxId": sid, "intervalSeconds": 3600,
        "command": "trap 'echo term > /tmp/termed; exit 0' TERM; touch /tmp/polite; "
                   "while true; do sleep 0.2; done"})
    run = trigger(org, polite["id"])
    wait_until("the polite command", lambda: "yes" in sh(org, sid, "test -e /tmp/polite && echo yes"))
    status, answer = org.api("POST", "/v1/runs/%s/cancel" % run["id"])
    assert status == 202, answer
    ended = wait_until("the cancelled run", lambda: (lambda r: r if r["status"] not in EXECUTING
                                                     else None)(get_run(org, run["id"])))
    assert ended["status"] == "cancelled" and ended["exitCode"] is None, ended
    assert sh(org, sid, "cat /tmp/termed").strip() == "term"
    status, cmd = org.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, ended["commandId"]))
    assert status == 200 and cmd["exitCode"] == 0 and cmd["signal"] is None, cmd

    # Ignores TERM (its children inherit that): it keeps writing until SIGKILL, 10 s later.
    stubborn = create_automation(org, {
        "sandboxId": sid, "intervalSeconds": 3600,
        "command": "trap '' TERM; while true; do echo alive >> /tmp/alive; sleep 0.5; done"})
    run = trigger(org, stubborn["id"])
    wait_until("the stubborn command", lambda: "alive" in sh(org, sid, "cat /tmp/alive 2>/dev/null"))
    before = sh(org, sid, "wc -l < /tmp/alive").strip()
    assert org.api("POST", "/v1/runs/%s/cancel" % run["id"])[0] == 202
    ended = wait_until("the killed run", lambda: (lambda r: r if r["status"] not in EXECUTING
                                                  else None)(get_run(org, run["id"])), timeout=60)
    assert ended["status"] == "cancelled", ended
    status, cmd = org.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, ended["commandId"]))
    assert status == 200 and cmd["signal"] == 9 and cmd["status"] == "killed", cmd
    after = int(sh(org, sid, "wc -l < /tmp/alive").strip())
    # TERM did not end it: it went on writing (a line every 0.5 s) until the SIGKILL.
    assert after >= int(before) + 3, (before, after)


def test_cancelling_a_jobs_running_run_gives_its_command_the_grace_period(daemon, org):
    status, job = org.api("POST", "/v1/jobs", {
        "command": "trap 'echo got-term; exit 0' TERM; echo started; while true; do sleep 0.2; done",
        "maxAttempts": 1, "timeoutSeconds": 300})
    assert status == 201, job
    def running_run():
        j = org.api("GET", "/v1/jobs/" + job["id"])[1]
        run_id = j.get("lastRunId")
        return run_id if run_id and get_run(org, run_id)["status"] == "running" else None
    run_id = wait_until("the job's running run", running_run)
    wait_until("the command's first output", lambda: _output_so_far(org, run_id))
    assert org.api("POST", "/v1/runs/%s/cancel" % run_id)[0] == 202
    ended = wait_until("the cancelled run", lambda: (lambda r: r if r["status"] not in EXECUTING
                                                     else None)(get_run(org, run_id)))
    assert ended["status"] == "cancelled" and "got-term" in ended["stdout"], ended
    assert org.api("GET", "/v1/jobs/" + job["id"])[1]["status"] == "cancelled"


def _output_so_far(client, run_id):
    run = get_run(client, run_id)
    if not run.get("sandboxId") or not run.get("commandId"):
        return False
    status, cmd = client.api("GET", "/v1/sandboxes/%s/commands/%s" % (run["sandboxId"], run["commandId"]))
    return status == 200 and "started" in cmd.get("stdout", "")


def test_buffer_one_keeps_one_slot_and_runs_it_right_after_the_executing_run(daemon, org):
    sid = running_sandbox(org)
    with EventStream(org, "/v1/events", timeout=120) as stream:
        a = create_automation(org, {"sandboxId": sid, "intervalSeconds": 1, "overlap": "buffer_one",
                                    "command": "sleep 3; echo done"})
        assert a["overlap"] == "buffer_one", a
        # Until a run that waited (queued) has succeeded.
        queued = set()

        def buffered_done(d):
            if d["status"] == "queued":
                queued.add(d["runId"])
            return d["status"] == "succeeded" and d["runId"] in queued
        frames = run_frames(stream, buffered_done)
    assert org.api("POST", "/v1/automations/%s/disable" % a["id"])[0] == 200
    statuses = {}
    for f in frames:
        statuses.setdefault(f["data"]["runId"], []).append(f["data"]["status"])
    waited = [s for s in statuses.values() if s[0] == "queued"]
    # The frames end when a buffered run succeeded; the next slot may be buffered by then.
    assert waited and all(s[:2] == ["queued", "starting"] or s == ["queued"] for s in waited), statuses
    assert any(s[-1] == "succeeded" for s in waited), statuses
    assert any(s == ["skipped_overlap"] for s in statuses.values()), statuses
    # At most one run waits at a time, and runs never overlap: each starts after the one before
    # it ended.
    waiting = 0
    for f in frames:
        d = f["data"]
        if d["status"] == "queued":
            waiting += 1
        elif d["status"] == "starting" and statuses[d["runId"]][0] == "queued":
            waiting -= 1
        assert waiting <= 1, frames
    ended = [r for r in runs_of(org, a["id"]) if r["status"] == "succeeded"]
    ended.sort(key=lambda r: r["startedAt"])
    assert len(ended) >= 2, ended
    for before, after in zip(ended, ended[1:]):
        assert after["startedAt"] >= before["endedAt"], (before, after)
