"""Idempotency-Key on every create (API.md): for each create route, the same key with the same
body answers the same object and makes no second one, the same key with another body is 409
naming the header, another organization's same key makes its own object, and a key longer
than 255 bytes is 400. A key's replay of an API key or a storage token shows no secret: it was
shown once, to the request that made it."""

import harness
from harness import unique

d = harness.module_daemon()


def key_header(key):
    return {"Idempotency-Key": key}


def post(client, path, body, key, expect):
    status, out = client.api("POST", path, body, headers=key_header(key))
    assert status == expect, (path, body, status, out)
    return out


def assert_conflict(client, path, body, key):
    status, err = client.api("POST", path, body, headers=key_header(key))
    assert status == 409, (path, status, err)
    assert err["error"]["code"] == "conflict", err
    assert err["error"]["field"] == "Idempotency-Key", err


def listed_ids(client, path, items="items", id_of=lambda o: o["id"]):
    status, page = client.api("GET", path)
    assert status == 200, (path, status, page)
    return [id_of(item) for item in page[items]]


def check_create(client, other, path, body, other_body, list_path, expect=201, items="items",
                 id_of=lambda o: o["id"]):
    """The four rules for one create route; returns the first answer."""
    key = unique("idem")
    first = post(client, path, body, key, expect)
    again = post(client, path, body, key, expect)
    assert id_of(again) == id_of(first), (first, again)
    assert listed_ids(client, list_path, items, id_of).count(id_of(first)) == 1
    assert_conflict(client, path, other_body, key)
    theirs = post(other, path.replace("{org}", other.org_id), body, key, expect)
    assert listed_ids(other, list_path, items, id_of).count(id_of(theirs)) == 1
    status, err = client.api("POST", path, other_body, headers=key_header("k" * 256))
    assert status == 400 and err["error"]["field"] == "Idempotency-Key", (status, err)
    return first, again


def running_sandbox(client):
    sbx = client.create({})
    return client.wait_for_status(sbx["id"], "running")["id"]


def test_storage_volumes(d):
    a, b = d.new_org(), d.new_org()
    check_create(a, b, "/v1/storage", {"name": unique("vol"), "sizeMiB": 64},
                 {"name": unique("vol"), "sizeMiB": 128}, "/v1/storage")


def test_secrets_store_one_version_per_key(d):
    a, b = d.new_org(), d.new_org()
    name = unique("S").upper().replace("-", "_")
    first, again = check_create(a, b, "/v1/secrets", {"name": name, "value": "one"},
                                {"name": name, "value": "two"}, "/v1/secrets",
                                id_of=lambda s: s["name"])
    assert first["version"] == again["version"] == 1, (first, again)
    status, secret = a.api("GET", "/v1/secrets/" + name)
    assert status == 200 and secret["version"] == 1, secret


def test_automations_and_their_manual_runs(d):
    a, b = d.new_org(), d.new_org()
    sid_a, sid_b = running_sandbox(a), running_sandbox(b)
    body = {"sandboxId": sid_a, "intervalSeconds": 3600, "command": "true"}
    key = unique("idem")
    first = post(a, "/v1/automations", body, key, 201)
    assert post(a, "/v1/automations", body, key, 201)["id"] == first["id"]
    assert listed_ids(a, "/v1/automations") == [first["id"]]
    assert_conflict(a, "/v1/automations", dict(body, intervalSeconds=7200), key)
    theirs = post(b, "/v1/automations", dict(body, sandboxId=sid_b), key, 201)
    assert theirs["id"] != first["id"]

    trigger = "/v1/automations/%s/trigger" % first["id"]
    run = post(a, trigger, None, key, 202)
    assert post(a, trigger, None, key, 202)["id"] == run["id"]
    status, runs = a.api("GET", "/v1/runs?automationId=" + first["id"])
    assert status == 200, runs
    manual = [r["id"] for r in runs["items"] if r.get("trigger") == "manual"]
    assert manual == [run["id"]], runs
    other_trigger = "/v1/automations/%s/trigger" % theirs["id"]
    assert post(b, other_trigger, None, key, 202)["id"] != run["id"]


def test_endpoints(d):
    a, b = d.new_org(), d.new_org()
    sid_a, sid_b = running_sandbox(a), running_sandbox(b)
    key = unique("idem")
    path = "/v1/sandboxes/%s/endpoints" % sid_a
    first = post(a, path, {"port": 8000}, key, 201)
    assert post(a, path, {"port": 8000}, key, 201)["id"] == first["id"]
    assert listed_ids(a, path) == [first["id"]]
    assert_conflict(a, path, {"port": 8001}, key)
    theirs = post(b, "/v1/sandboxes/%s/endpoints" % sid_b, {"port": 8000}, key, 201)
    assert theirs["id"] != first["id"]


def test_storage_tokens_replay_without_their_secret(d):
    a, b = d.new_org(), d.new_org()
    first, again = check_create(a, b, "/v1/storage-tokens", {"name": "ci"}, {"name": "cd"},
                                "/v1/storage-tokens", items="tokens")
    assert first["secretAccessKey"] and first["token"], first
    assert "secretAccessKey" not in again and "token" not in again, again


def test_own_api_keys_replay_without_their_text(d):
    a, b = d.new_org(), d.new_org()
    first, again = check_create(a, b, "/v1/keys", {"name": "ci"}, {"name": "cd"}, "/v1/keys")
    assert first["key"].startswith("adapt_"), first
    assert "key" not in again, again


def test_admin_creates_of_organizations_and_their_keys(d):
    admin = d.admin
    key = unique("idem")
    name = unique("org")
    org = post(admin, "/v1/orgs", {"name": name}, key, 201)
    assert post(admin, "/v1/orgs", {"name": name}, key, 201)["id"] == org["id"]
    assert_conflict(admin, "/v1/orgs", {"name": unique("org")}, key)
    assert [o["name"] for o in admin.api("GET", "/v1/orgs")[1]["items"]].count(name) == 1

    path = "/v1/orgs/%s/keys" % org["id"]
    made = post(admin, path, {"name": "ci"}, key, 201)
    replay = post(admin, path, {"name": "ci"}, key, 201)
    assert replay["id"] == made["id"] and "key" not in replay, replay
    assert listed_ids(admin, path).count(made["id"]) == 1
    # The path is part of what the key names: another organization's keys are another request.
    other = post(admin, "/v1/orgs", {"name": unique("org")}, unique("idem"), 201)
    assert_conflict(admin, "/v1/orgs/%s/keys" % other["id"], {"name": "ci"}, key)


def test_without_a_key_each_request_creates(d):
    a = d.new_org()
    first = a.api("POST", "/v1/storage-tokens", {"name": "x"})[1]
    second = a.api("POST", "/v1/storage-tokens", {"name": "x"})[1]
    assert first["id"] != second["id"]


def test_an_admin_credit_is_added_once_per_key(d):
    org = d.new_org()
    path = "/v1/orgs/%s/credits" % org.org_id
    body = {"amountNanos": 2_000_000_000, "reason": "retried grant"}
    key = unique("idem")
    first = post(d.admin, path, body, key, 201)
    again = post(d.admin, path, body, key, 201)
    assert again["id"] == first["id"] and again["amountNanos"] == 2_000_000_000, (first, again)
    assert_conflict(d.admin, path, dict(body, amountNanos=9_000_000_000), key)
    # The same key for another organization's credit is another request (its path differs).
    other = d.new_org()
    assert_conflict(d.admin, "/v1/orgs/%s/credits" % other.org_id, body, key)
    assert org.api("GET", "/v1/account")[1]["balanceNanos"] == 2_000_000_000
    ledger = org.api("GET", "/v1/account/ledger")[1]["items"]
    assert [e["amountNanos"] for e in ledger] == [2_000_000_000], ledger
    assert other.api("GET", "/v1/account")[1]["balanceNanos"] == 0
