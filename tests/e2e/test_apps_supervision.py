"""Deployed apps' supervision settings and its memory across restarts (issue 20): a deploy's
readinessPeriodSeconds and readinessFailureThreshold are kept on its release, shown, refused
out of bounds, and govern when a ready replica loses its traffic; a crash-looping app's
failures in a row, backoff and statusMessage survive adaptd killed with SIGKILL, and the count
goes on from where it was. Only loopback (the ingress, adaptd) and the replicas' own addresses
(in namespaces adaptd made) are contacted."""

import os
import time

import pytest
import yaml

import harness
from harness import REPO
from test_apps import deploy, get, running, sh, wait_ready
from test_apps_limits_events import app_events
from test_openapi import assert_matches, schema

SPEC = yaml.safe_load(open(os.path.join(REPO, "docs", "openapi.yaml")))

# /health.txt exists from the start.
START = "echo ok > health.txt && exec python3 -m http.server 8000"


d = harness.module_daemon()
client = harness.module_org


@pytest.fixture(scope="module")
def source(client):
    sid = running(client)
    sh(client, sid, "mkdir -p /workspace/site && echo hi > /workspace/site/index.html")
    yield sid
    client.delete(sid)


def test_readiness_settings_default_and_are_kept_on_the_release(client, source):
    app = deploy(client, source, name="plain", buildCommand=None, startCommand=START)
    assert app["release"]["readinessPeriodSeconds"] == 5, app["release"]
    assert app["release"]["readinessFailureThreshold"] == 3, app["release"]
    # The CLI sets both; GET /v1/apps/{id} and its releases show them.
    p = client.cli("app", "deploy", source, "--name", "plain", "--source", "/workspace/site",
                   "--start", START, "--port", "8000", "--readiness-path", "/health.txt",
                   "--readiness-period", "2", "--readiness-threshold", "4")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "GET /health.txt every 2 s, unready after 4 failures in a row" in p.stdout, p.stdout
    now = get(client, app["id"])
    assert_matches(SPEC, schema(SPEC, "App"), now)
    assert now["releaseId"] != app["releaseId"], "other settings are another release"
    assert now["release"]["readinessPeriodSeconds"] == 2, now["release"]
    assert now["release"]["readinessFailureThreshold"] == 4, now["release"]
    status, releases = client.api("GET", "/v1/apps/%s/releases" % app["id"])
    assert status == 200, releases
    assert [(r["readinessPeriodSeconds"], r["readinessFailureThreshold"])
            for r in releases["items"]] == [(2, 4), (5, 3)], releases
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204


def test_bad_readiness_settings_are_refused_and_change_nothing(client, source):
    for fields, field in (({"readinessPeriodSeconds": 0}, "readinessPeriodSeconds"),
                          ({"readinessPeriodSeconds": 301}, "readinessPeriodSeconds"),
                          ({"readinessPeriodSeconds": "5"}, "readinessPeriodSeconds"),
                          ({"readinessPeriodSeconds": 1.5}, "readinessPeriodSeconds"),
                          ({"readinessFailureThreshold": 0}, "readinessFailureThreshold"),
                          ({"readinessFailureThreshold": 11}, "readinessFailureThreshold"),
                          ({"readinessFailureThreshold": None, "readinessPeriodSeconds": -1},
                           "readinessPeriodSeconds")):
        body = deploy(client, source, expect=400, buildCommand=None, **fields)
        assert body["error"]["code"] == "invalid_argument", body
        assert body["error"]["field"] == field, body
    p = client.cli("app", "deploy", source, "--start", START, "--port", "8000",
                   "--readiness-threshold", "11")
    assert p.returncode != 0 and "readinessFailureThreshold must be from 1 to 10" in p.stderr, (
        p.stdout + p.stderr)
    assert client.api("GET", "/v1/apps")[1]["items"] == []


def test_the_threshold_decides_when_a_ready_replica_loses_its_traffic(d):
    # Its own organization: its event stream holds only this app's events.
    org = d.new_org()
    sid = running(org)
    sh(org, sid, "mkdir -p /workspace/site && echo hi > /workspace/site/index.html")
    app = deploy(org, sid, name="strict", buildCommand=None, startCommand=START,
                 readinessPath="/health.txt", readinessPeriodSeconds=1,
                 readinessFailureThreshold=1)
    app = wait_ready(org, app["id"], 1)
    victim = app["replicaSandboxes"][0]["sandboxId"]
    sh(org, victim, "rm /workspace/health.txt")
    # One failed check is enough (the default would want 3).
    events = app_events(org, "replica.unready", timeout=120)
    unready = events[-1]
    assert unready["replicaId"] == victim, events
    assert "GET /health.txt on port 8000 answered 404 (1 checks in a row)" in unready["message"], (
        unready)
    now = get(org, app["id"])
    assert now["status"] == "failing" and now["readyReplicas"] == 0, now
    assert "replica %s failed its readiness check" % victim in now["statusMessage"], now
    # Passing again brings it back.
    sh(org, victim, "echo ok > /workspace/health.txt")
    wait_ready(org, app["id"], 1, timeout=60)
    assert org.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
    org.delete(sid)


def test_a_crash_looping_apps_failures_and_backoff_survive_adaptd_killed(d, client, source):
    app = deploy(client, source, name="crashloop", buildCommand=None, replicas=0,
                 startCommand="echo about to fail; exit 7")
    status, scaled = client.api("POST", "/v1/apps/%s/scale" % app["id"], {"replicas": 1})
    assert status == 200, scaled
    deadline = time.monotonic() + 180
    while True:
        before = get(client, app["id"])
        if before["restarts"] >= 3:
            break
        assert time.monotonic() < deadline, before
        time.sleep(0.5)
    assert before["status"] == "failing", before
    assert "exit code 7" in before["statusMessage"], before
    d.kill()
    d.start(port=d.port)
    # What the app's supervision knew is still there: the count, why, and the backoff.
    after = get(client, app["id"])
    assert_matches(SPEC, schema(SPEC, "App"), after)
    assert after["restarts"] >= before["restarts"], (before, after)
    assert after["status"] == "failing", after
    assert "exit code 7" in after["statusMessage"], after
    assert "%d failed in a row" % after["restarts"] in after["statusMessage"], after
    # And the count goes on from there, not from 0.
    deadline = time.monotonic() + 180
    while get(client, app["id"])["restarts"] <= before["restarts"]:
        assert time.monotonic() < deadline, get(client, app["id"])
        time.sleep(0.5)
    status, logs = client.api("GET", "/v1/apps/%s/logs" % app["id"])
    assert status == 200, logs
    assert any("about to fail" in item["stdout"] for item in logs["items"]), logs
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
