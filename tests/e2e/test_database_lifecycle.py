"""The organization's PostgreSQL database past its creation (issue 19): the plan's size quota
(over it the role may only read, whatever it SETs, on adaptd's timer and on demand, and writes
again once under it), the plan's connection limit, POST /v1/database/dump (a pg_dump archive in
the organization's object storage that pg_restore reads) and DELETE /v1/database with its exact
confirmation. The SQL runs in sandboxes through pg_wire.py, as in test_database.py."""

import hashlib
import subprocess
import tempfile
import time
import urllib.parse

import pytest

import harness
from conftest import close_daemon
from test_database import interactive, sql

PG_RESTORE = "/usr/lib/postgresql/15/bin/pg_restore"


@pytest.fixture
def quota_daemon():
    d = harness.Daemon(extra_args=["--database-quota-interval-seconds", "1"])
    d.start()
    yield d
    d.delete_everything()
    close_daemon(d)


def set_plan(d, org, plan_id, limits):
    status, plan = d.admin.api("PUT", "/v1/plans/" + plan_id, {"name": plan_id, "limits": limits})
    assert status == 200, plan
    assert plan["limits"]["databaseMiB"] == limits.get("databaseMiB"), plan
    status, account = d.admin.api("PUT", "/v1/orgs/%s/plan" % org.org_id, {"planId": plan_id})
    assert status == 200, account


def refused(cmd, text="permission denied"):
    assert cmd["exitCode"] == 1 and text in cmd["stderr"], cmd


def test_over_its_quota_the_database_is_read_only_whatever_the_role_sets(quota_daemon):
    d = quota_daemon
    org = d.new_org()
    set_plan(d, org, "db-small", {"databaseMiB": 12, "databaseConnections": 5})
    status, db = org.api("POST", "/v1/database")
    assert status == 200 and db["status"] == "ready", db
    assert db["quotaBytes"] == 12 << 20 and db["connectionLimit"] == 5, db
    sid = interactive(org)
    cmd = sql(org, sid, "CREATE TABLE big (v text)", "CREATE TABLE small (v text)",
              "CREATE FUNCTION sneak() RETURNS void LANGUAGE sql SECURITY DEFINER "
              "AS $$INSERT INTO small VALUES ('sneaked')$$",
              "GRANT ALL ON small TO PUBLIC",
              "SELECT rolconnlimit FROM pg_roles WHERE rolname = current_user")
    assert cmd["exitCode"] == 0 and cmd["stdout"].strip() == "5", (
        cmd["exitCode"], cmd["stdout"][-300:], cmd["stderr"][-600:])
    # ~10 MiB of rows (each under the TOAST threshold, so stored as is) pass the 12 MiB quota.
    # They go in under a larger quota: under the small one, the 1 s timer could find the
    # database over it before the insert commits and end the insert's session (a loaded run
    # did); the plan is then put back, and the timer alone finds it over.
    set_plan(d, org, "db-roomy", {"databaseMiB": 64, "databaseConnections": 5})
    cmd = sql(org, sid, "INSERT INTO big SELECT repeat(md5(i::text), 40) "
                        "FROM generate_series(1, 8000) i")
    assert cmd["exitCode"] == 0, (cmd["exitCode"], cmd["stderr"][-600:])
    set_plan(d, org, "db-small", {"databaseMiB": 12, "databaseConnections": 5})

    # adaptd's timer (1 s here) finds it over quota: no API call in between.
    deadline = time.time() + 30
    while True:
        cmd = sql(org, sid, "INSERT INTO small VALUES ('late')")
        if cmd["exitCode"] == 1:
            break
        assert time.time() < deadline, "writes still allowed 30 s after passing the quota"
        time.sleep(1)
    refused(cmd)
    status, db = org.api("GET", "/v1/database")
    assert status == 200 and db["status"] == "over_quota", db
    assert db["sizeBytes"] > db["quotaBytes"], db

    # Reads still work.
    cmd = sql(org, sid, "SELECT count(*) FROM big")
    assert cmd["exitCode"] == 0 and cmd["stdout"].strip() == "8000", cmd

    # No SET, grant, ownership or definer's rights gives writes back.
    frozen = "adapt_%s_frozen" % org.org_id
    for statements, text in [
            (["SET default_transaction_read_only = off", "INSERT INTO small VALUES ('x')"], None),
            (["SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
              "INSERT INTO small VALUES ('x')"], None),
            (["BEGIN READ WRITE", "INSERT INTO small VALUES ('x')"], None),
            (["UPDATE big SET v = 'y'"], None),
            (["DELETE FROM big"], None),
            (["TRUNCATE big"], None),
            (["GRANT INSERT ON small TO CURRENT_USER", "INSERT INTO small VALUES ('x')"], None),
            (["ALTER TABLE small OWNER TO CURRENT_USER"], "must be owner"),
            (["DROP TABLE big"], "must be owner"),
            (["SET ROLE %s" % frozen], "permission denied to set role"),
            (["CREATE TABLE more (v text)"], None),
            (["CREATE TEMP TABLE more (v text)"], None),
            (["CREATE SCHEMA more"], None),
            (["SELECT sneak()"], None),
            (["SELECT lo_create(0)"], None),
            (["SELECT lo_from_bytea(0, 'x')"], None)]:
        refused(sql(org, sid, *statements), text or "permission denied")
    # None of them wrote (rows written before the timer's check are 'late').
    cmd = sql(org, sid, "SELECT count(*) FROM small WHERE v <> 'late'")
    assert cmd["exitCode"] == 0 and cmd["stdout"].strip() == "0", cmd

    # A larger plan: writable again on demand (GET), everything handed back.
    set_plan(d, org, "db-large", {"databaseMiB": 64, "databaseConnections": 6})
    status, db = org.api("GET", "/v1/database")
    assert status == 200 and db["status"] == "ready", db
    assert db["quotaBytes"] == 64 << 20 and db["connectionLimit"] == 6, db
    cmd = sql(org, sid, "INSERT INTO small VALUES ('back')", "SELECT sneak()",
              "DROP TABLE big", "SELECT count(*) FROM small WHERE v <> 'late'",
              "SELECT rolconnlimit FROM pg_roles WHERE rolname = current_user")
    assert cmd["exitCode"] == 0, cmd
    assert cmd["stdout"].split() == ["2", "6"], cmd


def test_a_dump_is_a_pg_restore_archive_in_the_organizations_objects(org, daemon):
    other = daemon.new_org()
    status, err = other.api("POST", "/v1/database/dump")
    assert status == 404 and "no database" in err["error"]["message"], err

    sid = interactive(org)
    cmd = sql(org, sid, "CREATE TABLE kept (v text)", "INSERT INTO kept VALUES ('dumped row')")
    assert cmd["exitCode"] == 0, cmd
    status, dump = org.api("POST", "/v1/database/dump")
    assert status == 201, dump
    assert set(dump) == {"bucket", "key", "sizeBytes", "sha256", "createdAt"}, dump
    assert dump["bucket"] == "objects" and dump["key"].startswith("database-dumps/"), dump
    assert dump["key"].endswith(".dump") and dump["sizeBytes"] > 0, dump

    status, _, body, _ = org.request("GET", "/v1/objects/content?key=" + urllib.parse.quote(dump["key"]))
    assert status == 200 and len(body) == dump["sizeBytes"], status
    assert hashlib.sha256(body).hexdigest() == dump["sha256"]
    assert body[:5] == b"PGDMP"  # the custom format's magic
    with tempfile.NamedTemporaryFile(suffix=".dump") as f:
        f.write(body)
        f.flush()
        listing = subprocess.run([PG_RESTORE, "--list", f.name], capture_output=True, text=True)
        assert listing.returncode == 0, listing.stderr
        assert "TABLE public kept" in listing.stdout, listing.stdout
        data = subprocess.run([PG_RESTORE, "--data-only", "--table=kept", "--file=-", f.name],
                              capture_output=True, text=True)
        assert "dumped row" in data.stdout, data.stdout
    # Another organization sees none of it.
    status, listing = other.api("GET", "/v1/objects?prefix=database-dumps/")
    assert status == 200 and not listing["items"], listing

    r = org.cli("db", "dump")
    assert r.returncode == 0, r.stderr
    assert "dumped to objects/database-dumps/" in r.stdout, r.stdout


def test_deleting_the_database_needs_the_org_id_and_ends_the_sandboxes_access(org, daemon):
    other = daemon.new_org()
    sid = interactive(org)
    cmd = sql(org, sid, "CREATE TABLE gone (v text)", "INSERT INTO gone VALUES ('soon gone')")
    assert cmd["exitCode"] == 0, cmd

    for body in ({}, {"confirm": ""}, {"confirm": other.org_id}, {"confirm": org.org_id.upper()}):
        status, err = org.api("DELETE", "/v1/database", body)
        assert status == 400 and err["error"]["field"] == "confirm", (body, err)
    status, err = org.api("DELETE", "/v1/database", {"confirm": 7})
    assert status == 400 and err["error"]["field"] == "confirm", err
    status, err = org.api("DELETE", "/v1/database", {"confirm": org.org_id, "force": True})
    assert status == 400 and err["error"]["field"] == "force", err
    # Another organization cannot delete it: its own has never been made.
    status, err = other.api("DELETE", "/v1/database", {"confirm": org.org_id})
    assert status == 404, err
    status, err = other.api("DELETE", "/v1/database?confirm=" + other.org_id)
    assert status == 404, err
    r = org.cli("db", "delete", "--confirm", "nope")
    assert r.returncode != 0 and "confirm" in r.stderr, r.stderr
    cmd = sql(org, sid, "SELECT v FROM gone")
    assert cmd["exitCode"] == 0 and cmd["stdout"].strip() == "soon gone", cmd

    r = org.cli("db", "delete", "--confirm", org.org_id)
    assert r.returncode == 0, r.stderr
    status, db = org.api("GET", "/v1/database")
    assert status == 200 and db["status"] == "not_created", db
    cmd = sql(org, sid, "SELECT 1")
    assert cmd["exitCode"] == 1 and ("does not exist" in cmd["stderr"]
                                     or "authentication failed" in cmd["stderr"]), cmd
    status, err = org.api("DELETE", "/v1/database", {"confirm": org.org_id})
    assert status == 404, err

    # Made again: empty, and the old sandbox's password no longer opens it.
    status, db = org.api("POST", "/v1/database")
    assert status == 200 and db["status"] == "ready", db
    cmd = sql(org, sid, "SELECT 1")
    assert cmd["exitCode"] == 1 and "authentication failed" in cmd["stderr"], cmd
    fresh = interactive(org)
    cmd = sql(org, fresh, "SELECT v FROM gone")
    assert cmd["exitCode"] == 1 and "does not exist" in cmd["stderr"], cmd
