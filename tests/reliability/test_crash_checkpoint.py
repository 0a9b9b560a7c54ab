"""adaptd crashes at every step of a stop (checkpoint) and of a start (restore).

The points are in src/core/sandbox_stop_start.cc and src/runtime/runsc_runtime.cc (the stop and
the checkpoint), and a start reuses the create's provision and launch points (a start is a
provision that restores). For each point: a durable sandbox with a file and a background
process, adaptd started with ADAPT_FAULT=<point>, the stop or start driven until adaptd exits
at the point, adaptd restarted unarmed. Then the sandbox is stopped (hibernated, its stop
finished: a start is accepted) or running, never stuck stopping or starting; its files are
there after a start, and its processes too when the record says they were saved; once it is
deleted the host holds nothing more than before (leaks.py). The stop's checkpoint operation and
the start's restore operation are finished by then (GET /v1/operations/{id}): Completed when the
work was done, Failed with a reason otherwise, never left Pending or Running; a crash between
writing the operation and the transition it announces leaves the sandbox as it was.
"""

import time

import pytest

import leaks
from harness import latest_operation_id, run_command
from test_agent import wait_for_agent
from test_crash_points import assert_no_leaks, restart, try_api, wait_for_crash

# Stop: the restart finishes the stop. The processes are saved unless the crash came after
# runsc had checkpointed (and so stopped) the sandbox but before the image was complete.
STOP_POINTS = [
    ("sandbox.stop.after_stopping", ("saved",)),
    ("runtime.checkpoint.begin", ("saved",)),
    ("runtime.checkpoint.after_runsc", ("saved", "lost")),
    ("runtime.checkpoint.after_rename", ("saved",)),
    ("sandbox.stop.after_checkpoint", ("saved",)),
    ("sandbox.stop.after_release", ("saved",)),
]

# Start: the restart finishes the start (the restored sandbox runs) or undoes it (stopped,
# checkpoint and disk as they were). One point per distinct state a crash can leave, each
# test being a full boot, stop, restore and delete (~8 s). Three points that leave the same
# state as a kept one, so that the restart takes the same recovery path, are folded:
# - sandbox.provision.begin into sandbox.start.after_starting: between the two the start only
#   re-reads its record under the sandbox's lock; nothing is made on the host yet (undo with
#   nothing to release).
# - sandbox.provision.after_network into runtime.launch.after_rootfs: a crash after the rootfs
#   leaves the sandbox's network too (a start keeps it), so the undo and the next start
#   handle the same network plus a mounted root filesystem.
# - sandbox.provision.after_launch into sandbox.start.after_restore: on a start,
#   LaunchOrRestore returns right after after_restore when the restore succeeded: the same
#   restored sandbox and record (provisioning, starting), finished by the restart.
# All three stay armed on the create path (test_crash_points.py), where what they leave differs.
START_POINTS = [
    ("sandbox.start.after_starting", ("hibernated",)),
    ("runtime.launch.after_rootfs", ("hibernated",)),
    # The shim is restoring when adaptd dies: finished or undone, whichever the restart finds.
    ("runtime.launch.after_spawn", ("running", "hibernated")),
    ("sandbox.start.after_restore", ("running", "hibernated")),
    ("sandbox.provision.after_running", ("running",)),
]

# A background loop whose pid must survive a checkpoint and restore.
BACKGROUND = "nohup sh -c 'while true; do sleep 0.2; done' >/dev/null 2>&1 & echo $!"


def operation_of(d, client, sid, kind):
    """The sandbox's latest operation of `kind`, read back through the API. Its id is found in
    adapt.db: the crash cut the answer that would have carried it."""
    status, op = client.api("GET", "/v1/operations/" + latest_operation_id(d.state_dir, sid, kind))
    assert status == 200, (status, op)
    assert op["phase"] in ("Completed", "Failed"), "left %s after the restart: %r" % (op["phase"], op)
    assert op["finishedAt"], op
    if op["phase"] == "Failed":
        assert op["error"], "a failed operation says why: %r" % op
    return op


@pytest.fixture(scope="module")
def crash_daemon():
    """One adaptd (one state dir) for the module, restarted armed and unarmed by each test."""
    from conftest import close_daemon, start_daemon

    d = start_daemon()
    # A durable sandbox mounts its organization's default storage, which outlives it by
    # design: made once here, it is part of what every test's "before" holds.
    sid = d.admin.create({"startupClass": "durable", "labels": {"crash": "warm-up"}})["id"]
    d.admin.wait_for_status(sid, "running", 120)
    d.admin.delete(sid)
    yield d
    if d.proc is None or d.proc.poll() is not None:
        d.start(port=d.port)
    close_daemon(d)


def sh(client, sid, command):
    cmd = run_command(client, sid, command=command)
    assert cmd["exitCode"] == 0, cmd
    return cmd["stdout"]


def durable_sandbox(client, point):
    """A running durable sandbox with a file on its disk and a background process (pid)."""
    sid = client.create({"startupClass": "durable", "labels": {"crash": point}})["id"]
    client.wait_for_status(sid, "running", 120)
    wait_for_agent(client, sid)
    sh(client, sid, "echo kept > /root/note.txt")
    pid = sh(client, sid, BACKGROUND).strip()
    assert pid.isdigit(), pid
    return sid, pid


def settled(client, sid, statuses, timeout=180):
    """Waits for the sandbox to leave the transient states (a stop the restart is finishing
    reads hibernated with processes "saving") and checks where it ended."""
    deadline = time.monotonic() + timeout
    while True:
        sbx = client.get(sid)
        hib = sbx.get("hibernation") or {}
        transient = sbx["status"] in ("provisioning", "deleting") or hib.get("processes") == "saving"
        if not transient or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    assert sbx["status"] in statuses, "sandbox %s is %r after the restart, wanted %r: %r" % (
        sid, sbx["status"], statuses, sbx)
    return sbx


def start_and_check(client, sid, pid, processes_saved):
    """Starts a stopped sandbox (accepted only when its stop has finished) and checks that its
    files, and its processes when saved, are back."""
    status, body = client.api("POST", "/v1/sandboxes/%s/start" % sid)
    assert status == 202, (status, body)
    check_running(client, sid, pid, processes_saved)


def check_running(client, sid, pid, processes_saved):
    sbx = client.wait_for_status(sid, "running", 120)
    assert sbx["hibernation"] is None, sbx
    wait_for_agent(client, sid)
    assert sh(client, sid, "cat /root/note.txt") == "kept\n"
    if processes_saved:
        assert sh(client, sid, "kill -0 %s && echo alive" % pid) == "alive\n"


@pytest.mark.parametrize("point,processes", STOP_POINTS, ids=[p for p, _ in STOP_POINTS])
def test_crash_during_stop(crash_daemon, point, processes):
    d = crash_daemon
    restart(d)
    before = leaks.snapshot(d)
    restart(d, point)
    sid, pid = durable_sandbox(d.admin, point)
    try_api(d.admin, "POST", "/v1/sandboxes/%s/stop" % sid)
    wait_for_crash(d, point)
    restart(d)
    sbx = settled(d.admin, sid, ("hibernated",))
    assert sbx["hibernation"]["workspace"] == "kept", sbx
    # The hibernation record first: its note says why processes were lost.
    assert sbx["hibernation"]["processes"] in processes, (sbx["hibernation"], sbx)
    if sbx["hibernation"]["processes"] == "lost":
        assert sbx["hibernation"]["note"], "lost processes are explained: %r" % sbx
    op = operation_of(d, d.admin, sid, "checkpoint")
    want = "Completed" if sbx["hibernation"]["processes"] == "saved" else "Failed"
    assert op["phase"] == want, (op, sbx["hibernation"])
    start_and_check(d.admin, sid, pid, sbx["hibernation"]["processes"] == "saved")
    d.admin.delete(sid)
    assert_no_leaks(d, before, [sid])


@pytest.mark.parametrize("point,settles", START_POINTS, ids=[p for p, _ in START_POINTS])
def test_crash_during_start(crash_daemon, point, settles):
    d = crash_daemon
    restart(d)
    before = leaks.snapshot(d)
    sid, pid = durable_sandbox(d.admin, point)
    status, body = d.admin.api("POST", "/v1/sandboxes/%s/stop" % sid)
    assert status == 200 and body["hibernation"]["processes"] == "saved", (status, body)
    restart(d, point)
    try_api(d.admin, "POST", "/v1/sandboxes/%s/start" % sid)
    wait_for_crash(d, point)
    restart(d)
    sbx = settled(d.admin, sid, settles)
    op = operation_of(d, d.admin, sid, "restore")
    if sbx["status"] == "hibernated":
        # Undone: stopped as before, the checkpoint kept, so the processes come back.
        assert sbx["hibernation"]["processes"] == "saved", sbx
        assert op["phase"] == "Failed" and "hibernated" in op["error"], op
        start_and_check(d.admin, sid, pid, True)
    else:
        assert op["phase"] == "Completed", op
        check_running(d.admin, sid, pid, True)
    d.admin.delete(sid)
    assert_no_leaks(d, before, [sid])


def test_crash_after_the_checkpoint_operation_is_written_leaves_the_sandbox_running(crash_daemon):
    """sandbox.stop.after_operation: the operation is written, the stop is not: the sandbox
    was never touched, so it runs on, and the operation is Failed saying so."""
    d = crash_daemon
    point = "sandbox.stop.after_operation"
    restart(d)
    before = leaks.snapshot(d)
    restart(d, point)
    sid, pid = durable_sandbox(d.admin, point)
    try_api(d.admin, "POST", "/v1/sandboxes/%s/stop" % sid)
    wait_for_crash(d, point)
    restart(d)
    sbx = settled(d.admin, sid, ("running",))
    assert sbx["hibernation"] is None, sbx
    op = operation_of(d, d.admin, sid, "checkpoint")
    assert op["phase"] == "Failed" and "still running" in op["error"], op
    check_running(d.admin, sid, pid, True)
    # The sandbox stops normally afterwards, with an operation of its own.
    status, body = d.admin.api("POST", "/v1/sandboxes/%s/stop" % sid)
    assert status == 200 and body["operationId"] != op["id"], (status, body)
    d.admin.delete(sid)
    assert_no_leaks(d, before, [sid])


def test_crash_after_the_restore_operation_is_written_leaves_the_sandbox_hibernated(crash_daemon):
    """sandbox.start.after_operation: the operation is written, the start is not: the sandbox
    is still stopped with its checkpoint, and the operation is Failed saying so."""
    d = crash_daemon
    point = "sandbox.start.after_operation"
    restart(d)
    before = leaks.snapshot(d)
    sid, pid = durable_sandbox(d.admin, point)
    status, body = d.admin.api("POST", "/v1/sandboxes/%s/stop" % sid)
    assert status == 200 and body["hibernation"]["processes"] == "saved", (status, body)
    restart(d, point)
    try_api(d.admin, "POST", "/v1/sandboxes/%s/start" % sid)
    wait_for_crash(d, point)
    restart(d)
    sbx = settled(d.admin, sid, ("hibernated",))
    assert sbx["hibernation"]["processes"] == "saved", sbx
    op = operation_of(d, d.admin, sid, "restore")
    assert op["phase"] == "Failed" and "hibernated" in op["error"], op
    start_and_check(d.admin, sid, pid, True)
    d.admin.delete(sid)
    assert_no_leaks(d, before, [sid])
