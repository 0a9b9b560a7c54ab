"""adaptd's shutdown waits for its response streams (src/api/stream_threads.h).

A download streams on a thread of its own; a client that stops reading leaves it waiting for
room. On SIGTERM the servers close every connection, which ends the pump, and adaptd waits for
it before it destroys the services it reads from: it exits 0, says it waited, and does not
report a stream still running. The sandbox runs on and is found again after a restart.
"""

import http.client

from harness import run_command
from test_agent import wait_for_agent


def test_sigterm_waits_for_an_open_download(fresh_daemon):
    d = fresh_daemon
    sid = d.admin.create({"network": {"egress": "none"}, "labels": {"role": "shutdown"}})["id"]
    d.admin.wait_for_status(sid, "running", 120)
    wait_for_agent(d.admin, sid)
    cmd = run_command(d.admin, sid, command="dd if=/dev/zero of=/root/big bs=1M count=64 2>/dev/null && echo ok")
    assert cmd["exitCode"] == 0 and cmd["stdout"] == "ok\n", cmd

    # A download read for 64 KiB and then left alone: more than the server queues and the
    # socket holds, so its pump is still running when the signal comes.
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
    conn.request("GET", "/v1/sandboxes/%s/files?path=/root/big" % sid,
                 headers={"Authorization": "Bearer " + d.admin.key})
    resp = conn.getresponse()
    assert resp.status == 200, resp.status
    assert len(resp.read(64 * 1024)) == 64 * 1024

    rc = d.stop()
    log = d.log_tail(200)
    assert rc == 0, "adaptd exited %s on SIGTERM:\n%s" % (rc, log)
    assert "waiting for the 1 response stream(s) that were open" in log, log
    assert "still running" not in log, log
    # The connection was closed under the client: the body ends short of 64 MiB.
    got = 64 * 1024
    try:
        while True:
            chunk = resp.read(1 << 20)
            if not chunk:
                break
            got += len(chunk)
    except (http.client.IncompleteRead, OSError):
        pass
    conn.close()
    assert got < 64 << 20, got

    d.start(port=d.port)
    assert d.admin.get(sid)["status"] == "running"
    d.admin.delete(sid)
