"""API.md's list contract, for every account-wide list: {"items", "nextCursor"}, newest first
(object storage: key order, its S3 semantics), `limit` 1..200 (default 50) with a 400 in
API.md's error format for 0, 201 or a non-number, a 400 for a cursor this server did not
issue, paging with limit=1 that visits every item exactly once even when one is created
between pages, and nothing of another organization."""

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
        assert pages < 20


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


def test_objects_page_in_key_order_once_each_and_show_no_other_tenant(d):
    org, other = d.new_org(), d.new_org()

    def put(client, key):
        status, _, _, _ = client.request("PUT", "/v1/objects/content?key=" + key, raw=b"x")
        assert status == 200

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
