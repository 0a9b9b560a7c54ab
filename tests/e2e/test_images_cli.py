"""The adapt CLI's image and env groups: adapt image pull|import|ls|get|rm, adapt env ls,
against a real registry (Debian's docker-registry) and archives made by skopeo."""

import json
import os
import subprocess
import tempfile
import uuid

import pytest

import registry as reg
from test_cli import ok, one_line_error

CONFIG = {"config": {"Cmd": ["/bin/cat", "/tag"], "Env": ["PATH=/bin"]}}


@pytest.fixture(scope="module")
def registry():
    r = reg.Registry()
    yield r
    r.close()


def push(registry, name, text):
    layout = reg.Layout([reg.layer(reg.busybox_base([("tag", "f", text, 0)]))], CONFIG)
    try:
        return registry.push(layout, name)
    finally:
        layout.close()


def test_image_pull_ls_get_rm(org, registry):
    text = uuid.uuid4().hex
    ref = push(registry, "cli/app:1", text)
    r = ok(org.cli("image", "pull", ref, timeout=300))
    assert ref in r.stdout and "ready" in r.stdout, r.stdout
    assert "\r[" not in r.stderr, "no progress bar when stderr is not a terminal"
    image = json.loads(ok(org.cli("image", "ls", "--json")).stdout)["items"][0]
    assert image["reference"] == ref and image["status"] == "ready"
    table = ok(org.cli("image", "ls")).stdout
    assert table.splitlines()[0].split() == ["ID", "REFERENCE", "SOURCE", "STATUS", "SIZE", "DIGEST"]
    assert image["id"] in table and ref in table

    got = ok(org.cli("image", "get", image["id"])).stdout
    assert image["digest"] in got and "linux/amd64" in got and "/bin/cat" in got
    got = json.loads(ok(org.cli("image", "get", image["id"], "--json")).stdout)
    assert got["config"]["Cmd"] == ["/bin/cat", "/tag"] and got["sandboxes"] == []

    end = org.run(["/bin/cat", "/tag"], imageId=image["id"])
    assert end["startup"]["stdout"] == text

    assert ok(org.cli("image", "rm", image["id"])).stdout == "removed %s\n" % image["id"]
    err = one_line_error(org.cli("image", "get", image["id"]))
    assert "not found" in err
    assert json.loads(ok(org.cli("image", "ls", "--json")).stdout)["items"] == []


def test_image_pull_failure_and_detach(org, registry):
    r = org.cli("image", "pull", registry.host + "/cli/missing:1", timeout=300)
    assert r.returncode == 1, r
    assert "failed" in one_line_error(r)
    ref = push(registry, "cli/detach:1", "d")
    img = json.loads(ok(org.cli("image", "pull", ref, "--detach", "--json")).stdout)
    assert img["status"] in ("pulling", "ready") and img["id"].startswith("img_")
    r = org.cli("image", "pull", ref, "--password-stdin")
    assert r.returncode == 2, r
    assert "--username" in one_line_error(r)


def test_image_import_from_skopeo_archive(org, registry):
    text = uuid.uuid4().hex
    ref = push(registry, "cli/private:1", text)
    d = tempfile.mkdtemp(prefix="adapt-cli-import-", dir="/tmp")
    try:
        archive = os.path.join(d, "app.tar")
        subprocess.run([reg.SKOPEO, "copy", "--insecure-policy", "--src-tls-verify=false",
                        "docker://" + ref, "docker-archive:%s:private/app:7" % archive],
                       check=True, capture_output=True, timeout=120)
        img = json.loads(ok(org.cli("image", "import", archive, "--json", timeout=300)).stdout)
        assert img["source"] == "import" and img["reference"] == "docker.io/private/app:7", img
        assert img["status"] == "ready"
        end = org.run(["/bin/cat", "/tag"], imageId=img["id"])
        assert end["startup"]["stdout"] == text
        r = org.cli("image", "import", archive, "--name", "other:1")
        assert "no image named 'other:1'" in one_line_error(r)
        r = org.cli("image", "import", os.path.join(d, "missing.tar"))
        assert "cannot read" in one_line_error(r)
    finally:
        subprocess.run(["rm", "-rf", d])


def test_env_ls(org):
    table = ok(org.cli("env", "ls")).stdout
    lines = table.splitlines()
    assert lines[0].split() == ["ALIAS", "AVAILABLE", "IMAGE", "DESCRIPTION"]
    aliases = [line.split()[0] for line in lines[1:]]
    assert aliases == ["python", "node", "gcc", "rust", "blender"]
    assert lines[1].split()[1:3] == ["yes", "debian:12"]
    body = json.loads(ok(org.cli("env", "ls", "--json")).stdout)
    assert [e["alias"] for e in body["environments"]] == aliases
