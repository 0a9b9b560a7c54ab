"""Quota and fairness (issue 14, item 3.8): waiting requests hold no API worker, so requests
that wait (REST command waits, MCP waits) cannot starve other tenants; and per-organization
caps on live sandboxes, images and image imports in progress answer 429 resource_exhausted
and change nothing, even under concurrent creates.

The daemon here runs with two API worker threads (--worker-threads 2) and small caps, so
that a handful of requests is "more than there are workers"."""

import json
import socket
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

import harness
import mcp_support as mcp
import registry as reg
from conftest import close_daemon

WAIT = 30  # seconds each waiting request waits; the checks run well inside it
MAX_SANDBOXES = 2
MAX_IMAGES = 2
MAX_IMPORTS = 1
MCP_CALLS = 3
CONFIG = {"config": {"Cmd": ["/bin/cat", "/tag"], "Env": ["PATH=/bin"]}}


@pytest.fixture(scope="module")
def small():
    d = harness.Daemon(extra_args=[
        "--worker-threads", "2",
        "--max-sandboxes-per-org", str(MAX_SANDBOXES),
        "--max-images-per-org", str(MAX_IMAGES),
        "--max-imports-per-org", str(MAX_IMPORTS),
        "--mcp-call-threads", str(MCP_CALLS),
    ])
    d.start()
    yield d
    d.delete_everything()
    close_daemon(d)


@pytest.fixture(autouse=True)
def _delete_sandboxes_on_small(small):
    """The host runs few sandboxes at once: each test's go when it ends."""
    first = len(small.created)
    yield
    harness.delete_concurrently(small.created[first:])


@pytest.fixture(scope="module")
def registry():
    r = reg.Registry()
    yield r
    r.close()


def running_sandbox(client):
    sbx = client.create({})
    client.wait_for_status(sbx["id"], "running")
    harness.wait_for_agent(client, sbx["id"])
    return sbx["id"]


def timed(fn):
    start = time.monotonic()
    out = fn()
    return out, time.monotonic() - start


def assert_others_served_promptly(other):
    """A plain health check and another organization's list answer long before the waits end
    (`other` is made before the waits start: making it needs the API too)."""
    (status, body), took = timed(lambda: other.api("GET", "/healthz", key=""))
    assert status == 200 and body["status"] == "ok", body
    assert took < WAIT / 3, "GET /healthz took %.1f s while requests waited" % took
    (status, page), took = timed(lambda: other.api("GET", "/v1/sandboxes"))
    assert status == 200 and page["items"] == [], page
    assert took < WAIT / 3, "GET /v1/sandboxes took %.1f s while requests waited" % took


def test_command_waits_hold_no_api_worker(small):
    org, other = small.new_org(), small.new_org()
    sid = running_sandbox(org)
    waits = 6  # three times the API workers
    started = time.monotonic()
    with ThreadPoolExecutor(waits) as pool:
        futures = [pool.submit(org.api, "POST", "/v1/sandboxes/%s/commands" % sid,
                               {"argv": ["sleep", str(WAIT + 5)], "waitSeconds": WAIT})
                   for _ in range(waits)]
        time.sleep(2)  # the waits are in
        assert not any(f.done() for f in futures), [f.result() for f in futures if f.done()]
        assert_others_served_promptly(other)
        results = [f.result() for f in futures]
    # Each wait ran its course: 202 with the command still running, after about WAIT seconds.
    assert all(status == 202 and cmd["status"] == "running" for status, cmd in results), results
    assert time.monotonic() - started >= WAIT - 1


def stalled_upload(daemon, key, sid, done):
    """PUTs an endless body into /upload.bin of `sid` until `done` is set or the connection
    fails; returns what ended it."""
    s = socket.create_connection(("127.0.0.1", daemon.port), timeout=300)
    try:
        s.sendall(("PUT /v1/sandboxes/%s/files?path=/upload.bin HTTP/1.1\r\nHost: x\r\n"
                   "Authorization: Bearer %s\r\nContent-Length: %d\r\n\r\n"
                   % (sid, key, 1 << 34)).encode())
        chunk = b"x" * 65536
        while not done.is_set():
            s.sendall(chunk)
        return "stopped"
    except OSError as e:
        return type(e).__name__
    finally:
        s.close()


def test_a_sandbox_that_stalls_its_file_tool_holds_at_most_half_the_api_workers(small):
    """The sandbox's root stops every file tool adaptd starts in it (SIGSTOP), so an upload
    into it waits on a tool that takes nothing more, holding an API worker. Only half the
    API's workers (here one of two) may be held so: past that the organization's file requests
    are 429 at once, and another organization (and /healthz) is served meanwhile. Deleting the
    sandbox ends the held request."""
    org, other = small.new_org(), small.new_org()
    sid = running_sandbox(org)
    # The pattern's brackets keep the loop's own command line from matching it.
    status, cmd = org.api("POST", "/v1/sandboxes/%s/commands" % sid, {
        "argv": ["sh", "-c", "while :; do pkill -STOP -f 'adapt-agen[t] file put'; sleep 0.01; done"],
        "waitSeconds": 0})
    assert status == 202 and cmd["status"] == "running", cmd
    done = threading.Event()
    with ThreadPoolExecutor(2) as pool:
        held = pool.submit(stalled_upload, small, org.key, sid, done)
        time.sleep(3)  # the upload's tool is started and stopped; its buffers fill
        assert not held.done(), held.result()
        for _ in range(3):
            status, body = org.api("GET", "/v1/sandboxes/%s/files?path=/&list=true" % sid)
            assert status == 429 and body["error"]["code"] == "resource_exhausted", (status, body)
            assert "file operations running" in body["error"]["message"], body
        status, health = other.api("GET", "/healthz", key="")
        assert status == 200 and health["status"] == "ok", health
        status, page = other.api("GET", "/v1/sandboxes")
        assert status == 200 and page["items"] == [], page
        org.delete(sid)
        done.set()
        assert held.result() in ("stopped", "BrokenPipeError", "ConnectionResetError"), \
            held.result()


def test_a_wait_answers_when_the_command_ends(small):
    org = small.new_org()
    sid = running_sandbox(org)
    (status, cmd), took = timed(lambda: org.api(
        "POST", "/v1/sandboxes/%s/commands" % sid,
        {"argv": ["sh", "-c", "sleep 1; echo done"], "waitSeconds": WAIT}))
    assert status == 200 and cmd["status"] == "exited" and cmd["stdout"] == "done\n", cmd
    assert took < WAIT / 2, "the wait did not end with the command (%.1f s)" % took
    # waitSeconds 0 answers at once with the command running.
    status, cmd = org.api("POST", "/v1/sandboxes/%s/commands" % sid,
                          {"argv": ["sleep", "5"], "waitSeconds": 0})
    assert status == 202 and cmd["status"] == "running", cmd


def mcp_call(daemon, key, session, name, arguments, id=7):
    return mcp.post(daemon, {"jsonrpc": "2.0", "id": id, "method": "tools/call",
                             "params": {"name": name, "arguments": arguments}}, key, session)


def test_mcp_waits_hold_no_thread_so_more_than_the_call_threads_wait_at_once(small):
    """run_command and wait_for_sandbox park on the core's waiter: more waits than
    --mcp-call-threads are in at once, and other MCP calls (and REST) are still served at once."""
    org, other = small.new_org(), small.new_org()
    sid = running_sandbox(org)
    session, _ = mcp.initialize(small, org.key)
    args = {"sandbox_id": sid, "command": "sleep %d" % (WAIT + 5), "wait_seconds": WAIT}
    waits = 3 * MCP_CALLS
    with ThreadPoolExecutor(waits + 2) as pool:
        futures = []
        for i in range(waits):
            # A call holds one of the MCP_CALLS slots only until its wait begins.
            futures.append(pool.submit(mcp_call, small, org.key, session, "run_command", args,
                                       id=10 + i))
            time.sleep(0.5)
        # A sandbox that starts now: wait_for_sandbox waits on it beside the command waits.
        starting = org.create({})["id"]
        ready = pool.submit(mcp_call, small, org.key, session, "wait_for_sandbox",
                            {"sandbox_id": starting, "timeout_seconds": WAIT}, id=98)
        time.sleep(2)
        assert not any(f.done() for f in futures), [f.result() for f in futures if f.done()]
        assert_others_served_promptly(other)
        # Other MCP calls, past the bound of calls running at once, answer at once.
        for i in range(MCP_CALLS + 1):
            (status, _, text), took = timed(lambda: mcp_call(
                small, org.key, session, "run_command",
                {"sandbox_id": sid, "command": "echo quick", "wait_seconds": WAIT}, id=200 + i))
            assert status == 200, (status, text)
            out = json.loads(text)["result"]["structuredContent"]
            assert out["status"] == "exited" and out["stdout"] == "quick\n", out
            assert took < WAIT / 3, "run_command took %.1f s while MCP calls waited" % took
        (status, _, text), took = timed(
            lambda: mcp_call(small, org.key, session, "get_sandbox", {"sandbox_id": sid}, id=99))
        assert status == 200 and json.loads(text)["result"]["structuredContent"]["ready"], text
        assert took < WAIT / 3
        # The sandbox wait ended with the sandbox's start, not with the command waits.
        status, _, text = ready.result(timeout=WAIT)
        assert status == 200, text
        assert json.loads(text)["result"]["structuredContent"]["ready"] is True, text
        assert not any(f.done() for f in futures), [f.result() for f in futures if f.done()]
        for f in futures:
            status, _, text = f.result()
            assert status == 200, text
            assert json.loads(text)["result"]["structuredContent"]["status"] == "running", text


def test_sandbox_cap_refuses_the_next_create_and_changes_nothing(small):
    org = small.new_org()
    ids = [org.create({})["id"] for _ in range(MAX_SANDBOXES)]
    status, err = org.api("POST", "/v1/sandboxes", {})
    assert status == 429, err
    assert err["error"]["code"] == "resource_exhausted", err
    assert str(MAX_SANDBOXES) in err["error"]["message"], err
    assert sorted(s["id"] for s in org.list_all()) == sorted(ids)
    # Another organization has a cap of its own; a deleted sandbox frees its place.
    small.new_org().create({})
    org.delete(ids[0])
    org.create({})


def test_concurrent_creates_cannot_pass_the_sandbox_cap(small):
    org = small.new_org()
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: org.api("POST", "/v1/sandboxes", {}), range(8)))
    created = [body for status, body in results if status == 201]
    for body in created:
        small.created.append((org, body["id"]))
    assert len(created) == MAX_SANDBOXES, results
    assert all(status in (201, 429) for status, _ in results), results
    assert len(org.list_all()) == MAX_SANDBOXES


def push(registry, name):
    layout = reg.Layout([reg.layer(reg.busybox_base([("tag", "f", uuid.uuid4().hex, 0)]))], CONFIG)
    try:
        return registry.push(layout, name)
    finally:
        layout.close()


def images_of(client):
    status, listing = client.api("GET", "/v1/images")
    assert status == 200, listing
    return listing["items"]


def wait_settled(client, timeout=120):
    deadline = time.monotonic() + timeout
    while any(i["status"] in ("pulling", "importing") for i in images_of(client)):
        assert time.monotonic() < deadline, images_of(client)
        time.sleep(0.2)


def test_image_cap_refuses_the_next_pull_and_changes_nothing(small, registry):
    org = small.new_org()
    refs = [push(registry, "cap/img%d:1" % i) for i in range(MAX_IMAGES + 1)]
    for ref in refs[:MAX_IMAGES]:
        status, img = org.api("POST", "/v1/images", {"reference": ref})
        assert status == 202, img
        wait_settled(org)
    before = images_of(org)
    status, err = org.api("POST", "/v1/images", {"reference": refs[-1]})
    assert status == 429 and err["error"]["code"] == "resource_exhausted", err
    assert images_of(org) == before
    org.api("DELETE", "/v1/images/" + before[0]["id"])
    status, img = org.api("POST", "/v1/images", {"reference": refs[-1]})
    assert status == 202, img
    wait_settled(org)


def test_imports_in_progress_are_capped(small, registry):
    org = small.new_org()
    # An import whose body trickles in stays in progress while the client holds it open.
    held = socket.create_connection(("127.0.0.1", small.port))
    held.sendall(("POST /v1/images/import HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                  "Content-Type: application/x-tar\r\nContent-Length: 10000000\r\n\r\n" % org.key).encode()
                 + b"\0" * 512)
    try:
        deadline = time.monotonic() + 30
        while not any(i["status"] == "importing" for i in images_of(org)):
            assert time.monotonic() < deadline, images_of(org)
            time.sleep(0.1)
        status, err = org.api("POST", "/v1/images", {"reference": push(registry, "cap/imp:1")})
        assert status == 429 and err["error"]["code"] == "resource_exhausted", err
        assert "in progress" in err["error"]["message"], err
        assert len(images_of(org)) == 1
    finally:
        held.close()
    wait_settled(org)
    status, img = org.api("POST", "/v1/images", {"reference": push(registry, "cap/imp:2")})
    assert status == 202, img
    wait_settled(org)


def test_mcp_create_sandbox_waits_briefly_without_holding_a_call_thread():
    """create_sandbox waits ~10 s for its sandbox (start_sandbox the same way); that wait
    parks on the core's waiter (Tool::run_later), so twice as many creates as
    --mcp-call-threads wait side by side and other MCP calls are answered meanwhile. The sandboxes stay provisioning: their image
    comes from a loopback "registry" that accepts connections and never answers."""
    stall = socket.create_server(("127.0.0.1", 0))
    port = stall.getsockname()[1]
    held = []
    stall.settimeout(0.2)
    # The assistant's create takes trusted sources only: the stalling "registry" is made one.
    d = harness.Daemon(extra_args=["--mcp-call-threads", "2", "--worker-threads", "16",
                                   "--trusted-image-source", "127.0.0.1:%d/*" % port])
    d.start()
    try:
        orgs = [d.new_org() for _ in range(2)]
        sessions = [mcp.initialize(d, o.key)[0] for o in orgs]
        calls = 2 * 2  # twice --mcp-call-threads
        with ThreadPoolExecutor(calls + 1) as pool:
            started = time.monotonic()
            futures = []
            for i in range(calls):
                # A call holds one of the call threads only until its wait begins.
                futures.append(pool.submit(timed, lambda i=i: mcp_call(
                    d, orgs[i % 2].key, sessions[i % 2], "create_sandbox",
                    {"image": "127.0.0.1:%d/stall/app:1" % port}, id=10 + i)))
                time.sleep(0.5)
            # Accept the pulls' connections and hold them unanswered.
            while time.monotonic() - started < 4:
                try:
                    held.append(stall.accept()[0])
                except OSError:
                    pass
            assert not any(f.done() for f in futures), [f.result() for f in futures if f.done()]
            (status, _, text), took = timed(lambda: mcp_call(
                d, orgs[0].key, sessions[0], "list_sandboxes", {}, id=99))
            assert status == 200, text
            assert took < 3, "list_sandboxes took %.1f s while creates waited" % took
            listed = json.loads(text)["result"]["structuredContent"]["sandboxes"]
            assert [s["status"] for s in listed] == ["provisioning"] * 2, listed
            for f in futures:
                (status, _, text), took = f.result(timeout=60)
                assert status == 200, text
                out = json.loads(text)["result"]["structuredContent"]
                assert out["status"] == "provisioning" and out["ready"] is False, out
                # Each waited its own ~10 s; none queued behind another's wait (that would be
                # 20 s and more with two call threads).
                assert 8 < took < 17, "create_sandbox took %.1f s" % took
    finally:
        for c in held:
            c.close()
        stall.close()
        close_daemon(d)
