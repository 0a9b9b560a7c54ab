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
import test_images_api
from test_images_import import upload

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
