"""Deployed apps under the plan's replica limit, and apps' events in the organization's event
stream (issue 20). Only loopback (adaptd, the ingress) and the replicas' own addresses (in
namespaces adaptd made) are contacted."""

import http.client
import json

import harness
from test_apps import deploy, running, sh


d = harness.module_daemon()


def org_on_plan(d, plan_id, limits):
    status, plan = d.admin.api("PUT", "/v1/plans/" + plan_id, {"name": plan_id, "limits": limits})
    assert status == 200 and plan["limits"]["appReplicas"] == limits.get("appReplicas"), plan
    org = d.new_org()
    status, account = d.admin.api("PUT", "/v1/orgs/%s/plan" % org.org_id, {"planId": plan_id})
    assert status == 200, account
    return org


def app_events(client, until_type, timeout=60):
    """The organization's app events from its first event on (Last-Event-ID: 0), up to the first
    of type `until_type`."""
    conn = http.client.HTTPConnection("127.0.0.1", client.daemon.port, timeout=timeout)
    conn.request("GET", "/v1/events", headers={"Authorization": "Bearer " + client.key,
                                               "Accept": "text/event-stream",
                                               "Last-Event-ID": "0"})
    resp = conn.getresponse()
    assert resp.status == 200
    seen, kind, ident = [], None, None
    try:
        while True:
            line = resp.fp.readline().decode().rstrip("\r\n")
            if line.startswith("event: "):
                kind = line[len("event: "):]
            elif line.startswith("id: "):
                ident = line[len("id: "):]
            elif line.startswith("data: ") and kind == "app":
                data = json.loads(line[len("data: "):])
                assert ident, "app events carry an id so clients can resume"
                seen.append(data)
                if data["type"] == until_type:
                    return seen
    finally:
        conn.close()


def test_the_default_plan_allows_ten_replicas_per_app(d):
    org = d.new_org()
    status, plan = d.admin.api("GET", "/v1/plans/default")
    assert status == 200 and plan["limits"]["appReplicas"] == 10, plan
    status, account = org.api("GET", "/v1/account")
    assert status == 200 and account["plan"]["limits"]["appReplicas"] == 10, account
    sid = running(org)
    sh(org, sid, "mkdir -p /workspace/site && echo hi > /workspace/site/index.html")
    body = deploy(org, sid, expect=429, buildCommand=None, replicas=11)
    assert body["error"]["field"] == "replicas", body
    assert "limit app_replicas = 10" in body["error"]["message"], body
    body = deploy(org, sid, expect=400, buildCommand=None, replicas=-1)
    assert body["error"]["field"] == "replicas", body
    assert org.api("GET", "/v1/apps")[1]["items"] == []
    org.delete(sid)


def test_a_plans_replica_limit_refuses_deploys_and_scales_past_it(d):
    org = org_on_plan(d, "two-replicas", {"appReplicas": 2})
    sid = running(org)
    sh(org, sid, "mkdir -p /workspace/site && echo hi > /workspace/site/index.html")
    body = deploy(org, sid, expect=429, buildCommand=None, replicas=3)
    assert body["error"]["code"] == "resource_exhausted" and body["error"]["field"] == "replicas"
    assert "limit app_replicas = 2" in body["error"]["message"], body
    assert org.api("GET", "/v1/apps")[1]["items"] == [], "a refused deploy leaves nothing"
    app = deploy(org, sid, buildCommand=None, replicas=2)
    status, body = org.api("POST", "/v1/apps/%s/scale" % app["id"], {"replicas": 3})
    assert status == 429 and "limit app_replicas = 2" in body["error"]["message"], body
    now = org.api("GET", "/v1/apps/" + app["id"])[1]
    assert now["replicas"] == 2, "a refused scale changes nothing: %r" % now
    p = org.cli("app", "scale", app["id"], "3")
    assert p.returncode != 0 and "limit app_replicas = 2" in p.stderr, p.stdout + p.stderr
    status, body = org.api("POST", "/v1/apps/%s/scale" % app["id"], {"replicas": 1})
    assert status == 200 and body["replicas"] == 1, body
    assert org.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
    org.delete(sid)


def test_app_events_flow_in_the_organizations_event_stream(d):
    org = d.new_org()
    sid = running(org)
    sh(org, sid, "mkdir -p /workspace/site && echo hi > /workspace/site/index.html")
    app = deploy(org, sid, name="evt", buildCommand=None, replicas=1)
    broken = deploy(org, sid, expect=503, name="evt", buildCommand=None,
                    startCommand="exit 3", readinessTimeoutSeconds=5)
    assert "keeps release" in broken["error"]["message"], broken
    assert org.api("POST", "/v1/apps/%s/scale" % app["id"], {"replicas": 0})[0] == 200
    assert org.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
    seen = app_events(org, "app.deleted")
    assert {e["appId"] for e in seen} == {app["id"]}, seen
    types = [e["type"] for e in seen]
    ready = [e for e in seen if e["type"] == "replica.ready"]
    assert ready and ready[0]["replicaId"] == app["replicaSandboxes"][0]["sandboxId"], seen
    assert types.index("replica.ready") < types.index("app.deployed"), types
    failed = [e for e in seen if e["type"] == "replica.failed"]
    assert failed and failed[0]["replicaId"] and "exit code 3" in failed[0]["message"], seen
    assert "app.deploy_failed" in types and "app.scaled" in types, types
    assert types[-1] == "app.deleted", types
    for e in seen:
        assert e["at"] and isinstance(e["message"], str), e
    # Another organization's stream has none of them.
    other = d.new_org()
    other_sid = running(other)
    other.delete(other_sid)
    conn = http.client.HTTPConnection("127.0.0.1", other.daemon.port, timeout=3)
    conn.request("GET", "/v1/events", headers={"Authorization": "Bearer " + other.key,
                                               "Last-Event-ID": "0"})
    resp = conn.getresponse()
    text = b""
    try:
        while True:  # the history comes at once; then the stream idles until the timeout
            line = resp.fp.readline()
            if not line:
                break
            text += line
    except OSError:
        pass
    conn.close()
    assert b"event: status" in text and b"event: app" not in text, text[:2000]
    org.delete(sid)
