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

# Listens on UDP 53 and answers every datagram with "pong" for 120 s.
ECHO53 = r'''
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 53))
print("listening", flush=True)
s.settimeout(120)
while True:
    data, peer = s.recvfrom(512)
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


def test_network_dns_naming_another_sandbox_of_a_public_pool_reaches_nothing(d):
    victim_org, tenant = d.new_org(), d.new_org()
    victim = sandbox(victim_org, {"egress": "open"})
    address = sandbox_address(victim_org, victim)
    assert address.startswith("198.18.0."), address
    harness.run_command(victim_org, victim, expect=202, argv=["python3", "-c", ECHO53],
                        waitSeconds=0, timeoutSeconds=150)
    # The victim answers itself once its server is up.
    deadline = time.monotonic() + 30
    while True:
        cmd = harness.run_command(victim_org, victim, argv=["python3", "-c", ASK53, address],
                                  waitSeconds=30)
        if cmd["stdout"].strip() == "pong":
            break
        assert time.monotonic() < deadline, cmd
    # A public address passes network.dns's check, the pool's included.
    attacker = sandbox(tenant, {"egress": "allowlist", "dns": address})
    assert tenant.get(attacker)["network"]["dns"] == address
    cmd = harness.run_command(tenant, attacker, argv=["python3", "-c", ASK53, address],
                              waitSeconds=30)
    assert cmd["stdout"].strip() == "none", cmd
