#!/usr/bin/env python3
"""bench/egress: what adapt's network path costs (issue 5). Prints figures, never passes or fails.

All in one run, each adapt figure beside its peer's (bench/figures.py):
- ingress: HTTP requests/s and p50 latency through adaptd's ingress (Host routing, one new
  connection a request) against the same requests straight to the sandbox's address and port
  from the host.
- egress connect: TCP connection set-up p50 from an open-mode sandbox (gVisor netstack, veth,
  nftables, masquerade) to the stand-in's echo server, against the host to the same server.
- TLS hostname proxy: from one allowlist sandbox, TLS set-up + one request (p50) and a download
  (MB/s) to the stand-in's TLS server through the TLS hostname proxy (network.hostnames, the
  name resolved through the DNS proxy), against the same server on another address that an IP
  rule allows directly (no proxy).
The stand-in internet is tests/e2e/test_network.py's (standin_netns). Needs root, a built tree
and the default image. Writes bench/results/egress.json.
"""

import argparse
import os
import socket
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))
sys.path.insert(0, os.path.dirname(HERE))

import figures  # noqa: E402
import harness  # noqa: E402
import test_network as tn  # noqa: E402
import test_network_endpoints as te  # noqa: E402

GOOD = "good.example.test"  # resolves to tn.TLS in the stand-in's DNS


def http_once(host, port, host_header):
    t0 = time.perf_counter()
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(("GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % host_header).encode())
    data = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        data += d
    s.close()
    assert data.startswith(b"HTTP/1.1 200"), data[:100]
    return time.perf_counter() - t0


def series(fn, n):
    times = [fn() for _ in range(n)]
    return {"p50_ms": statistics.median(times) * 1000, "rps": n / sum(times)}


def run_in(c, sid, code):
    status, cmd = c.api("POST", "/v1/sandboxes/%s/commands" % sid,
                        {"argv": ["python3", "-c", code], "timeoutSeconds": 600, "waitSeconds": 60})
    deadline = time.monotonic() + 600
    while status == 202 and time.monotonic() < deadline:  # still running after waitSeconds
        time.sleep(1)
        status, cmd = c.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, cmd["id"]))
        if status == 200 and cmd.get("status") == "running":
            status = 202
    assert status == 200 and cmd.get("exitCode") == 0, cmd
    return cmd["stdout"].split()


# Inside the TLS sandbox: for each target, p50 of N set-ups + one request, then MB/s of one
# download of MIB MiB; "<ms> <MB/s>" a line.
TLS_PROBE = r'''
import socket, ssl, time
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
socket.gethostbyname(%(good)r)  # the DNS proxy records the name's address
def fetch(host, path):
    s = ctx.wrap_socket(socket.create_connection((host, 443), timeout=30), server_hostname=%(good)r)
    s.sendall(b"GET " + path + b" HTTP/1.0\r\n\r\n")
    n, tail = 0, b""
    while True:
        d = s.recv(1 << 16)
        if not d:
            break
        n += len(d)
        tail = (tail + d)[-64:]
    s.close()
    assert tail.strip().endswith(b"tls:" + %(good)r.encode()), tail
    return n
for host in (%(good)r, %(direct)r):
    ts = []
    for i in range(%(n)d):
        t = time.perf_counter()
        fetch(host, b"/")
        ts.append(time.perf_counter() - t)
    ts.sort()
    t = time.perf_counter()
    n = fetch(host, b"/bytes/%(bytes)d")
    print(ts[len(ts) // 2] * 1000, n / (time.perf_counter() - t) / 1e6)
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--mib", type=int, default=64, help="size of each TLS download")
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "results", "egress.json"))
    args = ap.parse_args()
    rows = []
    with tn.standin_netns():
        d = harness.Daemon()
        d.dns = tn.DNS
        d.start()
        try:
            c = d.admin
            sid = te.running(c)
            te.start_server(c, sid)
            ep = te.expose(c, sid)
            te.get(ep)
            addr = tn.sandbox_address(c, sid)
            port = te.port_of(ep["httpUrl"])
            ingress = series(lambda: http_once("127.0.0.1", port, ep["hostname"]), args.n)
            direct = series(lambda: http_once(addr, 8000, ep["hostname"]), args.n)
            rows.append(figures.figure("ingress HTTP requests/s (new connection each)", "req/s", ingress["rps"],
                                       "straight to the sandbox port", direct["rps"], "higher"))
            rows.append(figures.figure("ingress HTTP request p50", "ms", ingress["p50_ms"],
                                       "straight to the sandbox port", direct["p50_ms"], "lower"))

            probe = ("import socket,time\nts=[]\nfor i in range(%d):\n t=time.perf_counter()\n"
                     " s=socket.create_connection((%r,7001),timeout=5); s.recv(64); s.close()\n"
                     " ts.append(time.perf_counter()-t)\nts.sort(); print(ts[len(ts)//2]*1000)") % (args.n, tn.ECHO)
            sandbox_ms = float(run_in(c, sid, probe)[0])
            ts = []
            for _ in range(args.n):
                t = time.perf_counter()
                s = socket.create_connection((tn.ECHO, 7001), timeout=5)
                s.recv(64)
                s.close()
                ts.append(time.perf_counter() - t)
            rows.append(figures.figure("egress TCP connect p50 (open sandbox)", "ms", sandbox_ms,
                                       "the host to the same server", statistics.median(ts) * 1000, "lower"))

            tls_box = tn.sandbox(c, {"egress": "allowlist", "hostnames": [{"hostname": GOOD, "port": 443}],
                                     "allow": [{"protocol": "tcp", "address": tn.TLS2, "port": 443}]})
            out = run_in(c, tls_box, TLS_PROBE % {"good": GOOD, "direct": tn.TLS2, "n": args.n,
                                                  "bytes": args.mib << 20})
            proxied_ms, proxied_mbs, direct_ms, direct_mbs = [float(x) for x in out]
            rows.append(figures.figure("TLS set-up + request p50 via the hostname proxy", "ms", proxied_ms,
                                       "an IP-rule address (no proxy)", direct_ms, "lower"))
            rows.append(figures.figure("TLS download via the hostname proxy", "MB/s", proxied_mbs,
                                       "an IP-rule address (no proxy)", direct_mbs, "higher"))
        finally:
            d.close()
    figures.print_table(rows)
    figures.write_report(args.out, "egress", rows, {"n": args.n, "tls_download_mib": args.mib})


if __name__ == "__main__":
    main()
