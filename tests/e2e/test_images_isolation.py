"""Images between organizations, and what an image can make adaptd read on the host:
a private image pulled by one organization is not found by another's reference alone (it must
pull, and prove access to, the manifest itself); a layer already stored under a diff id is
not handed to a pull whose blob does not unpack to it; an image's /etc/passwd that links out
of the image (to the host's /etc/shadow, /dev/zero) reads nothing of the host."""

import json
import os
import tarfile
import tempfile
import uuid

import pytest

import registry as reg
from harness import run_command
import test_images_api
from test_images_import import upload

# The same registries and image config as test_images_api (module-scoped: one of each here).
from test_images_api import CONFIG, private_registry, registry  # noqa: E402,F401


def private_image(private_registry, name):
    """Pushes an image whose /tag is a secret; returns (reference, tag text, layer tar)."""
    text = "private-" + uuid.uuid4().hex
    blob, tar, media = reg.layer(reg.busybox_base([("tag", "f", text, 0)]))
    layout = reg.Layout([(blob, tar, media)], CONFIG)
    try:
        ref = private_registry.push(layout, name, creds="alice:" + private_registry.password)
    finally:
        layout.close()
    return ref, text, tar


def pull(client, body):
    status, img = client.api("POST", "/v1/images", body)
    assert status == 202, img
    return test_images_api.wait_pulled(client, img["id"])


def test_another_organization_cannot_boot_a_private_image_by_its_reference(daemon, private_registry):
    a, b = daemon.new_org(), daemon.new_org()
    ref, text, _ = private_image(private_registry, "iso/private:1")
    creds = {"username": "alice", "password": private_registry.password}
    op, img = pull(a, {"reference": ref, "credentials": creds})
    assert op["phase"] == "Completed", img
    end = a.run(["/bin/cat", "/tag"], image=ref)
    assert end["status"] == "completed" and end["startup"]["stdout"] == text, end

    # B names the same reference: adaptd pulls it for B, without B's credentials.
    sbx = b.create({"image": ref, "startup": {"mode": "command", "argv": ["/bin/cat", "/tag"]}})
    end = b.wait_end(sbx["id"])
    assert end["status"] == "failed", end
    assert text not in json.dumps(end)
    assert "requires credentials" in json.dumps(end), end
    # B's own pull, without or with wrong credentials, fails too.
    op, got = pull(b, {"reference": ref})
    assert op["phase"] == "Failed" and "requires credentials" in got["error"], got
    op, got = pull(b, {"reference": ref, "credentials": {"username": "alice", "password": "wrong"}})
    assert op["phase"] == "Failed", got
    # With the credentials, B has it.
    op, got = pull(b, {"reference": ref, "credentials": creds})
    assert op["phase"] == "Completed", got
    end = b.run(["/bin/cat", "/tag"], imageId=got["id"])
    assert end["status"] == "completed" and end["startup"]["stdout"] == text, end


def test_two_organizations_pulling_one_image_at_once_both_get_it(daemon, registry):
    """Their pulls write the same blobs at the same moment: each through a temporary file of
    its own (one of the two failed with "no such file or directory" every time before)."""
    orgs = [daemon.new_org() for _ in range(3)]
    layers = [reg.layer(reg.busybox_base([("n%d" % i, "f", os.urandom(1 << 20).hex(), 0)]))
              for i in range(3)]
    layout = reg.Layout([(blob, tar, media) for blob, tar, media in layers], CONFIG)
    try:
        ref = registry.push(layout, "iso/shared:1")
    finally:
        layout.close()
    started = []
    for client in orgs:
        status, img = client.api("POST", "/v1/images", {"reference": ref})
        assert status == 202, img
        started.append((client, img["id"]))
    for client, image_id in started:
        op, img = test_images_api.wait_pulled(client, image_id)
        assert op["phase"] == "Completed", (op, img)
        end = client.run(["/bin/sh", "-c", "cat /n0 /n1 /n2 | wc -c"], imageId=image_id)
        assert end["status"] == "completed", end
        assert end["startup"]["stdout"].strip() == str(3 * (2 << 20)), end


def test_a_stored_layer_is_not_reused_for_a_blob_that_does_not_unpack_to_its_diff_id(daemon, registry, private_registry):
    """B knows the diff id of A's private layer and serves, from a registry of its own, an
    image whose config claims it with a layer of B's: the pull must not reuse A's layer."""
    a, b = daemon.new_org(), daemon.new_org()
    ref, text, private_tar = private_image(private_registry, "iso/layer:1")
    op, img = pull(a, {"reference": ref, "credentials": {"username": "alice", "password": private_registry.password}})
    assert op["phase"] == "Completed", img

    blob, _, media = reg.layer(reg.busybox_base([("tag", "f", "mine", 0)]))
    layout = reg.Layout([(blob, private_tar, media)], CONFIG)  # claims A's diff id
    try:
        lying = registry.push(layout, "iso/lying:1")
    finally:
        layout.close()
    op, got = pull(b, {"reference": lying})
    assert op["phase"] == "Failed", got
    assert "does not match the config's diff id" in got["error"], got
    sbx = b.create({"image": lying, "startup": {"mode": "command", "argv": ["/bin/cat", "/tag"]}})
    end = b.wait_end(sbx["id"])
    assert end["status"] == "failed" and text not in json.dumps(end), end


class LyingRegistry:
    """A registry its organization controls, serving manifests it was given and only the blobs
    it holds; for any other blob a HEAD answers 200 with the digest and size the manifest names
    (a registry can claim anything), and only a GET shows it does not have the bytes."""

    def __init__(self):
        import http.server
        import threading
        self.manifests, self.blobs, self.requests = {}, {}, []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, body_wanted):
                owner.requests.append((self.command, self.path))
                status, headers, body = 404, {"Content-Type": "application/json"}, b'{"errors":[{"code":"BLOB_UNKNOWN"}]}'
                if self.path == "/v2/":
                    status, body = 200, b"{}"
                elif "/manifests/" in self.path and self.path.split("/manifests/")[1] in owner.manifests:
                    media, body = owner.manifests[self.path.split("/manifests/")[1]]
                    status, headers = 200, {"Content-Type": media, "Docker-Content-Digest": reg.sha256(body)}
                elif "/blobs/" in self.path:
                    digest = self.path.split("/blobs/")[1]
                    if digest in owner.blobs:
                        status, body = 200, owner.blobs[digest]
                        headers = {"Content-Type": "application/octet-stream", "Docker-Content-Digest": digest}
                    elif digest in owner.claimed and self.command == "HEAD":
                        status, body = 200, b""
                        headers = {"Content-Type": "application/octet-stream", "Docker-Content-Digest": digest,
                                   "Content-Length": str(owner.claimed[digest])}
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if "Content-Length" not in headers:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if body_wanted:
                    self.wfile.write(body)

            def do_GET(self):
                self.answer(True)

            def do_HEAD(self):
                self.answer(False)

        self.claimed = {}
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = "127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def fetch_manifest(private_registry, ref):
    """A's manifest, as A's registry serves it to A: (media type, bytes, parsed)."""
    import base64
    import urllib.request
    host, rest = ref.split("/", 1)
    name, tag = rest.rsplit(":", 1)
    req = urllib.request.Request("http://%s/v2/%s/manifests/%s" % (host, name, tag), headers={
        "Accept": "application/vnd.oci.image.manifest.v1+json",
        "Authorization": "Basic " + base64.b64encode(("alice:" + private_registry.password).encode()).decode()})
    with urllib.request.urlopen(req, timeout=10) as r:
        body = r.read()
        return r.headers["Content-Type"], body, json.loads(body)


@pytest.mark.parametrize("copy", ["whole-manifest", "own-config"])
def test_a_stored_blob_named_by_digest_is_not_handed_to_an_organization_whose_registry_lacks_it(daemon, private_registry, copy):
    """B knows the digests of A's private image and serves, from a registry of its own that
    does not hold A's blobs (but claims them on HEAD), a manifest naming them: either A's
    manifest itself, or B's own config (claiming A's diff id) with A's layer. B's pull must
    fail, and B must not boot A's layer."""
    a, b = daemon.new_org(), daemon.new_org()
    ref, text, private_tar = private_image(private_registry, "iso/digest:1")
    op, img = pull(a, {"reference": ref, "credentials": {"username": "alice", "password": private_registry.password}})
    assert op["phase"] == "Completed", img
    media, body, manifest = fetch_manifest(private_registry, ref)
    layer = manifest["layers"][0]
    lying = LyingRegistry()
    try:
        lying.claimed = {layer["digest"]: layer["size"], manifest["config"]["digest"]: manifest["config"]["size"]}
        if copy == "own-config":
            config = dict(CONFIG, os="linux", architecture="amd64",
                          rootfs={"type": "layers", "diff_ids": [reg.sha256(private_tar)]})
            config_bytes = json.dumps(config).encode()
            lying.blobs[reg.sha256(config_bytes)] = config_bytes
            manifest = dict(manifest, config={"mediaType": "application/vnd.oci.image.config.v1+json",
                                              "digest": reg.sha256(config_bytes), "size": len(config_bytes)})
            body = json.dumps(manifest).encode()
        lying.manifests["1"] = (media, body)
        theirs = lying.host + "/evil/copy:1"
        op, got = pull(b, {"reference": theirs})
        assert op["phase"] == "Failed", got
        # The error a blob not stored at all gets: nothing tells B that A has it.
        assert "answered HTTP 404 for blob" in got["error"], got
        assert "another" not in got["error"] and "stored" not in got["error"], got
        # The proof was asked of B's registry, which could not serve the bytes.
        assert ("GET", "/v2/evil/copy/blobs/" + (layer["digest"] if copy == "own-config"
                                                 else manifest["config"]["digest"])) in lying.requests
        sbx = b.create({"image": theirs, "startup": {"mode": "command", "argv": ["/bin/cat", "/tag"]}})
        end = b.wait_end(sbx["id"])
        assert end["status"] == "failed" and text not in json.dumps(end), end
    finally:
        lying.close()
    # A still has its image.
    end = a.run(["/bin/cat", "/tag"], image=ref)
    assert end["status"] == "completed" and end["startup"]["stdout"] == text, end


def passwd_image(workdir, passwd_entry, user):
    """An OCI archive of busybox whose etc/passwd is `passwd_entry` ((kind, data)) and whose
    config's User is `user`."""
    entries = [e for e in reg.busybox_base() if e[0] != "etc/passwd"]
    kind, data = passwd_entry
    entries.append(("etc/passwd", kind, data, 0))
    config = {"config": {"Cmd": ["/bin/sh", "-c", "echo $(id -u) $HOME"], "Env": ["PATH=/bin"], "User": user}}
    layout = reg.Layout([reg.layer(entries)], config)
    try:
        archive = os.path.join(workdir, "passwd-%s.tar" % uuid.uuid4().hex)
        with tarfile.open(archive, "w") as t:
            t.add(layout.path, arcname=".")
    finally:
        layout.close()
    return archive


@pytest.fixture
def workdir():
    d = tempfile.mkdtemp(prefix="adapt-isolation-", dir="/tmp")
    yield d
    import shutil

    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("target", ["/etc/shadow", "../" * 24 + "etc/shadow"])
def test_an_image_passwd_linking_to_the_hosts_shadow_reads_nothing_of_the_host(org, workdir, target):
    assert os.path.exists("/etc/shadow")
    archive = passwd_image(workdir, ("l", target), "root")
    status, img = upload(org, archive)
    assert status == 201, img
    # "root" names nobody in this image: its etc/passwd resolves inside the image, to nothing.
    status, err = org.api("POST", "/v1/sandboxes", {"imageId": img["id"], "startup": {"mode": "image"}})
    assert status == 400, err
    assert "no such user in the image" in err["error"]["message"], err
    # A numeric user needs no entry: uid 0, HOME the default, nothing from the shadow file.
    end = org.run(imageId=img["id"], startup={"mode": "image", "user": "0"})
    assert end["status"] == "completed", end
    assert end["startup"]["stdout"].split() == ["0", "/root"], end


def test_an_image_passwd_linking_to_dev_zero_is_refused_not_read_forever(org, workdir):
    archive = passwd_image(workdir, ("l", "/dev/zero"), "app")
    status, img = upload(org, archive)
    assert status == 201, img
    status, err = org.api("POST", "/v1/sandboxes", {"imageId": img["id"], "startup": {"mode": "image"}})
    assert status == 400, err
    assert "no such user in the image" in err["error"]["message"], err
    # adaptd still answers.
    assert org.api("GET", "/v1/images/" + img["id"])[0] == 200


@pytest.mark.parametrize("storage", [False, True], ids=["own-layer", "storage"])
def test_an_image_linking_its_mount_points_out_of_the_image_creates_nothing_on_the_host(org, workdir, storage):
    """/workspace (made by adaptd without storage, a mount point with it) and etc/resolv.conf
    (a mount point) link to a host path: whatever is created for them lands inside the
    sandbox's own root, never on the host."""
    target = "/tmp/adapt-escape-" + uuid.uuid4().hex
    entries = reg.busybox_base() + [("workspace", "l", target + "/x", 0),
                                    ("etc/resolv.conf", "l", target + "/resolv.conf", 0)]
    config = {"config": {"Cmd": ["/bin/sleep", "600"], "Env": ["PATH=/bin"]}}
    layout = reg.Layout([reg.layer(entries)], config)
    try:
        archive = os.path.join(workdir, "links-%s.tar" % uuid.uuid4().hex)
        with tarfile.open(archive, "w") as t:
            t.add(layout.path, arcname=".")
    finally:
        layout.close()
    status, img = upload(org, archive)
    assert status == 201, img
    body = {"imageId": img["id"], "startupClass": "durable", "startup": {"mode": "image"}}
    if storage:
        name = "esc" + uuid.uuid4().hex[:8]
        status, v = org.api("POST", "/v1/storage", {"name": name, "sizeMiB": 64})
        assert status == 201, v
        body["storage"] = name
    sbx = org.create(body)
    sbx = org.wait_for_status(sbx["id"], ("running", "failed"), 120)
    assert not os.path.lexists(target), "adaptd created %s on the host" % target
    if sbx["status"] == "failed":
        # A clear sentence, not a crash.
        assert sbx.get("error") and "internal" not in json.dumps(sbx).lower(), sbx
    else:
        cmd = run_command(org, sbx["id"], argv=["sh", "-c", "echo kept > /workspace/f && cat /workspace/f"],
                          waitSeconds=60, timeoutSeconds=60)
        assert cmd["exitCode"] == 0 and cmd["stdout"] == "kept\n", cmd
    assert not os.path.lexists(target), "%s appeared on the host" % target
