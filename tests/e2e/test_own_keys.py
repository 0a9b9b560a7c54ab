"""A tenant's own API keys (/v1/keys, `adapt key` without --org): made with a key of the
organization or a user's dashboard session, listed without their text, revoked at once;
another organization's ids answer 404; expiry; bad input; the admin routes beside them."""
import http.client
import json
import time
import urllib.parse

import harness
from mcp_support import LATEST, post
from test_mcp_oauth import authorize, discover, form, path_of, pkce, register

PASSWORD = "an own-keys password"


def raw(daemon, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def make_key(client, body=None):
    status, made, _, headers = client.request("POST", "/v1/keys", body if body is not None else {"name": "ci"})
    assert status == 201, made
    assert headers.get("cache-control") == "no-store"
    return made


def test_a_tenant_key_is_made_listed_without_its_text_and_revoked_at_once(daemon, org):
    made = make_key(org, {"name": "ci"})
    assert made["key"].startswith("adapt_") and made["orgId"] == org.org_id and made["name"] == "ci"
    assert made["expiresAt"] is None and made["id"].startswith("key_")
    # The new key acts for the organization, never as the admin.
    assert org.api("GET", "/v1/sandboxes", key=made["key"])[0] == 200
    assert org.api("GET", "/v1/orgs", key=made["key"])[0] == 403
    # Listed by anyone of the organization, with no text and no hash of any key.
    status, page, body, _ = org.request("GET", "/v1/keys", key=made["key"])
    assert status == 200 and page["nextCursor"] is None
    ids = [k["id"] for k in page["items"]]
    assert made["id"] in ids and len(ids) == 2
    assert made["key"].encode() not in body and org.key.encode() not in body
    assert all(set(k) == {"id", "orgId", "name", "admin", "createdAt", "expiresAt"} for k in page["items"])
    # Revoked: its very next request is refused, and a second revoke finds nothing.
    assert org.api("DELETE", "/v1/keys/" + made["id"])[0] == 204
    assert org.api("GET", "/v1/sandboxes", key=made["key"])[0] == 401
    assert org.api("DELETE", "/v1/keys/" + made["id"])[0] == 404
    assert made["id"] not in [k["id"] for k in org.api("GET", "/v1/keys")[1]["items"]]


def test_another_organization_can_neither_see_nor_revoke_the_keys(daemon, org):
    made = make_key(org)
    other = daemon.new_org()
    theirs = [k["id"] for k in other.api("GET", "/v1/keys")[1]["items"]]
    assert made["id"] not in theirs and len(theirs) == 1
    status, body = other.api("DELETE", "/v1/keys/" + made["id"])
    assert status == 404 and body["error"]["code"] == "not_found", body
    # Nor through the organization routes, nor with the other's session.
    assert other.api("GET", "/v1/orgs/%s/keys" % org.org_id)[0] == 404
    assert other.api("DELETE", "/v1/orgs/%s/keys/%s" % (org.org_id, made["id"]))[0] == 404
    assert org.api("GET", "/v1/sandboxes", key=made["key"])[0] == 200
    # An id that is no key, and one far too long, read the same.
    assert org.api("DELETE", "/v1/keys/key_nope")[0] == 404
    assert org.api("DELETE", "/v1/keys/" + "k" * 5000)[0] in (404, 414, 431)


def test_a_user_manages_keys_with_the_dashboard_session(daemon, org):
    email = harness.unique("keys") + "@example.com"
    status, user = daemon.admin.api("POST", "/v1/orgs/%s/users" % org.org_id, {"email": email, "password": PASSWORD})
    assert status == 201, user
    headers = {"Content-Type": "application/json", "X-Adapt-CSRF": "1"}
    status, resp, body = raw(daemon, "POST", "/dashboard/session", json.dumps({"email": email, "password": PASSWORD}),
                             headers)
    assert status == 200, body
    cookie = {"Cookie": resp["set-cookie"].split(";")[0]}
    # What a cross-site form could send (the cookie, no header) makes nothing.
    status, _, body = raw(daemon, "POST", "/v1/keys", b"{}", dict(cookie, **{"Content-Type": "application/json"}))
    assert status == 403 and b"X-Adapt-CSRF" in body
    status, _, body = raw(daemon, "POST", "/v1/keys", json.dumps({"name": "from-session"}), dict(cookie, **headers))
    assert status == 201, body
    made = json.loads(body)
    assert made["orgId"] == org.org_id
    status, _, body = raw(daemon, "GET", "/v1/keys", headers=cookie)
    assert status == 200 and made["id"] in [k["id"] for k in json.loads(body)["items"]]
    assert raw(daemon, "DELETE", "/v1/keys/" + made["id"], headers=dict(cookie, **headers))[0] == 204
    assert org.api("GET", "/v1/sandboxes", key=made["key"])[0] == 401


def test_an_expiring_key_stops_at_its_time(daemon, org):
    made = make_key(org, {"name": "brief", "ttlSeconds": 1})
    assert made["expiresAt"] is not None
    listed = {k["id"]: k for k in org.api("GET", "/v1/keys")[1]["items"]}
    assert listed[made["id"]]["expiresAt"] == made["expiresAt"]
    deadline = time.monotonic() + 30
    while org.api("GET", "/v1/sandboxes", key=made["key"])[0] == 200:
        assert time.monotonic() < deadline, "a key made for 1 s still works after 30 s"
        time.sleep(0.5)
    status, body = org.api("GET", "/v1/sandboxes", key=made["key"])
    assert status == 401 and "expired" in body["error"]["message"], body


def test_bad_input_is_a_400_naming_the_field_and_makes_nothing(daemon, org):
    before = len(org.api("GET", "/v1/keys")[1]["items"])
    cases = [
        ({"nme": "x"}, "nme"),
        ({"name": "n" * 64}, "name"),
        ({"name": "tab\there"}, "name"),
        ({"name": 5}, "name"),
        ({"ttlSeconds": 0}, "ttlSeconds"),
        ({"ttlSeconds": -1}, "ttlSeconds"),
        ({"ttlSeconds": 158112001}, "ttlSeconds"),
        ({"ttlSeconds": "3600"}, "ttlSeconds"),
        ({"ttlSeconds": 1.5}, "ttlSeconds"),
    ]
    for body, field in cases:
        status, answer = org.api("POST", "/v1/keys", body)
        assert status == 400 and answer["error"]["field"] == field, (body, status, answer)
    assert org.api("POST", "/v1/keys", raw="[1]")[0] == 400
    assert org.api("POST", "/v1/keys", raw="{")[0] == 400
    assert org.api("POST", "/v1/keys", {}, key="")[0] == 401
    assert org.api("POST", "/v1/keys", {}, key="adapt_made_up")[0] == 401
    assert len(org.api("GET", "/v1/keys")[1]["items"]) == before


def test_the_admin_key_is_listed_but_cannot_be_revoked_and_admin_routes_still_work(daemon, admin):
    keys = admin.api("GET", "/v1/keys")[1]["items"]
    admin_keys = [k for k in keys if k["admin"]]
    assert len(admin_keys) == 1
    status, body = admin.api("DELETE", "/v1/keys/" + admin_keys[0]["id"])
    assert status == 409, body
    other = daemon.new_org()
    status, made = admin.api("POST", "/v1/orgs/%s/keys" % other.org_id, {"name": "ops", "ttlSeconds": 600})
    assert status == 201 and made["expiresAt"] is not None, made
    assert made["id"] in [k["id"] for k in other.api("GET", "/v1/keys")[1]["items"]]
    # A tenant may not make keys for an organization, its own included, through the admin route.
    assert other.api("POST", "/v1/orgs/%s/keys" % other.org_id, {})[0] == 403
    assert admin.api("DELETE", "/v1/orgs/%s/keys/%s" % (other.org_id, made["id"]))[0] == 204


def test_the_cli_makes_lists_and_revokes_the_callers_keys(daemon, org):
    made = org.cli("key", "create", "--name", "cli-made", "--ttl", "3600")
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    assert key.startswith("adapt_") and "\n" not in key
    listed = org.cli("key", "ls")
    assert listed.returncode == 0, listed.stderr
    row = [l for l in listed.stdout.splitlines() if "cli-made" in l]
    assert len(row) == 1 and "never" not in row[0] and key not in listed.stdout
    key_id = row[0].split()[0]
    as_json = json.loads(org.cli("--json", "key", "ls").stdout)
    assert key_id in [k["id"] for k in as_json["items"]]
    gone = org.cli("key", "rm", key_id)
    assert gone.returncode == 0 and key_id in gone.stdout, gone.stderr
    assert org.api("GET", "/v1/sandboxes", key=key)[0] == 401
    # Another organization's id: the CLI says so and fails.
    other = daemon.new_org()
    theirs = other.api("GET", "/v1/keys")[1]["items"][0]["id"]
    refused = org.cli("key", "rm", theirs)
    assert refused.returncode != 0 and "not found" in refused.stderr, refused.stderr


def mcp_status(daemon, token):
    """The HTTP status /mcp answers an initialize with this bearer token."""
    return post(daemon, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"protocolVersion": LATEST, "capabilities": {},
                                    "clientInfo": {"name": "pytest", "version": "1"}}}, token)[0]


def test_an_mcp_token_made_with_an_expiring_key_ends_with_it(daemon, org):
    made = make_key(org, {"name": "mcp-brief", "ttlSeconds": 3})
    resource, server = discover(daemon)
    client = register(daemon, server)
    verifier, challenge = pkce()
    status, headers, _ = authorize(daemon, server, client, resource, made["key"], challenge)
    assert status == 302
    code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(headers["location"]).query))["code"]
    status, _, text = form(daemon, path_of(server["token_endpoint"]),
                           {"grant_type": "authorization_code", "code": code, "client_id": client["client_id"],
                            "redirect_uri": client["redirect_uris"][0], "resource": resource["resource"],
                            "code_verifier": verifier})
    assert status == 200, text
    access = json.loads(text)["access_token"]
    assert mcp_status(daemon, access) == 200
    deadline = time.monotonic() + 30
    while org.api("GET", "/v1/sandboxes", key=made["key"])[0] == 200:
        assert time.monotonic() < deadline, "a key made for 3 s still works after 30 s"
        time.sleep(0.5)
    assert mcp_status(daemon, access) == 401
