"""adaptd crashes at every step of create, delete, image pull and an automation's slot claim (src/base/fault_point.h).

For each fault point: start adaptd with ADAPT_FAULT=<point>, drive the API until the daemon
exits with status 86 at that point, restart it unarmed on the same state directory, and check
that the sandbox (or image) ends in a settled state, never stuck in provisioning, deleting or
pulling, and that once it is deleted the host holds nothing more than before (leaks.py).
"""

import os
import subprocess
import time

import pytest

import harness
import leaks
import registry as reg

FAULT_EXIT = 86

# Create: the sandbox must end running (the crash came after it was up) or failed (before).
CREATE_POINTS = [
    ("sandbox.create.after_row", ("failed",)),
    ("sandbox.provision.begin", ("failed",)),
    ("sandbox.provision.after_image", ("failed",)),
    ("sandbox.provision.after_network", ("failed",)),
    ("runtime.launch.after_rootfs", ("failed",)),
    # The shim is up and boots the sandbox on its own: a restart may adopt it.
    ("runtime.launch.after_spawn", ("running", "failed")),
    ("sandbox.provision.after_launch", ("running", "failed")),
    ("sandbox.provision.after_running", ("running",)),
]

# Delete: after the restart the delete finishes on its own.
DELETE_POINTS = [
    "sandbox.delete.after_deleting",
    "sandbox.delete.before_release",
    "runtime.destroy.after_kill",
    "runtime.destroy.after_unmount",
    "sandbox.release.after_runtime",
    "sandbox.delete.after_release",
]

# Pull: interrupted pulls are failed (pull again), a finished one stays ready.
PULL_POINTS = [
    ("image.pull.after_row", ("failed",)),
    ("image.pull.after_fetch", ("failed",)),
    ("image.pull.after_record", ("ready",)),
]


@pytest.fixture(scope="module")
def crash_daemon():
    """One adaptd (one state dir) for the module, restarted armed and unarmed by each test."""
    from conftest import close_daemon, start_daemon

    d = start_daemon()
    yield d
    if d.proc is None or d.proc.poll() is not None:
        d.start(port=d.port)
    close_daemon(d)


def restart(d, fault=None):
    """Stops adaptd (if it runs) and starts it again, armed with `fault` or unarmed. An
    unarmed adaptd that runs already is kept."""
    running = d.proc is not None and d.proc.poll() is None
    if running and not fault and not getattr(d, "armed", None):
        return
    d.armed = fault
    if running:
        assert d.stop() == 0, d.log_tail()
    old = os.environ.pop("ADAPT_FAULT", None)
    try:
        if fault:
            os.environ["ADAPT_FAULT"] = fault
        d.start(port=d.port)
    finally:
        os.environ.pop("ADAPT_FAULT", None)
        if old is not None:
            os.environ["ADAPT_FAULT"] = old


def try_api(client, method, path, body=None):
    """An API call that the crash may cut: returns (status, body) or (None, None)."""
    try:
        return client.api(method, path, body)
    except (OSError, http_errors()):
        return None, None


def http_errors():
    import http.client

    return http.client.HTTPException


def wait_for_crash(d, point, timeout=180):
    try:
        rc = d.proc.wait(timeout=timeout)
    except Exception:
        raise AssertionError("adaptd did not reach fault point %s in %s s:\n%s" % (point, timeout, d.log_tail()))
    assert rc == FAULT_EXIT, "adaptd exited %s, not at the fault point:\n%s" % (rc, d.log_tail())
    assert ("fault point %s reached" % point) in d.log_tail(200), d.log_tail()


def assert_settled(client, sid, statuses, timeout=120):
    sbx = client.wait_for_status(sid, statuses + ("provisioning", "deleting", "running", "failed", "deleted", "completed"), timeout)
    deadline = time.monotonic() + timeout
    while sbx["status"] not in statuses and time.monotonic() < deadline:
        time.sleep(0.25)
        sbx = client.get(sid)
    assert sbx["status"] in statuses, "sandbox %s is %r after the restart, wanted %r: %r" % (
        sid, sbx["status"], statuses, sbx)
    if sbx["status"] == "failed":
        assert sbx.get("error"), "a failed sandbox says why: %r" % sbx
    return sbx


def assert_no_leaks(d, before, ids):
    g = leaks.settled_growth(d, before)
    g.pop("fds", None)  # another adaptd process than the one of `before`
    assert g == {}, "the host holds more than before the crash: %r" % g
    held = leaks.settled_holdings(d, ids)
    assert held == {}, "still held for %r: %r" % (ids, held)


def new_sandbox_id(client, known):
    ids = {s["id"] for s in client.list_all()} - known
    assert len(ids) == 1, "expected one new sandbox, found %r" % ids
    return ids.pop()


@pytest.mark.parametrize("point,settles", CREATE_POINTS, ids=[p for p, _ in CREATE_POINTS])
def test_crash_during_create(crash_daemon, point, settles):
    d = crash_daemon
    restart(d)
    before = leaks.snapshot(d)
    known = {s["id"] for s in d.admin.list_all()}
    restart(d, point)
    try_api(d.admin, "POST", "/v1/sandboxes", {"labels": {"crash": point}})
    wait_for_crash(d, point)
    restart(d)
    sid = new_sandbox_id(d.admin, known)
    assert_settled(d.admin, sid, settles)
    if d.admin.get(sid)["status"] == "running":
        status, out = d.admin.api("POST", "/v1/sandboxes/%s/commands" % sid, {"command": "echo alive"})
        assert status in (200, 201), (status, out)
    d.admin.delete(sid)
    assert_no_leaks(d, before, [sid])


@pytest.mark.parametrize("point", DELETE_POINTS)
def test_crash_during_delete(crash_daemon, point):
    d = crash_daemon
    restart(d)
    before = leaks.snapshot(d)
    restart(d, point)
    sid = d.admin.create({"labels": {"crash": point}})["id"]
    d.admin.wait_for_status(sid, "running", 120)
    try_api(d.admin, "DELETE", "/v1/sandboxes/" + sid)
    wait_for_crash(d, point)
    restart(d)
    sbx = assert_settled(d.admin, sid, ("deleted",))
    assert sbx["deletedAt"], sbx
    assert_no_leaks(d, before, [sid])


@pytest.fixture(scope="module")
def image_ref():
    r = reg.Registry()
    layout = reg.Layout([reg.layer(reg.busybox_base())], {"config": {"Cmd": ["/bin/sh"], "Env": ["PATH=/bin"]}})
    try:
        yield r.push(layout, "crash/busybox:1")
    finally:
        layout.close()
        r.close()


@pytest.mark.parametrize("point,settles", PULL_POINTS, ids=[p for p, _ in PULL_POINTS])
def test_crash_during_image_pull(crash_daemon, image_ref, point, settles):
    d = crash_daemon
    restart(d)
    before = leaks.snapshot(d)
    status, body = d.admin.api("GET", "/v1/images")
    assert status == 200, body
    known = {i["id"] for i in body["items"]}
    restart(d, point)
    try_api(d.admin, "POST", "/v1/images", {"reference": image_ref})
    wait_for_crash(d, point)
    restart(d)
    status, body = d.admin.api("GET", "/v1/images")
    new = [i for i in body["items"] if i["id"] not in known]
    assert len(new) == 1, "expected one new image record, found %r" % new
    img = new[0]
    assert img["status"] in settles, "image %r after the restart, wanted %r" % (img, settles)
    if img["status"] == "failed":
        assert img["error"], img
    # Pulling again works and runs, whatever the crash left in the image store.
    status, again = d.admin.api("POST", "/v1/images", {"reference": image_ref})
    assert status in (200, 201, 202), (status, again)
    deadline = time.monotonic() + 120
    while again["status"] == "pulling" and time.monotonic() < deadline:
        time.sleep(0.25)
        again = d.admin.api("GET", "/v1/images/" + again["id"])[1]
    assert again["status"] == "ready", again
    end = d.admin.run(["/bin/echo", "pulled"], image=image_ref)
    assert end["status"] == "completed" and end["startup"]["stdout"] == "pulled\n", end
    d.admin.delete(end["id"])
    for image_id in (img["id"], again["id"]):
        status, body = d.admin.api("DELETE", "/v1/images/" + image_id)
        assert status in (200, 202, 204), (status, body)
    assert_no_leaks(d, before, [end["id"]])


# The slot claim of a schedule: whatever step adaptd dies at, the restarted one fires each slot
# at most once and leaves no run unsettled (issue 18).
SLOT_POINTS = [
    # Before the claim's transaction: nothing was recorded; the restart claims the slot itself.
    "automation.fire.before_claim",
    # Claimed, the run recorded, its command not started: the restart ends that run
    # (infrastructure_failed) and never fires its slot again.
    "automation.fire.after_claim",
    # The command started through the agent and the run says so: the restart re-attaches it.
    "automation.run.after_command",
]


def automation_runs(client, aid):
    status, page = client.api("GET", "/v1/runs?limit=200&automationId=" + aid)
    assert status == 200, page
    return page["items"]


@pytest.mark.parametrize("point", SLOT_POINTS)
def test_crash_during_a_slot_claim(crash_daemon, point):
    d = crash_daemon
    restart(d)
    org = d.new_org()
    sbx = org.create({"cpu": 1, "memoryMiB": 256})
    sid = org.wait_for_status(sbx["id"], "running", 120)["id"]
    harness.wait_for_agent(org, sid)
    # Paused until adaptd runs armed, so that its first slot is the one the crash cuts.
    status, a = org.api("POST", "/v1/automations", {"sandboxId": sid, "intervalSeconds": 2,
                                                    "command": "echo slot", "overlap": "allow"})
    assert status == 201, a
    assert org.api("POST", "/v1/automations/%s/disable" % a["id"])[0] == 200
    restart(d, point)
    status, enabled = try_api(org, "POST", "/v1/automations/%s/enable" % a["id"])
    assert status == 200, enabled
    wait_for_crash(d, point, timeout=60)
    restart(d)
    # A few slots after the restart: every run is settled, and no slot has two runs.
    deadline = time.monotonic() + 60
    while True:
        runs = automation_runs(org, a["id"])
        ended = [r for r in runs if r["status"] not in ("queued", "starting", "running")]
        if len(ended) >= 3 and len(ended) == len(runs):
            break
        assert time.monotonic() < deadline, "runs not settled after the restart: %r" % runs
        time.sleep(0.5)
    slots = [r["scheduledAt"] for r in runs if r["status"] != "missed"]
    assert len(slots) == len(set(slots)), "a slot fired twice: %s\n%s" % (
        "\n".join("%s %s attempt %s %s %s" % (r["scheduledAt"], r["trigger"], r["attempt"],
                                               r["status"], r["error"]) for r in runs),
        d.log_tail(200))
    statuses = {r["status"] for r in runs}
    assert statuses <= {"succeeded", "infrastructure_failed", "missed"}, runs
    if point == "automation.fire.after_claim":
        # The claimed run the crash cut short says so; it was not run again.
        assert any(r["status"] == "infrastructure_failed" for r in runs), runs
    if point == "automation.run.after_command":
        # Re-attached: the first run ended as if adaptd had not died.
        first = min(runs, key=lambda r: r["scheduledAt"])
        assert first["status"] == "succeeded" and "slot" in first["stdout"], first
    assert org.api("DELETE", "/v1/automations/" + a["id"])[0] in (200, 204)
    org.api("DELETE", "/v1/sandboxes/" + sid)


# A command's end reached adaptd through the sandbox's agent, and adaptd died before it was
# recorded. The agent keeps the exit, and what adaptd had not acknowledged as recorded of the
# output, until an adaptd acknowledges them: the restarted one attaches the command again and
# records it as if nothing happened (it ended "lost", its outcome unknown, before). Output saved
# while it ran was acknowledged then, and is not sent twice.
def test_crash_before_a_commands_end_is_recorded_loses_nothing(crash_daemon):
    d = crash_daemon
    point = "command.agent.before_end_recorded"
    restart(d)
    org = d.new_org()
    sid = org.wait_for_status(org.create({"cpu": 1, "memoryMiB": 256})["id"], "running", 120)["id"]
    harness.wait_for_agent(org, sid)
    restart(d, point)
    status, cmd = org.api("POST", "/v1/sandboxes/%s/commands" % sid, {
        "argv": ["sh", "-c", "echo first; sleep 2.5; echo second; echo warn >&2; exit 7"],
        "waitSeconds": 0})
    assert status == 202, cmd
    wait_for_crash(d, point, timeout=60)
    restart(d)
    kept = harness.poll_command(org, sid, cmd["id"])
    assert kept["status"] == "exited" and kept["exitCode"] == 7, kept
    assert kept["stdout"] == "first\nsecond\n" and kept["stderr"] == "warn\n", kept
    org.api("DELETE", "/v1/sandboxes/" + sid)


# An automation's retry after an infrastructure failure, and a controller's recreate of a dead
# instant target, make a fresh sandbox, have the automation follow it, then delete the target it
# replaced. A crash between the first two left a running sandbox nothing used until its TTL; one
# between the last two, the old target. The restarted adaptd deletes whichever one no
# automation follows (the reserved labels platform.automation and platform.replaces say whose
# it is and what it replaced).
REPLACE_POINTS = ["automation.retry.after_replace", "automation.retry.after_follow",
                  "controller.recreate.after_replace", "controller.recreate.after_follow"]


def kill_sandbox(d, sid):
    killed = subprocess.run([harness.RUNSC, "--root", harness.runsc_root(d.state_dir), "kill",
                             sid, "KILL"], capture_output=True, text=True, timeout=60)
    assert killed.returncode == 0, killed.stderr


@pytest.mark.parametrize("point", REPLACE_POINTS)
def test_crash_during_a_replacement_of_an_automations_target(crash_daemon, point):
    d = crash_daemon
    restart(d)
    org = d.new_org()
    sid = org.wait_for_status(org.create({"cpu": 1, "memoryMiB": 256})["id"], "running", 120)["id"]
    harness.wait_for_agent(org, sid)
    if point.startswith("automation."):
        # Only the first sandbox has /tmp/hang: its attempt waits there until it is killed.
        out = harness.run_command(org, sid, command="touch /tmp/hang")
        assert out["exitCode"] == 0, out
        status, a = org.api("POST", "/v1/automations", {
            "sandboxId": sid, "intervalSeconds": 3600, "maxAttempts": 2,
            "command": "if [ -e /tmp/hang ]; then sleep 600; fi; echo retried"})
        assert status == 201, a
        restart(d, point)
        harness.wait_for_agent(org, sid)
        status, run = org.api("POST", "/v1/automations/%s/trigger" % a["id"])
        assert status == 202, (status, run)
        deadline = time.monotonic() + 60
        while org.api("GET", "/v1/runs/" + run["id"])[1]["status"] != "running":
            assert time.monotonic() < deadline, "the first attempt never ran"
            time.sleep(0.25)
    else:
        status, a = org.api("POST", "/v1/automations", {
            "kind": "controller", "sandboxId": sid, "desiredState": "running"})
        assert status == 201, a
        restart(d, point)
    kill_sandbox(d, sid)
    wait_for_crash(d, point, timeout=120)
    restart(d)
    followed = org.api("GET", "/v1/automations/" + a["id"])[1]["sandboxId"]
    assert (followed == sid) == point.endswith("after_replace"), (point, followed, sid)
    # Whatever the crash left, the organization ends with the automation's target only (a
    # controller may make one more: it follows a target that is dead).
    deadline = time.monotonic() + 120
    while True:
        target = org.api("GET", "/v1/automations/" + a["id"])[1]["sandboxId"]
        live = [s for s in org.list_all() if s["status"] not in ("deleting", "deleted")]
        if [s["id"] for s in live] == [target]:
            break
        assert time.monotonic() < deadline, "left after the restart: %r" % live
        time.sleep(0.5)
    # What is left of adaptd's making says whose it is.
    made = [s for s in org.list_all() if s["id"] != sid]
    assert all(s["labels"].get("platform.automation") == a["id"] for s in made), made
    assert org.api("DELETE", "/v1/automations/" + a["id"])[0] in (200, 204)
    org.api("DELETE", "/v1/sandboxes/" + target)
