"""Deleting an organization (DELETE /v1/orgs/{id}, adapt org delete): seed 001's "Before
deleting an organization, explicitly delete its sandboxes, including completed or failed ones,
so their disks are cleaned up first". Refused while a sandbox is not deleted; otherwise the
organization's keys stop at once and its files, database and records go, and a deletion a crash
cut is finished by the next start."""
import os
import sqlite3
import threading
import time

import yaml

import harness
from conftest import close_daemon, start_daemon
from test_database import interactive, sql
from test_named_checkpoints import checkpoints_path, running_sandbox


def org_named(d, name):
    """Creates an organization called `name` with a key; returns (org record, its Client)."""
    status, org = d.admin.api("POST", "/v1/orgs", {"name": name})
    assert status == 201, org
    status, key = d.admin.api("POST", "/v1/orgs/%s/keys" % org["id"], {"name": "k"})
    assert status == 201, key
    client = harness.Client(d, key["key"], org["id"])
    d.clients.append(client)
    return org, client


def read_db(d, sql_text, *args):
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(d.state_dir, "adapt.db"), uri=True)
    try:
        return db.execute(sql_text, args).fetchall()
    finally:
        db.close()


def volume_dirs(d):
    root = os.path.join(d.state_dir, "storage", "volumes")
    return set(os.listdir(root)) if os.path.isdir(root) else set()


def holdings(client):
    """A secret, an object and a storage volume of the client's organization."""
    assert client.api("POST", "/v1/secrets", {"name": "API_TOKEN", "value": "s3cr3t"})[0] in (200, 201)
    status, obj = client.api("PUT", "/v1/objects/content?key=notes/a.txt", raw=b"hello")
    assert status in (200, 201), obj
    status, vol = client.api("POST", "/v1/storage", {"name": "data", "sizeMiB": 64})
    assert status == 201, vol
    return vol["id"]


with open(os.path.join(harness.REPO, "docs", "openapi.yaml")) as f:
    DELETE_ORG = yaml.safe_load(f)["paths"]["/v1/orgs/{id}"]["delete"]


def delete_org(d, org, confirm=None, who=None):
    """DELETE /v1/orgs/{id}; every answer is one the spec documents, errors in API.md's form."""
    path = "/v1/orgs/%s?confirm=%s" % (org["id"], confirm if confirm is not None else org["name"])
    status, body = (who or d.admin).api("DELETE", path)
    assert str(status) in DELETE_ORG["responses"], (status, body)
    if status >= 400:
        assert set(body["error"]) >= {"code", "message"}, body
    else:
        assert body is None, body
    return status, body


def all_orgs(d):
    """Every organization, page by page (newest first; the admin one is the oldest)."""
    orgs, cursor = [], None
    while True:
        status, page = d.admin.api("GET", "/v1/orgs?limit=200" + ("&cursor=" + cursor if cursor else ""))
        assert status == 200, page
        orgs += page["items"]
        cursor = page["nextCursor"]
        if cursor is None:
            return orgs


def listed(d, org_id):
    return [o for o in all_orgs(d) if o["id"] == org_id]


def test_only_the_admin_key_deletes_and_never_the_admin_organization(daemon):
    org, client = org_named(daemon, harness.unique("tenant"))
    other_org, other = org_named(daemon, harness.unique("other"))
    for who, target in ((client, org), (client, other_org), (other, org)):
        status, err = delete_org(daemon, target, who=who)
        assert status == 403 and err["error"]["code"] == "permission_denied", err
    admin_org = [o for o in all_orgs(daemon) if o["admin"]][0]
    status, err = delete_org(daemon, admin_org)
    assert status == 409 and "admin organization" in err["error"]["message"], err
    status, err = delete_org(daemon, {"id": "org_doesnotexist", "name": "x"})
    assert status == 404, err
    # A wrong or missing confirmation changes nothing.
    for confirm in ("", org["id"], org["name"].upper()):
        status, err = delete_org(daemon, org, confirm)
        assert status == 400 and err["error"]["field"] == "confirm", err
    status, err = daemon.admin.api("DELETE", "/v1/orgs/%s" % org["id"], {"confirm": 7})
    assert status == 400 and err["error"]["field"] == "confirm", err
    assert client.api("GET", "/v1/sandboxes")[0] == 200
    assert listed(daemon, org["id"])[0]["status"] == "active"


def test_refused_while_a_sandbox_is_not_deleted_then_everything_goes(daemon):
    name = harness.unique("leaving")
    org, client = org_named(daemon, name)
    bystander_org, bystander = org_named(daemon, harness.unique("staying"))
    vol_id = holdings(client)
    holdings(bystander)
    assert vol_id in volume_dirs(daemon)
    status, db = client.api("POST", "/v1/database")
    assert status == 200 and db["status"] == "ready", db
    db_name = read_db(daemon, "SELECT name FROM databases WHERE org_id = ?", org["id"])[0][0]

    # A completed sandbox still holds its disk: refused, naming it, and nothing changes.
    sbx = client.create({"startup": {"mode": "command", "argv": ["true"]}})
    client.wait_for_status(sbx["id"], "completed")
    status, err = delete_org(daemon, org)
    assert status == 409 and "1 sandbox" in err["error"]["message"], err
    assert "completed or failed" in err["error"]["message"], err
    assert client.api("GET", "/v1/secrets")[0] == 200
    r = daemon.admin.cli("org", "delete", org["id"], "--confirm", name)
    assert r.returncode != 0 and "sandbox" in r.stderr, (r.stdout, r.stderr)

    client.delete(sbx["id"])
    # A checkpoint kept past its sandbox's deletion goes with the organization: once the
    # sandbox's record is purged, nothing else could list or remove it.
    kept_sid = running_sandbox(client)
    status, body = client.api("POST", checkpoints_path(kept_sid), {"name": "kept", "keep": True})
    assert status == 201, body
    client.delete(kept_sid)
    kept_dir = os.path.join(daemon.state_dir, "checkpoint-store", "data", "kept", kept_sid)
    assert os.path.isdir(kept_dir), kept_dir
    # The bystander's database sandbox sees the organization's database until it goes.
    watcher = interactive(bystander)
    probe = "SELECT count(*) FROM pg_database WHERE datname = '%s'" % db_name
    assert sql(bystander, watcher, probe)["stdout"].split()[-1] == "1"

    r = daemon.admin.cli("org", "delete", org["id"], "--confirm", name)
    assert r.returncode == 0, r.stderr
    assert "deleted organization " + org["id"] in r.stdout, r.stdout

    status, err = client.api("GET", "/v1/sandboxes")
    assert status == 401, err
    assert listed(daemon, org["id"]) == []
    assert vol_id not in volume_dirs(daemon)
    assert not os.path.exists(kept_dir), os.listdir(os.path.dirname(kept_dir))
    assert sql(bystander, watcher, probe)["stdout"].split()[-1] == "0"
    for table in ("sandboxes", "secrets", "objects", "volumes", "databases", "api_keys",
                  "events", "ledger", "billing_accounts"):
        assert read_db(daemon, "SELECT COUNT(*) FROM %s WHERE org_id = ?" % table,
                       org["id"]) == [(0,)], table
    # What the organization's objects were stored in is gone; the bystander's is kept.
    blobs = {row[0] for row in read_db(daemon, "SELECT blob FROM objects")}
    on_disk = set(os.listdir(os.path.join(daemon.state_dir, "objects", "blobs")))
    assert blobs <= on_disk, (blobs, on_disk)
    status, body = bystander.api("GET", "/v1/objects/content?key=notes/a.txt")
    assert status == 200, body
    assert bystander.api("GET", "/v1/storage/data")[0] == 200
    assert bystander_org["id"] in [o["id"] for o in all_orgs(daemon)]

    # Repeating answers 404; the name is free again, and the new organization starts empty.
    status, err = delete_org(daemon, org)
    assert status == 404, err
    _, again = org_named(daemon, name)
    assert again.api("GET", "/v1/secrets")[1]["items"] == []
    assert again.api("GET", "/v1/database")[1]["status"] == "not_created"


def test_a_deletion_cut_by_a_crash_is_finished_by_the_next_start():
    d = start_daemon()
    try:
        org, client = org_named(d, harness.unique("crashed"))
        vol_id = holdings(client)
        d.kill()
        os.environ["ADAPT_FAULT"] = "org.delete.after_close"
        try:
            d.start(port=d.port)
        finally:
            os.environ.pop("ADAPT_FAULT", None)

        def delete_in_background():
            try:
                delete_org(d, org)
            except OSError:
                pass  # adaptd dies under it

        t = threading.Thread(target=delete_in_background)
        t.start()
        assert d.proc.wait(timeout=60) == 86, d.log_tail()
        t.join(timeout=30)
        # Closed: its key is gone already, its files not yet.
        assert read_db(d, "SELECT deleting_at != 0 FROM orgs WHERE id = ?", org["id"]) == [(1,)]
        assert read_db(d, "SELECT COUNT(*) FROM api_keys WHERE org_id = ?", org["id"]) == [(0,)]
        assert vol_id in volume_dirs(d)

        d.start(port=d.port)
        deadline = time.monotonic() + 30
        while listed(d, org["id"]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert listed(d, org["id"]) == []
        assert vol_id not in volume_dirs(d)
        assert read_db(d, "SELECT COUNT(*) FROM objects WHERE org_id = ?", org["id"]) == [(0,)]
        assert client.api("GET", "/v1/sandboxes")[0] == 401
    finally:
        close_daemon(d)
