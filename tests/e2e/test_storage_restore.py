"""A durable sandbox restored from its checkpoint (stop, then start) keeps its networking: it
reaches the storage gateway with its storage token, and the rule that lets it reach nothing
else of the host still applies."""

import socket
import threading

from harness import run_command as run

from test_agent import wait_for_agent
from test_objects import get
from test_stop_start import start, stop

# The PUT asks the gateway to close the connection and reads until it has: the sandbox's end
# then closes passively and is gone at once. A connection the sandbox closed first would
# linger 60 s in TIME_WAIT, which this runsc cannot checkpoint (README "Network connections
# and checkpoints"): the stop below would lose the processes.
PROBE = r"""
import os, socket, sys, urllib.parse
ep, tok = os.environ["SANDBOX_STORAGE_ENDPOINT"], os.environ["SANDBOX_STORAGE_TOKEN"]
url = urllib.parse.urlsplit(ep + "/objects/restore/" + sys.argv[1])
body = sys.argv[1].encode()
c = socket.create_connection((url.hostname, url.port), timeout=20)
c.sendall(("PUT %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n"
           "Connection: close\r\n\r\n" % (url.path, url.netloc, tok, len(body))).encode() + body)
answer = b""
while True:
    chunk = c.recv(65536)
    if not chunk:
        break
    answer += chunk
c.close()
print(answer.split()[1].decode())
host = url.hostname
s = socket.socket()
s.settimeout(3)
try:
    s.connect((host, int(sys.argv[2])))
    print("other-port-open")
except OSError:
    print("other-port-closed")
"""


def probe(client, sid, name, port):
    cmd = run(client, sid, argv=["python3", "-c", PROBE, name, str(port)], waitSeconds=60,
              timeoutSeconds=60)
    assert cmd["exitCode"] == 0, (cmd["stdout"], cmd["stderr"])
    return cmd["stdout"].split()


def test_restored_durable_sandbox_keeps_gateway_access_and_host_isolation(org):
    # A listener on every host address, as the gateway's is: only the gateway's port may be
    # reached from a sandbox.
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    stop_accepting = threading.Event()

    def accept():
        listener.settimeout(0.5)
        while not stop_accepting.is_set():
            try:
                listener.accept()[0].close()
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        sid = org.create({"startupClass": "durable"})["id"]
        org.wait_for_status(sid, "running", 120)
        status, att = org.api("POST", "/v1/sandboxes/%s/object-storage" % sid, {"ttlSeconds": 600})
        assert status == 200, att
        org.wait_for_status(sid, "running", 120)
        wait_for_agent(org, sid)
        assert probe(org, sid, "before", port) == ["200", "other-port-closed"]

        assert stop(org, sid)["hibernation"]["processes"] == "saved"
        start(org, sid)
        org.wait_for_status(sid, "running", 120)
        wait_for_agent(org, sid)
        assert probe(org, sid, "after", port) == ["200", "other-port-closed"]
        assert get(org, "restore/after")[2] == b"after"
    finally:
        stop_accepting.set()
        thread.join()
        listener.close()
