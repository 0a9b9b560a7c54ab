"""Query cancellation through the database proxy (issue 19): psql's CancelRequest on SIGINT
ends its statement; a CancelRequest reaches the server only when it quotes the BackendKeyData of
a live session of the sender's own organization, so another organization's sandbox (even knowing
the pid and the secret), the host and a wrong secret cancel nothing.

The sleeping session and the cancels use pg_wire.py (`--key-file`, `--cancel`), so the test knows
the key the server handed out and sends exactly the 16 bytes of a CancelRequest."""

import os
import re
import time

from harness import env_values, poll_command, run_command

PG_WIRE = open(os.path.join(os.path.dirname(__file__), "pg_wire.py")).read()
CANCELLED = "canceling statement due to user request"


def interactive(client, database=True):
    body = {"database": True} if database else {}
    sbx = client.create(body)
    return client.wait_for_status(sbx["id"], "running", timeout=180)["id"]


def pg_wire(client, sid, *args, expect=200, waitSeconds=60):
    return run_command(client, sid, expect=expect, argv=["python3", "-c", PG_WIRE] + list(args),
                       waitSeconds=waitSeconds)


def dropped_cancels(daemon):
    with open(daemon.log_path) as f:
        return len(re.findall(r"database proxy: dropped a cancel request", f.read()))


def wait_dropped(daemon, n):
    """Waits for the log to count `n` dropped cancels (its lines may lag the close a little)."""
    deadline = time.monotonic() + 10
    while dropped_cancels(daemon) < n and time.monotonic() < deadline:
        time.sleep(0.1)
    return dropped_cancels(daemon)


def test_psql_cancels_its_statement_on_sigint(org):
    sid = interactive(org)
    # psql sends a CancelRequest (to PGHOST:PGPORT, the proxy) when SIGINT comes mid-query. The
    # role's statement_timeout (60 s) would end it with another message.
    started = run_command(org, sid, expect=202, waitSeconds=0,
                          argv=["timeout", "-s", "INT", "3", "psql", "-Atc", "SELECT pg_sleep(60)"])
    cmd = poll_command(org, sid, started["id"], timeout=120)
    assert cmd["exitCode"] not in (0, None), cmd
    assert CANCELLED in cmd["stderr"], (cmd["stdout"], cmd["stderr"])


def test_only_the_sessions_own_organization_can_cancel_it(daemon, org):
    other = daemon.new_org()
    sid = interactive(org)
    started = pg_wire(org, sid, "--key-file", "/tmp/key", "SET statement_timeout = 0",
                      "SELECT pg_sleep(300)", expect=202, waitSeconds=0)
    cid = started["id"]

    deadline = time.monotonic() + 60
    while True:
        cmd = run_command(org, sid, argv=["cat", "/tmp/key"], waitSeconds=30)
        if cmd["exitCode"] == 0:
            break
        assert time.monotonic() < deadline, "the session never wrote its key: %r" % cmd
        time.sleep(0.2)
    pid, secret = (int(v) for v in cmd["stdout"].split())

    def activity():
        """The sleeping backend's state and query start, read by another session."""
        cmd = pg_wire(org, sid, "SELECT state, query_start FROM pg_stat_activity WHERE pid = %d" % pid)
        assert cmd["exitCode"] == 0, (cmd["stdout"], cmd["stderr"])
        return cmd["stdout"].strip()

    deadline = time.monotonic() + 60
    while not activity().startswith("active|"):
        assert time.monotonic() < deadline, "the statement never started"
        time.sleep(0.2)
    sleeping = activity()

    host, port = env_values(org, sid, "PGHOST", "PGPORT")
    own_proxy = "postgresql://x@%s:%s/x" % (host, port)
    before = dropped_cancels(daemon)

    # Another organization's sandbox with its own database, through its own gateway and through
    # the first sandbox's: the exact pid and secret cancel nothing, and nothing answers.
    foreign = interactive(other)
    for target in ([], [own_proxy]):
        cmd = pg_wire(other, foreign, *target, "--cancel", str(pid), str(secret))
        assert cmd["exitCode"] == 0 and cmd["stdout"].strip() == "closed after 0 bytes", cmd
        assert activity() == sleeping
    # Another organization's sandbox without a database, and the host itself.
    bare = interactive(other, database=False)
    cmd = pg_wire(other, bare, own_proxy, "--cancel", str(pid), str(secret))
    assert cmd["exitCode"] == 0 and cmd["stdout"].strip() == "closed after 0 bytes", cmd
    import pg_wire as host_client
    # The host's is no sandbox address: closed as it is accepted, unread and not logged.
    assert host_client.cancel("postgresql://x@127.0.0.1:%s/x" % port, pid, secret) == b""
    # The own organization with a wrong secret.
    cmd = pg_wire(org, sid, "--cancel", str(pid), str(secret ^ 1))
    assert cmd["exitCode"] == 0 and cmd["stdout"].strip() == "closed after 0 bytes", cmd
    assert activity() == sleeping
    status, still = org.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, cid))
    assert status == 200 and still["status"] == "running", still
    assert wait_dropped(daemon, before + 4) == before + 4

    # The same 16 bytes from the session's own organization end the statement.
    cmd = pg_wire(org, sid, "--cancel", str(pid), str(secret))
    assert cmd["exitCode"] == 0 and cmd["stdout"].strip() == "closed after 0 bytes", cmd
    done = poll_command(org, sid, cid, timeout=120)
    assert done["exitCode"] == 1 and CANCELLED in done["stderr"], done
    assert dropped_cancels(daemon) == before + 4

    # The session ended, and its key with it (once the proxy sees both sides close): a cancel
    # quoting it is then dropped.
    deadline = time.monotonic() + 30
    while True:
        cmd = pg_wire(org, sid, "--cancel", str(pid), str(secret))
        assert cmd["exitCode"] == 0, cmd
        if wait_dropped(daemon, before + 5) == before + 5:
            break
        assert time.monotonic() < deadline, "the ended session's key was still honoured"
