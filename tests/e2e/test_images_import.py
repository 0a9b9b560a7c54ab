"""POST /v1/images/import: private images from an OCI archive or a `docker save` archive, made
by the real `skopeo copy ... oci-archive:` / `docker-archive:` from the test registry, streamed
to adaptd and run by imageId; hand-broken archives answer a clear 400 and leave nothing."""

import http.client
import io
import json
import os
import subprocess
import tarfile
import tempfile
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


@pytest.fixture
def workdir():
    d = tempfile.mkdtemp(prefix="adapt-import-", dir="/tmp")
    yield d
    subprocess.run(["rm", "-rf", d])


def push(registry, name, tag_text, platforms=None):
    """Returns (reference, the layer's blob digest); DIFF_IDS[reference] is its diff id."""
    layout = reg.Layout([reg.layer(reg.busybox_base([("tag", "f", tag_text, 0)]))], CONFIG,
                        platforms=platforms)
    try:
        ref = registry.push(layout, name, all_platforms=bool(platforms))
        DIFF_IDS[ref] = layout.diff_ids[0]
        return ref, layout.layer_digests[0]
    finally:
        layout.close()


DIFF_IDS = {}


def skopeo_archive(ref, dest, all_platforms=False):
    cmd = [reg.SKOPEO, "copy", "--insecure-policy", "--src-tls-verify=false"]
    if all_platforms:
        cmd.append("--all")
    r = subprocess.run(cmd + ["docker://" + ref, dest], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, "skopeo copy failed: %s %s" % (r.stdout, r.stderr)


def upload(client, path, query="", chunked=False, key=None):
    """Streams the file at `path` as the request body; returns (status, JSON)."""
    conn = http.client.HTTPConnection("127.0.0.1", client.daemon.port, timeout=300)
    headers = {"Authorization": "Bearer " + (client.key if key is None else key),
               "Content-Type": "application/x-tar"}
    try:
        with open(path, "rb") as f:
            if chunked:
                conn.request("POST", "/v1/images/import" + query, body=iter(lambda: f.read(65536), b""),
                             headers=headers, encode_chunked=True)
            else:
                headers["Content-Length"] = str(os.path.getsize(path))
                conn.request("POST", "/v1/images/import" + query, body=f, headers=headers)
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, json.loads(body) if body else None
    finally:
        conn.close()


def store_listing(daemon):
    root = os.path.join(daemon.state_dir, "image-store")
    out = {}
    for sub in ("blobs/sha256", "layers", "refs", "tmp"):
        d = os.path.join(root, sub)
        out[sub] = sorted(os.listdir(d)) if os.path.isdir(d) else []
    return out


def rewrite_tar(src, dest, change):
    """Copies tar `src` to `dest`, passing each (TarInfo, bytes) through change(info, data),
    which returns the new pair or None to drop the member."""
    with tarfile.open(src) as t, tarfile.open(dest, "w", format=tarfile.PAX_FORMAT) as out:
        for m in t.getmembers():
            data = t.extractfile(m).read() if m.isfile() else None
            got = change(m, data)
            if got is None:
                continue
            info, data = got
            if data is not None:
                info.size = len(data)
                out.addfile(info, io.BytesIO(data))
            else:
                out.addfile(info)


def assert_rejected(client, daemon, path, words, query=""):
    before = store_listing(daemon)
    status, body = upload(client, path, query)
    assert status == 400, body
    assert body["error"]["code"] == "invalid_argument", body
    for w in words:
        assert w in body["error"]["message"], body
    status, listing = client.api("GET", "/v1/images")
    assert status == 200 and listing["items"] == [], listing
    # Nothing new (a collection started by an earlier test may still remove things).
    after = store_listing(daemon)
    for sub, names in after.items():
        assert set(names) <= set(before[sub]), (sub, before[sub], names)
    assert after["tmp"] == [], after
    return body


def test_oci_archive_from_skopeo_runs_by_image_id(org, daemon, registry, workdir):
    text = uuid.uuid4().hex
    ref, _ = push(registry, "imp/oci:1", text)
    archive = os.path.join(workdir, "img.tar")
    skopeo_archive(ref, "oci-archive:%s:v1" % archive)
    status, img = upload(org, archive)
    assert status == 201, img
    assert img["id"].startswith("img_") and img["status"] == "ready" and img["source"] == "import"
    assert img["reference"] == "v1"
    assert img["platform"] == "linux/amd64" and img["size"] > 0
    assert img["config"]["Cmd"] == ["/bin/cat", "/tag"]
    # The manifest skopeo wrote is kept as is: the same digest the registry serves.
    inspect = subprocess.run([reg.SKOPEO, "inspect", "--tls-verify=false", "docker://" + ref],
                             capture_output=True, text=True, check=True)
    assert img["digest"] == json.loads(inspect.stdout)["Digest"]
    status, got = org.api("GET", "/v1/images/" + img["id"])
    assert status == 200 and got["status"] == "ready" and got["source"] == "import"

    end = org.run(imageId=img["id"], startup={"mode": "image"})  # the config's Cmd
    assert end["status"] == "completed", end
    assert end["startup"]["stdout"] == text

    # Private: the store key is not a name other requests can use, in this org or another.
    other = daemon.new_org()
    status, body = other.api("POST", "/v1/sandboxes", {"image": "import:" + img["id"]})
    assert status == 404, body
    status, body = org.api("POST", "/v1/sandboxes", {"image": "import:" + img["id"]})
    assert status == 404 and "imageId" in body["error"]["message"], body
    status, body = other.api("POST", "/v1/sandboxes", {"imageId": img["id"]})
    assert status == 404, body
    assert other.api("GET", "/v1/images/" + img["id"])[0] == 404

    status, _ = org.api("DELETE", "/v1/images/" + img["id"])
    assert status == 204


def test_docker_archive_from_skopeo_streamed_chunked(org, registry, workdir):
    text = uuid.uuid4().hex
    ref, _ = push(registry, "imp/docker:1", text)
    archive = os.path.join(workdir, "img.tar")
    skopeo_archive(ref, "docker-archive:%s:private/app:2" % archive)
    status, img = upload(org, archive, chunked=True)
    assert status == 201, img
    assert img["reference"] == "docker.io/private/app:2" and img["status"] == "ready", img
    end = org.run(["/bin/cat", "/tag"], imageId=img["id"])
    assert end["status"] == "completed", end
    assert end["startup"]["stdout"] == text
    status, _ = org.api("DELETE", "/v1/images/" + img["id"])
    assert status == 204


def test_multi_platform_oci_archive_picks_linux_amd64(org, registry, workdir):
    ref, _ = push(registry, "imp/multi:1", "amd64-or-not",
                  platforms=[("linux", "arm64"), ("linux", "amd64")])
    archive = os.path.join(workdir, "multi.tar")
    skopeo_archive(ref, "oci-archive:%s:multi" % archive, all_platforms=True)
    status, img = upload(org, archive, "?name=multi")
    assert status == 201, img
    end = org.run(["/bin/cat", "/tag"], imageId=img["id"])
    assert end["startup"]["stdout"] == "amd64-or-not", end
    org.api("DELETE", "/v1/images/" + img["id"])


def test_broken_archives_are_clear_400s_that_leave_nothing(org, daemon, registry, workdir):
    ref, layer_digest = push(registry, "imp/broken:1", uuid.uuid4().hex)
    good = os.path.join(workdir, "good.tar")
    skopeo_archive(ref, "oci-archive:%s:v1" % good)
    layer_name = "blobs/sha256/" + layer_digest.split(":")[1]
    bad = os.path.join(workdir, "bad.tar")

    def flip(info, data):
        if info.name == layer_name:
            data = data[:100] + bytes([data[100] ^ 1]) + data[101:]
        return info, data
    rewrite_tar(good, bad, flip)
    assert_rejected(org, daemon, bad, ["does not match its digest", layer_name])

    rewrite_tar(good, bad, lambda i, d: None if i.name == layer_name else (i, d))
    assert_rejected(org, daemon, bad, ["missing", layer_digest])

    with open(good, "rb") as f:
        data = f.read()
    with open(bad, "wb") as f:
        f.write(data[: len(data) // 2])
    assert_rejected(org, daemon, bad, ["not a readable tar"])

    with open(bad, "wb") as f:
        f.write(os.urandom(20000))
    assert_rejected(org, daemon, bad, ["not a readable tar"])

    with tarfile.open(bad, "w") as t:
        info = tarfile.TarInfo("hello.txt")
        info.size = 2
        t.addfile(info, io.BytesIO(b"hi"))
    assert_rejected(org, daemon, bad, ["neither an OCI image layout", "manifest.json"])

    assert_rejected(org, daemon, good, ["no image named 'nope'", "v1"], query="?name=nope")

    status, body = upload(org, good, "?bogus=1")
    assert status == 400 and body["error"]["field"] == "bogus", body
    status, body = upload(org, good, key="")
    assert status == 401, body


def test_docker_archive_layer_not_matching_its_diff_id_is_refused(org, daemon, registry, workdir):
    ref, _ = push(registry, "imp/dockerbad:1", uuid.uuid4().hex)
    good = os.path.join(workdir, "good.tar")
    skopeo_archive(ref, "docker-archive:%s:bad/app:1" % good)
    with tarfile.open(good) as t:
        manifest = json.loads(t.extractfile("manifest.json").read())
    layer = manifest[0]["Layers"][0]
    bad = os.path.join(workdir, "bad.tar")

    def swap(info, data):
        if info.name == layer:
            t = tarfile.open(fileobj=io.BytesIO(data))
            out = io.BytesIO()
            with tarfile.open(fileobj=out, mode="w") as w:
                for m in t.getmembers():
                    d = t.extractfile(m).read() if m.isfile() else None
                    if m.name == "tag":
                        d = b"tampered"
                        m.size = len(d)
                    w.addfile(m, io.BytesIO(d) if d is not None else None)
            data = out.getvalue()
        return info, data
    rewrite_tar(good, bad, swap)
    assert_rejected(org, daemon, bad, ["does not match the config's diff id", layer])


def test_layer_escaping_its_root_is_refused_and_leaves_nothing(org, daemon, workdir):
    evil = reg.layer([("../../escaped-" + uuid.uuid4().hex, "f", "x", 0)], compress=False)
    layout = reg.Layout([reg.layer(reg.busybox_base()), evil], CONFIG)
    try:
        archive = os.path.join(workdir, "evil.tar")
        with tarfile.open(archive, "w") as t:
            t.add(layout.path, arcname=".")
    finally:
        layout.close()
    assert_rejected(org, daemon, archive, ["escapes the layer"])


def test_import_shares_layers_with_pulled_images(org, daemon, registry, workdir):
    ref, layer_digest = push(registry, "imp/shared:1", uuid.uuid4().hex)
    status, pulled = org.api("POST", "/v1/images", {"reference": ref})
    assert status == 202, pulled
    import test_images_api
    test_images_api.wait_pulled(org, pulled["id"])
    archive = os.path.join(workdir, "img.tar")
    skopeo_archive(ref, "oci-archive:%s:v1" % archive)
    layers = store_listing(daemon)["layers"]
    status, img = upload(org, archive)
    assert status == 201, img
    assert img["digest"] == org.api("GET", "/v1/images/" + pulled["id"])[1]["digest"]
    assert store_listing(daemon)["layers"] == layers, "the layer is stored once"
    assert DIFF_IDS[ref].split(":")[1] in layers
    # Deleting one keeps what the other uses.
    assert org.api("DELETE", "/v1/images/" + pulled["id"])[0] == 204
    end = org.run(["/bin/true"], imageId=img["id"])
    assert end["status"] == "completed", end
    assert org.api("DELETE", "/v1/images/" + img["id"])[0] == 204


def wait_gone(path, timeout=30):
    deadline = time.monotonic() + timeout
    while os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not os.path.exists(path)


def test_docker_save_archive_and_registry_pull_share_the_layer_by_diff_id(org, daemon, registry, workdir):
    """A docker save archive holds the plain tar, the registry the gzip blob: stored once, by
    diff id, whichever came first. The pull after the import fetches the gzip blob once, to
    prove it unpacks to the stored layer (a config merely naming a diff id gets nothing);
    another organization's first pull fetches it once more, to prove its registry serves it
    (a digest merely named gets nothing either); later pulls download no layer at all."""
    text = uuid.uuid4().hex
    ref, blob_digest = push(registry, "imp/diffid:1", text)
    diff_hex = DIFF_IDS[ref].split(":")[1]
    assert blob_digest != DIFF_IDS[ref]
    archive = os.path.join(workdir, "docker.tar")
    skopeo_archive(ref, "docker-archive:%s:diffid/app:1" % archive)
    status, imported = upload(org, archive)
    assert status == 201, imported
    layers = store_listing(daemon)["layers"]
    assert diff_hex in layers

    gets = registry.blob_gets(blob_digest)  # skopeo's own, making the archive
    status, pulled = org.api("POST", "/v1/images", {"reference": ref})
    assert status == 202, pulled
    import test_images_api
    op, pulled = test_images_api.wait_pulled(org, pulled["id"])
    assert op["phase"] == "Completed", pulled
    assert store_listing(daemon)["layers"] == layers, "the layer is stored once"
    assert registry.blob_gets(blob_digest) == gets + 1, "fetched once, to check its diff id"
    other = daemon.new_org()
    status, again = other.api("POST", "/v1/images", {"reference": ref})
    op, again = test_images_api.wait_pulled(other, again["id"])
    assert op["phase"] == "Completed", again
    assert registry.blob_gets(blob_digest) == gets + 2, "fetched once more, for the other organization"
    status, third = other.api("POST", "/v1/images", {"reference": ref})
    op, third = test_images_api.wait_pulled(other, third["id"])
    assert op["phase"] == "Completed", third
    assert registry.blob_gets(blob_digest) == gets + 2, "blob and proofs here: nothing to download"
    for image_id in {again["id"], third["id"]}:
        assert other.api("DELETE", "/v1/images/" + image_id)[0] == 204

    # GC stays right: deleting the import keeps the layer the pulled image uses, and the other
    # way round once both are gone.
    assert org.api("DELETE", "/v1/images/" + imported["id"])[0] == 204
    end = org.run(["/bin/cat", "/tag"], imageId=pulled["id"])
    assert end["status"] == "completed" and end["startup"]["stdout"] == text, end
    assert diff_hex in store_listing(daemon)["layers"]
    assert org.api("DELETE", "/v1/images/" + pulled["id"])[0] == 204
    assert wait_gone(os.path.join(daemon.state_dir, "image-store/layers", diff_hex))


def test_oci_layer_not_matching_its_diff_id_is_refused_and_leaves_nothing(org, daemon, workdir):
    # The gzip blob holds one tar, the config names the diff id of another.
    blob, _, media = reg.layer(reg.busybox_base([("tag", "f", "real", 0)]))
    _, claimed, _ = reg.layer(reg.busybox_base([("tag", "f", "claimed-" + uuid.uuid4().hex, 0)]))
    layout = reg.Layout([(blob, claimed, media)], CONFIG)
    try:
        archive = os.path.join(workdir, "lying.tar")
        with tarfile.open(archive, "w") as t:
            t.add(layout.path, arcname=".")
        assert_rejected(org, daemon, archive, ["does not match the config's diff id", layout.diff_ids[0]])
    finally:
        layout.close()


def _images_settled(daemon, client):
    """After a restart: no import is left half-made."""
    status, listing = client.api("GET", "/v1/images")
    assert status == 200 and listing["items"] == [], listing
    listed = store_listing(daemon)
    assert listed["tmp"] == [] and listed["refs"] == [], listed
    return listed


@pytest.mark.parametrize("cut", ["sigkill-mid-upload", "crash-after-publish"])
def test_adaptd_restarted_during_an_import_leaves_nothing_and_the_import_works_again(fresh_daemon, registry, workdir, cut):
    d = fresh_daemon
    org = d.new_org()
    text = uuid.uuid4().hex
    ref, _ = push(registry, "imp/restart-%s:1" % cut, text)
    archive = os.path.join(workdir, "img.tar")
    skopeo_archive(ref, "oci-archive:%s:v1" % archive)
    before = store_listing(d)

    if cut == "sigkill-mid-upload":
        # Half the archive, then adaptd is SIGKILLed while it waits for the rest.
        size = os.path.getsize(archive)
        conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
        conn.putrequest("POST", "/v1/images/import")
        conn.putheader("Authorization", "Bearer " + org.key)
        conn.putheader("Content-Type", "application/x-tar")
        conn.putheader("Content-Length", str(size))
        conn.endheaders()
        with open(archive, "rb") as f:
            conn.send(f.read(size // 2))
        deadline = time.monotonic() + 30
        while not any(n.startswith("import") for n in os.listdir(os.path.join(d.state_dir, "image-store/tmp"))):
            assert time.monotonic() < deadline, "the upload never reached the staging area"
            time.sleep(0.05)
        d.kill()
        conn.close()
    else:
        # Blobs and layers published, the reference not yet: the daemon dies there.
        d.stop()
        os.environ["ADAPT_FAULT"] = "image.import.after_publish"
        try:
            d.start(port=d.port)
        finally:
            os.environ.pop("ADAPT_FAULT", None)
        try:
            upload(org, archive)
        except (OSError, http.client.HTTPException):
            pass
        d.proc.wait(timeout=60)
        assert d.proc.returncode == 86, d.log_tail()
        assert DIFF_IDS[ref].split(":")[1] in store_listing(d)["layers"], "the crash came after publishing"

    d.start(port=d.port)
    after = _images_settled(d, org)
    for sub in ("blobs/sha256", "layers"):
        assert after[sub] == before[sub], (sub, before[sub], after[sub])

    status, img = upload(org, archive)
    assert status == 201, img
    end = org.run(["/bin/cat", "/tag"], imageId=img["id"])
    assert end["status"] == "completed" and end["startup"]["stdout"] == text, end
