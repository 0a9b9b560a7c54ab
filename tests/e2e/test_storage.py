"""Persistent storage: encrypted volumes mounted at /workspace by durable sandboxes."""

import json
import os
import stat
import subprocess

from harness import poll_command, run_command


def sh(client, sid, script, timeout=60):
    cmd = run_command(client, sid, argv=["sh", "-c", script], waitSeconds=min(timeout, 60),
                      timeoutSeconds=timeout)
    return poll_command(client, sid, cmd["id"], timeout) if cmd["status"] == "running" else cmd


def volume(client, name):
    status, v = client.api("GET", "/v1/storage/" + name)
    assert status == 200, (status, v)
    return v


def image_path(daemon, volume_id):
    return os.path.join(daemon.state_dir, "storage", "volumes", volume_id + ".img")


def durable(client, storage=None, **fields):
    body = {"startupClass": "durable", **fields}
    if storage:
        body["storage"] = storage
    sid = client.create(body)["id"]
    sbx = client.wait_for_status(sid, ("running", "failed"), 120)
    assert sbx["status"] == "running", sbx
    return sbx


def test_bad_input_is_refused_and_changes_nothing(org):
    for body, field in (
        ({"name": "Bad_Name"}, "name"),
        ({"name": "-x"}, "name"),
        ({"name": "x" * 64}, "name"),
        ({}, "name"),
        ({"name": "ok", "sizeMiB": 63}, "sizeMiB"),
        ({"name": "ok", "sizeMiB": 131073}, "sizeMiB"),
        ({"name": "ok", "sizeMiB": "64"}, "sizeMiB"),
        ({"name": "ok", "colour": "red"}, "colour"),
    ):
        status, err = org.api("POST", "/v1/storage", body)
        assert status == 400, (body, status, err)
        assert err["error"]["field"] == field, err
    status, err = org.api("POST", "/v1/storage", raw="[1]")
    assert status == 400, err
    status, listing = org.api("GET", "/v1/storage")
    assert status == 200
    assert [v["name"] for v in listing["items"]] == ["default"], listing


def test_create_list_get_and_delete_with_confirmation(org, daemon):
    status, v = org.api("POST", "/v1/storage", {"name": "notes", "sizeMiB": 64})
    assert status == 201, (status, v)
    assert v["name"] == "notes" and v["sizeMiB"] == 64 and v["status"] == "ready"
    assert v["encrypted"] is True and v["default"] is False and v["attachments"] == []
    assert v["mountPath"] == "/workspace"
    assert 0 < v["usedBytes"] < 64 * 1024 * 1024
    assert v["id"].startswith("vol_")
    status, again = org.api("POST", "/v1/storage", {"name": "notes"})
    assert status == 409, again

    status, listing = org.api("GET", "/v1/storage")
    assert status == 200
    by_name = {x["name"]: x for x in listing["items"]}
    assert set(by_name) == {"default", "notes"}
    assert by_name["default"]["default"] is True

    # Another organization sees none of it.
    other = daemon.new_org()
    assert other.api("GET", "/v1/storage/notes")[0] == 404
    assert other.api("DELETE", "/v1/storage/notes", {"confirm": "notes"})[0] == 404
    assert "notes" not in [x["name"] for x in other.api("GET", "/v1/storage")[1]["items"]]

    # The exact name confirms; anything else is a 400 that deletes nothing.
    for body in ({}, {"confirm": "Notes"}, {"confirm": "note"}, {"confirm": 1}):
        status, err = org.api("DELETE", "/v1/storage/notes", body)
        assert status == 400, (body, status, err)
    assert volume(org, "notes")["status"] == "ready"
    assert os.path.exists(image_path(daemon, v["id"]))

    status, err = org.api("DELETE", "/v1/storage/default", {"confirm": "default"})
    assert status == 409 and "default" in err["error"]["message"], err

    status, _ = org.api("DELETE", "/v1/storage/notes", {"confirm": "notes"})
    assert status == 204
    assert org.api("GET", "/v1/storage/notes")[0] == 404
    assert not os.path.exists(image_path(daemon, v["id"]))
    assert not os.path.exists(os.path.join(daemon.state_dir, "storage", "volumes", v["id"]))
    assert org.api("DELETE", "/v1/storage/notes", {"confirm": "notes"})[0] == 404


def test_instant_sandboxes_refuse_storage_and_discard_their_workspace(org):
    status, err = org.api("POST", "/v1/sandboxes", {"startupClass": "instant", "storage": "default"})
    assert status == 400 and err["error"]["field"] == "storage", err
    assert "no persistent attachment" in err["error"]["message"]
    status, err = org.api("POST", "/v1/sandboxes", {"startupClass": "durable", "storage": "missing"})
    assert status == 404 and err["error"]["field"] == "storage", err

    first = org.create({})
    assert first["startupClass"] == "instant" and first["storage"] is None
    org.wait_for_status(first["id"], "running", 120)
    cmd = sh(org, first["id"], "echo scratch > /workspace/tmp.txt && cat /workspace/tmp.txt")
    assert cmd["exitCode"] == 0 and cmd["stdout"] == "scratch\n", cmd
    org.delete(first["id"])
    second = org.create({})
    org.wait_for_status(second["id"], "running", 120)
    cmd = sh(org, second["id"], "test -d /workspace && ls -A /workspace && echo clean")
    assert cmd["exitCode"] == 0 and cmd["stdout"] == "clean\n", cmd


def test_workspace_is_encrypted_at_rest_and_outlives_its_sandbox(org, daemon):
    status, v = org.api("POST", "/v1/storage", {"name": "project", "sizeMiB": 128})
    assert status == 201, v
    image = image_path(daemon, v["id"])
    sbx = durable(org, "project")
    assert sbx["startupClass"] == "durable" and sbx["storage"] == "project"
    sid = sbx["id"]
    assert [a["sandboxId"] for a in volume(org, "project")["attachments"]] == [sid]

    # In use: refused with 409, even with the right confirmation.
    status, err = org.api("DELETE", "/v1/storage/project", {"confirm": "project"})
    assert status == 409 and sid in err["error"]["message"], err

    marker = "adapt-plaintext-marker-5f1e2d"
    blocks_before = os.stat(image).st_blocks
    cmd = sh(org, sid, "mkdir -p /workspace/%s && yes %s | head -c 4194304 > /workspace/%s/data.txt && "
                       "sync && wc -c < /workspace/%s/data.txt" % (marker, marker, marker, marker))
    assert cmd["exitCode"] == 0 and cmd["stdout"].strip() == "4194304", cmd
    subprocess.run(["sync"], check=True)
    # The 4 MiB reached the image (its allocated blocks grew) ...
    assert (os.stat(image).st_blocks - blocks_before) * 512 >= 4 * 1024 * 1024
    # ... but neither the contents nor the directory name are there in plain text.
    with open(image, "rb") as f:
        raw = f.read()
    assert marker.encode() not in raw
    assert raw.count(b"\0") < len(raw)
    assert volume(org, "project")["usedBytes"] >= 4 * 1024 * 1024

    # The compute goes, the storage stays, and a new sandbox finds the files.
    org.delete(sid)
    assert volume(org, "project")["attachments"] == []
    again = durable(org, "project")["id"]
    cmd = sh(org, again, "wc -c < /workspace/%s/data.txt && head -c %d /workspace/%s/data.txt"
             % (marker, len(marker), marker))
    assert cmd["exitCode"] == 0 and cmd["stdout"] == "4194304\n" + marker, cmd

    # Several sandboxes may mount the same storage at once.
    third = durable(org, "project")["id"]
    sh(org, third, "echo shared > /workspace/shared.txt")
    cmd = sh(org, again, "cat /workspace/shared.txt")
    assert cmd["stdout"] == "shared\n", cmd
    assert {a["sandboxId"] for a in volume(org, "project")["attachments"]} == {again, third}
    org.delete(again)
    org.delete(third)
    assert org.api("DELETE", "/v1/storage/project", {"confirm": "project"})[0] == 204


def test_the_size_is_a_hard_quota(org):
    assert org.api("POST", "/v1/storage", {"name": "tiny", "sizeMiB": 64})[0] == 201
    sid = durable(org, "tiny")["id"]
    cmd = sh(org, sid, "dd if=/dev/zero of=/workspace/fill bs=1M count=100 2>&1; echo rc=$?", 120)
    assert "No space left on device" in cmd["stdout"], cmd
    assert "rc=0" not in cmd["stdout"], cmd
    cmd = sh(org, sid, "wc -c < /workspace/fill")
    assert int(cmd["stdout"]) < 64 * 1024 * 1024, cmd
    org.delete(sid)


def test_default_storage_is_made_on_first_use_and_never_deleted(org):
    sbx = durable(org)
    assert sbx["storage"] == "default"
    sh(org, sbx["id"], "echo kept > /workspace/default.txt")
    v = volume(org, "default")
    assert v["default"] is True and [a["sandboxId"] for a in v["attachments"]] == [sbx["id"]]
    org.delete(sbx["id"])
    status, err = org.api("DELETE", "/v1/storage/default", {"confirm": "default"})
    assert status == 409, err
    later = durable(org)
    assert sh(org, later["id"], "cat /workspace/default.txt")["stdout"] == "kept\n"
    org.delete(later["id"])


def test_volumes_survive_kill_9_and_half_made_ones_are_removed(fresh_daemon):
    d = fresh_daemon
    admin = d.admin
    key_file = os.path.join(d.state_dir, "storage", "master.key")
    assert admin.api("POST", "/v1/storage", {"name": "keep", "sizeMiB": 128})[0] == 201
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    sid = durable(admin, "keep")["id"]
    sh(admin, sid, "echo before-crash > /workspace/state.txt && sync")
    volumes_dir = os.path.join(d.state_dir, "storage", "volumes")
    stray = os.path.join(volumes_dir, "vol_strayleftover1.img.new")

    d.kill()
    with open(stray, "wb") as f:
        f.truncate(1 << 20)
    d.start(port=d.port)

    assert not os.path.exists(stray), os.listdir(volumes_dir)
    admin.wait_for_status(sid, "running", 60)
    assert sh(admin, sid, "cat /workspace/state.txt")["stdout"] == "before-crash\n"
    admin.delete(sid)
    # A clean stop and start: the volume is opened again with the same key.
    assert d.stop() == 0, d.log_tail()
    d.start(port=d.port)
    again = durable(admin, "keep")["id"]
    assert sh(admin, again, "cat /workspace/state.txt")["stdout"] == "before-crash\n"
    admin.delete(again)
    assert admin.api("DELETE", "/v1/storage/keep", {"confirm": "keep"})[0] == 204


def test_cli_creates_lists_and_deletes_with_confirmation(org):
    p = org.cli("storage", "create", "cli-data", "--size", "64")
    assert p.returncode == 0 and "cli-data" in p.stdout, p.stderr
    p = org.cli("storage", "ls")
    assert p.returncode == 0 and "cli-data" in p.stdout and "default" in p.stdout, p.stderr
    # adapt sandbox create --storage NAME --startup-class durable mounts it at /workspace.
    p = org.cli("sandbox", "create", "--storage", "cli-data", "--startup-class", "fast")
    assert p.returncode != 0 and "--startup-class" in p.stderr, p.stderr
    p = org.cli("sandbox", "create", "--storage", "cli-data", "--startup-class", "durable", "--json")
    assert p.returncode == 0, p.stderr
    sbx = json.loads(p.stdout)
    assert sbx["startupClass"] == "durable" and sbx["storage"] == "cli-data", sbx
    assert [a["sandboxId"] for a in volume(org, "cli-data")["attachments"]] == [sbx["id"]]
    p = org.cli("sandbox", "create", "--storage", "cli-data", "--startup-class", "instant")
    assert p.returncode != 0 and "no persistent attachment" in p.stderr, p.stderr
    org.delete(sbx["id"])
    p = org.cli("storage", "rm", "cli-data")
    assert p.returncode != 0 and "confirm" in p.stderr
    assert volume(org, "cli-data")["status"] == "ready"
    p = org.cli("storage", "rm", "cli-data", "--confirm", "cli-data")
    assert p.returncode == 0, p.stderr
    assert org.api("GET", "/v1/storage/cli-data")[0] == 404
