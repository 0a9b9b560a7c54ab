"""Named checkpoints of a running durable sandbox (POST/GET/DELETE
/v1/sandboxes/{id}/checkpoints, POST .../checkpoints/{name}/restore, CLI `adapt sandbox
checkpoint`): a checkpoint keeps the sandbox running; a restore rolls its processes, memory
and files back; other organizations and bad names are refused before anything is touched; a
kill of adaptd mid-checkpoint or mid-roll back is finished at the restart. No network traffic: this
runsc cannot checkpoint some TCP endpoint states."""

import contextlib
import http.client
import json
import os
import threading
import time

import yaml

from harness import REPO, latest_operation_id
from harness import run_command as run
from harness import wait_for_agent
from test_openapi import assert_matches, schema

SPEC = yaml.safe_load(open(os.path.join(REPO, "docs", "openapi.yaml")))
PATHS = {"POST checkpoints": ("/v1/sandboxes/{id}/checkpoints", "post"),
         "GET checkpoints": ("/v1/sandboxes/{id}/checkpoints", "get"),
         "DELETE": ("/v1/sandboxes/{id}/checkpoints/{name}", "delete"),
         "restore": ("/v1/sandboxes/{id}/checkpoints/{name}/restore", "post")}


def documented(which, status):
    """Each answer's status is one the spec gives for its route."""
    path, method = PATHS[which]
    assert str(status) in SPEC["paths"][path][method]["responses"], (which, status)


# A process whose state lives in its memory (v), changed through /root/set and written out
# to /root/mem.out every 0.2 s: after a roll back it writes the value it held at the
# checkpoint, whatever the file said.
MEMORY_LOOP = ("nohup sh -c 'v=one; while true; do if [ -f /root/set ]; then v=$(cat /root/set); "
               "rm -f /root/set; fi; echo $v > /root/mem.tmp; mv /root/mem.tmp /root/mem.out; "
               "sleep 0.2; done' >/dev/null 2>&1 & echo $!")


def remember(value):
    """Shell that hands the loop a new value and returns once the loop has taken it in: a
    memory_value read right after a bare write could see the loop's write of the old value
    (read between its check of /root/set and its next mem.out)."""
    return "echo %s > /root/set; while [ -f /root/set ]; do sleep 0.05; done" % value


def running_sandbox(client, body=None):
    sid = client.create(dict({"startupClass": "durable"}, **(body or {})))["id"]
    client.wait_for_status(sid, "running", 120)
    wait_for_agent(client, sid)
    return sid


def out(client, sid, command):
    cmd = run(client, sid, command=command)
    assert cmd["exitCode"] == 0, cmd
    return cmd["stdout"]


def memory_value(client, sid):
    """What the loop holds in memory now: a fresh write of mem.out, not what the disk had."""
    return out(client, sid, "rm -f /root/mem.out; while [ ! -f /root/mem.out ]; do sleep 0.1; "
                            "done; cat /root/mem.out").strip()


def checkpoints_path(sid, name=None):
    return "/v1/sandboxes/%s/checkpoints" % sid + ("/%s" % name if name else "")


def take(client, sid, name, expect=201):
    status, body = client.api("POST", checkpoints_path(sid), {"name": name})
    assert status == expect, (status, body)
    documented("POST checkpoints", status)
    if status == 201:
        assert_matches(SPEC, schema(SPEC, "Checkpoint"), body)
    return body


def operation(client, op_id):
    status, body = client.api("GET", "/v1/operations/%s" % op_id)
    assert status == 200, (status, body)
    return body


def crash_at(d, point, path, body=None):
    """Restarts adaptd armed at fault `point`, POSTs `path` and waits for adaptd to die there
    (exit 86), then restarts it unarmed."""
    d.kill()
    os.environ["ADAPT_FAULT"] = point
    try:
        d.start(port=d.port)
    finally:
        os.environ.pop("ADAPT_FAULT", None)

    def post_in_background():
        try:
            d.admin.api("POST", path, body)
        except OSError:
            pass  # adaptd dies under it

    threading.Thread(target=post_in_background, daemon=True).start()
    d.proc.wait(timeout=120)
    assert d.proc.returncode == 86, d.log_tail()
    d.start(port=d.port)


def latest_operation(d, sid, kind):
    """The sandbox's latest operation of `kind` through the API (its id from adapt.db)."""
    return operation(d.admin, latest_operation_id(d.state_dir, sid, kind))


def test_restore_in_place_brings_memory_and_files_back(org):
    sid = running_sandbox(org)
    pid = out(org, sid, MEMORY_LOOP).strip()
    assert pid.isdigit()
    out(org, sid, "echo first > /root/file.txt")
    assert memory_value(org, sid) == "one"

    taken = take(org, sid, "before-change")
    assert taken["name"] == "before-change" and taken["sandboxId"] == sid, taken
    assert taken["sizeBytes"] > 0 and taken["createdAt"], taken
    op = operation(org, taken["operationId"])
    assert op["kind"] == "checkpoint" and op["phase"] == "Completed", op
    assert op["sandboxId"] == sid and op["progress"]["bytes"] == taken["sizeBytes"], op
    # The sandbox runs on, its process included, after the checkpoint.
    assert org.get(sid)["status"] == "running"
    wait_for_agent(org, sid)
    assert out(org, sid, "kill -0 %s && cat /root/file.txt" % pid) == "first\n"

    out(org, sid, remember("two") + "; echo second > /root/file.txt; echo new > /root/new.txt")
    assert memory_value(org, sid) == "two"

    status, listed = org.api("GET", checkpoints_path(sid))
    assert status == 200 and [c["name"] for c in listed["items"]] == ["before-change"], listed
    documented("GET checkpoints", status)
    for c in listed["items"]:
        assert_matches(SPEC, schema(SPEC, "Checkpoint"), c)

    status, restored = org.api("POST", checkpoints_path(sid, "before-change") + "/restore")
    assert status == 200, (status, restored)
    documented("restore", status)
    assert_matches(SPEC, schema(SPEC, "Sandbox"), restored)
    assert restored["status"] == "running" and restored["id"] == sid, restored
    op = operation(org, restored["operationId"])
    assert op["kind"] == "restore" and op["phase"] == "Completed", op
    wait_for_agent(org, sid)
    assert out(org, sid, "kill -0 %s && cat /root/file.txt" % pid) == "first\n"
    assert out(org, sid, "test -e /root/new.txt || echo gone") == "gone\n"
    assert memory_value(org, sid) == "one"

    # Kept for another roll back until deleted; deleting twice is a 404.
    status, body = org.api("DELETE", checkpoints_path(sid, "before-change"))
    assert status == 204, (status, body)
    documented("DELETE", status)
    status, body = org.api("DELETE", checkpoints_path(sid, "before-change"))
    assert status == 404, (status, body)
    documented("DELETE", status)
    status, listed = org.api("GET", checkpoints_path(sid))
    assert listed["items"] == [], listed


def test_other_tenants_bad_names_and_states_are_refused_and_change_nothing(org, daemon):
    sid = running_sandbox(org)
    take(org, sid, "mine")
    other = daemon.new_org()
    for method, path, body in (("POST", checkpoints_path(sid), {"name": "theirs"}),
                               ("GET", checkpoints_path(sid), None),
                               ("DELETE", checkpoints_path(sid, "mine"), None),
                               ("POST", checkpoints_path(sid, "mine") + "/restore", None),
                               ("GET", checkpoints_path("sbx_nope"), None),
                               ("POST", checkpoints_path("nonsense"), {"name": "x"})):
        status, answer = other.api(method, path, body)
        assert status == 404, (method, path, status, answer)
        assert_matches(SPEC, schema(SPEC, "Error"), answer)
    status, listed = org.api("GET", checkpoints_path(sid))
    assert [c["name"] for c in listed["items"]] == ["mine"], listed

    for bad in ("Upper", "-dash", "dash-", "a" * 64, "../up", "dot.dot", "", None, 7):
        status, body = org.api("POST", checkpoints_path(sid), {"name": bad})
        assert status == 400 and body["error"]["field"] == "name", (bad, status, body)
        documented("POST checkpoints", status)
    status, body = org.api("POST", checkpoints_path(sid), {"name": "ok", "color": "red"})
    assert status == 400 and body["error"]["field"] == "color", body
    status, body = org.api("POST", checkpoints_path(sid), {"name": "ok", "keep": "yes"})
    assert status == 400 and body["error"]["field"] == "keep", body
    status, body = org.api("DELETE", checkpoints_path(sid, "Bad_Name"))
    assert status == 400 and body["error"]["field"] == "name", body
    take(org, sid, "mine", expect=409)
    status, body = org.api("POST", checkpoints_path(sid, "never-taken") + "/restore")
    assert status == 404, (status, body)
    documented("restore", status)
    status, listed = org.api("GET", checkpoints_path(sid))
    assert [c["name"] for c in listed["items"]] == ["mine"], listed
    assert org.get(sid)["status"] == "running"

    # An instant sandbox keeps no checkpoint; a stopped one is not running.
    instant = org.create({})["id"]
    org.wait_for_status(instant, "running", 120)
    status, body = org.api("POST", checkpoints_path(instant), {"name": "x"})
    assert status == 409 and "durable" in body["error"]["message"], body
    documented("POST checkpoints", status)
    status, body = org.api("POST", checkpoints_path(instant, "x") + "/restore")
    assert status == 409 and "durable" in body["error"]["message"], body
    documented("restore", status)
    status, body = org.api("POST", "/v1/sandboxes/%s/stop" % sid)
    assert status == 200, body
    status, body = org.api("POST", checkpoints_path(sid), {"name": "x"})
    assert status == 409 and "hibernated" in body["error"]["message"], body
    # Deleted with the sandbox: the listing of a deleted one is a 404.
    org.delete(sid)
    status, body = org.api("GET", checkpoints_path(sid))
    assert status == 404, (status, body)


def recorded_operation(state_dir, sid, kind, timeout=60):
    """The id of the sandbox's `kind` operation once adapt.db holds one: a take records it under
    the sandbox's lock, which it holds until the checkpoint is kept."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return latest_operation_id(state_dir, sid, kind)
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


# A runsc whose `checkpoint` waits until the test lets it go, so that a take holds its sandbox
# for as long as the test needs, whatever the machine's speed.
GATED_RUNSC = """#!/bin/sh
for arg in "$@"; do
  if [ "$arg" = checkpoint ]; then
    while [ ! -e %(gate)s ]; do sleep 0.05; done
    break
  fi
done
exec %(runsc)s "$@"
"""


def test_a_busy_sandbox_refuses_another_checkpoint_or_stop_at_once(tmp_path):
    """While a checkpoint of the sandbox is taken, a second take and a stop answer 409 naming
    its operation instead of each holding one of the API's worker threads (shared by every
    organization) until it ends."""
    import shutil

    import harness

    gate = tmp_path / "go"
    runsc = tmp_path / "runsc"
    runsc.write_text(GATED_RUNSC % {"gate": gate,
                                    "runsc": shutil.which("runsc") or "/usr/bin/runsc"})
    runsc.chmod(0o755)
    d = harness.Daemon(extra_args=["--runsc", str(runsc)])
    taker = None
    try:
        d.start()
        org = d.new_org()
        sid = running_sandbox(org)
        first = {}

        def take_first():
            first["answer"] = org.api("POST", checkpoints_path(sid), {"name": "first"})

        taker = threading.Thread(target=take_first)
        taker.start()
        op_id = recorded_operation(d.state_dir, sid, "checkpoint")
        status, body = org.api("POST", checkpoints_path(sid), {"name": "second"})
        documented("POST checkpoints", status)
        assert status == 409 and "busy with its checkpoint operation " + op_id in \
            body["error"]["message"], (status, body)
        status, body = org.api("POST", "/v1/sandboxes/%s/stop" % sid)
        assert status == 409 and op_id in body["error"]["message"], (status, body)
        # Its container is being saved: a command or file operation meets the same 409, not
        # runsc's "loading sandbox" as a 500 or a command's exit 128.
        status, body = org.api("POST", "/v1/sandboxes/%s/commands" % sid, {"argv": ["true"]})
        assert status == 409 and op_id in body["error"]["message"], (status, body)
        status, body, _, _ = org.request("GET", "/v1/sandboxes/%s/files?path=/etc/hostname" % sid)
        assert status == 409 and op_id in body["error"]["message"], (status, body)
        gate.write_text("")
        taker.join(300)
        status, taken = first["answer"]
        assert status == 201 and taken["operationId"] == op_id, (status, taken)
        status, listed = org.api("GET", checkpoints_path(sid))
        assert [c["name"] for c in listed["items"]] == ["first"], listed
        assert org.get(sid)["status"] == "running"
    finally:
        gate.write_text("")
        if taker:
            taker.join(300)
        harness.delete_concurrently(d.created)
        d.close()


BIG = 268435456


@contextlib.contextmanager
def held_download(org):
    """A running sandbox with a `sleep` (its pid) and a 256 MiB file whose download through
    the agent has begun and is not read on: the socket's buffers fill and the file tool waits
    on its connection, inside the sandbox. Yields (sid, pid, the response, bytes read)."""
    sid = running_sandbox(org)
    pid = out(org, sid, "nohup sleep 1000 >/dev/null 2>&1 & echo $!").strip()
    out(org, sid, "head -c %d /dev/zero > /root/big" % BIG)
    conn = http.client.HTTPConnection("127.0.0.1", org.daemon.port, timeout=120)
    try:
        conn.request("GET", "/v1/sandboxes/%s/files?path=/root/big" % sid,
                     headers={"Authorization": "Bearer " + org.key})
        resp = conn.getresponse()
        assert resp.status == 200 and len(resp.read(65536)) == 65536
        yield sid, pid, resp, 65536
    finally:
        conn.close()


def read_rest(resp):
    """What is left of the body, however it ends (a cut connection ends it short)."""
    got = 0
    try:
        while True:
            chunk = resp.read(1 << 20)
            if not chunk:
                return got
            got += len(chunk)
    except http.client.IncompleteRead as e:
        return got + len(e.partial)


def alive(org, sid, pid):
    return out(org, sid, "kill -0 %s && echo alive" % pid).strip() == "alive"


def test_a_download_in_flight_holds_off_a_checkpoint_which_leaves_the_sandbox_untouched(org):
    """A download through the agent holds a connection this runsc cannot save (a refused save
    boots the sandbox afresh, its processes lost): a checkpoint meeting one that does not end
    within 5 s answers 409 and changes nothing; once it has ended, the checkpoint is taken."""
    with held_download(org) as (sid, pid, resp, got):
        status, body = org.api("POST", checkpoints_path(sid), {"name": "during"})
        documented("POST checkpoints", status)
        assert status == 409 and "has a file transfer in progress" in \
            body["error"]["message"], (status, body)
        assert alive(org, sid, pid)
        status, listed = org.api("GET", checkpoints_path(sid))
        assert listed["items"] == [], listed
        assert got + read_rest(resp) == BIG
    taken = take(org, sid, "after")
    assert taken["name"] == "after", taken
    assert alive(org, sid, pid)


def test_a_stop_ends_a_download_in_flight_and_keeps_the_processes(org):
    """A stop does not wait a transfer out: it ends the file tool in the sandbox, whose
    connection would break the save (the processes lost), and the save keeps them. The
    download is cut short; the start brings the sandbox's processes back."""
    with held_download(org) as (sid, pid, resp, got):
        status, stopped = org.api("POST", "/v1/sandboxes/%s/stop" % sid)
        assert status == 200, (status, stopped)
        assert stopped["hibernation"]["processes"] == "saved", stopped
        assert got + read_rest(resp) < BIG
    status, body = org.api("POST", "/v1/sandboxes/%s/start" % sid)
    assert status in (200, 202), (status, body)
    org.wait_for_status(sid, "running", 120)
    wait_for_agent(org, sid)
    assert alive(org, sid, pid)
    assert out(org, sid, "stat -c %s /root/big").strip() == str(BIG)


def test_cli_checkpoint_create_list_restore_delete(org):
    sid = running_sandbox(org)
    out(org, sid, "echo via-cli > /root/cli.txt")
    r = org.cli("sandbox", "checkpoint", "create", sid, "cli-one", timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("checkpoint cli-one of %s (" % sid), r.stdout
    r = org.cli("--json", "sandbox", "checkpoint", "list", sid)
    assert r.returncode == 0, r.stderr
    assert [c["name"] for c in json.loads(r.stdout)["items"]] == ["cli-one"]
    wait_for_agent(org, sid)
    out(org, sid, "echo changed > /root/cli.txt")
    r = org.cli("sandbox", "checkpoint", "restore", sid, "cli-one", timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("restored %s to checkpoint cli-one (running" % sid), r.stdout
    wait_for_agent(org, sid)
    assert out(org, sid, "cat /root/cli.txt") == "via-cli\n"
    r = org.cli("sandbox", "checkpoint", "create", sid, "Bad_Name")
    assert r.returncode == 1 and "name" in r.stderr, (r.stdout, r.stderr)
    r = org.cli("sandbox", "checkpoint", "delete", sid, "cli-one")
    assert r.returncode == 0 and r.stdout == "deleted checkpoint cli-one of %s\n" % sid, r.stderr


def test_kill_mid_checkpoint_resumes_the_sandbox_at_restart(fresh_daemon):
    d = fresh_daemon
    admin = d.admin
    sid = running_sandbox(admin)
    out(admin, sid, "echo survived > /root/crash.txt")
    # adaptd dies right after runsc checkpointed the sandbox, before it was resumed.
    crash_at(d, "sandbox.checkpoint.after_runsc", checkpoints_path(sid), {"name": "crash"})
    # The restart resumes it from the image runsc wrote; no checkpoint was half kept.
    sbx = admin.get(sid)
    assert sbx["status"] == "running", sbx
    status, listed = admin.api("GET", checkpoints_path(sid))
    assert status == 200 and listed["items"] == [], listed
    wait_for_agent(admin, sid)
    assert out(admin, sid, "cat /root/crash.txt") == "survived\n"


def test_checkpoints_count_against_the_persistent_storage_limit(daemon):
    # A plan whose 2 GiB of persistent storage the org's default volume (2048 MiB) fills.
    status, plan = daemon.admin.api("PUT", "/v1/plans/checkpoint-tight",
                                    {"name": "checkpoint-tight", "limits": {"persistentStorageGiB": 2}})
    assert status == 200, plan
    org = daemon.new_org()
    sid = running_sandbox(org)
    status, account = daemon.admin.api("PUT", "/v1/orgs/%s/plan" % org.org_id,
                                       {"planId": "checkpoint-tight"})
    assert status == 200, account
    body = take(org, sid, "too-much", expect=429)
    assert body["error"]["code"] == "resource_exhausted", body
    assert "2 GiB persistent storage limit" in body["error"]["message"], body
    status, listed = org.api("GET", checkpoints_path(sid))
    assert status == 200 and listed["items"] == [], listed
    assert org.get(sid)["status"] == "running"


def changed_since_base(admin):
    """A running sandbox whose /root/crash.txt said "kept" when checkpoint `base` was taken and
    says "changed" now: a roll back shows which of the two it has."""
    sid = running_sandbox(admin)
    out(admin, sid, "echo kept > /root/crash.txt")
    take(admin, sid, "base")
    wait_for_agent(admin, sid)
    out(admin, sid, "echo changed > /root/crash.txt")
    return sid


def test_kill_mid_roll_back_finishes_it_at_restart(fresh_daemon):
    d = fresh_daemon
    admin = d.admin
    sid = changed_since_base(admin)
    # adaptd dies after the checkpoint's disk was put back, before the sandbox was restored.
    crash_at(d, "sandbox.rollback.after_reinstate", checkpoints_path(sid, "base") + "/restore")
    # The restart finishes the roll back from the checkpoint put back; it stays kept.
    sbx = admin.get(sid)
    assert sbx["status"] == "running", sbx
    status, listed = admin.api("GET", checkpoints_path(sid))
    assert status == 200 and [c["name"] for c in listed["items"]] == ["base"], listed
    wait_for_agent(admin, sid)
    assert out(admin, sid, "cat /root/crash.txt") == "kept\n"
    assert latest_operation(d, sid, "restore")["phase"] == "Completed"


def test_kill_once_a_roll_back_stopped_the_sandbox_finishes_it_at_restart(fresh_daemon):
    """Killed after the roll back stopped the sandbox, before the checkpoint was put back: the
    operation names the checkpoint, so the restart puts it back and resumes the sandbox from it
    (the roll back asked for is done, never a failed or stopped sandbox); it stays kept."""
    d = fresh_daemon
    admin = d.admin
    sid = changed_since_base(admin)
    crash_at(d, "sandbox.rollback.after_release", checkpoints_path(sid, "base") + "/restore")
    sbx = admin.get(sid)
    assert sbx["status"] == "running", sbx
    op = latest_operation(d, sid, "restore")
    assert op["phase"] == "Completed", op
    status, listed = admin.api("GET", checkpoints_path(sid))
    assert status == 200 and [c["name"] for c in listed["items"]] == ["base"], listed
    wait_for_agent(admin, sid)
    assert out(admin, sid, "cat /root/crash.txt") == "kept\n"
    # And it can be rolled back again.
    out(admin, sid, "echo changed > /root/crash.txt")
    status, restored = admin.api("POST", checkpoints_path(sid, "base") + "/restore")
    assert status == 200 and restored["status"] == "running", (status, restored)
    wait_for_agent(admin, sid)
    assert out(admin, sid, "cat /root/crash.txt") == "kept\n"