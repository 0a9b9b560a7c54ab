"""Warm pools (issue 8): adaptd started with --warm-pool boots sandboxes ahead of any request;
a create claims one (its record says so), the pool refills, the request's env, labels, TTL and
network policy apply to the claimed sandbox, a request a booted sandbox cannot serve boots as
before and says why, concurrent creates never share a sandbox, and a SIGKILLed adaptd restarted
leaves nothing of the old members behind.

Egress is checked against test_network.py's stand-in internet (a network namespace this test
makes, reached only through a route to it): its TCP echo and its plain HTTP server, probed with
test_network.py's in-sandbox PROBE.
"""

import os
import sqlite3
import threading
import time

import pytest

import harness
from test_network import ECHO, TLS, probe, standin  # noqa: F401

POOL_WAIT = 120


def pool_members(d, state=None):
    """The pool's members as the store has them: [(id, state)]."""
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(d.state_dir, "adapt.db"), uri=True, timeout=30)
    try:
        rows = db.execute("SELECT id, state FROM pool_members ORDER BY created_at").fetchall()
    finally:
        db.close()
    return [r for r in rows if state is None or r[1] == state]


def wait_ready(d, n, timeout=POOL_WAIT):
    deadline = time.monotonic() + timeout
    while True:
        ready = pool_members(d, "ready")
        if len(ready) >= n:
            return [r[0] for r in ready]
        if time.monotonic() > deadline:
            raise AssertionError("warm pool has %r after %s s, wanted %d ready:\n%s"
                                 % (pool_members(d), timeout, n, d.log_tail()))
        time.sleep(0.25)


def start_pool_daemon(size, base_dir=None):
    d = harness.Daemon(base_dir=base_dir, extra_args=["--warm-pool", "debian:12=%d" % size])
    d.start()
    return d


@pytest.fixture(scope="module")
def pooled(standin):
    d = start_pool_daemon(2)
    yield d
    left = d.close()
    assert not any(left.values()), left


@pytest.fixture(scope="module")
def client(pooled):
    return pooled.new_org()


def run(client, sid, argv, **fields):
    body = {"argv": argv, "timeoutSeconds": 60}
    body.update(fields)
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % sid, body)
    assert status == 200 and cmd["status"] == "exited", (status, cmd)
    return cmd


def test_create_claims_a_pooled_sandbox_with_its_settings_and_the_pool_refills(pooled, client):
    members = wait_ready(pooled, 2)
    assert client.list_all() == [], "pool members are listed by nobody"
    assert pooled.admin.list_all() == []
    sbx = client.create({"env": {"GREETING": "hello-pool"}, "labels": {"team": "pool"},
                         "ttlSeconds": 600})
    assert sbx["pool"] == {"used": True, "reason": None}, sbx
    assert sbx["id"] in members
    assert sbx["status"] == "running", "a claimed sandbox is running at once"
    assert sbx["labels"] == {"team": "pool"} and sbx["ttlSeconds"] == 600
    assert sbx["expiresAt"] is not None
    assert sbx["environmentNames"] == ["GREETING"]
    assert client.get(sbx["id"])["pool"]["used"] is True
    # (The sandbox's env values are redacted from output: compare inside.)
    cmd = run(client, sbx["id"], ["sh", "-c", '[ "$GREETING" = hello-pool ] && echo seen; hostname'])
    assert cmd["stdout"].split() == ["seen", sbx["id"]], cmd
    # A member is ready only once its agent is connected: the first command goes through it.
    assert cmd["servedBy"] == "agent", cmd
    # A command's own env wins over the sandbox's.
    cmd = run(client, sbx["id"], ["sh", "-c", "echo $GREETING"], env={"GREETING": "own"})
    assert cmd["stdout"].strip() == "own"
    assert [s["id"] for s in client.list_all()] == [sbx["id"]]
    # The claimed member is gone from the pool and a new one takes its place.
    assert sbx["id"] not in [m[0] for m in pool_members(pooled)]
    refilled = wait_ready(pooled, 2)
    assert sbx["id"] not in refilled
    assert [s["id"] for s in client.list_all()] == [sbx["id"]], "new members are not listed"
    client.delete(sbx["id"])


def test_network_policy_applies_after_claim(pooled, client):
    wait_ready(pooled, 2)
    open_box = client.create({})
    assert open_box["pool"]["used"] is True
    # The echo answers at once and closes (unread bytes would reset the connection): send nothing.
    assert probe(client, open_box["id"], "tcp(%r, 7001, b'')" % ECHO) == "OK tcp-echo"
    assert probe(client, open_box["id"], "tcp(%r, 8080)" % TLS) == "OK plain"
    none = client.create({"network": {"egress": "none"}})
    assert none["pool"]["used"] is False and "egress none" in none["pool"]["reason"]
    client.wait_for_status(none["id"], "running", 90)
    assert probe(client, none["id"], "tcp(%r, 7001, b'')" % ECHO).startswith("FAIL")
    wait_ready(pooled, 2)
    allow = client.create({"network": {"egress": "allowlist",
                                       "allow": [{"protocol": "tcp", "address": ECHO, "port": 7001}]}})
    assert allow["pool"]["used"] is True
    assert probe(client, allow["id"], "tcp(%r, 7001, b'')" % ECHO) == "OK tcp-echo"
    assert probe(client, allow["id"], "tcp(%r, 8080)" % TLS).startswith("FAIL")
    for s in (open_box, none, allow):
        client.delete(s["id"])


@pytest.mark.parametrize("body,why", [
    ({"startup": {"mode": "command", "argv": ["echo", "booted"]}}, "startup"),
    ({"cpu": 2}, "no warm pool"),
    ({"network": {"dns": "198.18.1.53"}}, "network.dns"),
])
def test_unpoolable_request_boots_normally_and_says_why(pooled, client, body, why):
    sbx = client.create(body)
    assert sbx["pool"]["used"] is False and why in sbx["pool"]["reason"], sbx
    assert sbx["status"] == "provisioning"
    if "startup" in body:
        done = client.wait_end(sbx["id"])
        assert done["status"] == "completed" and done["startup"]["stdout"] == "booted\n", done
    else:
        client.wait_for_status(sbx["id"], "running", 90)
    client.delete(sbx["id"])


def test_concurrent_creates_never_share_a_sandbox(pooled, client):
    wait_ready(pooled, 2)
    results, errors = [], []

    def create():
        try:
            status, sbx = client.api("POST", "/v1/sandboxes", {})
            assert status == 201, (status, sbx)
            results.append(sbx)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=create) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    ids = [s["id"] for s in results]
    assert len(set(ids)) == 4, ids
    used = [s for s in results if s["pool"]["used"]]
    assert 1 <= len(used) <= 2, results
    for s in results:
        if not s["pool"]["used"]:
            assert s["pool"]["reason"] == "the warm pool was empty", s
    for s in results:
        client.wait_for_status(s["id"], "running", 90)
        assert run(client, s["id"], ["hostname"])["stdout"].strip() == s["id"]
    for s in results:
        client.delete(s["id"])


def test_restart_after_kill_leaves_nothing_of_the_old_members():
    d = start_pool_daemon(2)
    try:
        old = wait_ready(d, 2)
        c = d.new_org()
        claimed = c.create({})
        assert claimed["pool"]["used"] is True
        old = [m for m in old if m != claimed["id"]] + [m[0] for m in pool_members(d)]
        assert harness.cgroups_named(old), "members have cgroups while they run"
        d.kill()
        d.start(port=d.port)
        fresh = wait_ready(d, 2)
        assert not set(fresh) & set(old)
        assert {m[0] for m in pool_members(d)}.isdisjoint(old)
        running = harness.runsc_containers(d.state_dir)
        assert not set(running) & set(old), running
        assert not harness.cgroups_named(old), harness.cgroups_named(old)
        ns = harness.netns_named(d.network_name + "-")
        assert not [n for n in ns if any(m in n for m in old)], ns
        assert not [m for m in harness.mounts_under(d.state_dir) if any(i in m for i in old)]
        # The claimed sandbox was recorded before the crash: adopted, still running.
        assert c.get(claimed["id"])["status"] == "running"
        assert c.list_all() and [s["id"] for s in c.list_all()] == [claimed["id"]]
    finally:
        left = d.close()
    assert not any(left.values()), left
    assert not left["netns"], left
