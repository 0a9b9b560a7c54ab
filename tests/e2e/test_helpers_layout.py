"""Where a sandbox finds adapt's helpers and its agent's socket (src/runtime/helpers_layout.h):
one read-only mount, /.adapt, for both (the sandbox's own directory of hard links to the
helpers, with the socket beside them); a sandbox checkpointed with the layout of an earlier
adaptd (the shared helpers at /.adapt, the socket on a mount of its own at /.adapt-session)
is restored with that layout, since runsc restores only onto the mounts it saved."""

import os
import subprocess

from conftest import _daemons, close_daemon
from harness import Daemon
from harness import run_command as run
from harness import wait_for_agent

BACKGROUND = ("nohup sh -c 'while true; do sleep 0.2; done' >/dev/null 2>&1 & echo $!")


def sh(client, sid, command):
    cmd = run(client, sid, command=command)
    assert cmd["status"] == "exited" and cmd["exitCode"] == 0, cmd
    return cmd["stdout"]


def mount_points(client, sid):
    return [line.split()[1] for line in sh(client, sid, "cat /proc/self/mounts").splitlines()]


def layout_of(daemon, sid):
    with open(os.path.join(daemon.state_dir, "sandboxes", sid, "helpers-layout")) as f:
        return f.read().strip()


def post(client, sid, verb, expect):
    status, body = client.api("POST", "/v1/sandboxes/%s/%s" % (sid, verb))
    assert status == expect, (verb, status, body)
    return body


def test_a_new_sandbox_has_one_mount_for_its_helpers_and_its_agents_socket(daemon, org):
    sid = org.create({})["id"]
    org.wait_for_status(sid, "running", 120)
    wait_for_agent(org, sid)
    points = mount_points(org, sid)
    assert "/.adapt" in points and "/.adapt-session" not in points, points
    assert sh(org, sid, "test -S /.adapt/agent.sock && echo socket") == "socket\n"
    assert run(org, sid, argv=["echo", "ok"])["servedBy"] == "agent"
    assert layout_of(daemon, sid) == "2"
    # Hard links of the installed helpers, not copies.
    own = os.path.join(daemon.state_dir, "sandboxes", sid, "adapt")
    for name in ("adapt-agent", "adapt-pause"):
        mine, installed = os.stat(os.path.join(own, name)), os.stat(
            os.path.join(daemon.state_dir, "helpers", name))
        assert (mine.st_dev, mine.st_ino) == (installed.st_dev, installed.st_ino), name
    org.delete(sid)


def test_a_checkpoint_taken_with_the_shared_layout_is_restored_with_it():
    # Helpers on a filesystem of their own cannot be hard-linked into a sandbox's directory:
    # adaptd then boots sandboxes with the shared layout, as an earlier adaptd did.
    d = Daemon()
    _daemons.append(d)
    helpers = os.path.join(d.state_dir, "helpers")
    os.makedirs(helpers)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "helpers", helpers], check=True)
    mounted = True
    try:
        d.start()
        admin = d.admin
        sid = admin.create({"startupClass": "durable"})["id"]
        admin.wait_for_status(sid, "running", 120)
        wait_for_agent(admin, sid)
        assert "/.adapt-session" in mount_points(admin, sid)
        assert layout_of(d, sid) == "1"
        pid = sh(admin, sid, BACKGROUND).strip()
        assert pid.isdigit(), pid
        stopped = post(admin, sid, "stop", 200)
        assert stopped["hibernation"]["processes"] == "saved", stopped

        # The next adaptd installs its helpers on the state directory's filesystem, where a
        # new sandbox gets the one-mount layout; the saved one still restores.
        assert d.stop() == 0
        subprocess.run(["umount", helpers], check=True)
        mounted = False
        d.start(port=d.port)
        for _ in range(2):
            post(admin, sid, "start", 202)
            admin.wait_for_status(sid, "running", 120)
            wait_for_agent(admin, sid)
            assert sh(admin, sid, "kill -0 %s && echo alive" % pid) == "alive\n", \
                "the background process was not restored:\n" + d.log_tail(40)
            assert "/.adapt-session" in mount_points(admin, sid)
            assert layout_of(d, sid) == "1"
            assert run(admin, sid, argv=["echo", "ok"])["servedBy"] == "agent"
            # Stopped again, its checkpoint says the same layout.
            assert post(admin, sid, "stop", 200)["hibernation"]["processes"] == "saved"
        post(admin, sid, "start", 202)
        admin.wait_for_status(sid, "running", 120)

        fresh = admin.create({})["id"]
        admin.wait_for_status(fresh, "running", 120)
        wait_for_agent(admin, fresh)
        assert "/.adapt-session" not in mount_points(admin, fresh)
        assert layout_of(d, fresh) == "2"
    finally:
        if mounted:
            d.stop()
            subprocess.run(["umount", "-l", helpers], check=False)
        close_daemon(d)
