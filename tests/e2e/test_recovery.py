"""adaptd crashes and restarts: sandboxes survive, finished work is recorded, nothing leaks."""

import json
import os
import time

from harness import leftovers


def assert_nothing_left(daemon, ids):
    left = leftovers(daemon.state_dir, ids)
    assert left["runsc"] == [], "runsc still lists %r" % left["runsc"]
    assert left["mounts"] == [], "mounts left under the state dir: %r" % left["mounts"]
    assert left["cgroups"] == [], "cgroups left: %r" % left["cgroups"]
    assert left["processes"] == [], "processes left: %r" % left["processes"]


def wait_for_recorded_end(daemon, sid, timeout=60):
    """Waits until the sandbox's shim (which outlives adaptd) has recorded that its workload
    ended: the end happened while adaptd was away, and only the shim's files tell of it."""
    path = os.path.join(daemon.state_dir, "sandboxes", sid, "shim-state.json")
    deadline = time.monotonic() + timeout
    while True:
        try:
            with open(path) as f:
                state = json.load(f)
        except (OSError, ValueError):
            state = {}
        if state.get("phase") == "exited":
            return state
        assert time.monotonic() < deadline, "the shim of %s recorded no end in %s s: %r" % (sid, timeout, state)
        time.sleep(0.2)


def test_restart_after_kill_adopts_running_sandboxes_and_records_finished_ones(fresh_daemon):
    d = fresh_daemon
    admin = d.admin
    interactive = admin.create({"labels": {"name": "survivor"}})["id"]
    admin.wait_for_status(interactive, "running", 60)
    finisher = admin.create({"startup": {"mode": "command", "argv": ["sh", "-c", "sleep 3; echo done"]}})["id"]
    admin.wait_for_status(finisher, "running", 60)

    d.kill()
    # The startup command ends while adaptd is dead.
    assert wait_for_recorded_end(d, finisher)["exitCode"] == 0
    d.start(port=d.port)

    end = admin.wait_end(finisher, 120)
    assert end["status"] == "completed", end
    assert end["startup"]["exitCode"] == 0
    assert end["startup"]["stdout"] == "done\n"
    assert end["terminationReason"] == "completed"

    sbx = admin.wait_for_status(interactive, "running", 60)
    time.sleep(2)
    assert admin.get(interactive)["status"] == "running", "adopted, not torn down"
    assert sbx["startup"] is None

    admin.delete(interactive)
    admin.delete(finisher)
    assert d.stop() == 0, "SIGTERM is a clean shutdown:\n" + d.log_tail()
    assert_nothing_left(d, [interactive, finisher])


def test_graceful_restart_keeps_an_interactive_sandbox(fresh_daemon):
    d = fresh_daemon
    admin = d.admin
    sid = admin.create({})["id"]
    admin.wait_for_status(sid, "running", 60)
    assert d.stop() == 0, d.log_tail()
    d.start(port=d.port)
    admin.wait_for_status(sid, "running", 60)
    admin.delete(sid)
    assert d.stop() == 0, d.log_tail()
    assert_nothing_left(d, [sid])


def test_deleted_sandboxes_leave_nothing_behind(fresh_daemon):
    d = fresh_daemon
    admin = d.admin
    ids = [
        admin.create({})["id"],
        admin.create({"startup": {"mode": "command", "argv": ["true"]}})["id"],
        admin.create({"startup": {"mode": "command", "argv": ["false"]}})["id"],
    ]
    admin.wait_for_status(ids[0], "running", 60)
    for sid in ids[1:]:
        admin.wait_end(sid)
    for sid in ids:
        admin.delete(sid)
    assert d.stop() == 0, d.log_tail()
    assert_nothing_left(d, ids)
