"""A redeploy drains the old release's replicas (issue 20: surge 1, unavailable 0): once the new
release serves, an old replica turns `draining`, takes no new request, finishes the one it
holds and only then goes. Only loopback (the ingress, adaptd) and the replicas' own addresses
(in namespaces adaptd made) are contacted."""

import http.client
import threading
import time
import urllib.parse

import harness
from test_apps import deploy, fetch, get, running, sh

d = harness.module_daemon()
client = harness.module_org

# /hold answers once /workspace/release-me exists (the test writes it into the replica), so
# the request outlasts the redeploy; any other path answers at once. Each answers its version.
SERVER = """import http.server, os, time
V = open('version.txt').read().strip()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == '/hold':
            for _ in range(1200):
                if os.path.exists('/workspace/release-me'):
                    break
                time.sleep(0.05)
        body = (V + ' ' + self.path).encode()
        self.send_response(200)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(('', 8000), H).serve_forever()
"""
START = "exec python3 server.py"


def held_fetch(app, path, out):
    """A GET through the ingress that may wait a minute for its answer; the result in `out`."""
    port = urllib.parse.urlsplit(app["httpUrl"]).port
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=90)
    try:
        conn.putrequest("GET", path, skip_host=True)
        conn.putheader("Host", app["hostname"])
        conn.endheaders()
        r = conn.getresponse()
        out["answer"] = (r.status, r.read().decode())
    except Exception as e:
        out["answer"] = ("error", repr(e))
    finally:
        conn.close()


def test_an_old_replica_finishes_the_request_it_holds_before_a_redeploy_removes_it(client):
    sid = running(client)
    sh(client, sid, "mkdir -p /workspace/site && echo v1 > /workspace/site/version.txt && "
                    "cat > /workspace/site/server.py <<'EOF'\n%sEOF" % SERVER)
    app = deploy(client, sid, name="drain", buildCommand=None, startCommand=START)
    old = app["replicaSandboxes"][0]["sandboxId"]
    assert fetch(app, "/now") == (200, "v1 /now")

    held = {}
    holder = threading.Thread(target=held_fetch, args=(app, "/hold", held))
    holder.start()
    # The request is at the old replica once its server has it (the ingress connected).
    time.sleep(1)
    assert "answer" not in held, held

    sh(client, sid, "echo v2 > /workspace/site/version.txt")
    redeployed = {}

    def redeploy():
        redeployed["app"] = deploy(client, sid, name="drain", buildCommand=None, startCommand=START)

    deployer = threading.Thread(target=redeploy)
    deployer.start()
    try:
        # The new release serves while the old replica, draining, still holds the request.
        deadline = time.monotonic() + 240
        while True:
            now = get(client, app["id"])
            states = {r["sandboxId"]: r["state"] for r in now["replicaSandboxes"]}
            if states.get(old) == "draining":
                break
            assert old in states and "answer" not in held, (states, held)
            assert time.monotonic() < deadline, states
            time.sleep(0.2)
        assert fetch(app, "/now", retry=()) == (200, "v2 /now")
        assert "answer" not in held, held
        assert client.get(old)["status"] == "running"
    finally:
        # Let the held request end: it is answered by the old release, whole.
        sh(client, old, "touch /workspace/release-me")
        holder.join(timeout=120)
        deployer.join(timeout=240)
    assert held.get("answer") == (200, "v1 /hold"), held
    assert redeployed["app"]["releaseId"] != app["releaseId"], redeployed
    # Then the old replica goes.
    deadline = time.monotonic() + 60
    while old in [r["sandboxId"] for r in get(client, app["id"])["replicaSandboxes"]]:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert client.get(old)["status"] not in ("running", "provisioning")
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
    client.delete(sid)
