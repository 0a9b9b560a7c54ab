"""adaptd's children that live in a mount namespace of their own (runsc, under its tmpfs over
/proc/sys/net, and the organizations' PostgreSQL server) start with a copy of the host's
mounts, the disks of the sandboxes running then among them. A disk adaptd unmounts must go
from those copies too: one kept there holds the disk's filesystem and loop device, so that
the sandbox could not take a named checkpoint again ("its disk is still in use") and a
deleted sandbox's disk blocks would stay allocated while the copy lives."""

import os
import subprocess

from harness import wait_for_agent
from harness import run_command as run


def mounted_in(pid, path):
    """Whether `path` is a mount point in process `pid`'s mount namespace."""
    with open("/proc/%d/mountinfo" % pid) as f:
        return any(line.split()[4] == path for line in f)


def postmaster_pid(state_dir):
    with open(os.path.join(state_dir, "postgres", "data", "postmaster.pid")) as f:
        return int(f.readline())


def loop_devices_backing(image):
    r = subprocess.run(["losetup", "-j", image], capture_output=True, text=True, check=True)
    return [line for line in r.stdout.splitlines() if line.strip()]


def test_a_disk_mounted_when_the_database_server_started_goes_with_its_sandbox(fresh_daemon):
    d = fresh_daemon
    org = d.new_org()
    sid = org.create({"startupClass": "durable"})["id"]
    org.wait_for_status(sid, "running", 120)
    wait_for_agent(org, sid)
    sandbox_dir = os.path.join(os.path.realpath(d.state_dir), "sandboxes", sid)
    disk = os.path.join(sandbox_dir, "disk")
    # The server starts (a namespace of its own, with a copy of the host's mounts) while
    # the sandbox's disk is mounted.
    status, db = org.api("POST", "/v1/database")
    assert status in (200, 201), db
    pid = postmaster_pid(d.state_dir)
    assert mounted_in(pid, disk), "the scenario needs the server's copy of the disk's mount"

    status, body = org.api("POST", "/v1/sandboxes/%s/checkpoints" % sid, {"name": "after-db"})
    assert status == 201, body
    # The checkpoint stopped the sandbox and unmounted its disk: the server's copy went too.
    cmd = run(org, sid, command="echo still here")
    assert cmd["exitCode"] == 0 and cmd["stdout"] == "still here\n", cmd

    org.delete(sid)
    assert not mounted_in(pid, disk)
    assert not loop_devices_backing(os.path.join(sandbox_dir, "disk.img"))
    assert pid == postmaster_pid(d.state_dir), "the server ran throughout"
