"""Forks of named checkpoints (POST /v1/sandboxes {"fromCheckpoint": "<sandboxId>/<name>"}, CLI
`adapt sandbox create --from-checkpoint`): the fork is a new sandbox whose process keeps the
memory and files it had at the checkpoint and then runs on independently of the original, with
its own network namespace, address and egress rules (this runsc restores a checkpoint into
another namespace). Other organizations' sandboxes, bad sources and extra fields are refused
before anything is made; a checkpoint recorded as taken by another runsc version or platform
(its `taken_by` file edited: an honest fault injection) is refused by both a fork and a roll
back while the sandbox runs on untouched.

The network is the stand-in internet of test_network.py (a namespace of the test's own); the
only traffic before a checkpoint is UDP, which this runsc saves."""

import json
import os

import pytest

from harness import run_command as run
from harness import wait_for_agent
from test_named_checkpoints import MEMORY_LOOP, SPEC, checkpoints_path, memory_value, out, remember, take
from test_network import ECHO, standin_netns, start_network_daemon
from test_openapi import assert_matches, schema
from test_stop_start_cycles import finished

# Prints the sandbox's address on its network and the UDP echo's answer on a port (or
# "blocked" when the egress rules drop it).
UDP_PROBE = """cat > /root/probe.py <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.connect((sys.argv[1], int(sys.argv[2])))
print(s.getsockname()[0])
s.send(b"p")
try:
    print(s.recv(64).decode())
except OSError:
    print("blocked")
EOF
python3 /root/probe.py %s %%d""" % ECHO
ALLOW_ECHO_7000 = {"egress": "allowlist",
                   "allow": [{"protocol": "udp", "address": ECHO, "port": 7000}]}


@pytest.fixture(scope="module")
def netd():
    with standin_netns():
        d = start_network_daemon()
        try:
            yield d
        finally:
            d.close()


def probe(client, sid, port):
    address, answer = out(client, sid, UDP_PROBE % port).split()
    return address, answer


def durable(client, network=None):
    body = {"startupClass": "durable"}
    if network:
        body["network"] = network
    sid = client.create(body)["id"]
    client.wait_for_status(sid, "running", 120)
    wait_for_agent(client, sid)
    return sid


def fork(client, source, name, expect=201, **extra):
    status, body = client.api("POST", "/v1/sandboxes", dict({"fromCheckpoint": "%s/%s" % (source, name)}, **extra))
    assert status == expect, (status, body)
    assert str(status) in SPEC["paths"]["/v1/sandboxes"]["post"]["responses"], status
    if status == 201:
        client.daemon.created.append((client, body["id"]))
    return body


def test_a_fork_carries_on_the_memory_and_files_with_its_own_address_and_egress(netd):
    org = netd.new_org()
    sid = durable(org, ALLOW_ECHO_7000)
    pid = out(org, sid, MEMORY_LOOP).strip()
    out(org, sid, remember("two") + "; echo first > /root/file.txt")
    assert memory_value(org, sid) == "two"
    source_address, answer = probe(org, sid, 7000)
    assert answer == "udp-echo:p"
    take(org, sid, "base")
    wait_for_agent(org, sid)

    forked = fork(org, sid, "base", labels={"name": "the-fork"})
    assert_matches(SPEC, schema(SPEC, "Sandbox"), forked)
    fid = forked["id"]
    assert fid != sid and forked["status"] == "provisioning", forked
    assert forked["startupClass"] == "durable" and forked["labels"] == {"name": "the-fork"}, forked
    assert forked["network"]["egress"] == "allowlist", forked
    org.wait_for_status(fid, "running", 120)
    op = finished(org, forked["operationId"])
    assert op["kind"] == "fork" and op["phase"] == "Completed" and op["sandboxId"] == fid, op
    assert op["error"] is None, op
    assert org.get(fid)["hibernation"] is None
    wait_for_agent(org, fid)

    # The process goes on in the fork with the memory and files it had at the checkpoint.
    assert out(org, fid, "kill -0 %s && cat /root/file.txt" % pid) == "first\n"
    assert memory_value(org, fid) == "two"
    # From here on the two are independent: changing one leaves the other as it was.
    out(org, fid, remember("three") + "; echo forked > /root/file.txt")
    assert memory_value(org, fid) == "three"
    assert memory_value(org, sid) == "two"
    assert out(org, sid, "cat /root/file.txt") == "first\n"
    out(org, sid, remember("four"))
    assert memory_value(org, sid) == "four"
    assert memory_value(org, fid) == "three"
    assert out(org, fid, "cat /root/file.txt") == "forked\n"

    # Its own address, and the egress rules (copied) apply to it: port 7000 only.
    fork_address, answer = probe(org, fid, 7000)
    assert answer == "udp-echo:p"
    assert fork_address != source_address, (fork_address, source_address)
    assert probe(org, fid, 7002)[1] == "blocked"
    assert probe(org, sid, 7000) == (source_address, "udp-echo:p")

    # Deleting the fork leaves the original running.
    org.delete(fid)
    assert org.get(sid)["status"] == "running"
    assert memory_value(org, sid) == "four"


def test_cli_forks_a_checkpoint(netd):
    org = netd.new_org()
    sid = durable(org)
    out(org, sid, "echo via-cli > /root/cli.txt")
    take(org, sid, "cli")
    r = org.cli("sandbox", "create", "-q", "--from-checkpoint", sid + "/cli", "--ttl", "900",
                timeout=300)
    assert r.returncode == 0, r.stderr
    fid = r.stdout.strip()
    org.daemon.created.append((org, fid))
    sbx = org.get(fid)
    assert sbx["status"] == "running" and sbx["ttlSeconds"] == 900, sbx
    wait_for_agent(org, fid)
    assert out(org, fid, "cat /root/cli.txt") == "via-cli\n"
    r = org.cli("sandbox", "create", "--from-checkpoint", sid + "/cli", "--cpu", "2")
    assert r.returncode == 1 and "cpu" in r.stderr, (r.stdout, r.stderr)


def test_other_tenants_bad_sources_and_extra_fields_are_refused_and_make_nothing(netd):
    org = netd.new_org()
    sid = durable(org)
    take(org, sid, "mine")
    other = netd.new_org()
    for source in ("%s/mine" % sid, "sbx_0123456789abcdef/mine"):
        body = fork(other, *source.split("/"), expect=404)
        assert body["error"]["field"] == "fromCheckpoint", body
        assert_matches(SPEC, schema(SPEC, "Error"), body)
    assert fork(org, sid, "never-taken", expect=404)["error"]["field"] == "fromCheckpoint"
    for bad in ("", "no-slash", "/mine", sid + "/", sid + "/Bad_Name", sid + "/a/b", 7, None):
        status, body = org.api("POST", "/v1/sandboxes", {"fromCheckpoint": bad})
        assert status == 400 and body["error"]["field"] == "fromCheckpoint", (bad, status, body)
    for field, value in (("cpu", 2), ("image", "debian:12"), ("network", {"egress": "none"})):
        body = fork(org, sid, "mine", expect=400, **{field: value})
        assert body["error"]["field"] == field and "fromCheckpoint" in body["error"]["message"], body
    assert fork(org, sid, "mine", expect=400, ttlSeconds=0)["error"]["field"] == "ttlSeconds"
    status, listed = other.api("GET", "/v1/sandboxes")
    assert status == 200 and listed["items"] == [], listed
    status, listed = org.api("GET", "/v1/sandboxes")
    assert [s["id"] for s in listed["items"]] == [sid], listed


def test_a_checkpoint_another_runsc_took_is_refused_before_anything_is_touched(netd):
    org = netd.new_org()
    sid = durable(org)
    pid = out(org, sid, MEMORY_LOOP).strip()
    take(org, sid, "old")
    wait_for_agent(org, sid)
    out(org, sid, remember("two"))
    assert memory_value(org, sid) == "two"
    taken_by = os.path.join(netd.state_dir, "checkpoint-store", "data", "sandboxes", sid,
                            "checkpoints", "old", "taken_by")
    with open(taken_by) as f:
        recorded = f.read()
    assert recorded.startswith("runsc ") and "\nplatform ptrace\n" in recorded, recorded
    with open(taken_by, "w") as f:
        f.write("runsc 0.0~20230101.0\nplatform ptrace\n")

    status, body = org.api("POST", checkpoints_path(sid, "old") + "/restore")
    assert status == 422, (status, body)
    message = body["error"]["message"]
    assert "runsc 0.0~20230101.0" in message and "cannot restore" in message, body
    body = fork(org, sid, "old", expect=422)
    assert body["error"]["field"] == "fromCheckpoint" and "20230101" in body["error"]["message"], body
    # Untouched: the same process, with the memory it had, and no fork.
    assert org.get(sid)["status"] == "running"
    assert out(org, sid, "kill -0 %s && echo alive" % pid) == "alive\n"
    assert memory_value(org, sid) == "two"
    status, listed = org.api("GET", "/v1/sandboxes")
    assert [s["id"] for s in listed["items"]] == [sid], listed

    # Another platform is refused the same way; the recorded pair restores again.
    with open(taken_by, "w") as f:
        f.write(recorded.replace("platform ptrace", "platform kvm"))
    status, body = org.api("POST", checkpoints_path(sid, "old") + "/restore")
    assert status == 422 and "platform kvm" in body["error"]["message"], body
    with open(taken_by, "w") as f:
        f.write(recorded)
    status, body = org.api("POST", checkpoints_path(sid, "old") + "/restore")
    assert status == 200, body
    wait_for_agent(org, sid)
    assert memory_value(org, sid) == "one"
    assert run(org, sid, command="kill -0 %s" % pid)["exitCode"] == 0


def test_a_checkpoint_taken_with_keep_outlives_its_sandbox_until_deleted(netd):
    org = netd.new_org()
    sid = durable(org)
    out(org, sid, "echo kept > /root/kept.txt")
    r = org.cli("--json", "sandbox", "checkpoint", "create", sid, "kept", "--keep", timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["keep"] is True
    wait_for_agent(org, sid)
    dropped = take(org, sid, "dropped")
    assert dropped["keep"] is False and dropped["platform"] == "ptrace" and dropped["runscVersion"], dropped
    org.delete(sid)

    status, listed = org.api("GET", checkpoints_path(sid))
    assert status == 200 and [c["name"] for c in listed["items"]] == ["kept"], listed
    assert listed["items"][0]["keep"] is True
    assert_matches(SPEC, schema(SPEC, "Checkpoint"), listed["items"][0])
    other = netd.new_org()
    for method, path in (("GET", checkpoints_path(sid)), ("DELETE", checkpoints_path(sid, "kept"))):
        status, body = other.api(method, path)
        assert status == 404, (method, status, body)
    assert fork(other, sid, "kept", expect=404)["error"]["field"] == "fromCheckpoint"

    # The deleted sandbox's memory and files, in a fork.
    forked = fork(org, sid, "kept")
    org.wait_for_status(forked["id"], "running", 120)
    wait_for_agent(org, forked["id"])
    assert out(org, forked["id"], "cat /root/kept.txt") == "kept\n"

    kept_dir = os.path.join(netd.state_dir, "checkpoint-store", "data", "kept", sid)
    assert os.path.isdir(os.path.join(kept_dir, "kept")), "the kept checkpoint is not in the store"
    status, body = org.api("DELETE", checkpoints_path(sid, "kept"))
    assert status == 204, (status, body)
    status, body = org.api("GET", checkpoints_path(sid))
    assert status == 404, (status, body)
    assert not os.path.exists(kept_dir)


def test_a_kill_mid_fork_leaves_the_fork_stopped_and_a_start_resumes_it(fresh_daemon):
    d = fresh_daemon
    admin = d.admin
    sid = durable(admin)
    pid = out(admin, sid, MEMORY_LOOP).strip()
    out(admin, sid, remember("two"))
    assert memory_value(admin, sid) == "two"
    take(admin, sid, "base")
    # adaptd dies right after the checkpoint was copied into the fork, before its restore.
    d.kill()
    os.environ["ADAPT_FAULT"] = "sandbox.fork.after_seed"
    try:
        d.start(port=d.port)
    finally:
        os.environ.pop("ADAPT_FAULT", None)
    status, forked = admin.api("POST", "/v1/sandboxes", {"fromCheckpoint": sid + "/base"})
    assert status == 201, forked
    d.created.append((admin, forked["id"]))
    d.proc.wait(timeout=120)
    assert d.proc.returncode == 86, d.log_tail()
    d.start(port=d.port)
    # Never stuck: the restart stops the fork (its copy kept) and says so in its operation.
    fork = admin.wait_for_status(forked["id"], ("hibernated", "running"), 60)
    assert fork["status"] == "hibernated", fork
    op = finished(admin, forked["operationId"])
    assert op["phase"] == "Failed" and "start it again" in op["error"], op
    status, started = admin.api("POST", "/v1/sandboxes/%s/start" % forked["id"])
    assert status == 202, started
    admin.wait_for_status(forked["id"], "running", 120)
    wait_for_agent(admin, forked["id"])
    assert out(admin, forked["id"], "kill -0 %s && echo alive" % pid) == "alive\n"
    assert memory_value(admin, forked["id"]) == "two"
    # The source came back after the restart too.
    admin.wait_for_status(sid, "running", 60)
