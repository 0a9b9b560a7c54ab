"""Bytes no well-behaved client sends, from an unauthenticated client, against adaptd's HTTP
listeners: a Host that is not UTF-8 (or is cut inside a character) at the ingress, a header
that is not UTF-8 at the API, a chunk extension or trailer section that never ends, and a
Transfer-Encoding that Beast does not frame by. Each is answered (never a 500), adaptd stays
up, and nothing after a refused request on the same connection is served.

Before: the ingress's 404 for such a Host threw from nlohmann's dump on an I/O thread and
ended adaptd; 300 MB of chunk extension held 1 GB of adaptd's memory; `Transfer-Encoding:
gzip` left the body to be read as the next request.
"""

import re
import socket
import ssl

import pytest

import harness
from conftest import close_daemon

MIB = 1 << 20


@pytest.fixture(scope="module")
def d():
    daemon = harness.Daemon()
    daemon.start()
    yield daemon
    close_daemon(daemon)


@pytest.fixture(scope="module")
def ingress(d):
    with open(d.log_path, encoding="utf-8", errors="replace") as f:
        m = re.search(r"endpoints: http://\S+:(\d+) and https://\S+:(\d+)", f.read())
    assert m, d.log_tail()
    return int(m.group(1)), int(m.group(2))


def exchange(port, data, tls=False, timeout=15):
    """Sends `data` and reads until the server closes: every response it gave, as bytes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        s = ctx.wrap_socket(s, server_hostname="nothing.adapt.localhost")
    try:
        try:
            s.sendall(data)
        except OSError:
            pass  # refused before all of it was sent: its answer is read below
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, ssl.SSLError):
                break
            if not chunk:
                break
            out += chunk
        return out
    finally:
        s.close()


def statuses(raw):
    return [int(m) for m in re.findall(rb"HTTP/1\.[01] (\d{3}) ", raw)]


def alive(d):
    status, _ = d.admin.api("GET", "/healthz")
    return status == 200 and d.proc.poll() is None


@pytest.mark.parametrize("host", [b"\xff.adapt.localhost", b"a" * 254 + "é".encode()])
@pytest.mark.parametrize("tls", [False, True])
def test_an_ingress_host_that_is_not_utf8_is_answered_and_adaptd_stays_up(d, ingress, host, tls):
    port = ingress[1] if tls else ingress[0]
    raw = exchange(port, b"GET / HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n",
                   tls=tls)
    assert statuses(raw) and statuses(raw)[0] in (400, 404), raw[:300]
    assert alive(d), d.log_tail()


@pytest.mark.parametrize("request_head", [
    b"OPTIONS /mcp HTTP/1.1\r\nHost: x\r\nOrigin: http://\xff\r\n",
    b"GET /.well-known/oauth-authorization-server HTTP/1.1\r\nHost: \xff\r\n",
    b"GET /.well-known/oauth-protected-resource HTTP/1.1\r\nHost: \xff\r\n",
])
def test_api_headers_that_are_not_utf8_are_never_a_500(d, request_head):
    raw = exchange(d.port, request_head + b"Connection: close\r\n\r\n")
    codes = statuses(raw)
    assert codes and codes[0] < 500, raw[:300]
    assert alive(d)


@pytest.mark.parametrize("tail", [b"1;ext=" + b"a" * MIB, b"1\r\na\r\n0\r\nX-Trailer: " + b"a" * MIB])
def test_an_endless_chunk_extension_or_trailer_is_refused_early(d, tail):
    raw = exchange(d.port, b"POST /v1/secrets HTTP/1.1\r\nHost: x\r\n"
                           b"Transfer-Encoding: chunked\r\n\r\n" + tail)
    assert statuses(raw) == [431], raw[:300]
    assert alive(d)


@pytest.mark.parametrize("coding", [b"gzip", b"chunked, gzip", b"identity"])
def test_a_body_not_framed_by_chunked_is_refused_and_never_read_as_a_request(d, coding):
    raw = exchange(d.port, b"POST /v1/secrets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " + coding +
                   b"\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert statuses(raw) == [400], raw[:300]
    assert b"Transfer-Encoding" in raw
