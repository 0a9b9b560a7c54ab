"""The database proxy and the server's connection slots: PostgreSQL gives a connection a
backend before it authenticates, so logins that never send their password must not hold
backends for long, and one organization must not take more of them than its role's limit.
A sandbox opens more stalled logins than its organization's limit (20) plus the proxy's margin
(2): the ones past it are refused by the proxy itself (53300), the others are closed by the
proxy's 10 s start-up timer (the server's own authentication_timeout used to be 60 s), and the
database is reachable again afterwards. And every organization together takes no more of them
than the proxy's share of the server (285 of max_connections 300): past it, the proxy answers
53300 "too many connections on this server" itself, so adaptd's own sessions keep their slots."""

import time

import pytest

import harness
from conftest import close_daemon
from harness import run_command
from test_database import interactive, sql

LIMIT = 20  # the default plan's databaseConnections
MARGIN = 2  # DatabaseProxy::kSessionMargin
SERVER_SHARE = 285  # database::kSandboxSessions

# Opens argv[1] logins at once from the sandbox (StartupMessages, no password yet): `socks`.
OPEN_LOGINS = r"""
import os, socket, struct, sys, time
n = int(sys.argv[1])
user = os.environ["PGUSER"].encode()
body = struct.pack("!I", 196608) + b"user\0" + user + b"\0database\0" + user + b"\0\0"
packet = struct.pack("!I", len(body) + 4) + body
socks = []
for _ in range(n):
    s = socket.create_connection((os.environ["PGHOST"], int(os.environ["PGPORT"])), timeout=20)
    s.sendall(packet)
    socks.append(s)
"""

STALL = OPEN_LOGINS + r"""
first, refusals = "", 0
for s in socks:
    try:
        got = s.recv(4096)
    except socket.timeout:
        got = b"?"
    first += chr(got[0]) if got else "0"
    refusals += got[:1] == b"E" and b"53300" in got
# The logins the server answered (it asks for the password) and that send nothing more.
waiting = [s for s, f in zip(socks, first) if f == "R"]
deadline = time.time() + 30
closed = 0
for s in waiting:
    while True:
        s.settimeout(max(0.1, deadline - time.time()))
        try:
            if not s.recv(4096):
                closed += 1
                break
        except socket.timeout:
            break
        except OSError:
            closed += 1
            break
print(first, refusals, len(waiting), closed)
"""


def test_stalled_logins_are_closed_and_one_organization_takes_no_more_than_its_limit(org):
    sid = interactive(org)
    extra = 3
    cmd = run_command(org, sid, argv=["python3", "-c", STALL, str(LIMIT + MARGIN + extra)],
                      waitSeconds=60)
    assert cmd["exitCode"] == 0, (cmd["stdout"], cmd["stderr"])
    first, refusals, waiting, closed = cmd["stdout"].split()
    assert int(refusals) == extra and first.count("E") == extra, cmd["stdout"]
    assert int(waiting) == LIMIT + MARGIN, cmd["stdout"]
    # Within 30 s: the proxy's start-up timer (10 s), not the server's old 60 s.
    assert int(closed) == int(waiting), "stalled logins kept their backends: %s" % cmd["stdout"]
    # Their places are free again: a real session gets in.
    cmd = sql(org, sid, "SELECT 1")
    assert cmd["exitCode"] == 0 and cmd["stdout"].strip().endswith("1"), (cmd["stdout"], cmd["stderr"])


# Opens n logins at once and reads each one's first answer: R (the server asks for the
# password), or E with "on this server" (the proxy's refusal of the server's share).
OPEN_MANY = OPEN_LOGINS + r"""
answered, refused, other = 0, 0, []
for s in socks:
    try:
        got = s.recv(4096)
    except socket.timeout:
        got = b"?"
    if got[:1] == b"R":
        answered += 1
    elif got[:1] == b"E" and b"53300" in got and b"too many connections on this server" in got:
        refused += 1
    else:
        other.append(got[:80])
print(answered, refused, other)
"""


@pytest.fixture
def roomy_daemon():
    # One sandbox may hold more connections than the server's share.
    d = harness.Daemon(extra_args=["--max-connections-per-client", "400"])
    d.start()
    yield d
    d.delete_everything()
    close_daemon(d)


def test_every_organization_together_takes_no_more_than_the_servers_share(roomy_daemon):
    d = roomy_daemon
    org = d.new_org()
    # A plan whose own cap is past the server's share: only the proxy's total binds.
    status, plan = d.admin.api("PUT", "/v1/plans/db-huge",
                               {"name": "db-huge", "limits": {"databaseConnections": 400}})
    assert status == 200, plan
    status, account = d.admin.api("PUT", "/v1/orgs/%s/plan" % org.org_id, {"planId": "db-huge"})
    assert status == 200, account
    status, db = org.api("POST", "/v1/database")
    assert status == 200 and db["status"] == "ready", db
    sid = interactive(org)
    extra = 15
    cmd = run_command(org, sid, argv=["python3", "-c", OPEN_MANY, str(SERVER_SHARE + extra)],
                      waitSeconds=60)
    assert cmd["exitCode"] == 0, (cmd["stdout"], cmd["stderr"])
    answered, refused, other = cmd["stdout"].split(" ", 2)
    assert other.strip() == "[]", cmd["stdout"]
    # No more than the share reaches the server (fewer only if early logins' 10 s start-up timer
    # gave places back while the later ones went out); the rest are the proxy's refusals. Had
    # the proxy no total, all 300 would reach it and take every slot: the superuser reserve is
    # checked only once a login is done, so adaptd's own sessions would be refused.
    assert int(answered) <= SERVER_SHARE and int(refused) >= 1, cmd["stdout"]
    assert int(answered) + int(refused) == SERVER_SHARE + extra, cmd["stdout"]
    # Their places are free again once the start-up timer closed them.
    deadline = time.time() + 60
    while True:
        cmd = sql(org, sid, "SELECT 1")
        if cmd["exitCode"] == 0:
            break
        assert "too many connections on this server" in cmd["stderr"], cmd["stderr"]
        assert time.time() < deadline, "the stalled logins never gave their places back"
        time.sleep(1)
    assert cmd["stdout"].strip().endswith("1"), cmd["stdout"]
