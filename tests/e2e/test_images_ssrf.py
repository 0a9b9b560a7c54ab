"""Pulls cannot be turned against the host's own network: adaptd (root, on the host) refuses to
connect to loopback, link-local and private addresses unless an operator allowed that registry
with --allow-registry HOST[:PORT], also after a registry's redirect and for a bearer
challenge's token realm, and its errors never carry what a registry answered.

The adaptd here allows one loopback port only (a small registry-like server of the test);
another loopback port stands for a service of the host that pulls must not reach."""

import http.server
import json
import socketserver
import threading
import uuid

import pytest

import harness
import registry as reg
import test_images_api

SECRET = "host-secret-" + uuid.uuid4().hex


class Server:
    """A threaded HTTP server on a loopback port; `routes` maps a path prefix to a function
    of the handler returning (status, headers, body)."""

    def __init__(self, routes):
        self.requests = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                server.requests.append(self.path)
                for prefix, answer in routes.items():
                    if self.path.startswith(prefix):
                        status, headers, body = answer(self)
                        break
                else:
                    status, headers, body = 404, {}, b""
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_HEAD = do_GET

        class Threaded(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.httpd = Threaded(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def serve_layout(layout):
    """Routes serving an OCI layout's image at /v2/good/app, its blobs by a redirect to
    /storage/ on the same server (as registries send blobs to their storage)."""
    import os

    with open(os.path.join(layout.path, "index.json")) as f:
        top = json.load(f)["manifests"][0]

    def blob(hexd):
        with open(os.path.join(layout.path, "blobs/sha256", hexd), "rb") as f:
            return f.read()

    return {
        "/v2/good/app/manifests/": lambda h: (200, {"Content-Type": top["mediaType"]}, blob(top["digest"].split(":")[1])),
        "/v2/good/app/blobs/sha256:": lambda h: (307, {"Location": "/storage/" + h.path.rsplit(":", 1)[1]}, b""),
        "/storage/": lambda h: (200, {"Content-Type": "application/octet-stream"}, blob(h.path.rsplit("/", 1)[1])),
    }


@pytest.fixture(scope="module")
def hosts():
    # What a pull must never reach: its answers carry the secret.
    inner = Server({"/": lambda h: (200, {"Content-Type": "application/json"},
                                     json.dumps({"token": SECRET, "secret": SECRET}).encode())})
    leak = {"errors": [{"code": "DENIED", "message": SECRET}]}
    layout = reg.Layout([reg.layer(reg.busybox_base())], {"config": {"Cmd": ["/bin/true"], "Env": ["PATH=/bin"]}})
    registry = Server({
        **serve_layout(layout),
        "/v2/redirect/": lambda h: (307, {"Location": "http://127.0.0.1:%d/latest/meta-data" % inner.port}, b""),
        "/v2/redirect-by-name/": lambda h: (302, {"Location": "http://localhost:%d/x" % inner.port}, b""),
        "/v2/realm/": lambda h: (401, {"WWW-Authenticate": 'Bearer realm="http://127.0.0.1:%d/token",service="s"' % inner.port}, b""),
        "/v2/leaky/": lambda h: (403, {"Content-Type": "application/json"}, json.dumps(leak).encode()),
        "/v2/odd-challenge/": lambda h: (401, {"WWW-Authenticate": "Negotiate " + SECRET}, b""),
        "/v2/": lambda h: (200, {"Content-Type": "application/json"}, b"{}"),
    })
    yield registry, inner
    registry.close()
    inner.close()
    layout.close()


@pytest.fixture(scope="module")
def ssrf_daemon(hosts):
    registry, _ = hosts
    d = harness.Daemon(allow_registries=["127.0.0.1:%d" % registry.port])
    d.start()
    yield d
    d.close()


@pytest.fixture
def client(ssrf_daemon):
    return ssrf_daemon.new_org()


def failed_pull(client, reference):
    status, img = client.api("POST", "/v1/images", {"reference": reference})
    assert status == 202, img
    op, img = test_images_api.wait_pulled(client, img["id"])
    assert op["phase"] == "Failed", img
    assert SECRET not in json.dumps(img) and SECRET not in json.dumps(op)
    return img["error"]


def test_a_pull_from_a_loopback_registry_not_allowed_is_refused(client, hosts):
    _, inner = hosts
    for reference in ("127.0.0.1:%d/x:1" % inner.port, "localhost:%d/x:1" % inner.port,
                      "[::1]:%d/x:1" % inner.port):
        before = len(inner.requests)
        error = failed_pull(client, reference)
        assert "refused" in error and "--allow-registry" in error, (reference, error)
        assert "loopback" in error, (reference, error)
        assert len(inner.requests) == before, "nothing reached the host's service"


def test_the_allowed_registry_is_pulled_from_redirects_within_it_included(client, hosts):
    registry, _ = hosts
    status, img = client.api("POST", "/v1/images", {"reference": "127.0.0.1:%d/good/app:1" % registry.port})
    assert status == 202, img
    op, img = test_images_api.wait_pulled(client, img["id"])
    assert op["phase"] == "Completed", img
    assert any(p.startswith("/storage/") for p in registry.requests), "blobs came by the redirect"


def test_an_allowed_registry_redirecting_to_a_loopback_port_not_allowed_is_refused(client, hosts):
    registry, inner = hosts
    for repo in ("redirect", "redirect-by-name"):
        before = len(inner.requests)
        error = failed_pull(client, "127.0.0.1:%d/%s/app:1" % (registry.port, repo))
        assert "refused" in error and ":%d" % inner.port in error, error
        assert len(inner.requests) == before, "the redirect was not followed"
    assert any(p.startswith("/v2/redirect/") for p in registry.requests), "the allowed registry was asked"


def test_a_token_realm_on_a_loopback_port_not_allowed_is_refused(client, hosts):
    registry, inner = hosts
    before = len(inner.requests)
    error = failed_pull(client, "127.0.0.1:%d/realm/app:1" % registry.port)
    assert "refused" in error and "127.0.0.1:%d" % inner.port in error, error
    assert len(inner.requests) == before, "the token service was not asked"


def test_errors_never_echo_what_the_registry_answered(client, hosts):
    registry, _ = hosts
    error = failed_pull(client, "127.0.0.1:%d/leaky/app:1" % registry.port)
    assert "HTTP 403" in error, error
    error = failed_pull(client, "127.0.0.1:%d/odd-challenge/app:1" % registry.port)
    assert "unsupported authentication" in error, error


def test_other_spellings_of_the_hosts_own_addresses_are_refused(client, hosts):
    # 0.0.0.0 and the IPv4-mapped IPv6 address both reach the host's loopback services.
    # (Link-local and private addresses are refused alike: image/registry_destination_test.cc;
    # the tests send nothing to addresses outside loopback.)
    _, inner = hosts
    for reference, why in (("0.0.0.0:%d/x:1" % inner.port, "unspecified"),
                           ("[::ffff:7f00:1]:%d/x:1" % inner.port, "loopback")):
        before = len(inner.requests)
        error = failed_pull(client, reference)
        assert "refused" in error and why in error, (reference, error)
        assert len(inner.requests) == before
