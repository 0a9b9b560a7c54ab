#!/usr/bin/env python3
"""bench/egress: what adapt's network path costs (issue 5). Prints figures, never passes or fails.

- ingress: HTTP requests/s and p50 latency through adaptd's ingress (Host routing, one new
  connection a request) against the same requests sent straight to the sandbox's address and
  port from the host (the peer), with the ratio.
- egress: TCP connection set-up latency and download throughput from an open-mode sandbox
  (gVisor netstack, veth, nftables, masquerade) to a server in a stand-in netns at a
  documentation address, against the host to the same server (the peer), with the ratio.

- tls: TLS connection set-up + one request (p50) from one allowlist sandbox to the stand-in's
  TLS server, through the TLS hostname proxy (network.hostnames, the name resolved through the
  DNS proxy) against the same server on an address an IP rule allows directly, with the ratio.
Needs root, a built tree and the default image. Writes bench/results/egress.json.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))

import harness  # noqa: E402
import test_network as tn  # noqa: E402
import test_network_endpoints as te  # noqa: E402


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100)
    args = ap.parse_args()
    results = {}
    gen = tn.standin.__pytest_wrapped__.obj()
    next(gen)
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
        results["ingress"] = {"adapt": ingress, "direct": direct,
                              "rps_ratio": ingress["rps"] / direct["rps"]}
        print("ingress  adapt %.0f req/s (p50 %.2f ms)  direct %.0f req/s (p50 %.2f ms)  ratio %.2f" % (
            ingress["rps"], ingress["p50_ms"], direct["rps"], direct["p50_ms"], results["ingress"]["rps_ratio"]))
        probe = ("import socket,time\nts=[]\nfor i in range(%d):\n t=time.perf_counter()\n"
                 " s=socket.create_connection((%r,7001),timeout=5); s.recv(64); s.close()\n"
                 " ts.append(time.perf_counter()-t)\nts.sort(); print(ts[len(ts)//2]*1000)") % (args.n, tn.ECHO)
        status, cmd = c.api("POST", "/v1/sandboxes/%s/commands" % sid,
                            {"argv": ["python3", "-c", probe], "timeoutSeconds": 300, "waitSeconds": 60})
        assert status == 200 and cmd["exitCode"] == 0, cmd
        sandbox_ms = float(cmd["stdout"].strip())
        ts = []
        for _ in range(args.n):
            t = time.perf_counter()
            s = socket.create_connection((tn.ECHO, 7001), timeout=5)
            s.recv(64)
            s.close()
            ts.append(time.perf_counter() - t)
        host_ms = statistics.median(ts) * 1000
        results["egress_connect"] = {"adapt_p50_ms": sandbox_ms, "host_p50_ms": host_ms,
                                     "ratio": sandbox_ms / host_ms}
        print("egress   connect p50: sandbox %.2f ms  host %.2f ms  ratio %.2f" % (sandbox_ms, host_ms, sandbox_ms / host_ms))
        tls_box = tn.sandbox(c, {"egress": "allowlist",
                                 "hostnames": [{"hostname": "good.example.test", "port": 443}],
                                 "allow": [{"protocol": "tcp", "address": tn.TLS2, "port": 443}]})
        tls_probe = ("import socket,ssl,time\nctx=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)\n"
                     "ctx.check_hostname=False; ctx.verify_mode=ssl.CERT_NONE\n"
                     "socket.gethostbyname('good.example.test')\n"
                     "def one(host):\n t=time.perf_counter()\n"
                     " s=ctx.wrap_socket(socket.create_connection((host,443),timeout=5),"
                     "server_hostname='good.example.test')\n"
                     " s.sendall(b'GET / HTTP/1.0\\r\\n\\r\\n'); d=s.recv(4096); s.close()\n"
                     " assert b'tls:good' in d, d\n return time.perf_counter()-t\n"
                     "for host in ('good.example.test', %r):\n"
                     " ts=sorted(one(host) for i in range(%d)); print(ts[len(ts)//2]*1000)") % (tn.TLS2, args.n)
        status, cmd = c.api("POST", "/v1/sandboxes/%s/commands" % tls_box,
                            {"argv": ["python3", "-c", tls_probe], "timeoutSeconds": 300, "waitSeconds": 60})
        assert status == 200 and cmd["exitCode"] == 0, cmd
        proxied_ms, direct_ms = [float(x) for x in cmd["stdout"].split()]
        results["tls_hostname_proxy"] = {"proxied_p50_ms": proxied_ms, "direct_p50_ms": direct_ms,
                                         "ratio": proxied_ms / direct_ms}
        print("tls      connect+request p50: via hostname proxy %.2f ms  direct IP rule %.2f ms  ratio %.2f" % (
            proxied_ms, direct_ms, proxied_ms / direct_ms))
    finally:
        d.close()
        try:
            next(gen)
        except StopIteration:
            pass
    os.makedirs(os.path.join(REPO, "bench", "results"), exist_ok=True)
    with open(os.path.join(REPO, "bench", "results", "egress.json"), "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
