"""Checkpoints of durable sandboxes holding network endpoints, state by state, on this runsc
(20221219). runsc refuses to save a TCP endpoint connected over the sandbox's network device
("encoding error at object tcp.endpoint ... endpoint cannot be saved in connected state"):
- loopback inside the sandbox (listening, established, half-closed) and UDP: saved;
- a connection a process holds open (ESTABLISHED, CLOSE_WAIT), or one the sandbox closed less
  than 60 s ago (FIN_WAIT2, TIME_WAIT): refused, the processes are lost, and hibernation.note
  says exactly which connection and why, as does the checkpoint operation's error.
Each state is made before the stop and checked in the sandbox where it can be, so no result
depends on timing. The far end is the stand-in internet of test_network.py (a namespace of
the test's own)."""

import pytest

from harness import run_command as run
from test_agent import wait_for_agent
from test_network import ECHO, HTTP, standin_netns, start_network_daemon

# Each script leaves its state behind and prints "ready" once it holds; `sleep` keeps the
# process (and its sockets) alive until the checkpoint.
LOOPBACK = r"""
import socket, time
lis = socket.create_server(("127.0.0.1", 9000))
est = socket.create_server(("127.0.0.1", 9001))
c = socket.create_connection(("127.0.0.1", 9001)); a, _ = est.accept()
c.send(b"x"); assert a.recv(1) == b"x"
half = socket.create_server(("127.0.0.1", 9002))
h = socket.create_connection(("127.0.0.1", 9002)); b, _ = half.accept()
h.close(); assert b.recv(1) == b""  # b: CLOSE_WAIT, h: FIN_WAIT2
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 9003))
v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); v.sendto(b"y", ("127.0.0.1", 9003))
assert u.recv(1) == b"y"
print("ready", flush=True)
time.sleep(1e6)
"""
EXTERNAL = {
    # The HTTP server waits for a request: the connection stays established.
    "established": "s = socket.create_connection((%r, 80)); print('ready', flush=True)" % HTTP,
    # The echo server sends a line and closes: the sandbox's end is in CLOSE_WAIT.
    "close_wait": "s = socket.create_connection((%r, 7001)); assert s.recv(64) == b'tcp-echo\\n'; "
                  "assert s.recv(64) == b''; print('ready', flush=True)" % ECHO,
    # The sandbox closes first (the HTTP server waits for a request, then closes on the
    # sandbox's FIN): FIN_WAIT2, then TIME_WAIT in the sandbox, each ending by itself in 60 s.
    "time_wait": "s = socket.create_connection((%r, 80)); s.close(); print('ready', flush=True)" % HTTP,
    # UDP to the echo: a bound, connectionless socket.
    "udp": "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5); "
           "s.sendto(b'p', (%r, 7000)); assert s.recv(64) == b'udp-echo:p'; print('ready', flush=True)" % ECHO,
}


@pytest.fixture(scope="module")
def netd():
    with standin_netns():
        d = start_network_daemon()
        try:
            yield d
        finally:
            d.close()


def hold(client, sid, script):
    """Runs `script` in the background in the sandbox and waits until it printed ready;
    returns its pid. The bound (60 s) only ends a hang: a loaded machine may take seconds to
    start python3 and reach the stand-in host."""
    cmd = run(client, sid, command="cat > /root/hold.py <<'EOF'\n%s\nEOF\n"
              "nohup python3 /root/hold.py > /root/hold.log 2>&1 & echo $!; "
              "for i in $(seq 600); do grep -q ready /root/hold.log && exit 0; sleep 0.1; done; "
              "cat /root/hold.log; exit 1" % script)
    assert cmd["exitCode"] == 0, cmd
    return cmd["stdout"].split()[0]


def durable(client):
    sid = client.create({"startupClass": "durable"})["id"]
    client.wait_for_status(sid, "running", 120)
    wait_for_agent(client, sid)
    return sid


def stop(client, sid):
    status, body = client.api("POST", "/v1/sandboxes/%s/stop" % sid)
    assert status == 200, (status, body)
    status, op = client.api("GET", "/v1/operations/" + body["operationId"])
    assert status == 200, op
    return body["hibernation"], op


def resumes(client, sid, pid):
    """Starts the sandbox; True when process `pid` came back with it. When it did not, the
    start's operation (which says whether the checkpoint was restored) is in the failure."""
    status, body = client.api("POST", "/v1/sandboxes/%s/start" % sid)
    assert status == 202, body
    client.wait_for_status(sid, "running", 120)
    wait_for_agent(client, sid)
    cmd = run(client, sid, command="kill -0 %s && echo alive" % pid)
    if cmd["stdout"] == "alive\n":
        return True
    status, op = client.api("GET", "/v1/operations/" + body["operationId"])
    print("process %s not back after the start: %s; the start's operation: %s" % (pid, cmd, op))
    return False


def test_loopback_listening_established_half_closed_and_udp_are_saved(netd):
    c = netd.admin
    sid = durable(c)
    pid = hold(c, sid, LOOPBACK)
    hib, op = stop(c, sid)
    assert hib["processes"] == "saved" and hib["note"] is None, hib
    assert op["phase"] == "Completed", op
    assert resumes(c, sid, pid)
    c.delete(sid)


@pytest.mark.parametrize("state", ["established", "close_wait"])
def test_a_connection_held_open_over_the_network_cannot_be_saved_and_the_note_says_why(netd, state):
    c = netd.admin
    sid = durable(c)
    pid = hold(c, sid, "import socket, time\n%s\ntime.sleep(1e6)" % EXTERNAL[state])
    hib, op = stop(c, sid)
    assert hib["processes"] == "lost", hib
    note = hib["note"]
    tcp = {"established": "ESTABLISHED", "close_wait": "CLOSE_WAIT"}[state]
    port = {"established": "%s:80" % HTTP, "close_wait": "%s:7001" % ECHO}[state]
    assert "cannot checkpoint a TCP connection" in note and tcp in note and port in note, note
    assert "close network connections before stopping" in note, note
    # One sentence, not runsc's struct dump and goroutine trace.
    assert len(note) < 400 and "goroutine" not in note, note
    assert op["phase"] == "Failed" and op["error"] == note, (op, note)
    # The files are kept and the start boots afresh: the process is gone.
    assert not resumes(c, sid, pid)
    assert run(c, sid, command="cat /root/hold.py")["exitCode"] == 0
    c.delete(sid)


def test_a_connection_the_sandbox_just_closed_cannot_be_saved_and_the_note_says_when_it_can(netd):
    """Closed by the sandbox: FIN_WAIT2 or TIME_WAIT for up to 60 s, both refused. Waiting or
    retrying is no remedy on this runsc: a refused save tears the sandbox down (measured: a
    second `runsc checkpoint` finds no container), and gVisor's /proc/net/tcp does not list
    an endpoint whose socket is closed, so adaptd cannot wait for it beforehand either."""
    c = netd.admin
    sid = durable(c)
    pid = hold(c, sid, "import socket, time\n%s\ntime.sleep(1e6)" % EXTERNAL["time_wait"])
    hib, op = stop(c, sid)
    assert hib["processes"] == "lost", hib
    note = hib["note"]
    assert "FIN_WAIT2" in note or "TIME_WAIT" in note, note
    assert "%s:80" % HTTP in note and "less than 60 s ago" in note, note
    assert op["phase"] == "Failed" and op["error"] == note, (op, note)
    assert not resumes(c, sid, pid)
    c.delete(sid)


def test_udp_over_the_network_is_saved(netd):
    c = netd.admin
    sid = durable(c)
    pid = hold(c, sid, "import socket, time\n%s\ntime.sleep(1e6)" % EXTERNAL["udp"])
    hib, op = stop(c, sid)
    assert hib["processes"] == "saved", hib
    assert op["phase"] == "Completed", op
    assert resumes(c, sid, pid)
    c.delete(sid)
