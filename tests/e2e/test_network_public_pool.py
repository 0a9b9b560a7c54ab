"""An operator's --network-pool of addresses outside every blocked range (198.18.0.0/24, the
benchmarking block: never routed beyond this host, and adapt's rules know it only as "the
pool"). A tenant's network.dns is any public address, and its accept rule comes before the
blocked ranges: it must still not reach another sandbox of the pool. All traffic here stays
between the sandboxes of this test's adaptd.
"""

import time

import pytest

import harness
from test_network import sandbox, sandbox_address

POOL = "198.18.0.0/24"

# Listens on UDP 53 for 150 s, answers every datagram with "pong" and prints who sent it.
ECHO53 = r'''
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 53))
s.settimeout(150)
while True:
    data, peer = s.recvfrom(512)
    print("got", peer[0], flush=True)
    s.sendto(b"pong", peer)
'''

# Sends a datagram to argv[1]:53 three times; prints the answer or "none".
ASK53 = r'''
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(1)
for _ in range(3):
    s.sendto(b"ping", (sys.argv[1], 53))
    try:
        print(s.recvfrom(512)[0].decode())
        break
    except socket.timeout:
        pass
else:
    print("none")
'''


@pytest.fixture(scope="module")
def d():
    daemon = harness.Daemon()
    daemon.network_pool = POOL
    daemon.start()
    yield daemon
    left = daemon.close()
    assert not left["netns"], left


@pytest.fixture(scope="module")
def victim(d):
    """Another organization's sandbox with a UDP server on port 53: (client, id, address,
    the server's command id)."""
    org = d.new_org()
    sid = sandbox(org, {"egress": "open"})
    address = sandbox_address(org, sid)
    assert address.startswith("198.18.0."), address
    server = harness.run_command(org, sid, expect=202, argv=["python3", "-c", ECHO53],
                                 waitSeconds=0, timeoutSeconds=180)
    # The victim answers itself once its server is up.
    deadline = time.monotonic() + 30
    while True:
        cmd = harness.run_command(org, sid, argv=["python3", "-c", ASK53, address],
                                  waitSeconds=30)
        if cmd["stdout"].strip() == "pong":
            break
        assert time.monotonic() < deadline, cmd
    return org, sid, address, server["id"]


def senders(victim):
    """The addresses the victim's server heard from, its own excepted."""
    org, sid, address, server = victim
    status, cmd = org.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, server))
    assert status == 200 and cmd["status"] == "running", cmd
    return {line.split()[1] for line in cmd["stdout"].splitlines()
            if line.startswith("got ")} - {address}


def test_network_dns_naming_another_sandbox_of_a_public_pool_reaches_nothing(d, victim):
    _, _, address, _ = victim
    tenant = d.new_org()
    # A public address passes network.dns's check, the pool's included.
    attacker = sandbox(tenant, {"egress": "allowlist", "dns": address})
    assert tenant.get(attacker)["network"]["dns"] == address
    cmd = harness.run_command(tenant, attacker, argv=["python3", "-c", ASK53, address],
                              waitSeconds=30)
    assert cmd["stdout"].strip() == "none", cmd
    assert senders(victim) == set()


def test_the_dns_proxy_never_asks_another_sandbox_named_as_the_resolver(d, victim):
    """With hostname rules, network.dns is the DNS proxy's upstream (every name resolves): the
    proxy asks from the host, past every sandbox chain, so it must refuse a pool address."""
    _, _, address, _ = victim
    tenant = d.new_org()
    attacker = sandbox(tenant, {"egress": "allowlist", "dns": address,
                                "hostnames": [{"hostname": "listed.example.test", "port": 443}]})
    cmd = harness.run_command(tenant, attacker, waitSeconds=30, argv=[
        "python3", "-c", "import socket\n"
        "for name in ('listed.example.test', 'anything.example.test'):\n"
        "    try:\n        print(socket.gethostbyname(name))\n"
        "    except OSError as e:\n        print('failed', e)"])
    assert cmd["exitCode"] == 0 and "failed" in cmd["stdout"], cmd
    assert senders(victim) == set()
