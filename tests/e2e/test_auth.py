"""API keys and tenants: every key belongs to one organization and sees only its objects."""

import json
import os
import stat

from harness import unique


def test_healthz_needs_no_key(admin):
    status, body = admin.api("GET", "/healthz", key="")
    assert (status, body) == (200, {"status": "ok"})


def test_missing_key_is_401(admin):
    status, body = admin.api("GET", "/v1/sandboxes", key="")
    assert status == 401, (status, body)
    assert body["error"]["code"] == "unauthenticated"
    status, _ = admin.api("POST", "/v1/sandboxes", {}, key="")
    assert status == 401


def test_wrong_key_is_401(admin):
    for key in ("adapt_not-a-real-key", admin.key + "x", admin.key[:-1]):
        status, body = admin.api("GET", "/v1/sandboxes", key=key)
        assert status == 401, (key, status, body)


def test_non_bearer_authorization_is_401(admin):
    status, _ = admin.api("GET", "/v1/sandboxes", key="", headers={"Authorization": "Basic " + admin.key})
    assert status == 401


def test_admin_key_file_is_private(daemon):
    mode = stat.S_IMODE(os.stat(os.path.join(daemon.state_dir, "admin.key")).st_mode)
    assert mode == 0o600, oct(mode)


def test_admin_creates_an_organization_and_a_key_that_works(admin):
    name = unique("acme")
    status, org = admin.api("POST", "/v1/orgs", {"name": name})
    assert status == 201, (status, org)
    assert org["id"].startswith("org_") and org["name"] == name and org["createdAt"]

    status, orgs = admin.api("GET", "/v1/orgs")
    assert status == 200
    assert org["id"] in [o["id"] for o in orgs["items"]]

    status, key = admin.api("POST", "/v1/orgs/%s/keys" % org["id"], {"name": "ci"})
    assert status == 201, (status, key)
    assert key["key"].startswith("adapt_") and key["orgId"] == org["id"] and key["id"].startswith("key_")
    status, page = admin.api("GET", "/v1/sandboxes", key=key["key"])
    assert (status, page["items"]) == (200, []), "a new organization sees no sandboxes"


def test_key_for_an_unknown_organization_is_404(admin):
    status, body = admin.api("POST", "/v1/orgs/org_doesnotexist/keys", {"name": "x"})
    assert status == 404, (status, body)


def test_organization_name_is_validated(admin):
    for body in ({}, {"name": ""}, {"name": 5}, {"name": "ok", "extra": 1}):
        status, resp = admin.api("POST", "/v1/orgs", body)
        assert status == 400, (body, status, resp)


def test_keys_are_stored_hashed(daemon):
    client = daemon.new_org()
    secret = client.key.encode()
    for dirpath, dirs, files in os.walk(daemon.state_dir):
        if dirpath[len(daemon.state_dir):].count("/") >= 2:
            dirs[:] = []  # the store lives near the top, not inside sandbox filesystems
        for f in files:
            path = os.path.join(dirpath, f)
            if f == "admin.key" or not os.path.isfile(path) or os.path.getsize(path) > 64 << 20:
                continue
            with open(path, "rb") as fh:
                assert secret not in fh.read(), "API key text found in %s" % path


def test_cli_creates_an_organization_and_a_key(admin):
    name = unique("cli-org")
    r = admin.cli("org", "create", name, "--json")
    assert r.returncode == 0, r.stderr
    org = json.loads(r.stdout)
    assert org["name"] == name and org["id"].startswith("org_")

    r = admin.cli("key", "create", "--org", org["id"], "--name", "ci", "--json")
    assert r.returncode == 0, r.stderr
    key = json.loads(r.stdout)
    assert key["orgId"] == org["id"]
    status, page = admin.api("GET", "/v1/sandboxes", key=key["key"])
    assert status == 200 and page["items"] == []


def test_organizations_cannot_see_or_touch_each_others_sandboxes(daemon, admin):
    a, b = daemon.new_org(), daemon.new_org()
    sbx = a.create({"labels": {"name": "tenant-a-box"}})
    sid = sbx["id"]
    a.wait_for_status(sid, "running", 60)

    for other in (b, admin):
        status, body = other.api("GET", "/v1/sandboxes/" + sid)
        assert status == 404, "another org's id answers 404, never 403: %s %r" % (status, body)
        status, _ = other.api("DELETE", "/v1/sandboxes/" + sid)
        assert status == 404
        assert sid not in [s["id"] for s in other.list_all()]
        assert other.list_all(query="tenant-a") == []
        assert other.list_all(query=sid[:8]) == [] or sid not in [s["id"] for s in other.list_all(query=sid[:8])]
        status, _ = other.api("GET", "/v1/sandboxes/%s/events" % sid)
        assert status == 404

    assert a.get(sid)["status"] == "running", "the other org's DELETE must not have touched it"
    assert [s["id"] for s in a.list_all()] == [sid]
    a.delete(sid)


def test_non_admin_key_cannot_manage_organizations(daemon):
    client = daemon.new_org()
    status, body = client.api("POST", "/v1/orgs", {"name": unique("nope")})
    assert status == 403, (status, body)
    assert body["error"]["code"] == "permission_denied"
    status, _ = client.api("GET", "/v1/orgs")
    assert status == 403
    status, _ = client.api("POST", "/v1/orgs/%s/keys" % client.org_id, {"name": "more"})
    assert status == 403


def test_keys_are_listed_without_their_text_and_a_deleted_key_stops_working(daemon, admin):
    client = daemon.new_org()
    status, spare = admin.api("POST", "/v1/orgs/%s/keys" % client.org_id, {"name": "spare"})
    assert status == 201
    status, page = client.api("GET", "/v1/orgs/%s/keys" % client.org_id)
    assert status == 200, page
    assert [k["name"] for k in page["items"]] == ["spare", "e2e"]  # newest first
    assert all("key" not in k and k["orgId"] == client.org_id for k in page["items"])
    assert spare["key"] not in json.dumps(page)

    # Another organization's keys answer 404 and are left alone.
    other = daemon.new_org()
    status, _ = other.api("GET", "/v1/orgs/%s/keys" % client.org_id)
    assert status == 404
    status, _ = other.api("DELETE", "/v1/orgs/%s/keys/%s" % (client.org_id, spare["id"]))
    assert status == 404
    assert client.api("GET", "/v1/sandboxes", key=spare["key"])[0] == 200

    # A tenant rotates its own keys; the deleted one is refused at once, repeating is a 404.
    status, _ = client.api("DELETE", "/v1/orgs/%s/keys/%s" % (client.org_id, spare["id"]))
    assert status == 204
    assert client.api("GET", "/v1/sandboxes", key=spare["key"])[0] == 401
    assert client.api("GET", "/v1/sandboxes")[0] == 200
    status, body = client.api("DELETE", "/v1/orgs/%s/keys/%s" % (client.org_id, spare["id"]))
    assert status == 404 and body["error"]["code"] == "not_found"


def test_the_admin_key_cannot_be_deleted(admin):
    status, orgs = admin.api("GET", "/v1/orgs?limit=200")  # newest first: the admin's is last
    admin_org = [o for o in orgs["items"] if o["admin"]][0]
    status, page = admin.api("GET", "/v1/orgs/%s/keys" % admin_org["id"])
    admin_key = [k for k in page["items"] if k["admin"]][0]
    status, body = admin.api("DELETE", "/v1/orgs/%s/keys/%s" % (admin_org["id"], admin_key["id"]))
    assert status == 409, body
    assert admin.api("GET", "/v1/orgs")[0] == 200


def test_cli_lists_and_deletes_keys(admin):
    status, org = admin.api("POST", "/v1/orgs", {"name": unique("cli-keys")})
    status, key = admin.api("POST", "/v1/orgs/%s/keys" % org["id"], {"name": "to-go"})
    r = admin.cli("key", "ls", "--org", org["id"])
    assert r.returncode == 0, r.stderr
    assert key["id"] in r.stdout and "to-go" in r.stdout and key["key"] not in r.stdout
    r = admin.cli("key", "rm", "--org", org["id"], key["id"])
    assert r.returncode == 0, r.stderr
    assert admin.api("GET", "/v1/sandboxes", key=key["key"])[0] == 401
    r = admin.cli("key", "rm", "--org", org["id"], key["id"])
    assert r.returncode != 0 and "not found" in r.stderr
