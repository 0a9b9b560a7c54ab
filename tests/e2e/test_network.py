"""Sandbox networking (issue 5): egress modes open, none and allowlist against a stand-in
internet.

The stand-in is a network namespace this test makes, holding documentation-range addresses
(198.51.100.0/24 behind 203.0.113.0/30, 2001:db8:100::/48 behind 2001:db8:ffff::/126) that the
host reaches only through explicit routes to it: an HTTP server, TCP and UDP echoes (an IPv6
one too), TLS servers and DNS servers. adaptd's resolver is the
stand-in's. No other address is ever contacted. Each check is judged on a real answer, since a
blocked TCP connect can look successful from inside a sandbox.
"""

import contextlib
import fcntl
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pytest

import harness

HTTP = "198.51.100.10"  # HTTP on :80
ECHO = "198.51.100.20"  # TCP echo on :7001, UDP echo on :7000 and :7002
TLS = "198.51.100.30"  # TLS on :443 (any name: answers "tls:<SNI>"), plain HTTP on :8080
TLS2 = "198.51.100.31"  # the same TLS server on another address no name resolves to
DNS = "198.51.100.53"  # answers svc.example.test -> HTTP
DNS2 = "198.51.100.54"  # a second resolver, same answers
ECHO6 = "2001:db8:100::20"  # IPv6 TCP echo on :7001 and :7003 (answers "tcp6-echo")
NAME = "svc.example.test"
BODY = "hello from the stand-in"

SERVERS = r'''
import socket, socketserver, struct, sys, threading, http.server

class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"hello from the stand-in\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass

class T(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True

# "ready" is printed only once every server is bound: a test may connect right after it.
pending = threading.Semaphore(0)
def bound():
    pending.release()

NAMES = {"svc.example.test": "198.51.100.10", "good.example.test": "198.51.100.30",
         "other.example.test": "198.51.100.30", "plain.example.test": "198.51.100.30",
         "host.example.test": "203.0.113.1",  # the host's end of the stand-in's link
         "late.example.test": "192.0.2.77"}  # an address test_network_hostnames gives the host

def dns(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, 53))
    bound()
    while True:
        q, peer = s.recvfrom(512)
        tid, qd = q[:2], q[12:]
        end = qd.index(b"\0") + 5
        labels, i = [], 0
        while qd[i]:
            labels.append(qd[i + 1:i + 1 + qd[i]].decode()); i += 1 + qd[i]
        name = ".".join(labels).lower()
        qtype = struct.unpack(">H", qd[end - 4:end - 2])[0]
        if name == "big.example.test":  # too big for a datagram: truncated, ask over TCP
            s.sendto(tid + b"\x83\x80" + struct.pack(">HHHH", 1, 0, 0, 0) + qd[:end], peer)
            continue
        if name in NAMES and qtype == 1:
            ans = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 5, 4) + socket.inet_aton(NAMES[name])
            hdr = tid + b"\x81\x80" + struct.pack(">HHHH", 1, 1, 0, 0)
        else:
            ans = b""
            rcode = b"\x81\x80" if name in NAMES else b"\x81\x83"
            hdr = tid + rcode + struct.pack(">HHHH", 1, 0, 0, 0)
        s.sendto(hdr + qd[:end] + ans, peer)

def dns_tcp(addr):
    """DNS over TCP: big.example.test has 40 addresses, TLS's first (more than 512 bytes)."""
    srv = socket.create_server((addr, 53))
    bound()
    while True:
        c, _ = srv.accept()
        try:
            c.settimeout(5)
            n = struct.unpack(">H", c.recv(2))[0]
            q = b""
            while len(q) < n:
                q += c.recv(n - len(q))
            end = q[12:].index(b"\0") + 5
            addrs = ["198.51.100.30"] + ["198.51.100.%d" % i for i in range(100, 139)]
            ans = b"".join(b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 5, 4) + socket.inet_aton(a)
                           for a in addrs)
            r = q[:2] + b"\x81\x80" + struct.pack(">HHHH", 1, len(addrs), 0, 0) + q[12:12 + end] + ans
            c.sendall(struct.pack(">H", len(r)) + r)
        except Exception:
            pass
        c.close()

def tls_server(addr, port, cert, key):
    """TLS on addr:port, one certificate for every name; answers with the server name the
    client sent ("-" for none)."""
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    def note(sock, name, _ctx):
        sock.seen = name
    ctx.sni_callback = note
    srv = socket.create_server((addr, port))
    bound()
    def serve(c):
        try:
            c.settimeout(10)
            t = ctx.wrap_socket(c, server_side=True)
            req = t.recv(4096)
            if req.startswith(b"GET /hold"):  # held open until the client closes
                t.settimeout(None)
                while t.recv(4096):
                    pass
                t.close()
                return
            if req.startswith(b"GET /bytes/"):  # bench/egress's downloads
                n = int(req.split()[1][7:])
                t.sendall(b"HTTP/1.0 200 OK\r\n\r\n")
                chunk = b"x" * 65536
                while n > 0:
                    t.sendall(chunk[:n])
                    n -= len(chunk)
            t.sendall(b"HTTP/1.0 200 OK\r\n\r\ntls:" + (getattr(t, "seen", None) or "-").encode() + b"\n")
            t.close()
        except Exception:
            c.close()
    while True:
        c, _ = srv.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()

def plain_server(addr, port):
    srv = socket.create_server((addr, port))
    bound()
    while True:
        c, _ = srv.accept()
        c.recv(4096)
        c.sendall(b"HTTP/1.0 200 OK\r\n\r\nplain\n")
        c.close()

def udp_echo(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("198.51.100.20", port))
    bound()
    while True:
        d, peer = s.recvfrom(2048)
        s.sendto(b"udp-echo:" + d, peer)

def tcp_echo():
    srv = socket.create_server(("198.51.100.20", 7001))
    bound()
    while True:
        c, _ = srv.accept()
        c.sendall(b"tcp-echo\n")
        c.close()

def tcp6_echo(port):
    srv = socket.create_server(("2001:db8:100::20", port), family=socket.AF_INET6)
    bound()
    while True:
        c, _ = srv.accept()
        c.sendall(b"tcp6-echo\n")
        c.close()

for target, args in [(dns, ("198.51.100.53",)), (dns, ("198.51.100.54",)),
                     (dns_tcp, ("198.51.100.53",)), (udp_echo, (7000,)),
                     (udp_echo, (7002,)), (tcp_echo, ()),
                     (tls_server, ("198.51.100.30", 443, sys.argv[1], sys.argv[2])),
                     (tls_server, ("198.51.100.31", 443, sys.argv[1], sys.argv[2])),
                     (plain_server, ("198.51.100.30", 8080)), (tcp6_echo, (7001,)), (tcp6_echo, (7003,))]:
    threading.Thread(target=target, args=args, daemon=True).start()
for _ in range(11):
    pending.acquire()
http_server = T(("198.51.100.10", 80), H)
print("ready", flush=True)
http_server.serve_forever()
'''

# Runs inside the sandbox (its python3). Prints one line: "OK <answer>" or "FAIL <why>".
PROBE = r'''
import socket, struct, sys
def tcp(host, port, send=b"GET / HTTP/1.0\r\nHost: x\r\n\r\n"):
    try:
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(4)
        s.connect((host, port))
        s.sendall(send)
        data = b""
        while True:
            d = s.recv(4096)
            if not d:
                break
            data += d
        s.close()
        lines = data.decode(errors="replace").strip().splitlines()
        return "OK " + lines[-1] if lines else "FAIL empty"
    except Exception as e:
        return "FAIL " + type(e).__name__
def udp(host, port):
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(4)
        s.sendto(b"ping", (host, port))
        return "OK " + s.recvfrom(2048)[0].decode()
    except Exception as e:
        return "FAIL " + type(e).__name__
def dns(server, name="svc.example.test"):
    q = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
    q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0\x00\x01\x00\x01"
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(4)
        s.sendto(q, (server, 53))
        r = s.recvfrom(512)[0]
        return "OK " + socket.inet_ntoa(r[-4:]) if r[7] else "FAIL nxdomain"
    except Exception as e:
        return "FAIL " + type(e).__name__
def tls(host, sni, port=443, send=b"GET / HTTP/1.0\r\n\r\n"):
    import ssl
    try:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        s = socket.create_connection((host, port), timeout=4)
        t = ctx.wrap_socket(s, server_hostname=sni)
        t.sendall(send)
        data = b""
        while True:
            d = t.recv(4096)
            if not d:
                break
            data += d
        lines = data.decode(errors="replace").strip().splitlines()
        return "OK " + lines[-1] if lines else "FAIL empty"
    except Exception as e:
        return "FAIL " + type(e).__name__
def udp_from(sport, host, port):
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("0.0.0.0", sport))
        s.settimeout(4)
        s.sendto(b"ping", (host, port))
        return "OK " + s.recvfrom(2048)[0].decode()
    except Exception as e:
        return "FAIL " + type(e).__name__
def resolve(name="svc.example.test"):
    try:
        return "OK " + socket.gethostbyname(name)
    except Exception as e:
        return "FAIL " + type(e).__name__
print(%s)
'''


def sh(*argv, check=True):
    r = subprocess.run(list(argv), capture_output=True, text=True, timeout=60)
    if check and r.returncode != 0:
        raise AssertionError("%s -> %s: %s" % (" ".join(argv), r.returncode, r.stderr))
    return r


@contextlib.contextmanager
def standin_netns():
    """The stand-in internet (see the module's docstring), torn down on exit; yields the
    namespace's name. Also used by bench/egress.

    Its addresses and route are the host's, so one stand-in exists at a time: a second
    pytest process (the other e2e shard, a bench) waits here for the first one's to go rather
    than take its route (and, tearing down, delete it)."""
    lock = open("/run/adapt-e2e-standin.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        with _standin_netns() as ns:
            yield ns
    finally:
        lock.close()


@contextlib.contextmanager
def _standin_netns():
    tag = "%d" % (os.getpid() % 100000)
    ns, host_if, peer_if = "adapt-e2e-inet" + tag, "sinh" + tag, "sinp" + tag
    sh("ip", "netns", "add", ns)
    proc = None
    try:
        sh("ip", "link", "add", host_if, "type", "veth", "peer", "name", peer_if)
        sh("ip", "link", "set", peer_if, "netns", ns)
        sh("ip", "addr", "add", "203.0.113.1/30", "dev", host_if)
        sh("ip", "link", "set", host_if, "up")
        sh("ip", "-n", ns, "addr", "add", "203.0.113.2/30", "dev", peer_if)
        sh("ip", "-n", ns, "link", "set", peer_if, "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        for a in (HTTP, ECHO, DNS, DNS2, TLS, TLS2):
            sh("ip", "-n", ns, "addr", "add", a + "/32", "dev", "lo")
        sh("ip", "route", "add", "198.51.100.0/24", "via", "203.0.113.2", "dev", host_if)
        # IPv6: 2001:db8:100::/48 behind 2001:db8:ffff::/126 (documentation ranges too).
        sh("ip", "-6", "addr", "add", "2001:db8:ffff::1/126", "dev", host_if, "nodad")
        sh("ip", "-n", ns, "-6", "addr", "add", "2001:db8:ffff::2/126", "dev", peer_if, "nodad")
        sh("ip", "-n", ns, "-6", "addr", "add", ECHO6 + "/128", "dev", "lo")
        sh("ip", "-6", "route", "add", "2001:db8:100::/48", "via", "2001:db8:ffff::2", "dev", host_if)
        script = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
        script.write(SERVERS)
        script.close()
        cert, key = script.name + ".crt", script.name + ".key"
        sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
           "/CN=good.example.test", "-keyout", key, "-out", cert)
        proc = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, script.name, cert, key],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout.readline().strip() == "ready"
        yield ns
    finally:
        if proc:
            proc.kill()
            proc.wait()
        sh("ip", "route", "del", "198.51.100.0/24", check=False)
        sh("ip", "-6", "route", "del", "2001:db8:100::/48", check=False)
        sh("ip", "link", "del", host_if, check=False)
        sh("ip", "netns", "del", ns, check=False)


@pytest.fixture(scope="module")
def standin():
    with standin_netns() as ns:
        yield ns


def start_network_daemon():
    d = harness.Daemon()
    d.dns = DNS
    d.start()
    return d


@pytest.fixture(scope="module")
def netd(standin):
    d = start_network_daemon()
    yield d
    left = d.close()
    assert not left["netns"], left


@pytest.fixture(scope="module")
def client(netd):
    return netd.new_org()


def serve_host_secret(family=socket.AF_INET):
    """A TCP server on every host address of `family`, answering "host-secret": what a
    sandbox must not reach. Yields its port."""
    srv = socket.create_server(("::" if family == socket.AF_INET6 else "0.0.0.0", 0), family=family)
    port = srv.getsockname()[1]

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            c.sendall(b"host-secret\n")
            c.close()

    threading.Thread(target=serve, daemon=True).start()
    yield port
    srv.close()


@pytest.fixture(scope="module")
def host_server():
    yield from serve_host_secret()


def sandbox(client, network):
    sbx = client.create({"network": network} if network is not None else {})
    client.wait_for_status(sbx["id"], "running", 90)
    return sbx["id"]


def probe(client, sid, call):
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % sid,
                             {"argv": ["python3", "-c", PROBE % call], "timeoutSeconds": 60})
    assert status == 200 and cmd["status"] == "exited", (status, cmd)
    return cmd["stdout"].strip()


def probe_many(client, sid, calls):
    """Runs several probe calls in one python3 in the sandbox, side by side (threads), so that
    the refused ones wait out their 4 s timeouts together; returns their lines, in order."""
    expr = ("'\\n'.join(__import__('concurrent.futures').futures.ThreadPoolExecutor(%d)"
            ".map(lambda c: eval(c), %r))" % (len(calls), list(calls)))
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % sid,
                             {"argv": ["python3", "-c", PROBE % expr], "timeoutSeconds": 60})
    assert status == 200 and cmd["status"] == "exited", (status, cmd)
    lines = cmd["stdout"].strip().split("\n")
    assert len(lines) == len(calls), (calls, cmd)
    return lines


def sandbox_address(client, sid):
    """The sandbox's own IPv4 address, as its network stack reports it (runsc moves the
    address from the namespace's eth0 into the sandbox)."""
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % sid, {"argv": [
        "python3", "-c",
        "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        "s.connect(('198.51.100.10', 9)); print(s.getsockname()[0])"]})
    assert status == 200 and cmd["exitCode"] == 0, cmd
    return cmd["stdout"].strip()


def host_addresses():
    r = sh("ip", "-4", "-o", "addr", "show")
    return [line.split()[3].split("/")[0] for line in r.stdout.splitlines()
            if " lo " not in line and "sinh" not in line]


@pytest.fixture(scope="module")
def open_box(client):
    return sandbox(client, None)


def test_a_flow_of_a_deleted_sandbox_does_not_carry_the_next_one_past_its_policy(client):
    # The firewall accepts established flows before a sandbox's rules: a flow kept tracked
    # after its sandbox went was open to the next sandbox given the address, whatever its policy.
    first = sandbox(client, None)
    address = sandbox_address(client, first)
    assert probe(client, first, "udp_from(40000, %r, 7000)" % ECHO) == "OK udp-echo:ping"
    client.delete(first)
    shut = sandbox(client, {"egress": "allowlist", "allow": []})
    assert sandbox_address(client, shut) == address, "the freed address was not the one reused"
    assert probe(client, shut, "udp_from(40000, %r, 7000)" % ECHO).startswith("FAIL")
    client.delete(shut)


def test_open_is_the_default_and_reaches_public_destinations(client, open_box):
    assert client.get(open_box)["network"]["egress"] == "open"
    assert probe(client, open_box, "tcp(%r, 80)" % HTTP) == "OK " + BODY
    assert probe(client, open_box, "tcp(%r, 7001, b'')" % ECHO) == "OK tcp-echo"
    assert probe(client, open_box, "udp(%r, 7000)" % ECHO) == "OK udp-echo:ping"


def test_open_resolves_through_the_configured_resolver(client, open_box):
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % open_box,
                             {"argv": ["cat", "/etc/resolv.conf"]})
    assert status == 200 and ("nameserver " + DNS) in cmd["stdout"], cmd
    assert probe(client, open_box, "resolve()") == "OK " + HTTP
    # The record names the resolver it uses (seed 001: "Public internet mode defaults to
    # 1.1.1.1"; here adaptd's --dns), so the network it shows can be sent back as it is.
    network = client.get(open_box)["network"]
    assert network["dns"] == DNS, network
    again = sandbox(client, network)
    assert client.get(again)["network"] == network
    client.delete(again)


def test_open_with_dns_null_has_no_resolver_and_keeps_its_egress(client):
    # Seed 001: "The API accepts a public resolver in network.dns, or null to disable DNS."
    # Open egress then has no resolver at all; its connections stay open, and the record says
    # null, so that it too can be sent back as it is.
    sid = sandbox(client, {"egress": "open", "dns": None})
    network = client.get(sid)["network"]
    assert network["egress"] == "open" and network["dns"] is None, network
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % sid,
                             {"argv": ["cat", "/etc/resolv.conf"]})
    assert status == 200 and cmd["exitCode"] == 0, cmd
    assert "nameserver" not in cmd["stdout"], cmd
    assert probe(client, sid, "resolve()").startswith("FAIL"), "a name resolved without DNS"
    assert probe(client, sid, "tcp(%r, 80)" % HTTP) == "OK " + BODY
    again = sandbox(client, network)
    assert client.get(again)["network"] == network
    client.delete(again)
    client.delete(sid)


def test_open_blocks_private_metadata_and_local_destinations(client, open_box):
    targets = ["10.0.0.1", "172.16.0.1", "192.168.0.1", "100.64.0.1", "169.254.169.254",
               "0.0.0.0", "::ffff:169.254.169.254", "::1", "fe80::1", "fc00::1",
               "64:ff9b::a9fe:a9fe", "2852039166", "0xa9.0xfe.0xa9.0xfe", "0251.0376.0251.0376"]
    # All at once; the last, a public destination, shows that the probes themselves work.
    lines = probe_many(client, open_box, ["tcp(%r, 80)" % t for t in targets + [HTTP]])
    for target, line in zip(targets, lines):
        assert line.startswith("FAIL"), (target, line)
    assert lines[-1] == "OK " + BODY, lines


def test_open_cannot_reach_the_host_or_adaptd(netd, client, open_box, host_server):
    gateway = sandbox_address(client, open_box).rsplit(".", 1)[0] + ".1"
    # The host itself reaches its server, so a failure below is the rules' doing.
    with socket.create_connection((gateway, host_server), timeout=5) as c:
        assert c.recv(64) == b"host-secret\n"
    calls = []
    for addr in [gateway] + host_addresses():
        calls += ["tcp(%r, %d, b'')" % (addr, host_server), "tcp(%r, %d)" % (addr, netd.port)]
    for call, line in zip(calls, probe_many(client, open_box, calls)):
        assert line.startswith("FAIL"), (call, line)


def test_open_cannot_reach_another_sandbox(netd, client, open_box):
    other = sandbox(client, None)
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % other, {
        "command": "nohup python3 -m http.server 8000 >/dev/null 2>&1 & sleep 1", "timeoutSeconds": 30})
    assert status == 200, cmd
    addr = sandbox_address(client, other)
    # The host reaches the other sandbox's server (ingress path) ...
    deadline = time.monotonic() + 20
    while True:
        try:
            with socket.create_connection((addr, 8000), timeout=3) as c:
                c.sendall(b"GET / HTTP/1.0\r\n\r\n")
                assert c.recv(64).startswith(b"HTTP/1.0 200")
            break
        except OSError:
            assert time.monotonic() < deadline, "the other sandbox's server never answered the host"
            time.sleep(0.5)
    # ... the first sandbox does not.
    assert probe(client, open_box, "tcp(%r, 8000)" % addr).startswith("FAIL")


def test_none_has_no_interface_and_no_egress(client):
    sid = sandbox(client, {"egress": "none"})
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % sid, {"argv": ["cat", "/proc/net/dev"]})
    assert status == 200 and "eth0" not in cmd["stdout"] and "lo" in cmd["stdout"], cmd
    assert probe(client, sid, "tcp(%r, 80)" % HTTP).startswith("FAIL")


def test_allowlist_passes_exactly_its_rules(client):
    sid = sandbox(client, {"egress": "allowlist", "dns": DNS, "allow": [
        {"protocol": "tcp", "address": HTTP, "port": 80},
        {"protocol": "udp", "address": ECHO, "port": 7000}]})
    net = client.get(sid)["network"]
    assert net["egress"] == "allowlist" and net["dns"] == DNS and len(net["allow"]) == 2
    assert probe(client, sid, "tcp(%r, 80)" % HTTP) == "OK " + BODY
    assert probe(client, sid, "udp(%r, 7000)" % ECHO) == "OK udp-echo:ping"
    assert probe(client, sid, "resolve()") == "OK " + HTTP
    assert probe(client, sid, "dns(%r)" % DNS) == "OK " + HTTP
    # Not in the rules: another port, UDP without a UDP rule, TCP where only UDP is allowed,
    # a second resolver.
    assert probe(client, sid, "udp(%r, 7002)" % ECHO).startswith("FAIL")
    assert probe(client, sid, "tcp(%r, 7001, b'')" % ECHO).startswith("FAIL")
    assert probe(client, sid, "dns(%r)" % DNS2).startswith("FAIL")
    assert probe(client, sid, "tcp('169.254.169.254', 80)").startswith("FAIL")


def test_allowlist_without_dns_has_no_resolver(client):
    sid = sandbox(client, {"egress": "allowlist", "allow": [{"protocol": "tcp", "address": HTTP, "port": 80}]})
    assert client.get(sid)["network"]["dns"] is None
    assert probe(client, sid, "tcp(%r, 80)" % HTTP) == "OK " + BODY
    assert probe(client, sid, "dns(%r)" % DNS).startswith("FAIL")
    assert probe(client, sid, "resolve()").startswith("FAIL")


@pytest.mark.parametrize("network,field", [
    ({"egress": "allowlist", "allow": [{"protocol": "tcp", "address": "10.1.2.3", "port": 80}]},
     "network.allow[0].address"),
    ({"egress": "allowlist", "allow": [{"protocol": "tcp", "address": "1.1.1.0/24", "port": 80}]},
     "network.allow[0].address"),
    ({"egress": "allowlist", "allow": [{"protocol": "tcp", "address": "example.com", "port": 80}]},
     "network.allow[0].address"),
    ({"egress": "allowlist", "allow": [{"protocol": "tcp", "address": "1.1.1.1", "port": 0}]},
     "network.allow[0].port"),
    ({"egress": "allowlist", "allow": [{"protocol": "tcp", "address": "1.1.1.1", "port": 443}] * 65},
     "network.allow"),
    ({"egress": "allowlist", "dns": "192.168.1.1"}, "network.dns"),
    ({"egress": "open", "allow": [{"protocol": "tcp", "address": "1.1.1.1", "port": 443}]}, "network.allow"),
    ({"egress": "open", "bandwidth": 1}, "network.bandwidth"),
])
def test_bad_network_is_a_400_naming_the_field(client, network, field):
    before = len(client.list_all())
    status, body = client.api("POST", "/v1/sandboxes", {"network": network})
    assert status == 400, body
    assert body["error"]["field"] == field, body
    assert len(client.list_all()) == before


def nft_chain_exists(d, sid):
    return sh("nft", "list", "chain", "inet", d.network_name, sid, check=False).returncode == 0


def test_rules_are_removed_with_the_sandbox(netd, client):
    sid = sandbox(client, None)
    ns = "%s-%s" % (netd.network_name, sid)
    assert nft_chain_exists(netd, sid)
    assert ns in harness.netns_named(netd.network_name + "-")
    client.delete(sid)
    assert not nft_chain_exists(netd, sid)
    assert ns not in harness.netns_named(netd.network_name + "-")


def test_restart_after_kill_restores_rules_and_removes_leftovers(standin):
    d = start_network_daemon()
    try:
        c = d.admin
        sid = sandbox(c, None)
        ended = sandbox(c, None)
        assert probe(c, sid, "tcp(%r, 80)" % HTTP) == "OK " + BODY
        d.kill()
        # While adaptd is down: its table vanishes, one sandbox dies, and a half-made
        # namespace appears.
        sh("nft", "delete", "table", "inet", d.network_name)
        pid = int(open(os.path.join(d.state_dir, "sandboxes", ended, "sandbox.pid")).read())
        os.kill(pid, 9)
        stray = "%s-sbx_stray" % d.network_name
        sh("ip", "netns", "add", stray)
        d.start(port=d.port)
        # Before the API answered, the live sandbox's rules were back and the rest gone.
        assert nft_chain_exists(d, sid)
        assert stray not in harness.netns_named(d.network_name + "-")
        c.wait_for_status(ended, ("failed", "completed"), 60)
        # The status is written before the release: give the release a moment.
        deadline = time.monotonic() + 30
        while nft_chain_exists(d, ended) and time.monotonic() < deadline:
            time.sleep(0.25)
        assert not nft_chain_exists(d, ended)
        assert "%s-%s" % (d.network_name, ended) not in harness.netns_named(d.network_name + "-")
        assert probe(c, sid, "tcp(%r, 80)" % HTTP) == "OK " + BODY
        assert probe(c, sid, "tcp('10.0.0.1', 80)").startswith("FAIL")
    finally:
        left = d.close()
    assert not left["netns"], left
