"""Deployed apps' operations and crash safety (issue 20): a deploy or a rollback that outlasts
its wait answers 202 with its operation (GET /v1/operations/{id}, kind app.deploy or
app.rollback); adaptd SIGKILLed during a redeploy, a rollback or a scale comes back to a
consistent app (the previous release serving, the operation Failed, the wanted replicas ready,
no orphan replica sandbox); adaptd stopped during a long build ends without waiting for it,
the deploy Failed saying so; a ready replica that fails its readiness check three times in a row
loses its traffic until it passes again; and an app's secrets reach its replicas by name and
never show in its answers or logs. Only loopback (the ingress) and the replicas' own addresses
(in namespaces adaptd made) are contacted."""

import json
import os
import time

import pytest
import yaml

import harness
from harness import REPO
from test_apps import deploy, fetch, get, running, sh, wait_ready
from test_openapi import assert_matches, schema

SPEC = yaml.safe_load(open(os.path.join(REPO, "docs", "openapi.yaml")))

# Each replica writes its own id; /health.txt exists from the start.
START = ("python3 -c \"import uuid; open('whoami.txt', 'w').write(str(uuid.uuid4()))\" && "
         "echo ok > health.txt && exec python3 -m http.server 8000")
# The port answers at once, /health.txt only after 30 s: a deploy of it stays under way, past
# the CLI's 20 s server-side wait. BRIEF: under way for a few seconds, where that is enough.
SLOW = "python3 -m http.server 8000 & sleep 30; echo ok > health.txt; wait"
BRIEF = "python3 -m http.server 8000 & sleep 6; echo ok > health.txt; wait"


d = harness.module_daemon()
client = harness.module_org


@pytest.fixture(scope="module")
def source(client):
    sid = running(client)
    sh(client, sid, "mkdir -p /workspace/site && echo v1 > /workspace/site/index.html")
    yield sid
    client.delete(sid)


def operation(client, op_id, until=None, timeout=240):
    """The operation, once `until(op)` holds (without: as it is)."""
    deadline = time.monotonic() + timeout
    while True:
        status, op = client.api("GET", "/v1/operations/" + op_id)
        assert status == 200, op
        if until is None or until(op):
            return op
        assert time.monotonic() < deadline, op
        time.sleep(0.1)


def ended(op):
    return op["phase"] in ("Completed", "Failed")


def labelled(client, app_id):
    """The organization's live sandboxes labelled for the app."""
    out = set()
    for s in client.list_all():
        if s.get("labels", {}).get("platform.app") == app_id and s["status"] in (
                "provisioning", "running"):
            out.add(s["id"])
    return out


def settled(client, app_id, n, release_id, timeout=180):
    """Waits until the app serves `release_id` on n ready replicas and no other live sandbox
    carries its label; returns the app."""
    deadline = time.monotonic() + timeout
    while True:
        app = get(client, app_id)
        ids = {r["sandboxId"] for r in app["replicaSandboxes"]}
        if (app["releaseId"] == release_id and app["readyReplicas"] == n and len(ids) == n
                and all(r["releaseId"] == release_id for r in app["replicaSandboxes"])
                and labelled(client, app_id) == ids):
            return app
        assert time.monotonic() < deadline, (app, labelled(client, app_id))
        time.sleep(1)


def test_a_deploy_that_outlasts_its_wait_answers_its_operation(d, client, source):
    app = deploy(client, source, expect=202, name="slow", buildCommand=None, startCommand=BRIEF,
                 readinessPath="/health.txt", readinessTimeoutSeconds=120, waitSeconds=0)
    assert_matches(SPEC, schema(SPEC, "Operation"), app)
    assert app["kind"] == "app.deploy" and app["phase"] == "Running", app
    assert app["sandboxId"] == source and app["appId"].startswith("app_"), app
    # Another organization cannot see it.
    assert d.new_org().api("GET", "/v1/operations/" + app["id"])[0] == 404
    op = operation(client, app["id"], ended)
    assert op["phase"] == "Completed" and op["error"] is None, op
    assert op["releaseId"].startswith("rel_") and op["finishedAt"], op
    now = get(client, op["appId"])
    assert now["releaseId"] == op["releaseId"] and now["readyReplicas"] == 1, now
    assert fetch(now, "/health.txt", retry=()) == (200, "ok\n")
    # The CLI waits by polling the operation; --no-wait prints it.
    p = client.cli("--json", "app", "deploy", source, "--name", "slow", "--source",
                   "/workspace/site", "--start", BRIEF, "--port", "8000", "--readiness-path",
                   "/health.txt", "--no-wait")
    assert p.returncode == 0, p.stderr
    printed = json.loads(p.stdout)
    assert printed["kind"] == "app.deploy" and printed["appId"] == now["id"], printed
    operation(client, printed["id"], ended)
    # A new release (another timeout) that outlasts the server's 20 s wait: the CLI polls.
    p = client.cli("app", "deploy", source, "--name", "slow", "--source", "/workspace/site",
                   "--start", SLOW, "--port", "8000", "--readiness-path", "/health.txt",
                   "--readiness-timeout", "100")
    assert p.returncode == 0 and "1/1 ready" in p.stdout, p.stdout + p.stderr
    assert get(client, now["id"])["release"]["readinessTimeoutSeconds"] == 100
    for bad in ({"waitSeconds": -1}, {"waitSeconds": 601}, {"waitSeconds": "x"}):
        body = deploy(client, source, expect=400, name="slow", **bad)
        assert body["error"]["field"] == "waitSeconds", body
    assert client.api("DELETE", "/v1/apps/" + now["id"])[0] == 204


def test_adaptd_killed_during_a_redeploy_keeps_the_previous_release(d, client, source):
    app = deploy(client, source, name="crash", buildCommand=None, startCommand=START,
                 replicas=2, sourcePath="/workspace/site")
    first = app["releaseId"]
    wait_ready(client, app["id"], 2)
    sh(client, source, "echo v2 > /workspace/site/index.html")
    started = deploy(client, source, expect=202, name="crash", buildCommand=None,
                     startCommand=SLOW, replicas=2, readinessPath="/health.txt",
                     sourcePath="/workspace/site", waitSeconds=0)
    # Packaged, its replicas starting (never ready within 30 s): adaptd dies.
    op = operation(client, started["id"], lambda o: o.get("releaseId") or ended(o))
    assert op["phase"] == "Running", op
    d.kill()
    d.start(port=d.port)
    op = operation(client, started["id"], ended, timeout=60)
    assert op["phase"] == "Failed", op
    assert "adaptd restarted during the deploy" in op["error"], op
    assert "keeps release " + first in op["error"], op
    now = settled(client, app["id"], 2, first)
    assert fetch(now, "/index.html", retry=(502, 503)) == (200, "v1\n")
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
    sh(client, source, "echo v1 > /workspace/site/index.html")


def rollback(client, app_id, expect, **body):
    status, answer = client.api("POST", "/v1/apps/%s/rollback" % app_id, body)
    assert status == expect, answer
    return answer


def test_a_rollback_answers_its_operation_then_serves_the_older_release(d, client, source):
    app = deploy(client, source, name="rb", buildCommand=None, startCommand=START,
                 sourcePath="/workspace/site")
    first = app["releaseId"]
    sh(client, source, "echo v2 > /workspace/site/index.html")
    second = deploy(client, source, name="rb", buildCommand=None, startCommand=START,
                    sourcePath="/workspace/site")["releaseId"]
    assert second != first
    # Another organization's app id is unknown, and no operation is recorded for it.
    other = d.new_org()
    assert rollback(other, app["id"], 404, waitSeconds=0)["error"]["code"] == "not_found"
    started = rollback(client, app["id"], 202, waitSeconds=0)
    assert_matches(SPEC, schema(SPEC, "Operation"), started)
    assert started["kind"] == "app.rollback" and started["phase"] == "Running", started
    assert started["appId"] == app["id"] and started["releaseId"] == first, started
    assert other.api("GET", "/v1/operations/" + started["id"])[0] == 404
    # A rollout is under way: a second rollback or a scale waits for it.
    body = rollback(client, app["id"], 409, releaseId=second)
    assert "is being deployed or rolled back" in body["error"]["message"], body
    op = operation(client, started["id"], ended)
    assert op["phase"] == "Completed" and op["error"] is None and op["finishedAt"], op
    now = settled(client, app["id"], 1, first)
    assert fetch(now, "/index.html", retry=()) == (200, "v1\n")
    # The CLI: --no-wait prints the operation; without it, it waits and prints the app.
    p = client.cli("--json", "app", "rollback", app["id"], second, "--no-wait")
    assert p.returncode == 0, p.stderr
    printed = json.loads(p.stdout)
    assert printed["kind"] == "app.rollback" and printed["releaseId"] == second, printed
    assert operation(client, printed["id"], ended)["phase"] == "Completed"
    p = client.cli("app", "rollback", app["id"], first)
    assert p.returncode == 0 and first in p.stdout and "1/1 ready" in p.stdout, p.stdout + p.stderr
    assert fetch(get(client, app["id"]), "/index.html", retry=()) == (200, "v1\n")
    for bad in ({"waitSeconds": -1}, {"waitSeconds": 601}, {"waitSeconds": "x"}):
        body = rollback(client, app["id"], 400, **bad)
        assert body["error"]["field"] == "waitSeconds", body
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
    sh(client, source, "echo v1 > /workspace/site/index.html")


def test_adaptd_killed_during_a_rollback_keeps_the_recorded_release(d, client, source):
    # The older release becomes ready 30 s after its start: a rollback to it stays under way.
    app = deploy(client, source, name="rbcrash", buildCommand=None, startCommand=SLOW,
                 readinessPath="/health.txt", sourcePath="/workspace/site")
    slow = app["releaseId"]
    sh(client, source, "echo v2 > /workspace/site/index.html")
    fast = deploy(client, source, name="rbcrash", buildCommand=None, startCommand=START,
                  readinessPath="/health.txt", sourcePath="/workspace/site")["releaseId"]
    settled(client, app["id"], 1, fast)
    started = rollback(client, app["id"], 202, releaseId=slow, waitSeconds=0)
    # A replica of the older release exists (never ready within 30 s): adaptd dies.
    deadline = time.monotonic() + 60
    while not any(r["releaseId"] == slow for r in get(client, app["id"])["replicaSandboxes"]):
        assert time.monotonic() < deadline, get(client, app["id"])
        time.sleep(0.2)
    assert operation(client, started["id"])["phase"] == "Running"
    d.kill()
    d.start(port=d.port)
    op = operation(client, started["id"], ended, timeout=60)
    assert op["phase"] == "Failed", op
    assert "adaptd restarted during the rollback" in op["error"], op
    assert "keeps release " + fast in op["error"], op
    now = settled(client, app["id"], 1, fast)
    assert fetch(now, "/index.html", retry=(502, 503)) == (200, "v2\n")
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
    sh(client, source, "echo v1 > /workspace/site/index.html")


def test_adaptd_killed_during_a_new_apps_deploy_leaves_nothing(d, client, source):
    started = deploy(client, source, expect=202, name="crashnew", buildCommand=None,
                     startCommand=SLOW, readinessPath="/health.txt",
                     sourcePath="/workspace/site", waitSeconds=0)
    op = operation(client, started["id"], lambda o: o.get("releaseId") or ended(o))
    assert op["phase"] == "Running", op
    d.kill()
    d.start(port=d.port)
    op = operation(client, started["id"], ended, timeout=60)
    assert op["phase"] == "Failed" and "nothing was deployed" in op["error"], op
    assert client.api("GET", "/v1/apps/" + op["appId"])[0] == 404
    deadline = time.monotonic() + 60
    while labelled(client, op["appId"]):
        assert time.monotonic() < deadline, labelled(client, op["appId"])
        time.sleep(1)


def test_adaptd_killed_during_a_scale_comes_back_with_the_wanted_replicas(d, client, source):
    app = deploy(client, source, name="scale", buildCommand=None, startCommand=START,
                 sourcePath="/workspace/site")
    status, scaled = client.api("POST", "/v1/apps/%s/scale" % app["id"], {"replicas": 3})
    assert status == 200 and scaled["replicas"] == 3, scaled
    d.kill()
    d.start(port=d.port)
    now = settled(client, app["id"], 3, app["releaseId"])
    assert now["replicas"] == 3, now
    status, scaled = client.api("POST", "/v1/apps/%s/scale" % app["id"], {"replicas": 1})
    assert status == 200, scaled
    d.kill()
    d.start(port=d.port)
    settled(client, app["id"], 1, app["releaseId"])
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204


def test_a_replica_failing_its_checks_loses_its_traffic_until_it_passes(client, source):
    app = deploy(client, source, name="recheck", buildCommand=None, startCommand=START,
                 replicas=2, readinessPath="/health.txt", sourcePath="/workspace/site")
    app = wait_ready(client, app["id"], 2)
    victim = app["replicaSandboxes"][0]["sandboxId"]
    sh(client, victim, "rm /workspace/health.txt")
    deadline = time.monotonic() + 90
    while True:
        now = get(client, app["id"])
        states = {r["sandboxId"]: r["state"] for r in now["replicaSandboxes"]}
        if states.get(victim) == "unready":
            break
        assert time.monotonic() < deadline, now
        time.sleep(1)
    assert now["readyReplicas"] == 1 and now["status"] == "failing", now
    assert "GET /health.txt on port 8000 answered 404" in now["statusMessage"], now
    assert "takes no traffic" in now["statusMessage"], now
    assert_matches(SPEC, schema(SPEC, "App"), now)
    # Every request goes to the other replica; the victim's sandbox is kept.
    served = {fetch(now, "/whoami.txt", retry=())[1] for _ in range(12)}
    mine = sh(client, victim, "cat /workspace/whoami.txt")
    assert len(served) == 1 and mine not in served, (served, mine)
    sh(client, victim, "echo ok > /workspace/health.txt")
    deadline = time.monotonic() + 60
    while True:
        now = get(client, app["id"])
        if now["readyReplicas"] == 2 and victim in {r["sandboxId"] for r in now["replicaSandboxes"]}:
            break
        assert time.monotonic() < deadline, now
        time.sleep(1)
    assert now["status"] == "ready", now
    assert len({fetch(now, "/whoami.txt", retry=())[1] for _ in range(12)}) == 2
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204


def test_an_apps_secrets_reach_its_replicas_and_never_show(d, client, source):
    value = "app-secret-" + harness.unique("v")
    status, body = client.api("POST", "/v1/secrets", {"name": "APP_TOKEN", "value": value})
    assert status in (200, 201), body
    app = deploy(client, source, name="secret", buildCommand=None, sourcePath="/workspace/site",
                 secrets=["APP_TOKEN"],
                 startCommand="echo token=$APP_TOKEN; printf %s \"$APP_TOKEN\" > token.txt && "
                              "exec python3 -m http.server 8000")
    assert app["release"]["secrets"] == ["APP_TOKEN"], app["release"]
    assert fetch(app, "/token.txt", retry=()) == (200, value)
    for path in ("/v1/apps/" + app["id"], "/v1/apps/%s/releases" % app["id"],
                 "/v1/apps/%s/logs" % app["id"]):
        status, body = client.api("GET", path)
        assert status == 200 and value not in json.dumps(body), (path, body)
    logs = client.api("GET", "/v1/apps/%s/logs" % app["id"])[1]["items"]
    assert any("token=" in item["stdout"] for item in logs), logs
    assert value not in d.log_tail(100000)
    # Unknown, malformed or repeated names deploy nothing.
    for secrets, field in ((["NO_SUCH_SECRET"], "secrets[0]"), (["bad-name"], "secrets[0]"),
                           (["APP_TOKEN", "APP_TOKEN"], "secrets[1]"), ("APP_TOKEN", "secrets")):
        body = deploy(client, source, expect=400, name="secret2", secrets=secrets)
        assert body["error"]["field"] == field, body
    # Another organization's secret of that name is not this one's.
    other = d.new_org()
    sid = running(other)
    body = deploy(other, sid, expect=400, name="secret", buildCommand=None, secrets=["APP_TOKEN"])
    assert body["error"]["field"] == "secrets[0]", body
    other.delete(sid)
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204


def test_adaptd_stopped_during_a_build_ends_without_waiting_for_it(d, client, source):
    started = deploy(client, source, expect=202, name="longbuild",
                     buildCommand="echo building; sleep 300", buildTimeoutSeconds=600,
                     sourcePath="/workspace/site", waitSeconds=0)
    # The build runs in the source sandbox.
    deadline = time.monotonic() + 60
    while "sleep 300" not in sh(client, source, "ps -eo args"):
        assert time.monotonic() < deadline, "the build never started"
        time.sleep(0.2)
    # SIGTERM: adaptd ends without waiting out the build (its own SIGKILL would say -9).
    assert d.stop(timeout=120) == 0, d.log_tail(80)
    d.start(port=d.port)
    op = operation(client, started["id"], ended, timeout=60)
    assert op["phase"] == "Failed", op
    assert "adaptd stopped while buildCommand ran; nothing was deployed" in op["error"], op
    assert client.api("GET", "/v1/apps/" + op["appId"])[0] == 404
    sh(client, source, "pkill -f '^sleep 300$' || true")
