"""Images through both SDKs (issue 23) against a real adaptd and a real registry: pull with a
progress callback, import from an archive file (made by skopeo from the registry), run each
by imageId, delete."""

import os
import subprocess
import sys
import tempfile

import pytest

import registry as reg
from sdk_support import SDK_PY, build_typescript_sdk, scenario
from test_images_api import push, registry  # noqa: F401 (a fixture)


@pytest.fixture(scope="module")
def built():
    return build_typescript_sdk()


@pytest.fixture(scope="module")
def adapt():
    sys.path.insert(0, os.path.join(SDK_PY, "src"))
    import adapt as module
    return module


def pushed(registry, name):
    """A one-layer busybox image whose CMD prints its tag text; (reference, tag text)."""
    ref, _, text = push(registry, name)
    return ref, text


def archive_of(ref, directory):
    dest = os.path.join(directory, "image.tar")
    r = subprocess.run([reg.SKOPEO, "copy", "--insecure-policy", "--src-tls-verify=false",
                        "docker://" + ref, "oci-archive:" + dest], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, "skopeo copy failed: %s %s" % (r.stdout, r.stderr)
    return dest


def test_python_sdk_pulls_with_progress_imports_runs_and_deletes(adapt, daemon, org, registry):
    client = adapt.Client(url=daemon.url, api_key=org.key)
    ref, text = pushed(registry, "sdk/py:1")
    progress = []
    image = client.images.pull(ref, on_progress=progress.append)
    assert image.status == "ready" and image.reference == ref and image.id.startswith("img_")
    assert progress and isinstance(progress[-1], adapt.models.Progress)
    assert progress[-1].bytes == progress[-1].total_bytes > 0
    with tempfile.TemporaryDirectory(dir="/tmp") as d:
        ref2, text2 = pushed(registry, "sdk/py-import:1")
        imported = client.images.import_archive(archive_of(ref2, d))
    assert imported.status == "ready" and imported.source == "import"
    assert {image.id, imported.id} <= {i.id for i in client.images.list()}
    for img, want in ((image, text), (imported, text2)):
        sb = client.sandboxes.create(image_id=img.id, startup={"mode": "image"})
        info = sb.wait_until(["completed"])
        assert info.status == "completed" and info.startup.stdout == want
        sb.delete()
        client.images.delete(img.id)
    with pytest.raises(adapt.NotFound):
        client.images.get(image.id)


def test_typescript_sdk_pulls_with_progress_imports_runs_and_deletes(built, daemon, org, registry):
    ref, text = pushed(registry, "sdk/ts:1")
    with tempfile.TemporaryDirectory(dir="/tmp") as d:
        ref2, text2 = pushed(registry, "sdk/ts-import:1")
        out = scenario("images", daemon, org, REF=ref, ARCHIVE=archive_of(ref2, d))
    assert out["pulled"]["status"] == "ready" and out["pulled"]["reference"] == ref
    last = out["lastProgress"]
    assert out["progressCalls"] >= 1 and last["bytes"] == last["totalBytes"] > 0
    assert out["imported"]["status"] == "ready" and out["imported"]["source"] == "import"
    assert {out["pulled"]["id"], out["imported"]["id"]} <= set(out["listed"])
    assert out["runs"] == [["completed", text], ["completed", text2]]
    assert out["afterDelete"]["cls"] == "NotFound"
