"""API.md's list contract, for every list: {"items", "nextCursor"}, newest first (object
storage and a sandbox's artifacts: key order, S3's; plans: id order), `limit` 1..200 (default
50) with a 400 in API.md's error format for 0, 201 or a non-number, a 400 for a cursor this
server did not issue (another list's kind of cursor included), paging with limit=1 that visits
every item exactly once even when one is created between pages, and nothing of another
organization (a sandbox's or an app's lists: another organization's are 404; the admin's
lists: a tenant's key is 403)."""

import time

import pytest

import harness
import registry as reg

d = harness.module_daemon()

IMAGE_CONFIG = {"config": {"Cmd": ["/bin/true"], "Env": ["PATH=/bin"]}}
APP_START = "exec python3 -m http.server 8000"


@pytest.fixture(scope="module")
def image_registry():
    r = reg.Registry()
    yield r
    r.close()


def created(status, body, expect=(200, 201, 202)):
    assert status in expect, (status, body)
    return body


def running_sandbox(client):
    sbx = client.create({})
    return client.wait_for_status(sbx["id"], "running", 90)["id"]


class Secrets:
    path = "/v1/secrets"
    id_field = "name"

    def prepare(self, client):
        return None

    def make(self, client, ctx, n):
        return created(*client.api("POST", "/v1/secrets",
                                   {"name": harness.unique("S").upper().replace("-", "_"),
                                    "value": "v%d" % n}))["name"]


class Sites:
    path = "/v1/sites"
    id_field = "id"

    def prepare(self, client):
        status, _, _, _ = client.request("PUT", "/v1/objects/content?key=site-src/index.html",
                                         raw=b"<p>hi</p>", headers={"Content-Type": "text/html"})
        assert status == 200
        return None

    def make(self, client, ctx, n):
        return created(*client.api("POST", "/v1/sites",
                                   {"source": "site-src/", "name": harness.unique("site")}))["id"]


class Images:
    path = "/v1/images"
    id_field = "id"

    def __init__(self, registry):
        self.registry = registry

    def prepare(self, client):
        return None

    def make(self, client, ctx, n):
        layout = reg.Layout([reg.layer(reg.busybox_base([("n", "f", str(n), 0)]))], IMAGE_CONFIG)
        try:
            ref = self.registry.push(layout, harness.unique("lists"))
        finally:
            layout.close()
        # The record exists from the start of the pull: a list shows it at once.
        return created(*client.api("POST", "/v1/images", {"reference": ref}))["id"]


class Automations:
    path = "/v1/automations"
    id_field = "id"

    def prepare(self, client):
        return running_sandbox(client)

    def make(self, client, sid, n):
        return created(*client.api("POST", "/v1/automations",
                                   {"sandboxId": sid, "name": harness.unique("a"),
                                    "intervalSeconds": 3600, "command": "true"}))["id"]


class Apps:
    path = "/v1/apps"
    id_field = "id"

    def prepare(self, client):
        sid = running_sandbox(client)
        status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % sid,
                                 {"command": "mkdir -p /workspace/site", "timeoutSeconds": 60})
        assert status == 200 and cmd["exitCode"] == 0, cmd
        return sid

    def make(self, client, sid, n):
        status, app = client.api("POST", "/v1/apps",
                                 {"sandboxId": sid, "name": harness.unique("app"),
                                  "sourcePath": "/workspace/site", "startCommand": APP_START,
                                  "port": 8000})
        if status == 202:  # the deploy outlasted the request's wait: its app id comes later
            op, deadline = app, time.monotonic() + 300
            while op["phase"] not in ("Completed", "Failed") and time.monotonic() < deadline:
                time.sleep(0.5)
                op = client.api("GET", "/v1/operations/" + op["id"])[1]
            assert op["phase"] == "Completed", op
            return op["appId"]
        return created(status, app, (201,))["id"]


KINDS = ["secrets", "sites", "images", "automations", "apps"]


@pytest.fixture(scope="module")
def kinds(image_registry):
    return {"secrets": Secrets(), "sites": Sites(), "images": Images(image_registry),
            "automations": Automations(), "apps": Apps()}


def ids_of(kind, page):
    return [item[kind.id_field] for item in page["items"]]


def assert_bad_request(client, path, field):
    status, body = client.api("GET", path)
    assert status == 400, (path, status, body)
    assert body["error"]["code"] == "invalid_argument" and body["error"]["field"] == field, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"], body


def page_through(client, path, between=None):
    """Every page of `path` with limit=1, calling `between` after the first; the ids seen."""
    seen, cursor, pages = [], None, 0
    while True:
        sep = "&" if "?" in path else "?"
        status, page = client.api("GET", path + sep + "limit=1" +
                                  ("&cursor=" + cursor if cursor else ""))
        assert status == 200, page
        assert set(page) >= {"items", "nextCursor"} and len(page["items"]) <= 1, page
        seen.extend(page["items"])
        pages += 1
        if pages == 1 and between:
            between()
        cursor = page["nextCursor"]
        if cursor is None:
            return seen
        assert isinstance(cursor, str) and cursor, page
        assert pages < 200


@pytest.mark.parametrize("name", KINDS)
def test_a_list_is_newest_first_pages_once_each_and_shows_no_other_tenant(d, kinds, name):
    kind = kinds[name]
    org, other = d.new_org(), d.new_org()
    ctx, other_ctx = kind.prepare(org), kind.prepare(other)
    mine = [kind.make(org, ctx, n) for n in range(3)]
    theirs = kind.make(other, other_ctx, 9)

    status, page = org.api("GET", kind.path)
    assert status == 200, page
    assert set(page) == {"items", "nextCursor"}, page
    assert ids_of(kind, page) == list(reversed(mine)) and page["nextCursor"] is None, page

    # limit=1 from the newest; one more created after the first page is never seen, and
    # every earlier item is seen exactly once.
    made = []
    seen = page_through(org, kind.path, lambda: made.append(kind.make(org, ctx, 3)))
    assert [item[kind.id_field] for item in seen] == list(reversed(mine)), seen
    status, page = org.api("GET", kind.path)
    assert ids_of(kind, page) == [made[0]] + list(reversed(mine)), page

    # The default page size is 50 and 200 is allowed.
    assert org.api("GET", kind.path + "?limit=200")[0] == 200
    for bad in ("0", "201", "abc", "-1", ""):
        assert_bad_request(org, kind.path + "?limit=" + bad, "limit")
    for garbage in ("garbage", "c", "c-1", "c1x", "k6162"):
        assert_bad_request(org, kind.path + "?cursor=" + garbage, "cursor")

    # The other organization sees its own item only, and never one of ours.
    status, page = other.api("GET", kind.path)
    assert status == 200 and ids_of(kind, page) == [theirs], page
    assert theirs not in ids_of(kind, org.api("GET", kind.path + "?limit=200")[1])


def put(client, key):
    status, _, _, _ = client.request("PUT", "/v1/objects/content?key=" + key, raw=b"x")
    assert status == 200


def test_objects_page_in_key_order_once_each_and_show_no_other_tenant(d):
    org, other = d.new_org(), d.new_org()

    for key in ("lc/b", "lc/d", "lc/f"):
        put(org, key)
    put(other, "lc/theirs")
    status, page = org.api("GET", "/v1/objects?prefix=lc/")
    assert status == 200, page
    assert set(page) >= {"items", "nextCursor", "commonPrefixes"}, page
    assert [o["key"] for o in page["items"]] == ["lc/b", "lc/d", "lc/f"], page
    assert page["nextCursor"] is None

    # A key written after the first page: before the cursor it is not seen, after it once.
    def between():
        put(org, "lc/a")
        put(org, "lc/e")

    seen = page_through(org, "/v1/objects?prefix=lc/", between)
    assert [o["key"] for o in seen] == ["lc/b", "lc/d", "lc/e", "lc/f"], seen
    status, page = org.api("GET", "/v1/objects?prefix=lc/&delimiter=/&limit=1")
    assert status == 200 and page["nextCursor"], page

    assert org.api("GET", "/v1/objects?limit=200")[0] == 200
    for bad in ("0", "201", "abc"):
        assert_bad_request(org, "/v1/objects?limit=" + bad, "limit")
    for garbage in ("garbage", "c12", "kzz"):
        assert_bad_request(org, "/v1/objects?cursor=" + garbage, "cursor")
    status, page = other.api("GET", "/v1/objects?prefix=lc/")
    assert [o["key"] for o in page["items"]] == ["lc/theirs"], page


# The other lists: of one sandbox or app (another organization's are 404), of the organization
# (another's items never appear), and the admin's (a tenant's key is 403). `prepare` makes what
# the items belong to, `path(ctx)` lists them, `make` adds one and answers its id; items there
# before (the default volume, an organization's first key, an app's first release) come last.
class SandboxEndpoints:
    id_field, scope = "id", "sandbox"

    def prepare(self, client):
        return running_sandbox(client)

    def path(self, sid):
        return "/v1/sandboxes/%s/endpoints" % sid

    def make(self, client, sid, n):
        body = {"port": 8000 + n}
        return created(*client.api("POST", "/v1/sandboxes/%s/endpoints" % sid, body))["id"]


class OrgEndpoints(SandboxEndpoints):
    scope = "org"

    def path(self, sid):
        return "/v1/endpoints"


class Commands:
    id_field, scope = "id", "sandbox"

    def prepare(self, client):
        return running_sandbox(client)

    def path(self, sid):
        return "/v1/sandboxes/%s/commands" % sid

    def make(self, client, sid, n):
        body = {"command": "echo %d" % n, "timeoutSeconds": 60}
        return created(*client.api("POST", self.path(sid), body))["id"]


class Checkpoints:
    id_field, scope = "name", "sandbox"

    def prepare(self, client):
        sid = client.create({"startupClass": "durable"})["id"]
        client.wait_for_status(sid, "running", 120)
        harness.wait_for_agent(client, sid)
        return sid

    def path(self, sid):
        return "/v1/sandboxes/%s/checkpoints" % sid

    def make(self, client, sid, n):
        return created(*client.api("POST", self.path(sid), {"name": "cp%d" % n}), (201,))["name"]


class Releases:
    id_field, scope = "id", "sandbox"

    def prepare(self, client):
        sid = Apps().prepare(client)
        self.name = harness.unique("rel")
        return self.deploy(client, sid, 0)["id"], sid

    def deploy(self, client, sid, n):
        """The app as one deploy of it left it (each with other settings: a new release)."""
        status, app = client.api("POST", "/v1/apps",
                                 {"sandboxId": sid, "name": self.name, "sourcePath": "/workspace/site",
                                  "startCommand": APP_START, "port": 8000,
                                  "readinessPeriodSeconds": 2 + n})
        if status == 202:
            op, deadline = app, time.monotonic() + 300
            while op["phase"] not in ("Completed", "Failed") and time.monotonic() < deadline:
                time.sleep(0.5)
                op = client.api("GET", "/v1/operations/" + op["id"])[1]
            assert op["phase"] == "Completed", op
            app = client.api("GET", "/v1/apps/" + op["appId"])[1]
        else:
            assert status in (200, 201), app
        return app

    def path(self, ctx):
        return "/v1/apps/%s/releases" % ctx[0]

    def make(self, client, ctx, n):
        return self.deploy(client, ctx[1], n + 1)["releaseId"]


class StorageTokens:
    id_field, scope = "id", "org"

    def prepare(self, client):
        return None

    def path(self, ctx):
        return "/v1/storage-tokens"

    def make(self, client, ctx, n):
        return created(*client.api("POST", "/v1/storage-tokens", {"name": "t%d" % n}))["id"]


class Volumes:
    id_field, scope = "id", "org"

    def prepare(self, client):
        assert client.api("GET", "/v1/storage")[0] == 200  # the default volume, made on first use
        return None

    def path(self, ctx):
        return "/v1/storage"

    def make(self, client, ctx, n):
        body = {"name": harness.unique("v"), "sizeMiB": 64}
        return created(*client.api("POST", "/v1/storage", body))["id"]


class OwnKeys:
    id_field, scope = "id", "org"

    def prepare(self, client):
        return client.org_id

    def path(self, org_id):
        return "/v1/keys"

    def make(self, client, org_id, n):
        return created(*client.api("POST", "/v1/keys", {"name": "k%d" % n}))["id"]


class OrgKeys(OwnKeys):
    scope = "sandbox"  # another organization's id: 404

    def path(self, org_id):
        return "/v1/orgs/%s/keys" % org_id


class Orgs:
    id_field, scope = "id", "admin"

    def prepare(self, client):
        return None

    def path(self, ctx):
        return "/v1/orgs"

    def make(self, client, ctx, n):
        return created(*client.api("POST", "/v1/orgs", {"name": harness.unique("o")}))["id"]


class Users:
    id_field, scope = "id", "admin"

    def prepare(self, client):
        return created(*client.api("POST", "/v1/orgs", {"name": harness.unique("u")}))["id"]

    def path(self, org_id):
        return "/v1/users?orgId=" + org_id

    def make(self, client, org_id, n):
        body = {"email": harness.unique("u") + "@example.com"}
        return created(*client.api("POST", "/v1/orgs/%s/users" % org_id, body))["id"]


MORE = {"sandbox-endpoints": SandboxEndpoints(), "org-endpoints": OrgEndpoints(),
        "commands": Commands(), "checkpoints": Checkpoints(), "releases": Releases(),
        "storage-tokens": StorageTokens(), "storage": Volumes(), "keys": OwnKeys(),
        "org-keys": OrgKeys(), "orgs": Orgs(), "users": Users()}


def with_query(path, query):
    return path + ("&" if "?" in path else "?") + query


@pytest.mark.parametrize("name", sorted(MORE))
def test_every_other_list_is_newest_first_pages_once_each_and_stays_in_its_tenant(d, name):
    kind = MORE[name]
    org, other = d.new_org(), d.new_org()
    client = d.admin if kind.scope == "admin" else org
    ctx = kind.prepare(client)
    path = kind.path(ctx)
    status, page = client.api("GET", with_query(path, "limit=200"))
    assert status == 200 and page["nextCursor"] is None, page
    before = ids_of(kind, page)
    mine = [kind.make(client, ctx, n) for n in range(3)]
    newest_first = list(reversed(mine)) + before

    status, page = client.api("GET", path)
    assert status == 200 and set(page) == {"items", "nextCursor"}, page
    assert ids_of(kind, page) == newest_first and page["nextCursor"] is None, page
    made = []
    seen = page_through(client, path, lambda: made.append(kind.make(client, ctx, 3)))
    assert [item[kind.id_field] for item in seen] == newest_first, seen
    assert ids_of(kind, client.api("GET", path)[1]) == made + newest_first

    for bad in ("0", "201", "abc"):
        assert_bad_request(client, with_query(path, "limit=" + bad), "limit")
    for garbage in ("garbage", "c-1", "k6162"):
        assert_bad_request(client, with_query(path, "cursor=" + garbage), "cursor")

    if kind.scope == "sandbox":
        status, body = other.api("GET", path)
        assert status == 404 and body["error"]["code"] == "not_found", body
    elif kind.scope == "admin":
        assert org.api("GET", path)[0] == 403
    else:
        other_ctx = kind.prepare(other)
        theirs = kind.make(other, other_ctx, 9)
        listed_by_them = ids_of(kind, other.api("GET", with_query(path, "limit=200"))[1])
        assert theirs in listed_by_them and not set(made + mine) & set(listed_by_them)
        assert theirs not in ids_of(kind, client.api("GET", with_query(path, "limit=200"))[1])


def test_artifacts_page_in_key_order_once_each_and_another_tenants_are_404(d):
    org, other = d.new_org(), d.new_org()
    sid = org.create({})["id"]
    prefix = "artifacts/%s/" % sid
    for name in ("b", "d", "f"):
        put(org, prefix + name)
    put(org, "artifacts/%s-not-this-one/a" % sid)
    path = "/v1/sandboxes/%s/artifacts" % sid
    status, page = org.api("GET", path)
    assert status == 200 and set(page) == {"sandboxId", "prefix", "items", "nextCursor"}, page
    assert [o["key"] for o in page["items"]] == [prefix + k for k in "bdf"], page
    assert page["prefix"] == prefix and page["nextCursor"] is None, page
    seen = page_through(org, path, lambda: (put(org, prefix + "a"), put(org, prefix + "e")))
    assert [o["key"] for o in seen] == [prefix + k for k in "bdef"], seen
    for bad in ("0", "201", "abc"):
        assert_bad_request(org, path + "?limit=" + bad, "limit")
    for garbage in ("garbage", "c12", "kzz"):
        assert_bad_request(org, path + "?cursor=" + garbage, "cursor")
    assert other.api("GET", path)[0] == 404


def test_plans_page_in_id_order_once_each_for_the_admin_only(d):
    stem = "0" + harness.unique("p").replace("-", "")  # sorts before every other plan id
    for suffix in ("b", "d", "f"):
        created(*d.admin.api("PUT", "/v1/plans/" + stem + suffix, {"name": "p", "limits": {}}))

    def between():
        for suffix in ("a", "e"):
            created(*d.admin.api("PUT", "/v1/plans/" + stem + suffix, {"name": "p", "limits": {}}))

    seen = page_through(d.admin, "/v1/plans", between)
    assert [p["id"] for p in seen if p["id"].startswith(stem)] == [stem + k for k in "bdef"], seen
    ids = [p["id"] for p in seen]
    assert ids == sorted(ids) and len(set(ids)) == len(ids), ids
    for bad in ("0", "201", "abc"):
        assert_bad_request(d.admin, "/v1/plans?limit=" + bad, "limit")
    for garbage in ("garbage", "c12", "kzz"):
        assert_bad_request(d.admin, "/v1/plans?cursor=" + garbage, "cursor")
    assert d.new_org().api("GET", "/v1/plans")[0] == 403


# Lists whose paging is their own code's: the shared query parsing checks limit and names an
# unknown parameter, before any sandbox, app or job is looked up.
CHECKED = ["/v1/jobs", "/v1/runs", "/v1/runs?jobId=job_x", "/v1/checkpoints",
           "/v1/checkpoints?kept=true", "/v1/sandboxes/sbx_nope/commands",
           "/v1/sandboxes/sbx_nope/checkpoints", "/v1/sandboxes/sbx_nope/endpoints",
           "/v1/sandboxes/sbx_nope/artifacts", "/v1/apps/app_nope/releases", "/v1/endpoints",
           "/v1/storage-tokens", "/v1/storage", "/v1/keys", "/v1/orgs", "/v1/users", "/v1/plans"]
ADMIN_ONLY = ("/v1/orgs", "/v1/users", "/v1/plans")


@pytest.mark.parametrize("path", CHECKED)
def test_every_list_checks_its_limit_and_refuses_an_unknown_parameter(d, path):
    client = d.admin if path in ADMIN_ONLY else d.new_org()
    for bad in ("0", "201", "abc", "-1"):
        assert_bad_request(client, with_query(path, "limit=" + bad), "limit")
    assert_bad_request(client, with_query(path, "limitt=5"), "limitt")
    if "_nope" not in path:
        assert_bad_request(client, with_query(path, "cursor=garbage"), "cursor")
        status, page = client.api("GET", with_query(path, "limit=200"))
        assert status == 200 and set(page) >= {"items", "nextCursor"}, page
