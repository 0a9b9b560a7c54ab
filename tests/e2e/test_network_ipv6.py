"""IPv6 egress (issue 5): every sandbox with a network has an address from the unique-local
pool (the IPv4 pool's addresses in the last 32 bits of fd61:6461:7074::/96) and a default
route through the host, which forwards and masquerades it like IPv4. Checked against the
stand-in internet of test_network.py (2001:db8:100::20 answers "tcp6-echo" on 7001 and 7003):
what must pass passes with a real answer; other sandboxes, the host's addresses (its ULA
gateway and the link-local address of the sandbox's veth) and unlisted ports do not.
"""

import socket

import pytest

from test_network import (ECHO6, client, netd, probe, probe_many, sandbox,  # noqa: F401
                          sandbox_address, serve_host_secret, sh, standin)

POOL6 = "fd61:6461:7074::"


def address6(client, sid):
    """The sandbox's IPv6 source address towards the stand-in, as its stack reports it."""
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % sid, {"argv": [
        "python3", "-c",
        "import socket; s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); "
        "s.connect(('%s', 9)); print(s.getsockname()[0])" % ECHO6]})
    assert status == 200 and cmd["exitCode"] == 0, cmd
    return cmd["stdout"].strip()


@pytest.fixture(scope="module")
def open_box(client):
    return sandbox(client, None)


@pytest.fixture(scope="module")
def host_server6():
    yield from serve_host_secret(socket.AF_INET6)


def test_open_sandbox_has_a_pool_address_and_reaches_ipv6_destinations(client, open_box):
    assert address6(client, open_box).startswith(POOL6)
    assert probe(client, open_box, "tcp(%r, 7001, b'')" % ECHO6) == "OK tcp6-echo"


def gateway6(client, sid):
    """The host end of the sandbox's veth: the sandbox's address with the last bits - 1."""
    addr = address6(client, sid)
    head, last = addr.rsplit(":", 1)
    return "%s:%x" % (head, int(last, 16) - 1)


def host_link_local(client, sid):
    """The link-local address of the host end of the sandbox's veth ("ad" + its IPv4 in hex)."""
    dev = "ad" + "".join("%02x" % int(x) for x in sandbox_address(client, sid).split("."))
    out = sh("ip", "-6", "-o", "addr", "show", "dev", dev, "scope", "link").stdout
    return out.split()[3].split("/")[0]


def test_open_sandbox_cannot_reach_the_host_over_ipv6(netd, client, open_box, host_server6):
    calls = []
    for addr in (gateway6(client, open_box), host_link_local(client, open_box) + "%eth0", "::1"):
        calls += ["tcp(%r, %d, b'')" % (addr, host_server6), "tcp(%r, %d)" % (addr, netd.port)]
    for call, line in zip(calls, probe_many(client, open_box, calls)):
        assert line.startswith("FAIL"), (call, line)
    # The host itself does answer there: the refusals are adapt's.
    with socket.create_connection((gateway6(client, open_box), host_server6), timeout=5) as c:
        assert c.recv(64) == b"host-secret\n"


def test_open_sandbox_cannot_reach_another_sandbox_over_ipv6(client, open_box):
    other = sandbox(client, None)
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % other, {
        "command": "nohup python3 -c \"import socket\ns=socket.create_server(('::', 8000), "
                   "family=socket.AF_INET6)\nwhile True:\n c=s.accept()[0]; c.sendall(b'peer\\n'); "
                   "c.close()\" >/dev/null 2>&1 & sleep 1", "timeoutSeconds": 30})
    assert status == 200 and cmd["exitCode"] == 0, cmd
    target = address6(client, other)
    assert target.startswith(POOL6)
    # The host reaches it (the server is up); the first sandbox does not.
    with socket.create_connection((target, 8000), timeout=5) as c:
        assert c.recv(64) == b"peer\n"
    assert probe(client, open_box, "tcp(%r, 8000, b'')" % target).startswith("FAIL")


def test_allowlist_ipv6_rules_pass_exactly_their_destination(client):
    sid = sandbox(client, {"egress": "allowlist", "allow": [{"protocol": "tcp", "address": ECHO6, "port": 7001}]})
    assert probe(client, sid, "tcp(%r, 7001, b'')" % ECHO6) == "OK tcp6-echo"
    assert probe(client, sid, "tcp(%r, 7003, b'')" % ECHO6).startswith("FAIL")


def test_a_sandbox_without_ipv6_rules_gets_no_ipv6(client):
    sid = sandbox(client, {"egress": "allowlist", "allow": [{"protocol": "tcp", "address": "198.51.100.10", "port": 80}]})
    assert probe(client, sid, "tcp(%r, 7001, b'')" % ECHO6).startswith("FAIL")
