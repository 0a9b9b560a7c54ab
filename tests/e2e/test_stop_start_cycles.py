"""Twenty stop/start cycles of one durable sandbox (the bug other platforms' users report most):
a server process counts requests in its memory and answers them over TCP on the sandbox's
loopback; between stops, a request goes to it and a file is written. After every start the
same process answers with the next count (its memory came back), every file written so far is
there with what was written, and each stop's checkpoint saved the processes.

The client closes each connection with a reset (SO_LINGER 0), so no endpoint is left closing
(TIME_WAIT) when the stop comes; see README "Network connections and checkpoints"."""

import time

from harness import run_command as run
from harness import wait_for_agent

CYCLES = 20

SERVER = r"""
import socket
n = 0
srv = socket.create_server(("127.0.0.1", 9000))
print("ready", flush=True)
while True:
    c, _ = srv.accept()
    if c.recv(64) == b"inc":
        n += 1
        c.sendall(b"%d\n" % n)
    try:
        c.recv(64)  # until the client's reset
    except OSError:
        pass
    c.close()
"""

CLIENT = ("python3 -c \"import socket, struct; s = socket.create_connection(('127.0.0.1', 9000)); "
          "s.sendall(b'inc'); print(s.recv(64).decode().strip()); "
          "s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0)); s.close()\"")


def finished(client, op_id, timeout=30):
    """The operation once Completed or Failed: a restore's is settled just after its sandbox
    is recorded running. The bound only ends a hang."""
    deadline = time.monotonic() + timeout
    while True:
        status, op = client.api("GET", "/v1/operations/" + op_id)
        assert status == 200, op
        if op["phase"] in ("Completed", "Failed") or time.monotonic() > deadline:
            return op
        time.sleep(0.1)


def out(client, sid, command):
    cmd = run(client, sid, command=command)
    assert cmd["exitCode"] == 0, cmd
    return cmd["stdout"]


def test_twenty_stop_start_cycles_keep_the_process_its_memory_and_every_file(org):
    sid = org.create({"startupClass": "durable"})["id"]
    org.wait_for_status(sid, "running", 120)
    wait_for_agent(org, sid)
    started = out(org, sid, "cat > /root/server.py <<'EOF'\n%s\nEOF\n"
                            "nohup python3 /root/server.py > /root/server.log 2>&1 & echo $!; "
                            "for i in $(seq 600); do grep -q ready /root/server.log && exit 0; "
                            "sleep 0.1; done; cat /root/server.log; exit 1" % SERVER)
    pid = started.split()[0]
    out(org, sid, "mkdir -p /root/cycles")
    for cycle in range(1, CYCLES + 1):
        # The count lives only in the server's memory: cycle N answers N.
        assert out(org, sid, CLIENT).strip() == str(cycle), "cycle %d" % cycle
        out(org, sid, "echo %d > /root/cycles/%03d.txt" % (cycle, cycle))
        listed = out(org, sid, "cat /root/cycles/*.txt").split()
        assert listed == [str(i) for i in range(1, cycle + 1)], (cycle, listed)

        status, stopped = org.api("POST", "/v1/sandboxes/%s/stop" % sid)
        assert status == 200, (cycle, status, stopped)
        hibernation = stopped["hibernation"]
        assert hibernation["processes"] == "saved", (cycle, hibernation)
        assert hibernation["workspace"] == "kept", (cycle, hibernation)
        status, op = org.api("GET", "/v1/operations/" + stopped["operationId"])
        assert status == 200 and op["phase"] == "Completed", (cycle, op)

        status, started = org.api("POST", "/v1/sandboxes/%s/start" % sid)
        assert status == 202, (cycle, status, started)
        org.wait_for_status(sid, "running", 120)
        op = finished(org, started["operationId"])
        assert op["phase"] == "Completed", (cycle, op)
        wait_for_agent(org, sid)
        assert out(org, sid, "kill -0 %s && echo alive" % pid) == "alive\n", cycle

    assert out(org, sid, CLIENT).strip() == str(CYCLES + 1)
    assert out(org, sid, "ls /root/cycles | wc -l").strip() == str(CYCLES)
