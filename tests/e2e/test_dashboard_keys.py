"""The dashboard's API keys page and its sign-up form (issue 21), in Debian's chromium driven by
playwright-core (tests/e2e/dashboard/keys.mjs) against a real adaptd: a key made on the page
is shown once, copies, works, is never shown again, and stops at once when revoked after a
confirmation; "Create an account" is there only with --allow-signup, and /dashboard/signup
refuses without it. Screenshots land in $ADAPT_E2E_ARTIFACTS (default: the test's tmp
directory)."""
import http.client
import json
import os
import subprocess

import pytest

import harness
from conftest import close_daemon
from test_dashboard import NODE, WEB, browser_env

SCRIPT = os.path.join(os.path.dirname(__file__), "dashboard", "keys.mjs")
PASSWORD = "a keys page password"
CSRF = {"Content-Type": "application/json", "X-Adapt-CSRF": "1"}


def raw(daemon, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def browser(daemon, tmp_path, mode, **env):
    assert os.path.isdir(os.path.join(WEB, "node_modules", "playwright-core")), "run web/install.sh first"
    artifacts = os.environ.get("ADAPT_E2E_ARTIFACTS") or str(tmp_path / "screenshots")
    os.makedirs(artifacts, exist_ok=True)
    e = browser_env(ADAPT_URL=daemon.url, WEB_DIR=WEB, ARTIFACTS=artifacts, MODE=mode, PASSWORD=PASSWORD,
             **env)
    run = subprocess.run([NODE, SCRIPT], env=e, capture_output=True, text=True, timeout=600)
    print(run.stdout)
    assert run.returncode == 0 and "ALL STEPS PASSED" in run.stdout, run.stdout + run.stderr
    return run.stdout, artifacts


@pytest.fixture(scope="module")
def signup_daemon():
    d = harness.Daemon(extra_args=["--allow-signup"])
    d.start()
    yield d
    close_daemon(d)


def test_the_keys_page_in_a_browser(daemon, org, tmp_path):
    email = harness.unique("keys-page") + "@example.com"
    status, user = daemon.admin.api("POST", "/v1/orgs/%s/users" % org.org_id, {"email": email, "password": PASSWORD})
    assert status == 201, user
    first = org.api("GET", "/v1/keys")[1]["items"]
    assert len(first) == 1
    _, artifacts = browser(daemon, tmp_path, "keys", EMAIL=email, KEY_ID=first[0]["id"])
    # What the browser did, as the API sees it: the revoked key is gone, the markup-named one
    # is there under its literal name, and the organization's first key was never touched.
    names = sorted(k["name"] for k in org.api("GET", "/v1/keys")[1]["items"])
    assert names == sorted(['<img src=x onerror="window.__xss=1">', first[0]["name"]]), names
    for shot in ("keys-created", "keys"):
        assert os.path.getsize(os.path.join(artifacts, shot + ".png")) > 1000


def test_without_allow_signup_the_sign_up_route_refuses_and_makes_nothing(daemon):
    status, _, body = raw(daemon, "GET", "/dashboard/signup")
    assert status == 200 and json.loads(body) == {"allowSignup": False}
    email = harness.unique("nosignup") + "@example.com"
    status, _, body = raw(daemon, "POST", "/dashboard/signup", json.dumps({"email": email, "password": PASSWORD}),
                          CSRF)
    assert status == 403 and json.loads(body)["error"]["code"] == "permission_denied", body
    users = daemon.admin.api("GET", "/v1/users?limit=200")[1]["items"]
    assert email not in [u["email"] for u in users]


def test_sign_up_from_the_dashboard(signup_daemon, tmp_path):
    d = signup_daemon
    # Refused before anything is made or counted: no CSRF header, bad email, short password.
    assert raw(d, "POST", "/dashboard/signup", json.dumps({"email": "a@example.com", "password": PASSWORD}),
               {"Content-Type": "application/json"})[0] == 403
    for body, field in (({"email": "not-an-email", "password": PASSWORD}, "email"),
                        ({"email": "a@example.com", "password": "short"}, "password"),
                        ({"email": "a@example.com"}, "password"),
                        ({"email": "a@example.com", "password": PASSWORD, "org": "org_admin"}, "org")):
        status, _, answer = raw(d, "POST", "/dashboard/signup", json.dumps(body), CSRF)
        assert status == 400 and json.loads(answer)["error"]["field"] == field, (body, answer)
    assert json.loads(raw(d, "GET", "/dashboard/signup")[2]) == {"allowSignup": True}
    email = harness.unique("signup") + "@example.com"
    out, artifacts = browser(d, tmp_path, "signup", SIGNUP_EMAIL=email)
    org_id = [l.split("=", 1)[1] for l in out.splitlines() if l.startswith("SIGNUP_ORG=")][0]
    users = [u for u in d.admin.api("GET", "/v1/users?orgId=" + org_id)[1]["items"]]
    assert [u["email"] for u in users] == [email]
    assert os.path.getsize(os.path.join(artifacts, "sign-up.png")) > 1000
    # The new account is unregistered: its session reads its keys (none) but makes none yet.
    status, resp, body = raw(d, "POST", "/dashboard/session", json.dumps({"email": email, "password": PASSWORD}),
                             CSRF)
    assert status == 200, body
    cookie = {"Cookie": resp["set-cookie"].split(";")[0]}
    status, _, body = raw(d, "GET", "/v1/keys", headers=cookie)
    assert status == 200 and json.loads(body)["items"] == []
    status, _, body = raw(d, "POST", "/v1/keys", b"{}", dict(cookie, **CSRF))
    assert status == 403 and b"not registered yet" in body, body
    # The Account page's Register makes it usable: its session then makes a key.
    browser(d, tmp_path, "register", SIGNUP_EMAIL=email)
    status, _, body = raw(d, "POST", "/v1/keys", b"{}", dict(cookie, **CSRF))
    assert status == 201, body
