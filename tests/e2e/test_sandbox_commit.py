"""Saving a sandbox's filesystem as an image (POST /v1/sandboxes/{id}/image, `adapt sandbox
commit`): the writable layer becomes one layer on top of the sandbox's image; a sandbox made
from the new image reads the files written and not the ones deleted (overlay whiteouts and
opaque directories carried over); another organization can neither commit the sandbox nor
use or see the image; bad names are refused; deleting the image keeps layers another image
shares; a kill -9 mid-commit leaves no half image and the operation says Failed."""

import hashlib
import io
import json
import os
import stat
import tarfile
import time

from harness import run_command as run
from harness import wait_for_agent

# Writes files, deletes a file of the image (a whiteout) and replaces a directory of the image
# with a new one of the same name (an opaque directory).
PREPARE = ("echo prepared > /root/prepared.txt && mkdir -p /opt/tool && echo v1 > /opt/tool/version"
           " && rm /etc/issue.net && rm -rf /usr/share/doc/adduser && mkdir /usr/share/doc/adduser"
           " && echo fresh > /usr/share/doc/adduser/only")
CHECK = ("cat /root/prepared.txt /opt/tool/version; test -e /etc/issue.net && echo issue-there;"
         " ls /usr/share/doc/adduser")


def running_sandbox(client, body):
    sid = client.create(body)["id"]
    client.wait_for_status(sid, "running", 120)
    wait_for_agent(client, sid)
    return sid


def out(client, sid, command):
    cmd = run(client, sid, command=command)
    assert cmd["exitCode"] == 0, cmd
    return cmd["stdout"]


def commit(client, sid, body, expect=202):
    status, image = client.api("POST", "/v1/sandboxes/%s/image" % sid, body)
    assert status == expect, (status, image)
    return image


def wait_image(client, image_id, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        status, image = client.api("GET", "/v1/images/" + image_id)
        assert status == 200, (status, image)
        if image["status"] in ("ready", "failed"):
            return image
        assert time.monotonic() < deadline, image
        time.sleep(0.2)


def layer_dir(daemon, image_id):
    """Where the image store keeps a commit's own layer: commit-<sha256 of its key>, a name no
    layer's diff id takes."""
    key = ("import:" + image_id).encode()
    return os.path.join(daemon.state_dir, "image-store", "layers",
                        "commit-" + hashlib.sha256(key).hexdigest())


def forged_archive(image_id):
    """A `docker save` archive whose one layer claims the diff id that names `image_id`'s
    commit layer, its blob the key's very bytes (a plain blob is its own proof)."""
    layer = ("import:" + image_id).encode()
    config = json.dumps({"os": "linux", "architecture": "amd64",
                         "rootfs": {"type": "layers",
                                    "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]}})
    manifest = json.dumps([{"Config": "config.json", "RepoTags": ["forged:1"],
                            "Layers": ["layer.tar"]}])
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in (("layer.tar", layer), ("config.json", config.encode()),
                           ("manifest.json", manifest.encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def wait_gone(path, timeout=30):
    deadline = time.monotonic() + timeout
    while os.path.exists(path):
        assert time.monotonic() < deadline, "%s was not collected" % path
        time.sleep(0.1)


def test_running_sandbox_committed_then_a_new_sandbox_reads_its_files(org):
    sid = running_sandbox(org, {})
    out(org, sid, PREPARE)
    image = commit(org, sid, {"name": "prepared", "tag": "v1"})
    assert image["status"] == "committing", image
    assert image["source"] == "commit" and image["reference"] == "prepared:v1", image
    assert image["operation"]["id"] == image["id"], image
    ready = wait_image(org, image["id"])
    assert ready["status"] == "ready", ready
    assert ready["size"] > 0 and ready["digest"].startswith("sha256:"), ready
    status, op = org.api("GET", "/v1/operations/" + image["id"])
    assert status == 200 and op["kind"] == "image.commit" and op["phase"] == "Completed", op
    assert op["imageId"] == image["id"], op
    listed = org.api("GET", "/v1/images")[1]["items"]
    assert [(i["id"], i["reference"]) for i in listed] == [(image["id"], "prepared:v1")], listed

    # The layer on disk: the deleted file is a whiteout, the replaced directory opaque.
    layer = layer_dir(org.daemon, image["id"])
    st = os.lstat(os.path.join(layer, "etc/issue.net"))
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == 0, st
    assert os.getxattr(os.path.join(layer, "usr/share/doc/adduser"), "trusted.overlay.opaque") == b"y"

    made = running_sandbox(org, {"imageId": image["id"]})
    assert out(org, made, CHECK) == "prepared\nv1\nonly\n"
    # By its name too; the name is the organization's only.
    by_name = running_sandbox(org, {"image": "prepared:v1"})
    assert out(org, by_name, CHECK) == "prepared\nv1\nonly\n"
    assert org.get(by_name)["image"] == "import:" + image["id"]
    status, err = org.daemon.new_org().api("POST", "/v1/sandboxes", {"image": "prepared:v1"})
    assert status in (201, 400, 404) and (status != 201 or err["image"] != "import:" + image["id"]), err
    org.delete(by_name)
    # The sandbox it came from is unchanged and still runs; the base image is untouched.
    assert out(org, sid, CHECK) == "prepared\nv1\nonly\n"
    plain = running_sandbox(org, {})
    assert "issue-there" in out(org, plain, CHECK.replace("cat /root/prepared.txt /opt/tool/version;", ""))

    # One name and tag per organization; another tag is another image.
    status, err = org.api("POST", "/v1/sandboxes/%s/image" % sid, {"name": "prepared", "tag": "v1"})
    assert status == 409 and err["error"]["field"] == "name", (status, err)
    assert image["id"] in err["error"]["message"], err
    second = commit(org, sid, {"name": "prepared"})
    assert second["reference"] == "prepared:latest", second
    assert wait_image(org, second["id"])["status"] == "ready"

    # In use: not deleted. Once its sandbox is gone, it is, and its layer with it.
    status, err = org.api("DELETE", "/v1/images/" + image["id"])
    assert status == 409, (status, err)
    org.delete(made)
    status, _ = org.api("DELETE", "/v1/images/" + image["id"])
    assert status == 204
    wait_gone(layer)
    assert org.api("GET", "/v1/images/" + image["id"])[0] == 404
    assert os.path.isdir(layer_dir(org.daemon, second["id"]))


def test_a_deleted_image_keeps_the_layers_an_image_made_from_it_shares(org):
    sid = running_sandbox(org, {})
    out(org, sid, "echo first > /root/first.txt")
    first = wait_image(org, commit(org, sid, {"name": "first"})["id"])
    assert first["status"] == "ready", first
    child = running_sandbox(org, {"imageId": first["id"]})
    out(org, child, "echo second > /root/second.txt && rm /root/first.txt && echo again > /root/third.txt")
    second = wait_image(org, commit(org, child, {"name": "second"})["id"])
    assert second["status"] == "ready", second
    org.delete(child)
    status, _ = org.api("DELETE", "/v1/images/" + first["id"])
    assert status == 204
    # The first image's layer stays: the second image is built on it.
    time.sleep(1)
    assert os.path.isdir(layer_dir(org.daemon, first["id"]))
    grandchild = running_sandbox(org, {"imageId": second["id"]})
    listing = out(org, grandchild, "ls /root")
    assert "second.txt" in listing and "third.txt" in listing and "first.txt" not in listing, listing
    org.delete(grandchild)
    assert org.api("DELETE", "/v1/images/" + second["id"])[0] == 204
    wait_gone(layer_dir(org.daemon, second["id"]))
    wait_gone(layer_dir(org.daemon, first["id"]))


def test_stopped_durable_sandbox_committed_and_started_again(org):
    sid = running_sandbox(org, {"startupClass": "durable"})
    out(org, sid, "echo durable > /root/durable.txt && rm /etc/issue.net")
    stopped = org.api("POST", "/v1/sandboxes/%s/stop" % sid)[1]
    assert stopped["status"] == "hibernated" and stopped["hibernation"]["workspace"] == "kept", stopped
    image = wait_image(org, commit(org, sid, {"name": "durable", "tag": "2024.1_a"})["id"])
    assert image["status"] == "ready", image
    made = running_sandbox(org, {"imageId": image["id"]})
    assert out(org, made, "cat /root/durable.txt; test -e /etc/issue.net || echo gone") == "durable\ngone\n"
    # The disk was only read: the sandbox starts again with its files.
    status, body = org.api("POST", "/v1/sandboxes/%s/start" % sid)
    assert status == 202, (status, body)
    org.wait_for_status(sid, "running", 120)
    wait_for_agent(org, sid)
    assert out(org, sid, "cat /root/durable.txt") == "durable\n"


def test_stopped_instant_sandbox_has_nothing_to_commit(org):
    sid = running_sandbox(org, {})
    org.api("POST", "/v1/sandboxes/%s/stop" % sid)
    status, err = org.api("POST", "/v1/sandboxes/%s/image" % sid, {"name": "gone"})
    assert status == 409 and "instant" in err["error"]["message"], (status, err)
    assert org.api("GET", "/v1/images")[1]["items"] == []


def test_bad_names_and_bodies_are_refused_and_change_nothing(org):
    sid = running_sandbox(org, {})
    bad = [
        ({}, "name"), ({"name": 5}, "name"), ({"name": ""}, "name"), ({"name": "Upper"}, "name"),
        ({"name": "under_score"}, "name"), ({"name": "-lead"}, "name"), ({"name": "a" * 64}, "name"),
        ({"name": "../etc"}, "name"), ({"name": "ok", "tag": ""}, "tag"), ({"name": "ok", "tag": "-x"}, "tag"),
        ({"name": "ok", "tag": "a/b"}, "tag"), ({"name": "ok", "tag": "t" * 129}, "tag"),
        ({"name": "ok", "tag": 3}, "tag"), ({"name": "ok", "extra": 1}, "extra"),
    ]
    for body, field in bad:
        status, err = org.api("POST", "/v1/sandboxes/%s/image" % sid, body)
        assert status == 400 and err["error"]["field"] == field, (body, status, err)
    status, err = org.request("POST", "/v1/sandboxes/%s/image" % sid, raw=b"[1]",
                              headers={"Content-Type": "application/json"})[:2]
    assert status == 400, (status, err)
    for missing in ("sbx_doesnotexist000000000", "nope", "..%2F..%2Fetc"):
        status, err = org.api("POST", "/v1/sandboxes/%s/image" % missing, {"name": "ok"})
        assert status == 404, (missing, status, err)
    assert org.api("GET", "/v1/images")[1]["items"] == []


def test_another_organization_can_neither_commit_nor_use_the_image(org):
    other = org.daemon.new_org()
    sid = running_sandbox(org, {})
    out(org, sid, "echo secret > /root/secret.txt")
    status, err = other.api("POST", "/v1/sandboxes/%s/image" % sid, {"name": "stolen"})
    assert status == 404, (status, err)
    assert other.api("GET", "/v1/images")[1]["items"] == []
    image = wait_image(org, commit(org, sid, {"name": "mine"})["id"])
    assert image["status"] == "ready", image
    assert other.api("GET", "/v1/images/" + image["id"])[0] == 404
    assert other.api("GET", "/v1/operations/" + image["id"])[0] == 404
    assert other.api("DELETE", "/v1/images/" + image["id"])[0] == 404
    status, err = other.api("POST", "/v1/sandboxes", {"imageId": image["id"]})
    assert status == 404, (status, err)
    status, err = other.api("POST", "/v1/sandboxes", {"image": "import:" + image["id"]})
    assert status == 404, (status, err)
    # An archive naming the image's layer by the hash that names it on disk gets no part of it.
    status, forged = other.api("POST", "/v1/images/import", raw=forged_archive(image["id"]),
                               headers={"Content-Type": "application/x-tar"})
    assert status == 400, (status, forged)
    assert other.api("GET", "/v1/images")[1]["items"] == []
    # The same name is free in another organization.
    theirs = running_sandbox(other, {})
    assert wait_image(other, commit(other, theirs, {"name": "mine"})["id"])["status"] == "ready"
    assert org.api("GET", "/v1/images/" + image["id"])[1]["status"] == "ready"


def test_cli_commit_waits_for_the_image(org):
    sid = running_sandbox(org, {})
    out(org, sid, "echo from-cli > /root/cli.txt")
    r = org.cli("sandbox", "commit", sid, "--name", "from-cli", "--tag", "t1", "--wait")
    assert r.returncode == 0, r.stderr
    assert "from-cli:t1" in r.stdout and "image.commit" in r.stdout and "Completed" in r.stdout, r.stdout
    images = org.api("GET", "/v1/images")[1]["items"]
    assert [i["reference"] for i in images] == ["from-cli:t1"], images
    r = org.cli("sandbox", "commit", sid, "--name", "from-cli", "--tag", "t1")
    assert r.returncode != 0 and "from-cli:t1" in r.stderr, (r.stdout, r.stderr)


def test_kill_mid_commit_leaves_no_image_and_the_operation_failed(fresh_daemon):
    d = fresh_daemon
    admin = d.admin
    sid = running_sandbox(admin, {})
    out(admin, sid, "echo crash > /root/crash.txt")
    # The layer is published, the reference not yet: adaptd dies there.
    d.stop()
    os.environ["ADAPT_FAULT"] = "image.commit.after_layer"
    try:
        d.start(port=d.port)
    finally:
        os.environ.pop("ADAPT_FAULT", None)
    admin.wait_for_status(sid, "running", 120)
    wait_for_agent(admin, sid)
    image = commit(admin, sid, {"name": "crashed"})
    d.proc.wait(timeout=60)
    assert d.proc.returncode == 86, d.log_tail()
    assert os.path.isdir(layer_dir(d, image["id"])), "the crash came after publishing the layer"
    d.start(port=d.port)
    failed = wait_image(admin, image["id"])
    assert failed["status"] == "failed" and "interrupted" in failed["error"], failed
    status, op = admin.api("GET", "/v1/operations/" + image["id"])
    assert status == 200 and op["phase"] == "Failed" and op["kind"] == "image.commit", op
    wait_gone(layer_dir(d, image["id"]))
    assert not any("commit" in n for n in os.listdir(os.path.join(d.state_dir, "image-store/tmp")))
    # The sandbox is unharmed, and the name is free again.
    admin.wait_for_status(sid, "running", 120)
    wait_for_agent(admin, sid)
    assert out(admin, sid, "cat /root/crash.txt") == "crash\n"
    again = wait_image(admin, commit(admin, sid, {"name": "crashed"})["id"])
    assert again["status"] == "ready", again
    made = running_sandbox(admin, {"imageId": again["id"]})
    assert out(admin, made, "cat /root/crash.txt") == "crash\n"
