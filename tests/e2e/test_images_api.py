"""/v1/images against a real registry: pull as an operation, get, imageId, delete (409 while
in use), garbage collection, organizations, and basic auth with credentials never echoed."""

import json
import os
import time
import uuid

import pytest

import registry as reg

CONFIG = {"config": {"Cmd": ["/bin/cat", "/tag"], "Env": ["PATH=/bin"]}}


@pytest.fixture(scope="module")
def registry():
    r = reg.Registry()
    yield r
    r.close()


@pytest.fixture(scope="module")
def private_registry():
    r = reg.private_registry()
    yield r
    r.close()


def push(registry, name, tag_text=None, creds=None):
    """Returns (reference, the layer's diff id, tag_text)."""
    tag_text = tag_text or uuid.uuid4().hex
    layout = reg.Layout([reg.layer(reg.busybox_base([("tag", "f", tag_text, 0)]))], CONFIG)
    try:
        return registry.push(layout, name, creds=creds), layout.diff_ids[0], tag_text
    finally:
        layout.close()


def wait_pulled(client, image_id, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        status, op = client.api("GET", "/v1/operations/" + image_id)
        assert status == 200, op
        assert op["phase"] in ("Pending", "Running", "Completed", "Failed"), op
        if op["phase"] in ("Completed", "Failed"):
            status, img = client.api("GET", "/v1/images/" + image_id)
            assert status == 200
            return op, img
        assert time.monotonic() < deadline, op
        time.sleep(0.2)


def test_pull_get_run_by_image_id_delete_and_gc(org, daemon, registry):
    ref, diff_id, text = push(registry, "api/app:1")
    status, img = org.api("POST", "/v1/images", {"reference": ref})
    assert status == 202, img
    assert img["id"].startswith("img_") and img["reference"] == ref
    op, img = wait_pulled(org, img["id"])
    assert op["phase"] == "Completed", op
    assert img["status"] == "ready"
    assert img["digest"].startswith("sha256:") and img["platform"] == "linux/amd64"
    assert img["size"] > 0 and op["progress"]["bytes"] == op["progress"]["totalBytes"] == img["size"]
    assert img["config"]["Cmd"] == ["/bin/cat", "/tag"]
    assert img["sandboxes"] == []
    status, listing = org.api("GET", "/v1/images")
    assert status == 200 and [i["id"] for i in listing["items"]] == [img["id"]]

    sbx = org.create({"imageId": img["id"], "startup": {"mode": "command", "argv": ["/bin/sleep", "60"]}})
    org.wait_for_status(sbx["id"], "running")
    status, got = org.api("GET", "/v1/images/" + img["id"])
    assert got["sandboxes"] == [sbx["id"]]
    status, body = org.api("DELETE", "/v1/images/" + img["id"])
    assert status == 409, body
    assert body["error"]["code"] == "conflict"
    org.delete(sbx["id"])

    layer_dir = os.path.join(daemon.state_dir, "image-store/layers", diff_id.split(":")[1])
    assert os.path.isdir(layer_dir)
    status, _ = org.api("DELETE", "/v1/images/" + img["id"])
    assert status == 204
    deadline = time.monotonic() + 30
    while os.path.exists(layer_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(layer_dir), "garbage collection removes the unused layer"
    status, _ = org.api("GET", "/v1/images/" + img["id"])
    assert status == 404


def test_run_by_image_id_uses_the_image_config(org, registry):
    ref, _, text = push(registry, "api/cfg:1")
    status, img = org.api("POST", "/v1/images", {"reference": ref})
    op, img = wait_pulled(org, img["id"])
    assert op["phase"] == "Completed", op
    end = org.run(imageId=img["id"], startup={"mode": "image"})
    assert end["status"] == "completed", end
    assert end["startup"]["stdout"] == text


def test_other_organizations_images_are_404(daemon, registry):
    a, b = daemon.new_org(), daemon.new_org()
    ref, _, _ = push(registry, "api/mine:1")
    status, img = a.api("POST", "/v1/images", {"reference": ref})
    wait_pulled(a, img["id"])
    for method, path in (("GET", "/v1/images/"), ("DELETE", "/v1/images/"), ("GET", "/v1/operations/")):
        status, body = b.api(method, path + img["id"])
        assert status == 404, (method, body)
    status, listing = b.api("GET", "/v1/images")
    assert listing["items"] == []
    status, body = b.api("POST", "/v1/sandboxes", {"imageId": img["id"]})
    assert status == 404, body


def test_bad_pull_requests_are_400(org):
    for body in ({}, {"reference": 5}, {"reference": "UPPER/x"}, {"reference": "a", "extra": 1},
                 {"reference": "a", "credentials": {"username": "u"}}):
        status, resp = org.api("POST", "/v1/images", body)
        assert status == 400, (body, resp)
        assert resp["error"]["code"] == "invalid_argument"


def test_private_registry_basic_auth_and_credentials_never_echoed(org, private_registry):
    creds = "alice:" + private_registry.password
    ref, _, text = push(private_registry, "private/app:1", creds=creds)
    status, img = org.api("POST", "/v1/images", {"reference": ref})
    op, got = wait_pulled(org, img["id"])
    assert op["phase"] == "Failed"
    assert "requires credentials" in got["error"], got

    status, img = org.api("POST", "/v1/images", {"reference": ref, "credentials": {"username": "alice", "password": "wrong"}})
    op, got = wait_pulled(org, img["id"])
    assert op["phase"] == "Failed", got

    body = {"reference": ref, "credentials": {"username": "alice", "password": private_registry.password}}
    status, img = org.api("POST", "/v1/images", body)
    assert status == 202
    assert private_registry.password not in json.dumps(img)
    op, got = wait_pulled(org, img["id"])
    assert op["phase"] == "Completed", got
    assert private_registry.password not in json.dumps(got)
    status, listing = org.api("GET", "/v1/images")
    assert private_registry.password not in json.dumps(listing)
    end = org.run(["/bin/cat", "/tag"], imageId=got["id"])
    assert end["status"] == "completed" and end["startup"]["stdout"] == text


def test_private_registry_password_from_an_organization_secret(daemon, org, private_registry):
    """credentials.passwordSecret names an organization secret: the pull uses its value, which
    no answer, record or log shows; a missing secret (or another organization's) is a 400."""
    ref, _, text = push(private_registry, "private/secret-app:1", creds="alice:" + private_registry.password)
    status, err = org.api("POST", "/v1/images", {"reference": ref, "credentials": {"username": "alice", "passwordSecret": "REGISTRY_PW"}})
    assert status == 400 and err["error"]["field"] == "credentials.passwordSecret", err
    for bad in ({"username": "alice", "password": "x", "passwordSecret": "REGISTRY_PW"},
                {"username": "alice", "passwordSecret": 5}, {"username": "alice", "passwordSecret": "REGISTRY_PW", "x": 1}):
        status, err = org.api("POST", "/v1/images", {"reference": ref, "credentials": bad})
        assert status == 400, (bad, err)

    status, secret = org.api("POST", "/v1/secrets", {"name": "REGISTRY_PW", "value": private_registry.password})
    assert status == 201, secret
    body = {"reference": ref, "credentials": {"username": "alice", "passwordSecret": "REGISTRY_PW"}}
    status, img = org.api("POST", "/v1/images", body)
    assert status == 202, img
    op, got = wait_pulled(org, img["id"])
    assert op["phase"] == "Completed", got
    for answer in (img, got, org.api("GET", "/v1/images")[1]):
        assert private_registry.password not in json.dumps(answer)
    with open(daemon.log_path, "rb") as f:
        assert private_registry.password.encode() not in f.read()
    end = org.run(["/bin/cat", "/tag"], imageId=got["id"])
    assert end["status"] == "completed" and end["startup"]["stdout"] == text

    # Another organization cannot pull with it by name.
    other = daemon.new_org()
    status, err = other.api("POST", "/v1/images", body)
    assert status == 400 and err["error"]["field"] == "credentials.passwordSecret", err


@pytest.fixture(scope="module")
def token_registry():
    import tempfile

    import token_server

    base = tempfile.mkdtemp(prefix="adapt-token-", dir="/tmp")
    password = "tok-" + uuid.uuid4().hex
    tokens = token_server.TokenServer(base, "bob", password)
    r = reg.Registry(tokens.registry_config())
    r.tokens, r.password = tokens, password
    yield r
    r.close()
    tokens.close()
    import shutil

    shutil.rmtree(base, ignore_errors=True)


def test_bearer_token_flow_from_the_registrys_challenge(org, token_registry):
    ref, _, text = push(token_registry, "bearer/app:1", creds="bob:" + token_registry.password)
    status, img = org.api("POST", "/v1/images", {"reference": ref})
    op, got = wait_pulled(org, img["id"])
    assert op["phase"] == "Failed"
    assert "refused anonymous access" in got["error"], got

    before = len(token_registry.tokens.requests)
    body = {"reference": ref, "credentials": {"username": "bob", "password": token_registry.password}}
    status, img = org.api("POST", "/v1/images", body)
    op, got = wait_pulled(org, img["id"])
    assert op["phase"] == "Completed", got
    asked = token_registry.tokens.requests[before:]
    assert asked and asked[-1]["query"]["service"] == ["adapt-test-registry"]
    assert asked[-1]["query"]["scope"] == ["repository:bearer/app:pull"]
    end = org.run(["/bin/cat", "/tag"], imageId=got["id"])
    assert end["status"] == "completed" and end["startup"]["stdout"] == text
