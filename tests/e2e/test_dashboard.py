"""The web dashboard (issue 21) against a real adaptd: its files and headers, its session
cookie and the CSRF rule for the API, and, in Debian's chromium driven by playwright-core
(tests/e2e/dashboard/dashboard.mjs), signing in, the live sandboxes table, the creation form,
commands, files, stop/start, delete, other organizations, sessions that end and XSS attempts.
Screenshots land in $ADAPT_E2E_ARTIFACTS (default: the test's tmp directory)."""
import atexit
import gzip
import http.client
import json
import os
import shutil
import subprocess
import tempfile
import time

import harness

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WEB = os.path.join(REPO, "web")
SCRIPT = os.path.join(os.path.dirname(__file__), "dashboard", "dashboard.mjs")
# playwright-core needs Node 20 or later; Debian 12's is 18, so the Node 22 that the MCP tests
# pin (tests/mcp/install.sh) runs the script when it is there.
PINNED_NODE = os.path.join(REPO, "tests", "mcp", "node_modules", ".bin", "node")
NODE = PINNED_NODE if os.access(PINNED_NODE, os.X_OK) else "node"
PASSWORD = "a dashboard password"
NO_NETLINK = os.path.join(os.path.dirname(__file__), "dashboard", "no_netlink.c")
_no_netlink = []
XSS_NAME = '<img src=x onerror="window.__xss=1">"><script>window.__xss=2</script>'


def browser_env(**values):
    """The environment of a browser script: this process's, `values`, and LD_PRELOAD of
    dashboard/no_netlink.c (built once per test process), so that the sandboxes' veths that the
    tests make and remove meanwhile do not fail Chromium's requests with ERR_NETWORK_CHANGED."""
    if not _no_netlink:
        out = tempfile.mkdtemp(prefix="adapt-no-netlink-")
        atexit.register(shutil.rmtree, out, True)
        lib = os.path.join(out, "no_netlink.so")
        subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o", lib, NO_NETLINK,
                        "-ldl"], check=True)
        _no_netlink.append(lib)
    return dict(os.environ, LD_PRELOAD=_no_netlink[0], **values)


def raw(daemon, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def sign_in(daemon, key):
    status, headers, body = raw(daemon, "POST", "/dashboard/session", json.dumps({"apiKey": key}),
                                {"Content-Type": "application/json", "X-Adapt-CSRF": "1"})
    assert status == 200, body
    cookie = headers["set-cookie"]
    return cookie.split(";")[0].split("=", 1)[1], cookie


def test_the_dashboard_is_served_with_a_strict_policy_and_an_etag(daemon):
    status, headers, body = raw(daemon, "GET", "/")
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
    assert b'<script type="module" src="/assets/app.js">' in body
    assert "'unsafe-inline'" not in headers["content-security-policy"]
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY" and headers["x-content-type-options"] == "nosniff"
    with open(os.path.join(WEB, "dist", "app.js"), "rb") as f:
        bundle = f.read()
    status, headers, body = raw(daemon, "GET", "/assets/app.js")
    assert status == 200 and body == bundle
    assert headers["content-type"] == "text/javascript; charset=utf-8"
    status, _, body = raw(daemon, "GET", "/assets/app.js", headers={"If-None-Match": headers["etag"]})
    assert status == 304 and body == b""
    status, headers, body = raw(daemon, "GET", "/assets/app.js", headers={"Accept-Encoding": "gzip"})
    assert status == 200 and headers["content-encoding"] == "gzip" and gzip.decompress(body) == bundle
    assert raw(daemon, "GET", "/assets/missing.js")[0] == 404


def test_the_session_cookie_reads_the_api_and_changes_it_only_with_the_csrf_header(daemon, org):
    token, cookie = sign_in(daemon, org.key)
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "; Secure" not in cookie
    jar = {"Cookie": "adapt_session=" + token}
    status, _, body = raw(daemon, "GET", "/v1/sandboxes", headers=jar)
    assert status == 200 and json.loads(body)["items"] == []
    # What a cross-site form could send: the cookie without the header. Nothing is created.
    status, _, body = raw(daemon, "POST", "/v1/sandboxes", b"{}", dict(jar, **{"Content-Type": "application/json"}))
    assert status == 403 and b"X-Adapt-CSRF" in body
    assert org.list_all() == []
    # A sign-in without the header (login CSRF) is refused too.
    status, _, _ = raw(daemon, "POST", "/dashboard/session", json.dumps({"apiKey": org.key}),
                       {"Content-Type": "application/json"})
    assert status == 403
    # Signing out revokes the session at once; a made-up cookie is no session.
    assert raw(daemon, "DELETE", "/dashboard/session", headers=dict(jar, **{"X-Adapt-CSRF": "1"}))[0] == 204
    assert raw(daemon, "GET", "/v1/sandboxes", headers=jar)[0] == 401
    assert raw(daemon, "GET", "/v1/sandboxes", headers={"Cookie": "adapt_session=forged"})[0] == 401
    # The admin key's session acts for the admin organization without the admin's rights.
    token, _ = sign_in(daemon, daemon.admin.key)
    assert raw(daemon, "GET", "/v1/orgs", headers={"Cookie": "adapt_session=" + token})[0] == 403


def test_the_dashboard_in_a_browser(daemon, org, tmp_path):
    assert os.path.isdir(os.path.join(WEB, "node_modules", "playwright-core")), "run web/install.sh first"
    email = harness.unique("dash") + "@example.com"
    status, user = daemon.admin.api("POST", "/v1/orgs/%s/users" % org.org_id, {"email": email, "password": PASSWORD})
    assert status == 201, user
    other = daemon.new_org()
    hidden = other.create({"labels": {"name": "other-orgs-sandbox"}})
    printed = "<script>window.__xss=3</script><img src=x onerror=window.__xss=4>"
    xss = org.create({"labels": {"name": XSS_NAME, "note": "<b>bold</b>"},
                      "startup": {"mode": "command", "argv": ["/bin/sh", "-c", "printf '%s'" % printed]}})
    org.wait_for_status(xss["id"], ["completed"])
    secret_name, secret_value = "DASHBOARD_TOKEN", "s3cr3t-" + harness.unique("v")
    status, body = org.api("POST", "/v1/secrets", {"name": secret_name, "value": secret_value})
    assert status in (200, 201), body
    status, _, body, _ = org.request("PUT", "/v1/objects/content?key=reports/a.txt", raw=b"kept in a folder")
    assert status in (200, 201), body
    status, keys = org.api("GET", "/v1/orgs/%s/keys" % org.org_id)
    assert status == 200 and len(keys["items"]) == 1, keys
    artifacts = os.environ.get("ADAPT_E2E_ARTIFACTS") or str(tmp_path / "screenshots")
    os.makedirs(artifacts, exist_ok=True)
    form_name = harness.unique("from-form")
    env = browser_env(ADAPT_URL=daemon.url, WEB_DIR=WEB, ARTIFACTS=artifacts, EMAIL=email,
               PASSWORD=PASSWORD, API_KEY=org.key, XSS_NAME=XSS_NAME, XSS_ID=xss["id"],
               OTHER_ID=hidden["id"], FORM_NAME=form_name, SECRET_NAME=secret_name,
               SECRET_VALUE=secret_value, ORG_ID=org.org_id, KEY_ID=keys["items"][0]["id"])
    run = subprocess.run([NODE, SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    print(run.stdout)
    assert run.returncode == 0 and "ALL STEPS PASSED" in run.stdout, run.stdout + run.stderr
    # What the browser did, as the API sees it: the form's sandbox had the form's settings and
    # is deleted; the other organization's sandbox was untouched.
    form_id = [l.split("=", 1)[1] for l in run.stdout.splitlines() if l.startswith("FORM_ID=")][0]
    made = org.get(form_id)
    assert made["status"] == "deleted" and made["labels"] == {"name": form_name}
    assert made["memoryMiB"] == 512 and made["network"]["egress"] == "allowlist"
    assert made["network"]["allow"] == [{"protocol": "tcp", "address": "1.1.1.1", "port": 443}]
    assert made["network"]["dns"] == "1.1.1.1"
    assert other.get(hidden["id"])["status"] == "running"
    for name in ("sandboxes", "sandbox", "create-form", "sandboxes-360-dark", "secrets", "images",
                 "storage", "jobs", "account", "keys", "objects"):
        assert os.path.getsize(os.path.join(artifacts, name + ".png")) > 1000


PAGES_SCRIPT = os.path.join(os.path.dirname(__file__), "dashboard", "pages.mjs")
APP_START = "exec python3 -m http.server 8000"


def test_the_automations_apps_database_and_account_pages_in_a_browser(daemon, tmp_path):
    assert os.path.isdir(os.path.join(WEB, "node_modules", "playwright-core")), "run web/install.sh first"
    org = daemon.new_org()
    sbx = org.create({})
    sid = org.wait_for_status(sbx["id"], "running", 90)["id"]
    status, cmd = org.api("POST", "/v1/sandboxes/%s/commands" % sid,
                          {"command": "mkdir -p /workspace/site && echo hi > /workspace/site/index.html",
                           "timeoutSeconds": 60})
    assert status == 200 and cmd["exitCode"] == 0, cmd
    status, app = org.api("POST", "/v1/apps", {"sandboxId": sid, "name": "dash-web", "sourcePath": "/workspace/site",
                                               "startCommand": APP_START, "port": 8000})
    assert status == 201 and app["readyReplicas"] == 1, app
    name = harness.unique("report")
    status, automation = org.api("POST", "/v1/automations", {"sandboxId": sid, "name": name,
                                                             "intervalSeconds": 3600, "command": "echo report"})
    assert status == 201, automation
    status, _, body, _ = org.request("PUT", "/v1/objects/content?key=site-src/index.html", raw=b"<h1>a site</h1>")
    assert status in (200, 201), body
    # The usage chart has something to show once metering (every 30 s) charged the sandbox at
    # least 0.001 CPU-hours (3.6 s), the least the page's three decimals show as more than 0.
    deadline = time.monotonic() + 90
    while org.api("GET", "/v1/account/usage")[1]["total"]["cpuMilliseconds"] < 3600:
        assert time.monotonic() < deadline, "no usage metered in 90 s"
        time.sleep(2)
    artifacts = os.environ.get("ADAPT_E2E_ARTIFACTS") or str(tmp_path / "screenshots")
    os.makedirs(artifacts, exist_ok=True)
    env = browser_env(ADAPT_URL=daemon.url, WEB_DIR=WEB, ARTIFACTS=artifacts, API_KEY=org.key,
               AUTOMATION_NAME=name, AUTOMATION_ID=automation["id"], APP_NAME=app["name"], APP_URL=app["httpUrl"], RELEASE_ID=app["releaseId"],
               SITE_SOURCE="site-src/")
    run = subprocess.run([NODE, PAGES_SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    print(run.stdout)
    assert run.returncode == 0 and "ALL STEPS PASSED" in run.stdout, run.stdout + run.stderr
    # What the browser did, as the API sees it.
    assert org.api("GET", "/v1/automations/" + automation["id"])[0] == 404
    runs = org.api("GET", "/v1/runs?automationId=" + automation["id"])[1]["items"]
    assert [r["trigger"] for r in runs] == ["manual", "manual"], runs
    assert org.api("GET", "/v1/apps/" + app["id"])[0] == 404
    assert org.api("GET", "/v1/database")[1]["status"] == "ready"
    assert org.api("GET", "/v1/sites")[1]["items"] == []
    for shot in ("automations", "apps", "database", "sites", "account-usage", "account-360-dark"):
        assert os.path.getsize(os.path.join(artifacts, shot + ".png")) > 1000
