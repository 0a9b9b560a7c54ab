"""Deployed apps' readiness, restarts with backoff and balancing (issue 20): a replica takes
traffic only once its readiness path answers, one that never does is restarted with backoff
and the app's status says why, a release whose replicas never become ready leaves the previous
one serving, and requests go to the replica with the fewest open connections. Only loopback
(the ingress) and the replicas' own addresses (in namespaces adaptd made) are contacted."""

import os
import threading
import time

import pytest
import yaml

import harness
from harness import REPO
from test_apps import deploy, fetch, get, running, sh, wait_ready
from test_openapi import assert_matches, schema

SPEC = yaml.safe_load(open(os.path.join(REPO, "docs", "openapi.yaml")))

# The port answers at once; /health.txt only after 4 s: a TCP check would pass too early.
SLOW_HEALTH = ("python3 -m http.server 8000 & sleep 4; echo ok > health.txt; wait")

# Answers with its replica's id; /slow?s=N holds the request N seconds first. Threads, so
# that a held request does not block the others.
SERVER = r"""
import http.server, sys, time, uuid
ME = str(uuid.uuid4())
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith('/slow'):
            time.sleep(float(self.path.split('=')[1]))
        body = ME.encode()
        self.send_response(200)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, fmt, *args):
        print('served ' + fmt % args, flush=True)
print('replica ' + ME + ' listening', flush=True)
http.server.ThreadingHTTPServer(('', 8000), H).serve_forever()
"""


d = harness.module_daemon()
client = harness.module_org


@pytest.fixture(scope="module")
def source(client):
    sid = running(client)
    sh(client, sid, "mkdir -p /workspace/site && echo hi > /workspace/site/index.html")
    sh(client, sid, "cat > /workspace/site/server.py <<'EOF'\n%sEOF" % SERVER)
    yield sid
    client.delete(sid)


def test_a_replica_serves_only_once_its_readiness_path_answers(client, source):
    app = deploy(client, source, name="health", buildCommand=None, startCommand=SLOW_HEALTH,
                 readinessPath="/health.txt", readinessTimeoutSeconds=60)
    assert_matches(SPEC, schema(SPEC, "App"), app)
    assert app["readyReplicas"] == 1 and app["status"] == "ready", app
    assert app["statusMessage"] is None and app["restarts"] == 0, app
    assert app["release"]["readinessPath"] == "/health.txt", app["release"]
    assert app["release"]["readinessTimeoutSeconds"] == 60, app["release"]
    # Had the port's first answer counted, the deploy would be back before health.txt exists.
    assert fetch(app, "/health.txt", retry=()) == (200, "ok\n")

    # A release whose readiness path never answers 2xx: the deploy fails, v1 keeps serving.
    broken = deploy(client, source, expect=503, name="health", buildCommand=None,
                    startCommand="exec python3 -m http.server 8000",
                    readinessPath="/missing", readinessTimeoutSeconds=3)
    message = broken["error"]["message"]
    assert "keeps release " + app["releaseId"] in message, broken
    assert "GET /missing on port 8000 answered 404" in message, broken
    assert "with 2xx or 3xx; app health keeps release" in message, broken
    assert "(not ready within 3 s)" in message, broken
    now = get(client, app["id"])
    assert now["releaseId"] == app["releaseId"] and now["status"] == "ready", now
    assert [r["releaseId"] for r in now["replicaSandboxes"]] == [app["releaseId"]], now
    assert fetch(app, "/health.txt", retry=()) == (200, "ok\n")
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204


def test_a_replica_that_never_becomes_ready_is_restarted_with_backoff(client, source):
    # 0 replicas deploy at once; the scale's replica then never passes its check.
    app = deploy(client, source, name="never", buildCommand=None, replicas=0,
                 startCommand="exec python3 -m http.server 8000",
                 readinessPath="/missing", readinessTimeoutSeconds=4)
    assert app["status"] == "stopped", app
    status, scaled = client.api("POST", "/v1/apps/%s/scale" % app["id"], {"replicas": 1})
    assert status == 200 and scaled["readyReplicas"] == 0, scaled
    seen = set()
    deadline = time.monotonic() + 150
    while True:
        now = get(client, app["id"])
        seen.update(r["sandboxId"] for r in now["replicaSandboxes"])
        if now["restarts"] >= 2 and len(seen) >= 2:
            break
        assert time.monotonic() < deadline, now
        time.sleep(1)
    assert now["status"] == "failing" and now["readyReplicas"] == 0, now
    assert "GET /missing on port 8000 answered 404" in now["statusMessage"], now
    assert "failed in a row" in now["statusMessage"], now
    assert_matches(SPEC, schema(SPEC, "App"), now)
    # Never ready: never routed.
    assert fetch(now, "/index.html", retry=())[0] == 503
    # The replicas' output shows the checks they failed.
    deadline = time.monotonic() + 60
    while True:
        status, logs = client.api("GET", "/v1/apps/%s/logs" % app["id"])
        assert status == 200, logs
        if any('"GET /missing HTTP/1.1" 404' in item["stderr"] for item in logs["items"]):
            break
        assert time.monotonic() < deadline, logs
        time.sleep(1)
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204


def test_bad_readiness_settings_are_refused(client, source):
    for fields, field in (({"readinessPath": "health"}, "readinessPath"),
                          ({"readinessPath": "/a b"}, "readinessPath"),
                          ({"readinessPath": 7}, "readinessPath"),
                          ({"readinessTimeoutSeconds": 0}, "readinessTimeoutSeconds"),
                          ({"readinessTimeoutSeconds": 601}, "readinessTimeoutSeconds")):
        body = deploy(client, source, expect=400, buildCommand=None, **fields)
        assert body["error"]["field"] == field, body
    assert client.api("GET", "/v1/apps")[1]["items"] == []


def test_requests_go_to_the_replica_with_the_fewest_open_connections(client, source):
    app = deploy(client, source, name="spread", buildCommand=None, replicas=2,
                 startCommand="exec python3 server.py", readinessPath="/")
    app = wait_ready(client, app["id"], 2)
    # Idle replicas take turns.
    first = {fetch(app, "/", retry=())[1] for _ in range(6)}
    assert len(first) == 2, first
    # One request held open on a replica: the next ones all go to the other.
    held = []
    holder = threading.Thread(target=lambda: held.append(fetch(app, "/slow?s=6", retry=())))
    holder.start()
    time.sleep(1)
    during = []
    for _ in range(6):
        during.append(fetch(app, "/", retry=()))
        time.sleep(0.2)  # the ingress lets go of the finished connection
    holder.join()
    assert held and held[0][0] == 200, held
    assert all(status == 200 for status, _ in during), during
    others = {body for _, body in during}
    assert others == first - {held[0][1]}, (others, held)

    # Each replica's latest output: its own id and the requests it served.
    status, logs = client.api("GET", "/v1/apps/%s/logs" % app["id"])
    assert status == 200 and len(logs["items"]) == 2, logs
    for item in logs["items"]:
        assert_matches(SPEC, schema(SPEC, "AppReplicaLog"), item)
        assert item["state"] == "ready" and item["releaseId"] == app["releaseId"], item
        assert item["exitCode"] is None and not item["truncated"], item
    said = {line.split()[1] for item in logs["items"] for line in item["stdout"].splitlines()
            if line.startswith("replica ")}
    assert said == first, (said, first)
    deadline = time.monotonic() + 20  # the running sandbox's output arrives in chunks
    while not any('"GET /slow?s=6 HTTP/1.1" 200' in item["stdout"] for item in logs["items"]):
        assert time.monotonic() < deadline, logs
        time.sleep(1)
        logs = client.api("GET", "/v1/apps/%s/logs" % app["id"])[1]
    p = client.cli("app", "logs", app["id"])
    assert p.returncode == 0, p.stderr
    for item in logs["items"]:
        assert "== %s (ready, release %s) ==" % (item["sandboxId"], app["releaseId"]) in p.stdout
    assert all(("replica " + one) in p.stdout for one in first), p.stdout
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204


def test_logs_of_another_organizations_app_are_refused(d, client, source):
    app = deploy(client, source, name="mine", buildCommand=None, replicas=1)
    other = d.new_org()
    for app_id in (app["id"], "app_nosuchapp", "x" * 300):
        status, body = other.api("GET", "/v1/apps/%s/logs" % app_id)
        assert status == 404 and body["error"]["code"] == "not_found", (app_id, body)
    assert other.cli("app", "logs", app["id"]).returncode != 0
    status, logs = client.api("GET", "/v1/apps/%s/logs" % app["id"])
    assert status == 200 and len(logs["items"]) == 1, logs
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
    assert client.api("GET", "/v1/apps/%s/logs" % app["id"])[0] == 404
