"""Users of organizations, end to end: the operator adds them (REST and `adapt user`), they sign
in with email and password on the OAuth authorize page (a real HTTP client filling its form),
failed sign-ins are rate-limited per email and per address, and with --allow-signup a person
creates an account: a new organization that stays unregistered, so tools and routes that create
or run something refuse it with one clear sentence until register_user."""

import http.client
import json
import re
import urllib.parse

import pytest

import harness
from conftest import close_daemon
from mcp_support import LATEST, initialize, post, rpc
from test_mcp_oauth import discover, form, http_call, path_of, pkce, register

PASSWORD = "correct horse battery staple"
NOT_REGISTERED = "This account is not registered yet: call register_user first."


class Authorization:
    """One client's authorization request on one adaptd: the page, its forms, the code."""

    def __init__(self, daemon):
        self.daemon = daemon
        self.resource, self.server = discover(daemon)
        self.client = register(daemon, self.server)
        self.verifier, self.challenge = pkce()
        self.path = path_of(self.server["authorization_endpoint"])
        self.params = {"response_type": "code", "client_id": self.client["client_id"],
                       "redirect_uri": self.client["redirect_uris"][0], "code_challenge": self.challenge,
                       "code_challenge_method": "S256", "state": "st-9",
                       "resource": self.resource["resource"], "scope": "mcp"}

    def page(self):
        status, headers, page = http_call(self.daemon, "GET", self.path + "?" + urllib.parse.urlencode(self.params))
        assert status == 200 and headers["content-type"].startswith("text/html"), (status, page)
        return page

    def submit(self, **fields):
        hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', self.page()))
        assert hidden["code_challenge"] == self.challenge
        return form(self.daemon, self.path, dict(hidden, **fields))

    def sign_in(self, email, password):
        return self.submit(email=email, password=password, action="sign_in")

    def sign_up(self, email, password):
        return self.submit(email=email, password=password, action="sign_up")

    def token(self, response):
        """The access token for the code in a 302 from the authorize page."""
        status, headers, page = response
        assert status == 302, (status, page)
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(headers["location"]).query))
        assert query["state"] == "st-9" and query["iss"] == self.server["issuer"]
        status, _, text = form(self.daemon, path_of(self.server["token_endpoint"]),
                               {"grant_type": "authorization_code", "code": query["code"],
                                "client_id": self.client["client_id"],
                                "redirect_uri": self.client["redirect_uris"][0],
                                "code_verifier": self.verifier})
        assert status == 200, text
        return json.loads(text)["access_token"]


def add_user(daemon, org_id, email, password=PASSWORD):
    status, user = daemon.admin.api("POST", "/v1/orgs/%s/users" % org_id, {"email": email, "password": password})
    assert status == 201, user
    return user


def call_tool(daemon, token, name, arguments=None):
    session, _ = initialize(daemon, token)
    return rpc(daemon, token, session, "tools/call", {"name": name, "arguments": arguments or {}})["result"]


@pytest.fixture(scope="module")
def signup_daemon():
    d = harness.Daemon(extra_args=["--allow-signup"])
    d.start()
    yield d
    d.delete_everything()
    close_daemon(d)


def test_the_operator_adds_and_lists_users_and_tenants_cannot(daemon, org):
    email = harness.unique("ada") + "@Example.com"
    # The CLI: adaptd chooses the password and it is printed once.
    out = daemon.admin.cli("user", "add", org.org_id, email)
    assert out.returncode == 0, out.stderr
    chosen = re.search(r"password: (\S+)", out.stdout).group(1)
    assert email.lower() in out.stdout and len(chosen) >= 20
    listed = daemon.admin.cli("user", "ls", "--org", org.org_id)
    assert listed.returncode == 0 and email.lower() in listed.stdout, listed
    status, page = daemon.admin.api("GET", "/v1/users?orgId=" + org.org_id)
    assert status == 200 and [u["email"] for u in page["items"]] == [email.lower()]
    assert "password" not in page["items"][0] and "scrypt" not in json.dumps(page)
    # The chosen password signs in.
    auth = Authorization(daemon)
    assert auth.sign_in(email, chosen)[0] == 302
    # Or the operator gives one on stdin.
    second = harness.unique("bea") + "@example.com"
    out = daemon.admin.cli("user", "add", org.org_id, second, "--password-stdin", input=PASSWORD + "\n")
    assert out.returncode == 0 and "password:" not in out.stdout, out
    assert auth.sign_in(second, PASSWORD)[0] == 302

    # Bad input changes nothing; a tenant's key may not manage users, even its own.
    for body, field in (({"email": "not-an-email"}, "email"), ({"email": "b@example.com", "password": "short"}, "password"),
                        ({"email": "b@example.com", "admin": True}, "admin"), ({}, "email")):
        status, err = daemon.admin.api("POST", "/v1/orgs/%s/users" % org.org_id, body)
        assert status == 400 and err["error"]["field"] == field, (body, err)
    status, err = daemon.admin.api("POST", "/v1/orgs/%s/users" % org.org_id, {"email": email})
    assert status == 409, err
    assert daemon.admin.api("POST", "/v1/orgs/org_nope/users", {"email": "c@example.com"})[0] == 404
    assert org.api("POST", "/v1/orgs/%s/users" % org.org_id, {"email": "d@example.com"})[0] == 403
    assert org.api("GET", "/v1/users")[0] == 403
    assert [u["email"] for u in daemon.admin.api("GET", "/v1/users?orgId=" + org.org_id)[1]["items"]] == [
        second, email.lower()]  # newest first


def test_a_user_signs_in_on_the_authorize_page_and_acts_for_its_organization(daemon, org):
    email = harness.unique("grace") + "@example.com"
    add_user(daemon, org.org_id, email)
    auth = Authorization(daemon)
    page = auth.page()
    assert 'name="email"' in page and 'name="password"' in page and 'name="api_key"' in page
    assert 'value="sign_up"' not in page  # sign-up is off unless the operator turns it on

    # A wrong password and an unknown email read the same.
    wrong = auth.sign_in(email, PASSWORD + "!")
    unknown = auth.sign_in(harness.unique("nobody") + "@example.com", PASSWORD)
    assert wrong[0] == unknown[0] == 401
    assert "do not match an account" in wrong[2] and "do not match an account" in unknown[2]
    assert "location" not in wrong[1]

    # Sign-up is refused here, and makes no organization.
    orgs_before = len(daemon.admin.api("GET", "/v1/orgs?limit=200")[1]["items"])
    status, _, text = auth.sign_up(harness.unique("new") + "@example.com", PASSWORD)
    assert status == 403 and "does not let anyone create an account" in text
    assert len(daemon.admin.api("GET", "/v1/orgs?limit=200")[1]["items"]) == orgs_before

    # The right password, however the email is written, gets a grant for the user's
    # organization, which the operator made: nothing is gated.
    token = auth.token(auth.sign_in("  " + email.upper(), PASSWORD))
    result = call_tool(daemon, token, "create_sandbox", {"name": "via-user"})
    assert result["isError"] is False, result
    sid = result["structuredContent"]["sandbox_id"]
    daemon.created.append((org, sid))
    status, sandbox = org.api("GET", "/v1/sandboxes/" + sid)
    assert status == 200 and sandbox["labels"]["name"] == "via-user"


def test_another_organizations_user_gets_no_grant_for_this_one(daemon, org):
    other = daemon.new_org()
    sid = org.create({"labels": {"name": "mine"}})["id"]
    email = harness.unique("mallory") + "@example.com"
    add_user(daemon, other.org_id, email)
    auth = Authorization(daemon)
    # The page has no way to pick an organization: a sign-in acts for the user's own only.
    token = auth.token(auth.sign_in(email, PASSWORD))
    got = call_tool(daemon, token, "get_sandbox", {"sandbox_id": sid})
    assert got["isError"] is True and "not found" in got["content"][0]["text"]
    listed = call_tool(daemon, token, "list_sandboxes")
    assert sid not in json.dumps(listed)
    deleted = call_tool(daemon, token, "delete_sandbox", {"sandbox_id": sid})
    assert deleted["isError"] is True
    assert org.api("GET", "/v1/sandboxes/" + sid)[1]["status"] != "deleted"


def test_failed_sign_ins_are_limited_per_email_and_per_address(fresh_daemon):
    d = fresh_daemon
    target = d.new_org()
    email = harness.unique("target") + "@example.com"
    add_user(d, target.org_id, email)
    auth = Authorization(d)
    for i in range(5):
        assert auth.sign_in(email, "guess number %d" % i)[0] == 401, i
    # The sixth try is not even checked, the right password included; the page says when.
    status, headers, text = auth.sign_in(email, PASSWORD)
    assert status == 429 and "Too many failed sign-ins" in text, (status, text)
    assert int(headers["retry-after"]) > 60
    # An email without an account is limited the same way, so 429 tells nothing about it.
    ghost = harness.unique("ghost") + "@example.com"
    for i in range(5):
        assert auth.sign_in(ghost, "guess number %d" % i)[0] == 401, i
    assert auth.sign_in(ghost, PASSWORD)[0] == 429
    # The address: 20 failures across any emails, then even a fresh email waits.
    for i in range(10):
        assert auth.sign_in(harness.unique("spray") + "@example.com", PASSWORD)[0] == 401, i
    other = harness.unique("other") + "@example.com"
    add_user(d, target.org_id, other)
    status, _, text = auth.sign_in(other, PASSWORD)
    assert status == 429, (status, text)


def test_sign_up_makes_an_unregistered_account_that_may_only_read(signup_daemon):
    d = signup_daemon
    auth = Authorization(d)
    assert 'value="sign_up"' in auth.page()
    email = harness.unique("newcomer") + "@example.com"
    token = auth.token(auth.sign_up(email, PASSWORD))
    users = d.admin.api("GET", "/v1/users?limit=200")[1]["items"]
    org_id = [u["orgId"] for u in users if u["email"] == email][0]

    # MCP: tools that create or run something refuse with one sentence; reads work.
    for name, arguments in (("create_sandbox", {}), ("run_command", {"sandbox_id": "sbx_x", "command": "true"}),
                            ("create_persistent_storage", {"name": "data"})):
        result = call_tool(d, token, name, arguments)
        assert result["isError"] is True, (name, result)
        assert result["content"][0]["text"] == NOT_REGISTERED, (name, result)
    listed = call_tool(d, token, "list_sandboxes")
    assert listed["isError"] is False and listed["structuredContent"]["sandboxes"] == []
    assert call_tool(d, token, "list_sandbox_environments")["isError"] is False

    # REST, with a key the operator made for it: reads work, writes are a 403 in API.md's format.
    status, key = d.admin.api("POST", "/v1/orgs/%s/keys" % org_id, {"name": "k"})
    assert status == 201
    tenant = harness.Client(d, key["key"], org_id)
    assert tenant.api("GET", "/v1/sandboxes")[0] == 200
    status, err = tenant.api("POST", "/v1/sandboxes", {})
    assert status == 403, err
    assert err["error"] == {"code": "permission_denied",
                            "message": "this account is not registered yet: call POST /v1/account/register first"}
    assert tenant.api("GET", "/v1/sandboxes")[1]["items"] == []

    # The same person signs in again to the same organization; a second sign-up with the email
    # is refused and makes no organization; so is a short password.
    again = Authorization(d)
    token2 = again.token(again.sign_in(email, PASSWORD))
    assert call_tool(d, token2, "create_sandbox")["content"][0]["text"] == NOT_REGISTERED
    orgs = len(d.admin.api("GET", "/v1/orgs?limit=200")[1]["items"])
    status, _, text = again.sign_up(email.upper(), "another long password")
    assert status == 409 and "sign in instead" in text
    status, _, text = again.sign_up(harness.unique("short") + "@example.com", "short")
    assert status == 400 and "at least 10 characters" in text
    assert len(d.admin.api("GET", "/v1/orgs?limit=200")[1]["items"]) == orgs
    # Four sign-up attempts from one address in 20 minutes: the fourth waits.
    status, headers, text = again.sign_up(harness.unique("fourth") + "@example.com", PASSWORD)
    assert status == 429 and int(headers["retry-after"]) > 0, (status, text)

    # An operator-made organization on the same adaptd is not gated.
    ops = d.new_org()
    add_user(d, ops.org_id, harness.unique("ops") + "@example.com")
    users = d.admin.api("GET", "/v1/users?orgId=" + ops.org_id)[1]["items"]
    third = Authorization(d)
    token3 = third.token(third.sign_in(users[0]["email"], PASSWORD))
    result = call_tool(d, token3, "create_persistent_storage", {"name": "data", "size_gib": 0.0625})
    assert result["isError"] is False, result


def raw(daemon, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def mcp_post_status(daemon, token):
    """The HTTP status /mcp answers an initialize with this bearer token."""
    return post(daemon, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"protocolVersion": LATEST, "capabilities": {},
                                    "clientInfo": {"name": "pytest", "version": "1"}}}, token)[0]


def dashboard(daemon, method, path, token=None, body=None):
    """A request as the dashboard sends it: its session cookie and the CSRF header."""
    headers = {"Content-Type": "application/json", "X-Adapt-CSRF": "1"}
    if token:
        headers["Cookie"] = "adapt_session=" + token
    status, headers, data = raw(daemon, method, path, None if body is None else json.dumps(body), headers)
    return status, headers, json.loads(data) if data else None


def dashboard_sign_in(daemon, email, password):
    status, headers, body = dashboard(daemon, "POST", "/dashboard/session",
                                      body={"email": email, "password": password})
    assert status == 200, body
    return headers["set-cookie"].split(";")[0].split("=", 1)[1]


def test_a_deleted_user_is_signed_out_everywhere_and_the_last_user_stays(daemon, org):
    first = add_user(daemon, org.org_id, harness.unique("first") + "@example.com")
    leaving = harness.unique("leaving") + "@example.com"
    user = add_user(daemon, org.org_id, leaving)
    auth = Authorization(daemon)
    token = auth.token(auth.sign_in(leaving, PASSWORD))
    session = dashboard_sign_in(daemon, leaving, PASSWORD)
    assert call_tool(daemon, token, "list_sandboxes")["isError"] is False
    assert dashboard(daemon, "GET", "/v1/sandboxes", session)[0] == 200

    # Another organization, and bad ids, reach nothing and change nothing.
    other = daemon.new_org()
    status, err = other.api("DELETE", "/v1/users/" + user["id"])
    assert status == 404 and err["error"]["code"] == "not_found", err
    assert other.api("DELETE", "/v1/users/usr_nope")[0] == 404
    assert other.api("DELETE", "/v1/users/" + "x" * 300)[0] in (400, 404)

    # The organization's own key deletes it: its grant and its dashboard session end at once.
    status, _ = org.api("DELETE", "/v1/users/" + user["id"])
    assert status == 204
    assert mcp_post_status(daemon, token) == 401
    assert dashboard(daemon, "GET", "/v1/sandboxes", session)[0] == 401
    assert auth.sign_in(leaving, PASSWORD)[0] == 401
    assert user["id"] not in json.dumps(daemon.admin.api("GET", "/v1/users?orgId=" + org.org_id)[1])

    # The last user of an organization is its owner: refused with a clear 409, through the CLI too.
    status, err = daemon.admin.api("DELETE", "/v1/users/" + first["id"])
    assert status == 409 and "last user" in err["error"]["message"], err
    out = daemon.admin.cli("user", "rm", first["id"])
    assert out.returncode != 0 and "last user" in out.stderr, (out.stdout, out.stderr)
    extra = add_user(daemon, org.org_id, harness.unique("extra") + "@example.com")
    out = daemon.admin.cli("user", "rm", extra["id"])
    assert out.returncode == 0 and extra["id"] in out.stdout, out.stderr


def test_a_password_change_needs_the_current_one_and_ends_the_old_sign_ins(daemon, org):
    email = harness.unique("ada") + "@example.com"
    user = add_user(daemon, org.org_id, email)
    colleague = add_user(daemon, org.org_id, harness.unique("bob") + "@example.com")
    path = "/v1/users/%s/password" % user["id"]
    auth = Authorization(daemon)
    token = auth.token(auth.sign_in(email, PASSWORD))
    session = dashboard_sign_in(daemon, email, PASSWORD)

    # The organization's key, a colleague and another organization cannot set it; bad input is a 400.
    assert org.api("PUT", path, {"password": "x" * 12})[0] == 403
    bob = dashboard_sign_in(daemon, colleague["email"], PASSWORD)
    assert dashboard(daemon, "PUT", path, bob, {"password": "x" * 12, "currentPassword": PASSWORD})[0] == 403
    assert daemon.new_org().api("PUT", path, {"password": "x" * 12})[0] == 404
    status, _, err = dashboard(daemon, "PUT", path, session, {"password": "new password 1"})
    assert status == 400 and err["error"]["field"] == "currentPassword", err
    status, _, err = dashboard(daemon, "PUT", path, session, {"password": "short", "currentPassword": PASSWORD})
    assert status == 400 and err["error"]["field"] == "password", err
    status, _, err = dashboard(daemon, "PUT", path, session, {"password": "new password 1", "currentPassword": "wrong one!!"})
    assert status == 403, err
    status, _, err = dashboard(daemon, "PUT", path, session, {"password": "new password 1", "extra": 1})
    assert status == 400 and err["error"]["field"] == "extra", err
    assert auth.sign_in(email, PASSWORD)[0] == 302  # nothing changed yet

    # The user itself, with its current password: every earlier sign-in ends.
    status, _, err = dashboard(daemon, "PUT", path, session, {"password": "new password 1", "currentPassword": PASSWORD})
    assert status == 204, err
    assert dashboard(daemon, "GET", "/v1/sandboxes", session)[0] == 401
    assert mcp_post_status(daemon, token) == 401
    assert auth.sign_in(email, PASSWORD)[0] == 401
    assert auth.sign_in(email, "new password 1")[0] == 302

    # The operator sets it without the old one (CLI reads it from stdin).
    out = daemon.admin.cli("user", "passwd", user["id"], input="new password 2\n")
    assert out.returncode == 0, out.stderr
    assert auth.sign_in(email, "new password 2")[0] == 302
    out = daemon.admin.cli("user", "passwd", "usr_missing", input="new password 3\n")
    assert out.returncode != 0 and "not found" in out.stderr
