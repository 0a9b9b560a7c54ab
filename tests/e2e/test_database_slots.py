"""The database proxy and the server's connection slots: PostgreSQL gives a connection a
backend before it authenticates, so logins that never send their password must not hold
backends for long, and one organization must not take more of them than its role's limit.
A sandbox opens more stalled logins than its organization's limit (20) plus the proxy's margin
(2): the ones past it are refused by the proxy itself (53300), the others are closed by the
proxy's 10 s start-up timer (the server's own authentication_timeout used to be 60 s), and the
database is reachable again afterwards."""

from harness import run_command
from test_database import interactive, sql

LIMIT = 20  # the default plan's databaseConnections
MARGIN = 2  # DatabaseProxy::kSessionMargin

STALL = r"""
import os, socket, struct, sys, time
n = int(sys.argv[1])
user = os.environ["PGUSER"].encode()
body = struct.pack("!I", 196608) + b"user\0" + user + b"\0database\0" + user + b"\0\0"
packet = struct.pack("!I", len(body) + 4) + body
socks = []
for _ in range(n):
    s = socket.create_connection((os.environ["PGHOST"], int(os.environ["PGPORT"])), timeout=10)
    s.sendall(packet)
    socks.append(s)
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
