"""Each organization's PostgreSQL database (issue 19): GET/POST /v1/database and
get_user_database (through the official MCP SDK client), a sandbox created with
"database": true that makes a table and reads it back through DATABASE_URL, isolation (another
organization's sandbox, a sandbox without the database and the host itself cannot open the
session, even with the password), the password in no API answer, command output or log line, and
the data found again after adaptd is killed with -9 (the running server is reused).

Most tests run pg_wire.py (a standard-library client with SCRAM-SHA-256) as `python3 -c`, so that
they control every message; one runs the default image's `psql`, as a person would."""

import os
import re
import socket
import subprocess

import pytest

from conftest import close_daemon, start_daemon
from harness import env_values, run_command, unique
from mcp_support import sdk

PG_WIRE = open(os.path.join(os.path.dirname(__file__), "pg_wire.py")).read()


def sql(client, sid, *statements, url=None):
    """Runs pg_wire.py in the sandbox; returns the command (exitCode, stdout, stderr)."""
    argv = ["python3", "-c", PG_WIRE] + ([url] if url else []) + list(statements)
    return run_command(client, sid, argv=argv, waitSeconds=60)


def interactive(client, database=True):
    body = {"database": True} if database else {}
    sbx = client.create(body)
    return client.wait_for_status(sbx["id"], "running", timeout=180)["id"]


def proxy_port(daemon):
    with open(daemon.log_path) as f:
        ports = re.findall(r"database proxy on [0-9.]+:(\d+)", f.read())
    assert ports, "no database proxy in the log"
    return int(ports[-1])


def test_status_create_isolation_and_no_password_anywhere(daemon, org):
    other = daemon.new_org()
    status, db = org.api("GET", "/v1/database")
    assert status == 200, db
    assert db["status"] == "not_created" and db["createdAt"] is None, db
    assert db["quotaBytes"] > 0 and db["connectionLimit"] > 0, db

    status, db = org.api("POST", "/v1/database")
    assert status == 200, db
    assert db["status"] == "ready", db
    assert db["postgresVersion"].startswith("15."), db
    assert db["createdAt"] and db["sizeBytes"] > 0, db
    assert set(db) == {"status", "postgresVersion", "sizeBytes", "quotaBytes", "connections",
                       "connectionLimit", "createdAt"}, db
    status, again = org.api("POST", "/v1/database")
    assert status == 200 and again["createdAt"] == db["createdAt"], again
    # Another organization's view is its own.
    assert other.api("GET", "/v1/database")[1]["status"] == "not_created"

    sid = interactive(org)
    cmd = sql(org, sid, "CREATE TABLE notes (v text)", "INSERT INTO notes VALUES ('hello from a sandbox')",
              "SELECT v FROM notes", "SELECT current_user = current_database()")
    assert cmd["exitCode"] == 0, (cmd["stdout"], cmd["stderr"])
    assert cmd["stdout"].splitlines()[-2:] == ["hello from a sandbox", "t"], cmd

    # The role's limits: not a superuser, cannot make databases or roles; temp_file_limit binds.
    cmd = sql(org, sid, "SELECT rolsuper, rolcreatedb, rolcreaterole, rolconnlimit FROM pg_roles "
                        "WHERE rolname = current_user")
    assert cmd["exitCode"] == 0 and cmd["stdout"].strip() == "f|f|f|%d" % db["connectionLimit"], cmd
    cmd = sql(org, sid, "SET temp_file_limit = -1")
    assert cmd["exitCode"] == 1 and "permission denied" in cmd["stderr"], cmd
    cmd = sql(org, sid, "CREATE DATABASE another")
    assert cmd["exitCode"] == 1 and "permission denied" in cmd["stderr"], cmd

    # The credentials are in the environment and redacted from output.
    password = env_values(org, sid, "PGPASSWORD")
    assert len(password) >= 24
    port = int(env_values(org, sid, "PGPORT"))
    url = env_values(org, sid, "DATABASE_URL")
    assert password in url and ":%d/" % port in url
    echoed = run_command(org, sid, argv=["sh", "-c", "echo $PGPASSWORD; echo $DATABASE_URL"],
                         waitSeconds=30)
    assert password not in echoed["stdout"] and echoed["stdout"].strip(), echoed

    # Another organization's sandbox cannot open the session, even with the password; nor can
    # a sandbox of the same organization created without the database.
    for client, database in ((other, True), (other, False), (org, False)):
        foreign = interactive(client, database=database)
        cmd = sql(client, foreign, "SELECT 1", url=url)
        assert cmd["exitCode"] == 1, cmd
        assert "may only open database" in cmd["stderr"] or "may not use a database" in cmd["stderr"], cmd
    # The other organization's own database is another one, which the first cannot open.
    foreign = interactive(other)
    cmd = sql(other, foreign, "SELECT v FROM notes")
    assert cmd["exitCode"] == 1 and "does not exist" in cmd["stderr"], cmd

    # The host, on loopback and on its outside address, cannot either: no sandbox address, so
    # the proxy closes the connection as it accepts it, before reading a byte.
    addresses = ["127.0.0.1"]
    route = subprocess.run(["ip", "-4", "route", "get", "192.0.2.1"], capture_output=True, text=True)
    m = re.search(r"src ([0-9.]+)", route.stdout)
    if m:
        addresses.append(m.group(1))
    import pg_wire
    for address in addresses:
        host_url = re.sub(r"@[^:/]+:", "@%s:" % address, url)
        with pytest.raises((pg_wire.PgError, ConnectionError)):
            pg_wire.connect(host_url)

    # No answer holds the password or the host; nor does adaptd's log.
    answers = [org.api("GET", "/v1/database")[1], org.api("GET", "/v1/sandboxes/" + sid)[1],
               org.api("POST", "/v1/database/rotate")[1]]
    for answer in answers:
        assert password not in repr(answer)
    assert "host" not in repr(answers[0]).lower()
    with open(daemon.log_path) as f:
        assert password not in f.read()

    # Rotation: the old password stops working; a new sandbox gets the new one.
    cmd = sql(other, foreign, "SELECT 1", url=url)
    assert cmd["exitCode"] == 1
    fresh = interactive(org)
    new_password = env_values(org, fresh, "PGPASSWORD")
    assert new_password != password
    cmd = sql(org, fresh, "SELECT v FROM notes")
    assert cmd["exitCode"] == 0 and cmd["stdout"].strip() == "hello from a sandbox", cmd
    cmd = sql(org, fresh, "SELECT 1", url=url)
    assert cmd["exitCode"] == 1 and "password authentication failed" in cmd["stderr"], cmd

    # get_user_database through the official MCP SDK client: the same status, no credentials.
    report = sdk(daemon, org, "http", "calls", [["get_user_database", {}]])
    [call] = report["calls"]
    assert not call["isError"] and call["schemaValid"], call
    got = call["structuredContent"]
    assert got["status"] == "ready" and got["postgres_version"].startswith("15."), got
    assert got["connection_limit"] == db["connectionLimit"], got
    assert new_password not in call["text"] and password not in call["text"]
    [other_call] = sdk(daemon, other, "http", "calls", [["get_user_database", {}]])["calls"]
    assert other_call["structuredContent"]["status"] == "ready", other_call  # made by its sandbox


def test_psql_in_the_default_image_reaches_the_database_by_url_and_by_the_pg_variables(org):
    sid = interactive(org)
    table = unique("t").replace("-", "_")
    # By DATABASE_URL; psql asks for TLS first (sslmode=prefer) and the proxy's "N" answer makes
    # it carry on in plaintext inside the host.
    cmd = run_command(org, sid, argv=["sh", "-c",
                                      'psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -Atc '
                                      '"CREATE TABLE %s (v int); INSERT INTO %s VALUES (41), (1)"' % (table, table)],
                      waitSeconds=60)
    assert cmd["exitCode"] == 0, (cmd["stdout"], cmd["stderr"])
    # By the PG* variables alone (no argument), as libpq reads them.
    cmd = run_command(org, sid, argv=["psql", "-v", "ON_ERROR_STOP=1", "-Atc",
                                      "SELECT sum(v) FROM %s" % table], waitSeconds=60)
    assert cmd["exitCode"] == 0 and cmd["stdout"].strip() == "42", (cmd["stdout"], cmd["stderr"])
    # A statement error is psql's exit status 1 with PostgreSQL's own words.
    cmd = run_command(org, sid, argv=["psql", "-v", "ON_ERROR_STOP=1", "-Atc", "SELECT * FROM no_such_table"],
                      waitSeconds=60)
    assert cmd["exitCode"] != 0 and "no_such_table" in cmd["stderr"], cmd


def test_bad_database_requests_are_400_and_egress_none_has_no_database(org):
    status, err = org.api("POST", "/v1/sandboxes", {"database": "yes"})
    assert status == 400 and err["error"]["field"] == "database", err
    status, err = org.api("POST", "/v1/sandboxes", {"database": True, "network": {"egress": "none"}})
    assert status == 400 and err["error"]["field"] == "database", err
    assert org.api("GET", "/v1/database")[1]["status"] == "not_created"


@pytest.fixture
def own_daemon():
    d = start_daemon()
    yield d
    close_daemon(d)


def test_adaptd_killed_with_9_finds_the_server_and_the_data(own_daemon):
    d = own_daemon
    org = d.new_org()
    sid = interactive(org)
    cmd = sql(org, sid, "CREATE TABLE kept (v text)", "INSERT INTO kept VALUES ('%s')" % unique("row"),
              "SELECT v FROM kept")
    assert cmd["exitCode"] == 0, (cmd["stdout"], cmd["stderr"])
    row = cmd["stdout"].strip()
    with open(os.path.join(d.state_dir, "postgres", "data", "postmaster.pid")) as f:
        postmaster = int(f.readline())
    d.kill()
    d.start()
    with open(os.path.join(d.state_dir, "postgres", "data", "postmaster.pid")) as f:
        assert int(f.readline()) == postmaster, "the running server was not reused"
    status, db = org.api("GET", "/v1/database")
    assert status == 200 and db["status"] == "ready", db
    fresh = interactive(org)
    cmd = sql(org, fresh, "SELECT v FROM kept")
    assert cmd["exitCode"] == 0 and cmd["stdout"].strip() == row, cmd


def test_adapt_db_status_and_create_through_the_cli(org):
    import json
    r = org.cli("db", "status", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"] == "not_created"
    r = org.cli("db", "create")
    assert r.returncode == 0, r.stderr
    assert re.search(r"status\s+ready", r.stdout), r.stdout
    assert re.search(r"postgres\s+15\.", r.stdout), r.stdout
    r = org.cli("db", "nonsense")
    assert r.returncode != 0 and r.stderr.strip()
