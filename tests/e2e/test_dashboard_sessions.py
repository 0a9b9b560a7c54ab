"""Dashboard sessions are kept in adaptd's store (issue 21): a SIGKILLed adaptd started again
still knows every session, and still refuses the revoked and expired ones; a changed password
and a deleted key end theirs after the restart as before."""
import hashlib
import http.client
import json
import sqlite3
import time

import harness
from conftest import close_daemon

PASSWORD = "a dashboard password"


def raw(daemon, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def sign_in(daemon, credentials):
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30)
    try:
        conn.request("POST", "/dashboard/session", body=json.dumps(credentials),
                     headers={"Content-Type": "application/json", "X-Adapt-CSRF": "1"})
        resp = conn.getresponse()
        body = resp.read()
        assert resp.status == 200, body
        return resp.getheader("set-cookie").split(";")[0].split("=", 1)[1]
    finally:
        conn.close()


def reads(daemon, token):
    return raw(daemon, "GET", "/v1/sandboxes", headers={"Cookie": "adapt_session=" + token})[0]


def test_sessions_survive_a_sigkill_and_ended_ones_stay_ended():
    d = harness.Daemon()
    try:
        d.start()
        org = d.new_org()
        email = harness.unique("dash") + "@example.com"
        status, user = d.admin.api("POST", "/v1/orgs/%s/users" % org.org_id, {"email": email, "password": PASSWORD})
        assert status == 201, user
        by_password = sign_in(d, {"email": email, "password": PASSWORD})
        by_key = sign_in(d, {"apiKey": org.key})
        signed_out = sign_in(d, {"apiKey": org.key})
        to_expire = sign_in(d, {"apiKey": org.key})
        assert raw(d, "DELETE", "/dashboard/session",
                   headers={"Cookie": "adapt_session=" + signed_out, "X-Adapt-CSRF": "1"})[0] == 204
        for token in (by_password, by_key, to_expire):
            assert reads(d, token) == 200
        assert reads(d, signed_out) == 401

        d.kill()
        # Only the token's hash is kept; the one to expire is made older than its lifetime.
        db = sqlite3.connect(d.state_dir + "/adapt.db")
        try:
            kept = [r[0] for r in db.execute("SELECT token_hash FROM dashboard_sessions")]
            assert by_key not in kept and hashlib.sha256(by_key.encode()).hexdigest() in kept
            db.execute("UPDATE dashboard_sessions SET expires_at = ? WHERE token_hash = ?",
                       (int(time.time() * 1000) - 1, hashlib.sha256(to_expire.encode()).hexdigest()))
            db.commit()
        finally:
            db.close()
        d.start(port=d.port)

        # The same cookies, on the restarted adaptd.
        assert reads(d, by_password) == 200
        assert reads(d, by_key) == 200
        status, body = raw(d, "GET", "/dashboard/session", headers={"Cookie": "adapt_session=" + by_password})
        assert status == 200 and json.loads(body)["orgId"] == org.org_id
        assert reads(d, signed_out) == 401
        assert reads(d, to_expire) == 401
        # A change that needs the CSRF header still does with the cookie: a sandbox is made.
        status, body = raw(d, "POST", "/v1/sandboxes", json.dumps({"labels": {"name": "after-restart"}}),
                           {"Cookie": "adapt_session=" + by_key, "X-Adapt-CSRF": "1",
                            "Content-Type": "application/json"})
        assert status == 201, body
        d.created.append((org, json.loads(body)["id"]))

        # Ending them still works after the restart: the password changes, the key goes.
        status, body = d.admin.api("PUT", "/v1/users/%s/password" % user["id"], {"password": "a new long password"})
        assert status == 204, body
        assert reads(d, by_password) == 401
        status, keys = org.api("GET", "/v1/orgs/%s/keys" % org.org_id)
        assert status == 200, keys
        other = d.admin.api("POST", "/v1/orgs/%s/keys" % org.org_id, {"name": "second"})[1]
        assert d.admin.api("DELETE", "/v1/orgs/%s/keys/%s" % (org.org_id, keys["items"][0]["id"]))[0] == 204
        org.key = other["key"]
        assert reads(d, by_key) == 401
    finally:
        close_daemon(d)
