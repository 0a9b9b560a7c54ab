"""TLS hostname rules (network.hostnames, issue 5) against the stand-in internet of
test_network.py: a TLS server on TLS and TLS2 that answers with the server name it was sent,
and DNS servers where good/other/plain.example.test resolve to TLS and nothing resolves to
TLS2. The sandbox resolves through adapt's DNS proxy on its gateway (never curl --resolve):
each check is judged on a real answer from the server.
"""

import socket
import subprocess
import time

import pytest

import harness
from test_network import (DNS, HTTP, BODY, TLS, TLS2, client, netd, probe, sandbox,  # noqa: F401
                          sandbox_address, sh, standin)

GOOD = "good.example.test"
OTHER = "other.example.test"  # same address as GOOD, not listed


def hostnames_box(client, extra=None):
    network = {"egress": "allowlist",
               "hostnames": [{"hostname": GOOD, "port": 443}, {"hostname": "plain.example.test", "port": 8080}]}
    network.update(extra or {})
    return sandbox(client, network)


@pytest.fixture(scope="module")
def box(client):
    return hostnames_box(client)


def gateway(client, sid):
    return sandbox_address(client, sid).rsplit(".", 1)[0] + ".1"


def test_the_stand_in_serves_every_name_on_both_addresses(standin):
    """What the sandbox is refused below, the host itself gets: the refusals are adapt's."""
    import ssl
    for addr, sni in [(TLS, GOOD), (TLS, OTHER), (TLS2, GOOD)]:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        with ctx.wrap_socket(socket.create_connection((addr, 443), timeout=5), server_hostname=sni) as t:
            t.sendall(b"GET / HTTP/1.0\r\n\r\n")
            assert t.recv(4096).strip().endswith(("tls:" + sni).encode())
    with socket.create_connection((TLS, 8080), timeout=5) as c:
        c.sendall(b"GET / HTTP/1.0\r\n\r\n")
        assert b"plain" in c.recv(4096)


def test_sandbox_resolves_through_the_dns_proxy_on_its_gateway(client, box):
    net = client.get(box)["network"]
    assert net["egress"] == "allowlist"
    assert net["hostnames"] == [{"hostname": GOOD, "port": 443},
                                {"hostname": "plain.example.test", "port": 8080}]
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % box, {"argv": ["cat", "/etc/resolv.conf"]})
    assert status == 200 and ("nameserver " + gateway(client, box)) in cmd["stdout"], cmd
    assert probe(client, box, "resolve(%r)" % GOOD) == "OK " + TLS


def test_a_listed_hostname_over_tls_passes(client, box):
    assert probe(client, box, "tls(%r, %r)" % (GOOD, GOOD)) == "OK tls:" + GOOD


def test_a_hard_coded_address_alone_is_refused(client):
    sid = hostnames_box(client)
    # The name was never resolved in this sandbox: the right SNI to the right address fails ...
    assert probe(client, sid, "tls(%r, %r)" % (TLS, GOOD)).startswith("FAIL")
    # ... and passes once the sandbox's DNS proxy has returned that address.
    assert probe(client, sid, "resolve(%r)" % GOOD) == "OK " + TLS
    assert probe(client, sid, "tls(%r, %r)" % (TLS, GOOD)) == "OK tls:" + GOOD


def test_names_outside_the_rules_do_not_resolve(client, box):
    assert probe(client, box, "resolve(%r)" % OTHER) == "FAIL gaierror"
    assert probe(client, box, "dns(%r, %r)" % (gateway(client, box), OTHER)) == "FAIL nxdomain"
    assert probe(client, box, "dns(%r, %r)" % (gateway(client, box), GOOD)) == "OK " + TLS


def test_a_listed_address_with_another_sni_is_refused(client, box):
    assert probe(client, box, "resolve(%r)" % GOOD) == "OK " + TLS
    assert probe(client, box, "tls(%r, %r)" % (TLS, OTHER)).startswith("FAIL")
    assert probe(client, box, "tls(%r, None)" % TLS).startswith("FAIL")  # no SNI at all


def test_a_listed_sni_sent_to_an_address_dns_never_returned_is_refused(client, box):
    assert probe(client, box, "resolve(%r)" % GOOD) == "OK " + TLS
    assert probe(client, box, "tls(%r, %r)" % (TLS2, GOOD)).startswith("FAIL")


def test_plain_ip_connections_and_plaintext_are_refused(client, box):
    assert probe(client, box, "resolve('plain.example.test')") == "OK " + TLS
    # Plaintext HTTP to a listed name and port: no ClientHello, closed.
    assert probe(client, box, "tcp('plain.example.test', 8080)").startswith("FAIL")
    assert probe(client, box, "tcp(%r, 80)" % HTTP).startswith("FAIL")
    assert probe(client, box, "tcp(%r, 443, b'')" % TLS2).startswith("FAIL")
    # A port no rule names is not proxied at all.
    assert probe(client, box, "tls(%r, %r, 8443)" % (TLS, GOOD)).startswith("FAIL")


def test_no_other_resolver_and_no_dns_over_tcp(client, box):
    assert probe(client, box, "dns(%r, %r)" % (DNS, GOOD)).startswith("FAIL")
    gw = gateway(client, box)
    # Refused at once (a reset), not left to time out.
    assert probe(client, box, "tcp(%r, 53, b'')" % gw) == "FAIL ConnectionRefusedError"
    assert probe(client, box, "tcp(%r, 53, b'')" % DNS).startswith("FAIL")


def test_a_truncated_answer_still_resolves_without_dns_over_tcp(client):
    """The stand-in's resolver answers big.example.test truncated over UDP and in full (40
    addresses) over TCP: the DNS proxy fetches it over TCP and hands the sandbox the addresses
    that fit one datagram; the sandbox's resolver never needs TCP (which it cannot have)."""
    sid = sandbox(client, {"egress": "allowlist", "hostnames": [{"hostname": "big.example.test", "port": 443}]})
    assert probe(client, sid, "resolve('big.example.test')") == "OK " + TLS
    assert probe(client, sid, "tls('big.example.test', 'big.example.test')") == "OK tls:big.example.test"


def test_ip_rules_still_grant_access_on_their_own(client):
    sid = hostnames_box(client, {"allow": [{"protocol": "tcp", "address": HTTP, "port": 80},
                                           {"protocol": "tcp", "address": TLS2, "port": 443}]})
    assert probe(client, sid, "tcp(%r, 80)" % HTTP) == "OK " + BODY
    # TLS2:443 is an IP rule: not proxied, so any name (or none) passes.
    assert probe(client, sid, "tls(%r, %r)" % (TLS2, OTHER)) == "OK tls:" + OTHER
    assert probe(client, sid, "tls(%r, %r)" % (GOOD, GOOD)) == "OK tls:" + GOOD


def test_network_dns_with_hostnames_resolves_every_name_but_passes_only_listed_ones(client):
    sid = hostnames_box(client, {"dns": DNS})
    assert client.get(sid)["network"]["dns"] == DNS
    assert probe(client, sid, "resolve(%r)" % OTHER) == "OK " + TLS
    assert probe(client, sid, "tls(%r, %r)" % (OTHER, OTHER)).startswith("FAIL")
    assert probe(client, sid, "tls(%r, %r)" % (GOOD, GOOD)) == "OK tls:" + GOOD


def nft_has(d, what):
    return sh("nft", "list", "table", "inet", d.network_name, check=False).stdout.count(what)


def test_proxy_rules_go_with_the_sandbox(netd, client):
    sid = hostnames_box(client)
    assert nft_has(netd, "nat_" + sid) > 0
    client.delete(sid)
    assert nft_has(netd, "nat_" + sid) == 0


@pytest.mark.parametrize("network,field", [
    ({"egress": "allowlist", "hostnames": [{"hostname": "*.example.test", "port": 443}]},
     "network.hostnames[0].hostname"),
    ({"egress": "allowlist", "hostnames": [{"hostname": "198.51.100.30", "port": 443}]},
     "network.hostnames[0].hostname"),
    ({"egress": "allowlist", "hostnames": [{"hostname": "bücher.example", "port": 443}]},
     "network.hostnames[0].hostname"),
    ({"egress": "allowlist", "hostnames": [{"hostname": GOOD, "port": 0}]},
     "network.hostnames[0].port"),
    ({"egress": "allowlist", "hostnames": [{"hostname": GOOD, "port": 65536}]},
     "network.hostnames[0].port"),
    ({"egress": "allowlist", "hostnames": [{"hostname": GOOD}]}, "network.hostnames[0].port"),
    ({"egress": "allowlist", "hostnames": [{"hostname": GOOD, "port": 443, "path": "/"}]},
     "network.hostnames[0].path"),
    ({"egress": "allowlist", "hostnames": [{"hostname": GOOD, "port": 443}] * 65}, "network.hostnames"),
    ({"egress": "allowlist", "hostnames": [{"hostname": GOOD, "port": 443}], "dns": None}, "network.dns"),
    ({"egress": "open", "hostnames": [{"hostname": GOOD, "port": 443}]}, "network.hostnames"),
])
def test_bad_hostname_rules_are_a_400_naming_the_field(client, network, field):
    before = len(client.list_all())
    status, body = client.api("POST", "/v1/sandboxes", {"network": network})
    assert status == 400, body
    assert body["error"]["field"] == field, body
    assert len(client.list_all()) == before


def test_sixty_four_hostnames_are_accepted(client):
    rules = [{"hostname": "h%d.example.test" % i, "port": 443} for i in range(64)]
    status, body = client.api("POST", "/v1/sandboxes", {"network": {"egress": "allowlist", "hostnames": rules}})
    assert status == 201, body
    assert len(body["network"]["hostnames"]) == 64
    client.delete(body["id"])


HOST_NAME = "host.example.test"  # the stand-in's DNS answers 203.0.113.1: a host address
LATE_NAME = "late.example.test"  # 192.0.2.77: an address the host gets while adaptd runs
LATE = "192.0.2.77"


@pytest.fixture(scope="module")
def host_tls(tmp_path_factory):
    """A TLS server on every address of the host, answering "host-secret": what a sandbox's
    hostname rules must not reach, whatever a listed name resolves to. Yields its port."""
    import ssl
    import threading
    d = tmp_path_factory.mktemp("host-tls")
    cert, key = str(d / "cert.pem"), str(d / "key.pem")
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
       "/CN=" + HOST_NAME, "-keyout", key, "-out", cert)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv = socket.create_server(("0.0.0.0", 0))

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            try:
                c.settimeout(5)
                t = ctx.wrap_socket(c, server_side=True)
                t.recv(4096)
                t.sendall(b"HTTP/1.0 200 OK\r\n\r\nhost-secret\n")
                t.close()
            except Exception:
                c.close()

    threading.Thread(target=serve, daemon=True).start()
    yield srv.getsockname()[1]
    srv.close()


def host_tls_answer(address, port):
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with ctx.wrap_socket(socket.create_connection((address, port), timeout=5), server_hostname=HOST_NAME) as t:
        t.sendall(b"GET / HTTP/1.0\r\n\r\n")
        return t.recv(4096)


def test_a_listed_name_that_resolves_to_a_host_address_is_refused(client, host_tls, standin):
    assert host_tls_answer("203.0.113.1", host_tls).strip().endswith(b"host-secret")
    sid = sandbox(client, {"egress": "allowlist", "hostnames": [{"hostname": HOST_NAME, "port": host_tls},
                                                                {"hostname": LATE_NAME, "port": host_tls}]})
    assert probe(client, sid, "resolve(%r)" % HOST_NAME) == "OK 203.0.113.1"
    assert probe(client, sid, "tls(%r, %r, %d)" % (HOST_NAME, HOST_NAME, host_tls)).startswith("FAIL")
    # An address the host gets after adaptd started is one of its own too.
    dev = sh("ip", "-o", "-4", "addr", "show", "to", "203.0.113.1/32").stdout.split()[1]
    sh("ip", "addr", "add", LATE + "/32", "dev", dev)
    try:
        assert host_tls_answer(LATE, host_tls).strip().endswith(b"host-secret")
        assert probe(client, sid, "resolve(%r)" % LATE_NAME) == "OK " + LATE
        assert probe(client, sid, "tls(%r, %r, %d)" % (LATE_NAME, LATE_NAME, host_tls)).startswith("FAIL")
    finally:
        sh("ip", "addr", "del", LATE + "/32", "dev", dev, check=False)
    # A listed name elsewhere still passes in the same sandbox: the refusals are the host's.
    assert "host-secret" not in probe(client, sid, "tls(%r, %r)" % (GOOD, GOOD))


SANDBOX_CONNECTIONS = 256  # adaptd's default --max-connections-per-client

HOLD = r'''
import socket, time
def state(s, wait):
    s.settimeout(wait)
    try:
        return "closed" if s.recv(1) == b"" else "data"
    except socket.timeout:
        return "open"
    except OSError:
        return "closed"
held = [socket.create_connection((%r, 443), timeout=4) for _ in range(%d)]
time.sleep(0.5)
extra = socket.create_connection((%r, 443), timeout=4)
print(state(extra, 3), state(held[0], 0.5), state(held[-1], 0.5))
'''


def test_a_sandbox_holds_at_most_its_cap_of_tls_proxy_connections(client):
    sid = hostnames_box(client)
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % sid, {
        "argv": ["python3", "-c", HOLD % (TLS, SANDBOX_CONNECTIONS, TLS)], "timeoutSeconds": 60})
    assert status == 200 and cmd["exitCode"] == 0, cmd
    # The one over the cap is closed at once; those under it wait for their ClientHello.
    assert cmd["stdout"].split() == ["closed", "open", "open"], cmd
    client.delete(sid)


# Opens argv[1] TLS sessions to GOOD through the proxy, each asking the stand-in to hold it open
# (GET /hold), prints "held" or "refused" for each (a refusal is a failed handshake: the proxy
# closes a session it does not splice), then keeps them for argv[2] seconds.
HOLD_TLS = r'''
import socket, ssl, sys, time
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
addr = socket.gethostbyname(%r)
def hold():
    try:
        t = ctx.wrap_socket(socket.create_connection((addr, 443), timeout=5), server_hostname=%r)
        t.sendall(b"GET /hold HTTP/1.0\r\n\r\n")
        return t
    except OSError:
        return None
held = [hold() for _ in range(int(sys.argv[1]))]
print(" ".join("held" if t else "refused" for t in held), flush=True)
time.sleep(float(sys.argv[2]))
''' % (GOOD, GOOD)


def hold_tls(client, sid, n, seconds):
    """HOLD_TLS in sandbox `sid`: its line once the sessions are made, and the command's id
    (still running for `seconds`)."""
    cmd = harness.run_command(client, sid, expect=202,
                              argv=["python3", "-c", HOLD_TLS, str(n), str(seconds)],
                              waitSeconds=0, timeoutSeconds=seconds + 30)
    deadline = time.monotonic() + 60
    while True:
        status, now = client.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, cmd["id"]))
        assert status == 200, (status, now)
        if now["stdout"].strip() or now["status"] != "running":
            return now["stdout"].strip(), cmd["id"]
        assert time.monotonic() < deadline, now
        time.sleep(0.2)


def upstream_sessions():
    """The proxy's open connections to the stand-in's TLS server, as the host sees them."""
    out = sh("ss", "-Htn", "state", "established", "dst", TLS, "dport", "=", ":443").stdout
    return len([line for line in out.splitlines() if line.strip()])


def test_a_deleted_sandboxs_proxied_sessions_are_closed(client):
    """A sandbox's runsc dies with it and no FIN reaches the proxy: its spliced sessions must
    still go (they held the proxy's places, and the upstream, for the address's next holder)."""
    sid = hostnames_box(client)
    line, _ = hold_tls(client, sid, 2, 300)
    assert line == "held held"
    assert upstream_sessions() >= 2
    client.delete(sid)
    deadline = time.monotonic() + 30
    while upstream_sessions() > 0:
        assert time.monotonic() < deadline, "the deleted sandbox's sessions are still spliced"
        time.sleep(0.5)


SMALL_PROXY = 40  # --max-connections: an organization splices at most a quarter, 10


@pytest.fixture(scope="module")
def smalld(standin):
    d = harness.Daemon(extra_args=["--max-connections", str(SMALL_PROXY)])
    d.dns = DNS
    d.start()
    yield d
    d.close()


def test_an_organization_splices_at_most_a_quarter_of_the_proxys_connections(smalld):
    share = SMALL_PROXY // 4
    org, other = smalld.new_org(), smalld.new_org()
    first, second, elsewhere = hostnames_box(org), hostnames_box(org), hostnames_box(other)
    line, _ = hold_tls(org, first, share, 120)
    assert line == " ".join(["held"] * share)
    # The organization's next sandbox is refused; another organization is not.
    assert hold_tls(org, second, 1, 0)[0] == "refused"
    assert hold_tls(other, elsewhere, 1, 0)[0] == "held"
    # Deleting the holder gives its places back.
    org.delete(first)
    deadline = time.monotonic() + 30
    while hold_tls(org, second, 1, 0)[0] != "held":
        assert time.monotonic() < deadline, "the deleted sandbox's places were never given back"
        time.sleep(0.5)
