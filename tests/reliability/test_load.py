"""Load: many clients at once, many TTL expiries at once, and a full state-dir disk.

Concurrent creates, deletes and commands answer no 5xx and lose or duplicate no sandbox; a
batch of sandboxes whose TTL ends together is deleted as expired, leaving nothing behind;
with the state dir on a small loop filesystem that is full, creates fail with a clear error,
nothing is left provisioning, and adaptd recovers once space returns.
"""

import os
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import harness
import leaks
from harness import poll_command

CLIENTS = 6
ROUNDS = 2


def test_concurrent_clients_get_no_5xx_and_lose_no_sandbox(fresh_daemon):
    d = fresh_daemon
    orgs = [d.new_org() for _ in range(2)]
    errors = []
    made = []
    lock = threading.Lock()

    def check(what, status, body):
        if status >= 500 or status == 0:
            with lock:
                errors.append((what, status, body))

    def worker(n):
        client = orgs[n % len(orgs)]
        for r in range(ROUNDS):
            status, sbx = client.api("POST", "/v1/sandboxes", {"labels": {"load": "%d-%d" % (n, r)}})
            check("create", status, sbx)
            if status != 201:
                continue
            sid = sbx["id"]
            with lock:
                made.append((client, sid, "%d-%d" % (n, r)))
            client.wait_for_status(sid, ("running", "failed"), 180)
            status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % sid,
                                     {"command": "echo %d" % n, "waitSeconds": 60})
            check("command", status, cmd)
            if status in (200, 201, 202):
                if cmd["status"] == "running":
                    cmd = poll_command(client, sid, cmd["id"], timeout=120)
                assert cmd["stdout"] == "%d\n" % n, cmd
            # Reads from every client interleave with the writes.
            status, page = client.api("GET", "/v1/sandboxes?limit=50")
            check("list", status, page)
            status, body = client.api("DELETE", "/v1/sandboxes/" + sid)
            check("delete", status, body)

    with ThreadPoolExecutor(max_workers=CLIENTS) as pool:
        list(pool.map(worker, range(CLIENTS)))
    assert errors == [], errors
    assert len(made) == CLIENTS * ROUNDS
    ids = [sid for _, sid, _ in made]
    assert len(set(ids)) == len(ids), "an id was handed out twice"
    # None lost: each one is deleted and carries the labels it was created with, and only
    # its own organization sees it.
    for client, sid, label in made:
        sbx = client.wait_for_status(sid, "deleted", 180)
        assert sbx["labels"] == {"load": label}, sbx
        other = orgs[1] if client is orgs[0] else orgs[0]
        status, _ = other.api("GET", "/v1/sandboxes/" + sid)
        assert status == 404


def test_many_ttl_expiries_at_once(fresh_daemon):
    d = fresh_daemon
    ids = [d.admin.create({"ttlSeconds": 5, "network": {"egress": "none"}})["id"] for _ in range(8)]
    for sid in ids:
        sbx = d.admin.wait_for_status(sid, "deleted", 240)
        assert sbx["terminationReason"] == "expired", sbx
    held = leaks.settled_holdings(d, ids)
    assert held == {}, "expired sandboxes still hold %r" % held


@pytest.fixture
def small_state_daemon(request):
    """An adaptd whose state dir is a 400 MiB ext4 loop filesystem of its own."""
    base = tempfile.mkdtemp(prefix="adapt-full-", dir="/tmp")
    image = os.path.join(base, "fs.img")
    state = os.path.join(base, "state")
    os.makedirs(state)
    subprocess.run(["truncate", "-s", "400M", image], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "0", image], check=True)
    subprocess.run(["mount", "-o", "loop", image, state], check=True)
    from conftest import close_daemon

    d = harness.Daemon(base_dir=base)
    try:
        d.start()
        yield d
    finally:
        close_daemon(d) if d.proc else None
        subprocess.run(["umount", "-l", state], capture_output=True)
        if os.path.exists(image):  # Daemon.close may have removed the whole base already
            os.unlink(image)
        # The log stays when a test failed, as the e2e fixtures keep theirs.
        if not request.session.testsfailed and os.environ.get("ADAPT_E2E_KEEP") != "1":
            subprocess.run(["rm", "-rf", "--one-file-system", base], capture_output=True)


def fill(path):
    """Fills the filesystem holding `path` to the last block; returns the filler's path."""
    filler = os.path.join(path, "filler")
    subprocess.run(["dd", "if=/dev/zero", "of=" + filler, "bs=1M"], capture_output=True)
    subprocess.run(["sync"])
    return filler


def test_full_state_disk_fails_creates_clearly_and_recovers(small_state_daemon):
    d = small_state_daemon
    ok = d.admin.create({"network": {"egress": "none"}})["id"]
    d.admin.wait_for_status(ok, "running", 120)
    filler = fill(d.state_dir)
    made, refused = [], []
    try:
        for _ in range(3):
            status, body = d.admin.api("POST", "/v1/sandboxes", {"network": {"egress": "none"}})
            if status == 201:
                made.append(body["id"])
            else:
                # Refused at once: an API error that says the disk is full.
                assert status in (500, 503, 507), (status, body)
                text = str(body).lower()
                assert "space" in text or "full" in text, "the error says the disk is full: %r" % (body,)
                refused.append(body)
        # Reads still answer while the disk is full.
        status, health = d.admin.api("GET", "/healthz")
        assert status == 200, (status, health)
        for sid in made:
            assert d.admin.get(sid)["status"] in ("provisioning", "failed")
    finally:
        os.unlink(filler)
    # Space is back: a sandbox that could not be made reads failed, saying why, none is left
    # provisioning; creates work again, and the sandbox from before still runs.
    for sid in made:
        sbx = d.admin.wait_for_status(sid, ("failed", "running"), 120)
        if sbx["status"] == "failed":
            # The condition, never the host's paths (the OS layer's client sentence).
            error = (sbx["error"] or "").lower()
            assert "space" in error or "disk is full" in error, sbx
            assert d.state_dir.lower() not in error and "/tmp/" not in error, sbx
    assert made or refused
    again = d.admin.create({"network": {"egress": "none"}})["id"]
    d.admin.wait_for_status(again, "running", 120)
    assert d.admin.get(ok)["status"] == "running"
    for sbx in d.admin.list_all():
        assert sbx["status"] != "provisioning", sbx
