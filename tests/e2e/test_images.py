"""Images pulled from a real OCI registry (Debian's docker-registry on loopback, images
pushed with skopeo): run, config, whiteouts, verification, platforms, traversal, dedup."""

import os
import threading
import uuid

import pytest

import registry as reg

SCRIPT = ("echo $GREETING; pwd; id -u; test -e /etc/motd && echo motd-present || echo motd-gone; "
          "ls /var/cache; stat -c %u /owned/file")
CONFIG = {"config": {"Entrypoint": ["/bin/sh", "-c"], "Cmd": [SCRIPT],
                     "Env": ["PATH=/bin", "GREETING=hello-from-registry"],
                     "WorkingDir": "/work", "User": "app"}}


@pytest.fixture(scope="module")
def registry():
    r = reg.Registry()
    yield r
    r.close()


def two_layer_image(tag_file):
    base = reg.layer(reg.busybox_base([("tag", "f", tag_file, 0)]))
    top = reg.layer([("etc", "d", None, 0), ("etc/.wh.motd", "f", "", 0),
                     ("var", "d", None, 0), ("var/cache", "d", None, 0),
                     ("var/cache/.wh..wh..opq", "f", "", 0), ("var/cache/b", "f", "b\n", 0),
                     ("work", "d", None, 1000)])
    return reg.Layout([base, top], CONFIG)


def store_dir(daemon):
    return os.path.join(daemon.state_dir, "image-store")


def test_pull_on_create_runs_with_config_whiteouts_and_ownership(admin, daemon, registry):
    layout = two_layer_image("oci")
    try:
        ref = registry.push(layout, "busy/oci:1")
    finally:
        layout.close()
    sbx = admin.create({"image": ref, "startup": {"mode": "image"}})
    assert sbx["status"] == "provisioning"
    end = admin.wait_end(sbx["id"])
    assert end["status"] == "completed", end
    assert end["startup"]["stdout"] == "hello-from-registry\n/work\n1000\nmotd-gone\nb\n1234\n", end
    # Cached now: a second sandbox starts from the same layers without another download.
    digest = layout.layer_digests[0]
    gets = registry.blob_gets(digest)
    assert gets == 1
    again = admin.run(["/bin/cat", "/tag"], image=ref)
    assert again["status"] == "completed" and again["startup"]["stdout"] == "oci"
    assert registry.blob_gets(digest) == 1
    assert os.path.isdir(os.path.join(store_dir(daemon), "layers", layout.diff_ids[0].split(":")[1]))


def test_docker_schema2_media_types_pull(admin, registry):
    layout = two_layer_image("v2s2")
    try:
        ref = registry.push(layout, "busy/docker:1", fmt="v2s2")
    finally:
        layout.close()
    end = admin.run(["/bin/cat", "/tag"], image=ref)
    assert end["status"] == "completed", end
    assert end["startup"]["stdout"] == "v2s2"


def test_uncompressed_layers_pull(admin, registry):
    layout = reg.Layout([reg.layer(reg.busybox_base([("tag", "f", "plain", 0)]), compress=False)], CONFIG)
    try:
        ref = registry.push(layout, "busy/plain:1")
    finally:
        layout.close()
    end = admin.run(["/bin/cat", "/tag"], image=ref)
    assert end["status"] == "completed", end
    assert end["startup"]["stdout"] == "plain"


def test_zstd_layers_pull(admin, registry):
    base = reg.layer(reg.busybox_base([("tag", "f", "zstd", 0)]), zstd=True)
    top = reg.layer([("etc", "d", None, 0), ("etc/.wh.motd", "f", "", 0)], zstd=True)
    layout = reg.Layout([base, top], CONFIG)
    try:
        ref = registry.push(layout, "busy/zstd:1")
    finally:
        layout.close()
    end = admin.run(["/bin/sh", "-c", "cat /tag; test -e /etc/motd || echo gone"], image=ref)
    assert end["status"] == "completed", end
    assert end["startup"]["stdout"] == "zstdgone\n"
    assert registry.blob_gets(layout.layer_digests[0]) == 1, "the zstd blob itself was pulled"


def test_index_picks_linux_amd64(admin, registry):
    layout = reg.Layout([reg.layer(reg.busybox_base([("tag", "f", "multi", 0)]))], CONFIG,
                        platforms=[("linux", "arm64"), ("linux", "amd64")])
    try:
        ref = registry.push(layout, "busy/multi:1", all_platforms=True)
    finally:
        layout.close()
    end = admin.run(["/bin/cat", "/tag"], image=ref)
    assert end["status"] == "completed", end
    assert end["startup"]["stdout"] == "multi"


def test_index_without_linux_amd64_fails_naming_the_platforms(admin, registry):
    layout = reg.Layout([reg.layer(reg.busybox_base([("tag", "f", "arm", 0)]))], CONFIG,
                        platforms=[("linux", "arm64"), ("linux", "s390x")])
    try:
        ref = registry.push(layout, "busy/arm:1", all_platforms=True)
    finally:
        layout.close()
    end = admin.run(["/bin/true"], image=ref)
    assert end["status"] == "failed"
    err = end["startup"]["error"]
    assert "linux/amd64" in err and "linux/arm64" in err and "linux/s390x" in err, err


def test_missing_image_and_down_registry_fail_with_the_reason(admin, registry):
    end = admin.run(["/bin/true"], image=registry.host + "/no/such:1")
    assert end["status"] == "failed"
    assert "404" in end["startup"]["error"] or "unknown" in end["startup"]["error"].lower(), end
    import harness
    down = "127.0.0.1:%d/x/y:1" % harness.free_port()
    end = admin.run(["/bin/true"], image=down)
    assert end["status"] == "failed"
    assert "unreachable" in end["startup"]["error"], end


def test_corrupted_blob_fails_and_leaves_nothing(admin, daemon, registry):
    layout = reg.Layout([reg.layer(reg.busybox_base([("tag", "f", uuid.uuid4().hex, 0)]))], CONFIG)
    try:
        ref = registry.push(layout, "busy/corrupt:1")
    finally:
        layout.close()
    digest = layout.layer_digests[0]
    path = registry.blob_path(digest)
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.seek(size // 2)
        f.write(b"corrupted!")
    end = admin.run(["/bin/true"], image=ref)
    assert end["status"] == "failed"
    assert "failed verification" in end["startup"]["error"], end
    hexd = digest.split(":")[1]
    assert not os.path.exists(os.path.join(store_dir(daemon), "blobs/sha256", hexd))
    assert not os.path.exists(os.path.join(store_dir(daemon), "layers", layout.diff_ids[0].split(":")[1]))
    assert os.listdir(os.path.join(store_dir(daemon), "tmp")) == []


def test_layer_escaping_its_directory_is_refused(admin, daemon, registry):
    marker = "adapt-escape-" + uuid.uuid4().hex
    evil = reg.layer(reg.busybox_base([("../../../../tmp/" + marker, "f", "pwned", 0)]))
    layout = reg.Layout([evil], CONFIG)
    try:
        ref = registry.push(layout, "busy/evil:1")
    finally:
        layout.close()
    end = admin.run(["/bin/true"], image=ref)
    assert end["status"] == "failed"
    assert "escapes the layer" in end["startup"]["error"], end
    assert not os.path.exists("/tmp/" + marker)
    hexd = layout.diff_ids[0].split(":")[1]
    assert not os.path.exists(os.path.join(store_dir(daemon), "layers", hexd))


def test_concurrent_pulls_download_each_layer_once(admin, registry):
    layout = reg.Layout([reg.layer(reg.busybox_base([("tag", "f", uuid.uuid4().hex, 0)]))], CONFIG)
    try:
        ref = registry.push(layout, "busy/conc:1")
    finally:
        layout.close()
    ids = []
    lock = threading.Lock()

    def create():
        sbx = admin.create({"image": ref, "startup": {"mode": "command", "argv": ["/bin/true"]}})
        with lock:
            ids.append(sbx["id"])

    threads = [threading.Thread(target=create) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for sid in ids:
        assert admin.wait_end(sid)["status"] == "completed"
    assert registry.blob_gets(layout.layer_digests[0]) == 1


def test_invalid_reference_is_a_400(admin):
    status, body = admin.api("POST", "/v1/sandboxes", {"image": "Not A Reference"})
    assert status == 400, body
    assert body["error"]["code"] == "invalid_argument"
    assert "not a valid image reference" in body["error"]["message"]
