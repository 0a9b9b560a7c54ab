"""Deployed apps (issue 20): a build in the source sandbox, a packaged release, replicas behind
one hostname of the ingress, scaling, deletion, and the MCP tools through the official SDK
client. Only loopback (the ingress) and the replicas' own addresses (in namespaces adaptd
made) are contacted."""

import http.client
import json
import os
import time
import urllib.parse

import yaml

import harness
from harness import REPO
from mcp_support import sdk
from test_openapi import assert_matches, schema

SPEC = yaml.safe_load(open(os.path.join(REPO, "docs", "openapi.yaml")))

START = ("python3 -c \"import uuid; open('whoami.txt', 'w').write(str(uuid.uuid4()))\" && "
         "exec python3 -m http.server 8000")


d = harness.module_daemon()
client = harness.module_org


def running(client):
    sbx = client.create({})
    client.wait_for_status(sbx["id"], "running", 90)
    return sbx["id"]


def sh(client, sid, command):
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % sid,
                             {"command": command, "timeoutSeconds": 60})
    assert status == 200 and cmd["exitCode"] == 0, cmd
    return cmd["stdout"]


def fetch(app, path="/", retry=(502, 503), timeout=30):
    """A request to the ingress on loopback with the app's Host."""
    port = urllib.parse.urlsplit(app["httpUrl"]).port
    deadline = time.monotonic() + timeout
    while True:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            conn.putrequest("GET", path, skip_host=True)
            conn.putheader("Host", app["hostname"])
            conn.endheaders()
            r = conn.getresponse()
            status, data = r.status, r.read().decode()
        finally:
            conn.close()
        if status not in retry or time.monotonic() > deadline:
            return status, data
        time.sleep(0.5)


def wait_ready(client, app_id, n, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        status, app = client.api("GET", "/v1/apps/" + app_id)
        assert status == 200, app
        if app["readyReplicas"] == n and len(app["replicaSandboxes"]) == n:
            return app
        assert time.monotonic() < deadline, app
        time.sleep(0.5)


def replicas_seen(app, tries=18):
    seen = set()
    for _ in range(tries):
        status, body = fetch(app, "/whoami.txt")
        assert status == 200, body
        seen.add(body)
    return seen


def get(client, app_id):
    status, app = client.api("GET", "/v1/apps/" + app_id)
    assert status == 200, app
    return app


def deploy(client, sid, expect=201, **fields):
    body = {"sandboxId": sid, "name": "web", "sourcePath": "/workspace/site",
            "buildCommand": "echo built-by-build > built.txt", "startCommand": START,
            "port": 8000}
    body.update(fields)
    status, app = client.api("POST", "/v1/apps", body)
    if status == 202 and expect == 201:
        # The deploy outlasted the request's wait (a loaded machine): a client follows its
        # operation, as the SDKs and the CLI do.
        op = app
        deadline = time.monotonic() + 300
        while op["phase"] not in ("Completed", "Failed") and time.monotonic() < deadline:
            time.sleep(0.5)
            op = client.api("GET", "/v1/operations/" + op["id"])[1]
        assert op["phase"] == "Completed", (op, client.daemon.log_tail(80))
        status, app = client.api("GET", "/v1/apps/" + op["appId"])
        assert status == 200, app
        return app
    assert status == expect, (app, client.daemon.log_tail(80) if status >= 500 else "")
    return app


def test_deploy_fetch_scale_and_delete_leave_the_source_untouched(d, client):
    sid = running(client)
    sh(client, sid, "mkdir -p /workspace/site && echo hello > /workspace/site/index.html && "
                    "ln -s index.html /workspace/site/alias.html")
    app = deploy(client, sid)
    assert_matches(SPEC, schema(SPEC, "App"), app)
    assert app["id"].startswith("app_") and app["hostname"].startswith("web-"), app
    assert app["hostname"].endswith(".adapt.localhost"), app
    assert app["replicas"] == 1 and app["readyReplicas"] == 1, app
    release = app["release"]
    assert release["buildExitCode"] == 0 and len(release["sha256"]) == 64, release
    assert release["sourcePath"] == "/workspace/site" and release["port"] == 8000, release
    assert fetch(app, "/built.txt") == (200, "built-by-build\n")
    assert fetch(app, "/alias.html") == (200, "hello\n")
    # The replicas are sandboxes of their own: restricted, no expiry, labelled with the app.
    replica = client.get(app["replicaSandboxes"][0]["sandboxId"])
    assert replica["id"] != sid and replica["securityProfile"] == "restricted", replica
    assert replica["labels"]["platform.app"] == app["id"] and replica["expiresAt"] is None, replica

    for wanted in (3, 0, 2):
        status, scaled = client.api("POST", "/v1/apps/%s/scale" % app["id"], {"replicas": wanted})
        assert status == 200 and scaled["replicas"] == wanted, scaled
        assert_matches(SPEC, schema(SPEC, "App"), scaled)
        now = wait_ready(client, app["id"], wanted)
        if wanted:
            assert len(replicas_seen(now)) == wanted, "requests did not spread over the replicas"
        else:
            assert fetch(now, "/built.txt", retry=())[0] == 503
    gone = [r["sandboxId"] for r in now["replicaSandboxes"]]

    status, releases = client.api("GET", "/v1/apps/%s/releases" % app["id"])
    assert status == 200 and [r["id"] for r in releases["items"]] == [app["releaseId"]], releases
    assert_matches(SPEC, schema(SPEC, "AppRelease"), releases["items"][0])
    status, listed = client.api("GET", "/v1/apps")
    assert status == 200 and [a["id"] for a in listed["items"]] == [app["id"]], listed
    assert_matches(SPEC, schema(SPEC, "App"), listed["items"][0])

    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
    assert client.api("GET", "/v1/apps/" + app["id"])[0] == 404
    assert fetch(app, "/built.txt", retry=())[0] == 404
    for r in gone:
        client.wait_for_status(r, "deleted", 60)
    assert client.get(sid)["status"] == "running"
    assert sh(client, sid, "cat /workspace/site/built.txt /workspace/site/index.html") == \
        "built-by-build\nhello\n"
    client.delete(sid)


def test_a_failed_build_or_an_escaping_symlink_deploys_nothing(client):
    sid = running(client)
    sh(client, sid, "mkdir -p /workspace/site && echo hi > /workspace/site/index.html")
    app = deploy(client, sid, expect=400, buildCommand="echo boom-output; exit 3")
    assert app["error"]["field"] == "buildCommand", app
    assert "exited with code 3" in app["error"]["message"], app
    assert "boom-output" in app["error"]["message"], app
    for link in ("/etc/passwd", "../../etc/passwd"):
        sh(client, sid, "ln -sfn %s /workspace/site/leak" % link)
        app = deploy(client, sid, expect=400, buildCommand=None)
        assert app["error"]["field"] == "sourcePath", app
        assert "symlink pointing outside" in app["error"]["message"], app
    assert client.api("GET", "/v1/apps")[1]["items"] == []
    client.delete(sid)


def test_bad_input_and_other_organizations_ids(d, client):
    sid = running(client)
    sh(client, sid, "mkdir -p /workspace/site && echo hi > /workspace/site/index.html")
    for fields, field in (({"port": 0}, "port"), ({"replicas": -1}, "replicas"),
                          ({"replicas": 101}, "replicas"),
                          ({"sourcePath": "relative"}, "sourcePath"), ({"startCommand": ""}, "startCommand"),
                          ({"name": "Bad Name"}, "name"), ({"color": "red"}, "color")):
        body = deploy(client, sid, expect=400, **fields)
        assert body["error"]["field"] == field, body
        assert_matches(SPEC, schema(SPEC, "Error"), body)
    other = d.new_org()
    assert deploy(other, sid, expect=404)["error"]["code"] == "not_found"
    app = deploy(client, sid, buildCommand=None)
    for method, path, body in (("GET", "", None), ("POST", "/scale", {"replicas": 2}),
                               ("GET", "/releases", None), ("POST", "/rollback", {}),
                               ("DELETE", "", None)):
        status, answer = other.api(method, "/v1/apps/" + app["id"] + path, body)
        assert status == 404, (method, path, answer)
    assert client.api("POST", "/v1/apps/%s/scale" % app["id"], {"replicas": -1})[0] == 400
    assert client.api("POST", "/v1/apps/%s/scale" % app["id"], {"replicas": 11})[0] == 429
    assert client.api("GET", "/v1/apps/app_nosuchapp")[0] == 404
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
    client.delete(sid)


def test_the_mcp_tools_through_the_sdk_client(d, client):
    sid = running(client)
    sh(client, sid, "mkdir -p /workspace/site && echo hi > /workspace/site/index.html")
    calls = [["deploy_sandbox_app", {"sandbox_id": sid, "name": "mcpweb", "source_path": "/workspace/site",
                                     "build_command": "echo mcp-built > built.txt",
                                     "start_command": START, "port": 8000,
                                     "readiness_path": "/built.txt",
                                     "readiness_timeout_seconds": 60,
                                     "readiness_period_seconds": 2,
                                     "readiness_failure_threshold": 4}],
             ["list_public_apps", {}],
             ["deploy_sandbox_app", {"sandbox_id": sid, "name": "mcpweb", "start_command": START,
                                     "port": 8000, "replicas": 11}]]
    report = sdk(d, client, "http", "calls", calls)
    deployed, listed, too_many = report["calls"]
    assert not deployed["isError"] and deployed["schemaValid"], deployed
    app = deployed["structuredContent"]
    assert app["replicas"] == 1 and app["ready_replicas"] == 1 and app["build_exit_code"] == 0, app
    assert app["phase"] == "Completed" and app["operation_id"].startswith("op_"), app
    assert too_many["isError"], too_many
    assert "limit app_replicas = 10" in too_many["text"], too_many
    release = client.api("GET", "/v1/apps/" + app["app_id"])[1]["release"]
    assert release["readinessPath"] == "/built.txt", release
    assert release["readinessTimeoutSeconds"] == 60, release
    assert release["readinessPeriodSeconds"] == 2, release
    assert release["readinessFailureThreshold"] == 4, release
    assert not listed["isError"] and listed["schemaValid"], listed
    kinds = [(a["app_id"], a["kind"]) for a in listed["structuredContent"]["apps"]]
    assert (app["app_id"], "production") in kinds, kinds
    rest = client.api("GET", "/v1/apps/" + app["app_id"])[1]
    assert fetch(rest, "/built.txt") == (200, "mcp-built\n")

    report = sdk(d, client, "http", "calls", [
        ["scale_deployed_app", {"app_id": app["app_id"], "replicas": 0}],
        ["delete_deployed_app", {"app_id": app["app_id"]}],
        ["delete_deployed_app", {"app_id": app["app_id"]}]])
    scaled, deleted, again = report["calls"]
    assert not scaled["isError"] and scaled["structuredContent"]["replicas"] == 0, scaled
    assert not deleted["isError"] and deleted["structuredContent"]["deleted"] is True, deleted
    assert again["isError"], again
    assert client.get(sid)["status"] == "running"
    client.delete(sid)


# argv NUL-separated: only the server's own command line has "-m" and "http.server" apart.
KILL_SERVER = ("python3 -c \"import os; [os.kill(int(p), 9) for p in os.listdir('/proc') if p.isdigit() "
               "and b'-m\\x00http.server' in open('/proc/%s/cmdline' % p, 'rb').read()]\"")


def test_a_replica_whose_app_dies_is_replaced_while_the_url_answers(client):
    sid = running(client)
    sh(client, sid, "mkdir -p /workspace/site && echo hi > /workspace/site/index.html")
    app = deploy(client, sid, name="heal", buildCommand=None, replicas=2)
    app = wait_ready(client, app["id"], 2)
    victim = app["replicaSandboxes"][0]["sandboxId"]
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % victim,
                             {"command": KILL_SERVER, "timeoutSeconds": 30})
    assert status in (200, 202), cmd
    client.wait_for_status(victim, ["completed", "failed", "deleting", "deleted"], 60)
    # The other replica serves meanwhile (a refused connection falls through to it).
    assert fetch(app, "/index.html", retry=()) == (200, "hi\n")
    deadline = time.monotonic() + 120
    while True:
        now = client.api("GET", "/v1/apps/" + app["id"])[1]
        ids = [r["sandboxId"] for r in now["replicaSandboxes"] if r["state"] == "ready"]
        if len(ids) == 2 and victim not in ids:
            break
        assert time.monotonic() < deadline, now
        time.sleep(1)
    assert len(replicas_seen(now)) == 2
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
    client.delete(sid)


def test_the_cli_deploys_lists_scales_and_removes_an_app(client):
    sid = running(client)
    sh(client, sid, "mkdir -p /workspace/site && echo cli > /workspace/site/index.html")
    p = client.cli("app", "deploy", sid, "--name", "cliweb", "--source", "/workspace/site",
                   "--build", "echo cli-built > built.txt", "--start", START, "--port", "8000",
                   "--env", "GREETING=hi")
    assert p.returncode == 0, p.stderr
    assert "1/1 ready" in p.stdout and "build exit code" in p.stdout, p.stdout
    p = client.cli("--json", "app", "ls")
    assert p.returncode == 0, p.stderr
    [app] = [a for a in json.loads(p.stdout)["items"] if a["name"] == "cliweb"]
    assert fetch(app, "/built.txt") == (200, "cli-built\n")
    p = client.cli("app", "scale", app["id"], "2")
    assert p.returncode == 0 and "/2 ready" in p.stdout, p.stdout + p.stderr
    p = client.cli("app", "get", app["id"])
    assert p.returncode == 0 and json.loads(p.stdout)["replicas"] == 2, p.stdout
    p = client.cli("app", "scale", app["id"], "11")
    assert p.returncode != 0 and "limit app_replicas = 10" in p.stderr, p.stderr
    p = client.cli("app", "rm", app["id"])
    assert p.returncode == 0 and "deleted " + app["id"] in p.stdout, p.stdout
    assert client.cli("app", "get", app["id"]).returncode != 0
    client.delete(sid)


def test_a_redeploy_rolls_over_without_dropping_requests_and_a_broken_one_rolls_back(client):
    import threading
    sid = running(client)
    sh(client, sid, "mkdir -p /workspace/site && echo v1 > /workspace/site/index.html")
    app = deploy(client, sid, name="roll", buildCommand=None, replicas=2)
    first = app["releaseId"]
    answers, stop = [], threading.Event()

    def load():
        while not stop.is_set():
            try:
                answers.append(fetch(app, "/index.html", retry=()))
            except Exception as e:  # a dropped request counts as one, not as the loader's end
                answers.append(("error", repr(e)))
            time.sleep(0.05)

    loader = threading.Thread(target=load)
    loader.start()
    try:
        sh(client, sid, "echo v2 > /workspace/site/index.html")
        again = deploy(client, sid, name="roll", buildCommand=None, replicas=2)
        assert again["id"] == app["id"] and again["releaseId"] != first, again
        time.sleep(1)
        # A release whose app never listens: the deploy fails and the app keeps serving v2.
        broken = deploy(client, sid, expect=503, name="roll", buildCommand=None, replicas=1,
                        startCommand="sleep 1; exit 7")
        assert "keeps release " + again["releaseId"] in broken["error"]["message"], broken
        assert "exit code 7" in broken["error"]["message"], broken
        # Its replica ended before the wait did: no "within N seconds" is claimed.
        assert "accepted connections on port 8000; app roll keeps release" in \
            broken["error"]["message"], broken
        time.sleep(1)
    finally:
        stop.set()
        loader.join()
    bad = [a for a in answers if a[0] != 200]
    assert not bad, bad[:5]
    bodies = [a[1] for a in answers]
    # Where the answers changed, so that a failure shows the order of what was served.
    changes = [(i, b) for i, b in enumerate(bodies) if i == 0 or bodies[i - 1] != b]
    assert bodies[0] == "v1\n" and bodies[-1] == "v2\n", (len(bodies), changes[:20])
    now = client.api("GET", "/v1/apps/" + app["id"])[1]
    assert now["releaseId"] == again["releaseId"] and now["readyReplicas"] == 2, now
    releases = client.api("GET", "/v1/apps/%s/releases" % app["id"])[1]["items"]
    assert len(releases) == 3, releases

    status, back = client.api("POST", "/v1/apps/%s/rollback" % app["id"], {"releaseId": first})
    assert status == 200 and back["releaseId"] == first, back
    assert_matches(SPEC, schema(SPEC, "App"), back)
    assert fetch(app, "/index.html", retry=()) == (200, "v1\n")
    status, err = client.api("POST", "/v1/apps/%s/rollback" % app["id"], {"releaseId": "rel_nosuch"})
    assert status == 404 and err["error"]["field"] == "releaseId", err
    status, err = client.api("POST", "/v1/apps/%s/rollback" % app["id"], {})
    assert status == 409 and "has no release before" in err["error"]["message"], err
    p = client.cli("app", "rollback", app["id"])  # the CLI says the same
    assert p.returncode != 0 and "has no release before" in p.stderr, p.stdout + p.stderr
    p = client.cli("app", "rollback", app["id"], again["releaseId"])
    assert p.returncode == 0 and again["releaseId"] in p.stdout, p.stdout + p.stderr
    assert fetch(app, "/index.html", retry=()) == (200, "v2\n")
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
    client.delete(sid)
