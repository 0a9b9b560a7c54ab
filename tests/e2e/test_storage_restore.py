"""A durable sandbox restored from its checkpoint (stop, then start) keeps its networking: it
reaches the storage gateway with its storage token, and the rule that lets it reach nothing
else of the host still applies."""

import socket
import threading

from harness import run_command as run

from test_agent import wait_for_agent
from test_objects import get
from test_stop_start import start, stop

PROBE = r"""
import os, socket, sys, urllib.request
ep, tok = os.environ["SANDBOX_STORAGE_ENDPOINT"], os.environ["SANDBOX_STORAGE_TOKEN"]
req = urllib.request.Request(ep + "/objects/restore/" + sys.argv[1], data=sys.argv[1].encode(),
                             method="PUT", headers={"Authorization": "Bearer " + tok})
print(urllib.request.urlopen(req, timeout=20).status)
host = ep.split("//")[1].split(":")[0]
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
