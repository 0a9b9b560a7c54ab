"""Idempotency-Key on every create (API.md): for each create route, the same key with the same
body answers the same object and makes no second one, the same key with another body is 409
naming the header, another organization's same key makes its own object, and a key longer
than 255 bytes is 400. A key's replay of an API key or a storage token shows no secret: it was
shown once, to the request that made it. The creates that start long work (an image pull,
import or commit, a checkpoint, an app deploy) start it once: a replay answers the same image
or operation, also while the work still runs."""

import hashlib
import io
import json
import tarfile
import threading
import time

import harness
from harness import run_command, unique, wait_for_agent

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


def running_sandbox(client, body=None, agent=False):
    sbx = client.create(body or {})
    sid = client.wait_for_status(sbx["id"], "running")["id"]
    if agent:
        wait_for_agent(client, sid)
    return sid


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
                                "/v1/storage-tokens")
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
    assert [o["name"] for o in admin.api("GET", "/v1/orgs?limit=200")[1]["items"]].count(name) == 1

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


def test_sites_publish_one_release_per_key(d):
    a, b = d.new_org(), d.new_org()
    for client in (a, b):
        status, _, _, _ = client.request("PUT", "/v1/objects/content?key=web%2Findex.html",
                                         raw=b"<h1>hi</h1>", headers={"Content-Type": "text/html"})
        assert status == 200
    first, again = check_create(a, b, "/v1/sites", {"source": "web", "name": "demo"},
                                {"source": "web", "name": "other"}, "/v1/sites")
    assert again["releaseId"] == first["releaseId"], (first, again)


def test_image_pulls_start_once_per_key(d):
    a, b = d.new_org(), d.new_org()
    # Nothing listens there: the pull fails later, which changes nothing about the key.
    first, again = check_create(a, b, "/v1/images", {"reference": "127.0.0.1:9/idem/app:1"},
                                {"reference": "127.0.0.1:9/idem/app:2"}, "/v1/images", expect=202)
    assert again["status"] in ("pulling", "failed"), again


def oci_archive(text):
    """An OCI image layout of one image whose one layer holds /tag = text, as tar bytes."""
    def tar(members):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
            for name, data in members:
                info = tarfile.TarInfo(name)
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
        return buf.getvalue()

    def digest(data):
        return "sha256:" + hashlib.sha256(data).hexdigest()

    layer = tar([("tag", text.encode())])
    config = json.dumps({"os": "linux", "architecture": "amd64",
                         "config": {"Cmd": ["/bin/cat", "/tag"]},
                         "rootfs": {"type": "layers", "diff_ids": [digest(layer)]}}).encode()
    oci_manifest = "application/vnd.oci.image.manifest.v1+json"
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": oci_manifest,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": digest(config), "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": digest(layer), "size": len(layer)}]}).encode()
    index = json.dumps({"schemaVersion": 2, "manifests": [
        {"mediaType": oci_manifest, "digest": digest(manifest), "size": len(manifest),
         "annotations": {"org.opencontainers.image.ref.name": "v1"}}]}).encode()
    blob = lambda data: ("blobs/sha256/" + digest(data)[7:], data)  # noqa: E731
    return tar([("oci-layout", b'{"imageLayoutVersion":"1.0.0"}'), ("index.json", index),
                blob(manifest), blob(config), blob(layer)])


def import_archive(client, archive, key, expect):
    status, image, _, _ = client.request(
        "POST", "/v1/images/import", raw=archive,
        headers={"Content-Type": "application/x-tar", "Idempotency-Key": key})
    assert status == expect, (status, image)
    return image


def test_image_imports_are_replayed_by_name_and_archive(d):
    a, b = d.new_org(), d.new_org()
    archive = oci_archive(unique("tag"))
    key = unique("idem")
    first = import_archive(a, archive, key, 201)
    assert first["status"] == "ready", first
    assert import_archive(a, archive, key, 201)["id"] == first["id"]
    assert listed_ids(a, "/v1/images") == [first["id"]]
    # Another archive under the key is another request, and so is another name.
    err = import_archive(a, oci_archive(unique("tag")), key, 409)
    assert err["error"]["field"] == "Idempotency-Key", err
    status, err, _, _ = a.request("POST", "/v1/images/import?name=v1", raw=archive,
                                  headers={"Content-Type": "application/x-tar",
                                           "Idempotency-Key": key})
    assert status == 409 and err["error"]["field"] == "Idempotency-Key", (status, err)
    assert listed_ids(a, "/v1/images") == [first["id"]]
    theirs = import_archive(b, archive, key, 201)
    assert theirs["id"] != first["id"] and listed_ids(b, "/v1/images") == [theirs["id"]]


def test_sandbox_commits_save_once_per_key(d):
    a, b = d.new_org(), d.new_org()
    sid_a, sid_b = running_sandbox(a, agent=True), running_sandbox(b, agent=True)
    key = unique("idem")
    path = "/v1/sandboxes/%s/image" % sid_a
    first = post(a, path, {"name": "saved"}, key, 202)
    # At once, while the commit may still run: the same image, not "being saved already".
    assert post(a, path, {"name": "saved"}, key, 202)["id"] == first["id"]
    deadline = time.monotonic() + 120
    image = first
    while image["status"] == "committing" and time.monotonic() < deadline:
        time.sleep(0.2)
        image = a.api("GET", "/v1/images/" + first["id"])[1]
    assert image["status"] == "ready", image
    assert post(a, path, {"name": "saved"}, key, 202)["status"] == "ready"
    assert listed_ids(a, "/v1/images") == [first["id"]]
    assert_conflict(a, path, {"name": "other"}, key)
    theirs = post(b, "/v1/sandboxes/%s/image" % sid_b, {"name": "saved"}, key, 202)
    assert theirs["id"] != first["id"]


def test_checkpoints_are_taken_once_per_key(d):
    a, b = d.new_org(), d.new_org()
    body = {"startupClass": "durable"}
    sid_a, sid_b = running_sandbox(a, body, True), running_sandbox(b, body, True)
    key = unique("idem")
    path = "/v1/sandboxes/%s/checkpoints" % sid_a
    first = post(a, path, {"name": "one"}, key, 201)
    again = post(a, path, {"name": "one"}, key, 201)
    assert again["operationId"] == first["operationId"], (first, again)
    assert again["name"] == "one" and again["createdAt"] == first["createdAt"], again
    assert [c["name"] for c in a.api("GET", path)[1]["items"]] == ["one"]
    assert_conflict(a, path, {"name": "two"}, key)
    assert [c["name"] for c in a.api("GET", path)[1]["items"]] == ["one"]
    theirs = post(b, "/v1/sandboxes/%s/checkpoints" % sid_b, {"name": "one"}, key, 201)
    assert theirs["operationId"] != first["operationId"]
    # Deleted since: a replay asks for a new key instead of taking it again.
    assert a.request("DELETE", path + "/one")[0] == 204
    assert_conflict(a, path, {"name": "one"}, key)
    assert a.api("GET", path)[1]["items"] == []


def deployed(client, answer):
    """The app a deploy's answer made, following its operation to its end."""
    if "phase" not in answer:
        return answer
    op = answer
    deadline = time.monotonic() + 300
    while op["phase"] not in ("Completed", "Failed") and time.monotonic() < deadline:
        time.sleep(0.5)
        op = client.api("GET", "/v1/operations/" + op["id"])[1]
    assert op["phase"] == "Completed", op
    return client.api("GET", "/v1/apps/" + op["appId"])[1]


def test_app_deploys_run_once_per_key(d):
    a, b = d.new_org(), d.new_org()
    sids = []
    for client in (a, b):
        sid = running_sandbox(client, agent=True)
        run_command(client, sid, command="mkdir -p /workspace && echo hi > /workspace/index.html")
        sids.append(sid)
    key = unique("idem")
    body = {"sandboxId": sids[0], "name": "idem", "startCommand": "python3 -m http.server 8000",
            "port": 8000, "replicas": 0, "waitSeconds": 0}
    status, first = a.api("POST", "/v1/apps", body, headers=key_header(key))
    assert status in (201, 202), (status, first)
    status, again = a.api("POST", "/v1/apps", body, headers=key_header(key))
    assert status in (201, 202), (status, again)
    app = deployed(a, first)
    # The same deploy: its operation while it runs, its app once it completed.
    if "phase" in again:
        assert "phase" in first and again["id"] == first["id"], (first, again)
    else:
        assert again["id"] == app["id"], (again, app)
    status, replay = a.api("POST", "/v1/apps", body, headers=key_header(key))
    assert status == 201 and replay["id"] == app["id"], (status, replay)
    releases = a.api("GET", "/v1/apps/%s/releases" % app["id"])[1]
    assert len(releases["items"]) == 1, releases
    assert listed_ids(a, "/v1/apps") == [app["id"]]
    assert_conflict(a, "/v1/apps", dict(body, port=8001), key)
    status, theirs = b.api("POST", "/v1/apps", dict(body, sandboxId=sids[1]),
                           headers=key_header(key))
    assert status in (201, 202), (status, theirs)
    assert deployed(b, theirs)["id"] != app["id"]


def test_an_app_deploy_replay_waits_for_the_deploy_as_the_first_request_does(d):
    """A client that retries a deploy (its first request cut off) waits as the first request
    did: the replay answers the app once the deploy completes, not its operation at once.
    Whichever of the two requests claims the key first runs the deploy; both answer 201 with
    the one app. The deploy waits for its replica to be ready, which takes longer than the gap
    between the two requests."""
    a = d.new_org()
    sid = running_sandbox(a, agent=True)
    run_command(a, sid, command="mkdir -p /workspace && echo hi > /workspace/index.html")
    key = unique("idem-wait")
    body = {"sandboxId": sid, "name": "waits", "startCommand": "python3 -m http.server 8000",
            "port": 8000, "replicas": 1, "waitSeconds": 300}
    answers = {}

    def first():
        answers["first"] = a.api("POST", "/v1/apps", body, headers=key_header(key))

    thread = threading.Thread(target=first)
    thread.start()
    try:
        time.sleep(0.2)
        second = a.api("POST", "/v1/apps", body, headers=key_header(key))
    finally:
        thread.join(timeout=330)
    apps = []
    for status, out in (answers["first"], second):
        assert status == 201 and "phase" not in out, (status, out)
        apps.append(out["id"])
    assert apps[0] == apps[1], apps
    assert listed_ids(a, "/v1/apps") == [apps[0]]
