"""The organizations' databases on an external PostgreSQL server (--database-admin-url, issue
19). The test makes that server itself: a second cluster of Debian's PostgreSQL 15 in a temporary
directory, listening on 127.0.0.1 only, with an admin role that is no superuser (CREATEDB
CREATEROLE, a SCRAM password with characters a URL and a libpq string must escape), as a managed
service gives. adaptd runs no cluster of its own then; it makes each organization's database and
role there, and its proxy carries the sandboxes' sessions to it.

Checked: a sandbox makes a table and reads it back; database, role and data are on the second
cluster (psql from the host as the admin), with the role's limits; another organization's sandbox
cannot open the session even with the password; GET /v1/database says ready, and `unavailable`
(200) while the second cluster is stopped, ready again once it is back; neither password is in an
answer or adaptd's log; the size quota (read-only over it, writable under a larger plan), a dump
and a deletion, all by an admin that is no superuser; a malformed URL stops adaptd at start
without showing the password; --database-max-sessions caps the sessions the proxy lets through."""

import os
import shutil
import subprocess
import tempfile
import time
import urllib.parse

import pytest

from conftest import _daemons, close_daemon
import harness
from harness import env_values, run_command, unique
from test_database_lifecycle import set_plan
from test_database_slots import OPEN_MANY

PG_BIN = "/usr/lib/postgresql/15/bin"
PG_WIRE = open(os.path.join(os.path.dirname(__file__), "pg_wire.py")).read()
ADMIN = "ext_admin"
# A quote, a backslash, an '@', a ':' and a space: escaped in the URL and in libpq's string.
ADMIN_PASSWORD = "Ext'Adm\\in@pw: " + unique("x")


class SecondCluster:
    """A PostgreSQL 15 cluster of the test's own: its socket directory is its data's parent
    (0700, the postgres user's), TCP on 127.0.0.1 only."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="adapt-e2e-pg-", dir="/tmp")
        shutil.chown(self.dir, "postgres", "postgres")
        os.chmod(self.dir, 0o700)
        self.data = os.path.join(self.dir, "data")
        self.port = harness.free_port()
        self.max_connections = 100  # PostgreSQL's default

    def as_postgres(self, *argv, check=True):
        return subprocess.run(["runuser", "-u", "postgres", "--", *argv], capture_output=True,
                              text=True, timeout=120, check=check)

    def init(self):
        self.as_postgres(PG_BIN + "/initdb", "--pgdata", self.data, "--username", "postgres",
                         "--encoding", "UTF8", "--locale", "C.UTF-8", "--auth-local", "peer",
                         "--auth-host", "scram-sha-256")

    def start(self):
        self.as_postgres(PG_BIN + "/pg_ctl", "--pgdata", self.data, "--log",
                         os.path.join(self.dir, "postgres.log"), "--wait", "--timeout", "60",
                         "--options", "-c listen_addresses=127.0.0.1 -c port=%d "
                         "-c unix_socket_directories=%s -c max_connections=%d" % (
                             self.port, self.dir, self.max_connections), "start")

    def stop(self):
        self.as_postgres(PG_BIN + "/pg_ctl", "--pgdata", self.data, "--mode", "fast", "--wait",
                         "stop", check=False)

    def superuser(self, statement):
        """Runs `statement` as the bootstrap superuser over the Unix socket (peer)."""
        r = self.as_postgres("psql", "-h", self.dir, "-p", str(self.port), "-U", "postgres",
                             "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-Atc", statement)
        return r.stdout.strip()

    def admin(self, statement, database="postgres"):
        """Runs `statement` as the admin role over TCP, as an operator would (psql on the host)."""
        env = dict(os.environ, PGPASSWORD=ADMIN_PASSWORD)
        r = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", ADMIN, "-d",
                            database, "-v", "ON_ERROR_STOP=1", "-Atc", statement],
                           capture_output=True, text=True, timeout=60, env=env)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    def url(self):
        return "postgres://%s:%s@127.0.0.1:%d/postgres" % (
            ADMIN, urllib.parse.quote(ADMIN_PASSWORD, safe=""), self.port)

    def remove(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def second_cluster():
    c = SecondCluster()
    try:
        c.init()
        c.start()
        # What a managed service's admin is: no superuser. Setting temp_file_limit per role is
        # a superuser's privilege it is granted (PostgreSQL 15's GRANT SET ON PARAMETER).
        quoted = ADMIN_PASSWORD.replace("'", "''")
        c.superuser("CREATE ROLE %s LOGIN CREATEDB CREATEROLE PASSWORD '%s'" % (ADMIN, quoted))
        c.superuser("GRANT SET ON PARAMETER temp_file_limit TO %s" % ADMIN)
        yield c
    finally:
        c.remove()


def start_external(cluster, *extra):
    d = harness.Daemon(extra_args=["--database-admin-url", cluster.url(), *extra])
    _daemons.append(d)  # killed at exit if the test is interrupted
    d.start()
    return d


@pytest.fixture
def external_daemon(second_cluster):
    d = start_external(second_cluster)
    yield d
    close_daemon(d)


def sql(client, sid, *statements, url=None):
    argv = ["python3", "-c", PG_WIRE] + ([url] if url else []) + list(statements)
    return run_command(client, sid, argv=argv, waitSeconds=60)


def database_sandbox(client):
    sbx = client.create({"database": True})
    return client.wait_for_status(sbx["id"], "running", timeout=180)["id"]


def wait_for_status(client, wanted, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        status, db = client.api("GET", "/v1/database")
        assert status == 200, db
        if db["status"] == wanted or time.monotonic() > deadline:
            return db
        time.sleep(0.5)


def test_databases_live_on_the_external_server_behind_the_proxy(external_daemon, second_cluster):
    d, pg = external_daemon, second_cluster
    # adaptd runs no cluster of its own in this mode.
    assert not os.path.exists(os.path.join(d.state_dir, "postgres"))
    org, other = d.new_org(), d.new_org()
    status, db = org.api("GET", "/v1/database")
    assert status == 200 and db["status"] == "not_created", db

    sid = database_sandbox(org)
    cmd = sql(org, sid, "CREATE TABLE notes (v text)",
              "INSERT INTO notes VALUES ('kept on the external server')", "SELECT v FROM notes",
              "SELECT current_user = current_database()", "SHOW temp_file_limit")
    assert cmd["exitCode"] == 0, (cmd["stdout"], cmd["stderr"])
    assert cmd["stdout"].splitlines()[-3:] == ["kept on the external server", "t", "1GB"], cmd
    # temp_file_limit binds (superuser-only to SET), as on the embedded server.
    cmd = sql(org, sid, "SET temp_file_limit = -1")
    assert cmd["exitCode"] == 1 and "permission denied" in cmd["stderr"], cmd

    status, db = org.api("GET", "/v1/database")
    assert status == 200 and db["status"] == "ready", db
    assert db["postgresVersion"].startswith("15.") and db["sizeBytes"] > 0, db

    # The sandbox is given the proxy at its gateway, never the external server's address.
    name = env_values(org, sid, "PGDATABASE")
    assert env_values(org, sid, "PGPORT") != str(pg.port)
    url = env_values(org, sid, "DATABASE_URL")
    assert "127.0.0.1" not in url and ":%d/" % pg.port not in url
    password = env_values(org, sid, "PGPASSWORD")

    # On the second cluster, seen from the host as its admin: the role with its limits, the
    # database owned by it and closed to PUBLIC, the row the sandbox wrote.
    assert pg.admin("SELECT rolsuper, rolcreatedb, rolcreaterole, rolcanlogin, rolconnlimit > 0 "
                    "FROM pg_roles WHERE rolname = '%s'" % name) == "f|f|f|t|t"
    assert pg.admin("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = '%s'"
                    % name) == name
    acl = pg.admin("SELECT datacl::text FROM pg_database WHERE datname = '%s'" % name)
    assert acl and "{=" not in acl and ",=" not in acl, acl  # no PUBLIC entry: no CONNECT
    assert pg.admin("SELECT pg_has_role('%s', 'adapt-tenants', 'MEMBER')" % name) == "t"
    assert pg.admin("SELECT v FROM notes", database=name) == "kept on the external server"

    # Another organization's sandbox cannot open the session, even with the password; its own
    # database is another one on the same server.
    foreign = database_sandbox(other)
    cmd = sql(other, foreign, "SELECT 1", url=url)
    assert cmd["exitCode"] == 1 and "may only open database" in cmd["stderr"], cmd
    cmd = sql(other, foreign, "SELECT v FROM notes")
    assert cmd["exitCode"] == 1 and "does not exist" in cmd["stderr"], cmd
    other_name = env_values(other, foreign, "PGDATABASE")
    assert other_name != name
    assert pg.admin("SELECT count(*) FROM pg_database WHERE datname IN ('%s', '%s')"
                    % (name, other_name)) == "2"

    # The external server stopped: status unavailable, a 200 answer; back: ready again.
    pg.stop()
    db = wait_for_status(org, "unavailable")
    assert db["status"] == "unavailable", db
    cmd = sql(org, sid, "SELECT 1")
    assert cmd["exitCode"] == 1 and "not available" in cmd["stderr"], cmd
    # What cannot be done now is a 503 that names neither the server's host nor its port.
    status, err = org.api("POST", "/v1/database/rotate")
    assert status == 503, (status, err)
    assert "127.0.0.1" not in repr(err) and str(pg.port) not in repr(err), err
    # An organization without a database is told the same: making one would fail now.
    status, fresh = d.new_org().api("GET", "/v1/database")
    assert status == 200 and fresh["status"] == "unavailable", fresh
    pg.start()
    db = wait_for_status(org, "ready")
    assert db["status"] == "ready", db
    cmd = sql(org, sid, "SELECT v FROM notes")
    assert cmd["exitCode"] == 0 and cmd["stdout"].strip() == "kept on the external server", cmd

    # Neither password, nor the admin's in its URL form, is in an answer or in adaptd's log.
    secrets = [password, ADMIN_PASSWORD, urllib.parse.quote(ADMIN_PASSWORD, safe="")]
    answers = repr([org.api("GET", "/v1/database")[1], org.api("GET", "/v1/sandboxes/" + sid)[1],
                    org.api("POST", "/v1/database/rotate")[1]])
    with open(d.log_path) as f:
        log = f.read()
    for secret in secrets:
        assert secret not in answers and secret not in log
    # The log names the server it uses, with the password hidden.
    assert "postgres://%s:***@127.0.0.1:%d/postgres" % (ADMIN, pg.port) in log


def test_quota_dump_and_delete_work_with_an_admin_that_is_no_superuser(second_cluster):
    pg = second_cluster
    d = start_external(pg, "--database-quota-interval-seconds", "1")
    try:
        org = d.new_org()
        set_plan(d, org, "ext-small", {"databaseMiB": 12, "databaseConnections": 5})
        status, db = org.api("POST", "/v1/database")
        assert status == 200 and db["status"] == "ready", db
        sid = database_sandbox(org)
        name = env_values(org, sid, "PGDATABASE")
        # The ~10 MiB go in under a larger quota: under the small one, the 1 s timer could find
        # the database over it before the insert commits and end the insert's session.
        set_plan(d, org, "ext-large", {"databaseMiB": 64, "databaseConnections": 5})
        cmd = sql(org, sid, "CREATE TABLE big (v text)", "CREATE TABLE small (v text)",
                  "INSERT INTO big SELECT repeat(md5(i::text), 40) FROM generate_series(1, 8000) i")
        assert cmd["exitCode"] == 0, (cmd["exitCode"], cmd["stderr"][-600:])
        set_plan(d, org, "ext-small", {"databaseMiB": 12, "databaseConnections": 5})
        # Over the quota (adaptd's 1 s timer): read-only, whatever the role SETs; the admin
        # handed the role's objects to <name>_frozen, which it had to join first.
        db = wait_for_status(org, "over_quota")
        assert db["status"] == "over_quota", db
        cmd = sql(org, sid, "SET default_transaction_read_only = off",
                  "INSERT INTO small VALUES ('late')")
        assert cmd["exitCode"] == 1 and "permission denied" in cmd["stderr"], cmd
        cmd = sql(org, sid, "SELECT count(*) FROM big")
        assert cmd["exitCode"] == 0 and cmd["stdout"].strip() == "8000", cmd
        assert pg.admin("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = '%s'"
                        % name) == name + "_frozen"
        # A larger plan: writable again.
        set_plan(d, org, "ext-large", {"databaseMiB": 64, "databaseConnections": 5})
        db = wait_for_status(org, "ready")
        assert db["status"] == "ready", db
        cmd = sql(org, sid, "INSERT INTO small VALUES ('back')", "SELECT v FROM small")
        assert cmd["exitCode"] == 0 and cmd["stdout"].strip() == "back", cmd

        # pg_dump as the admin, into the organization's objects.
        status, dump = org.api("POST", "/v1/database/dump")
        assert status == 201 and dump["sizeBytes"] > 0, dump

        # Deletion drops the database and both roles on the external server.
        status, _ = org.api("DELETE", "/v1/database", {"confirm": org.org_id})
        assert status in (200, 204), status
        assert pg.admin("SELECT count(*) FROM pg_database WHERE datname = '%s'" % name) == "0"
        assert pg.admin("SELECT count(*) FROM pg_roles WHERE rolname IN ('%s', '%s_frozen')"
                        % (name, name)) == "0"
        status, db = org.api("GET", "/v1/database")
        assert status == 200 and db["status"] == "not_created", db
        with open(d.log_path) as f:
            log = f.read()
        assert ADMIN_PASSWORD not in log
    finally:
        close_daemon(d)


def test_a_malformed_admin_url_stops_adaptd_at_start_without_showing_its_password():
    state = tempfile.mkdtemp(prefix="adapt-e2e-", dir="/tmp")
    try:
        secret = unique("Secret")
        r = subprocess.run([harness.ADAPTD, "--state-dir", state, "--database-admin-url",
                            "postgres://admin:%s@127.0.0.1:99999/postgres" % secret],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2, (r.returncode, r.stderr)
        assert "database admin URL" in r.stderr and "port" in r.stderr, r.stderr
        assert secret not in r.stderr + r.stdout
        # Nothing was started: no state was made.
        assert os.listdir(state) == []
    finally:
        shutil.rmtree(state, ignore_errors=True)


def logins_through_the_proxy(d, logins):
    """Opens `logins` sessions at once from one sandbox of an organization whose plan allows 20;
    returns how many the server answered and how many the proxy refused as too many."""
    org = d.new_org()
    set_plan(d, org, "ext-roomy", {"databaseConnections": 20})
    status, db = org.api("POST", "/v1/database")
    assert status == 200 and db["status"] == "ready", db
    sid = database_sandbox(org)
    cmd = run_command(org, sid, argv=["python3", "-c", OPEN_MANY, str(logins)], waitSeconds=60)
    assert cmd["exitCode"] == 0, (cmd["stdout"], cmd["stderr"])
    answered, refused, other = cmd["stdout"].split(" ", 2)
    assert other.strip() == "[]", cmd["stdout"]
    assert int(answered) + int(refused) == logins, cmd["stdout"]
    return int(answered), int(refused)


def test_database_max_sessions_caps_every_organizations_sessions_on_the_external_server(
        second_cluster):
    # An external server is sized by its operator: --database-max-sessions is the proxy's total
    # of sessions to it, whatever each plan allows. Without it, all six would reach the server.
    d = start_external(second_cluster, "--database-max-sessions", "3")
    try:
        answered, refused = logins_through_the_proxy(d, 6)
        assert answered <= 3, (answered, refused)
    finally:
        close_daemon(d)


def test_without_max_sessions_the_external_servers_own_size_caps_the_sessions(second_cluster):
    # A small server: 20 slots, 3 kept for superusers and 12 for adaptd's own sessions leave 5
    # for the sandboxes. Without that cap, all eight logins would reach the server, and an
    # organization with a large plan could take the slots adaptd needs.
    second_cluster.stop()
    second_cluster.max_connections = 20
    second_cluster.start()
    d = start_external(second_cluster)
    try:
        answered, refused = logins_through_the_proxy(d, 8)
        assert answered <= 5, (answered, refused)
    finally:
        close_daemon(d)
