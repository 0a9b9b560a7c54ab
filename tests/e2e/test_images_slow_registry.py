"""Pulls from a registry that stalls (a tenant can run one and name it): they run on adaptd's
pool for image work, so the API's workers keep answering every organization; and a pull whose
image was deleted counts toward --max-imports-per-org until it ends, so that pulling and
deleting over and over does not run more pulls than the cap. Only loopback is contacted."""
import http.server
import threading
import time

import pytest

import harness
from conftest import close_daemon

# Two API workers: before, two stalled pulls held both, and nothing of /v1 was answered.
WORKERS = 2


class StallingRegistry:
    """Answers /v2/ and holds every manifest request until released (then 404); one under
    /v2/quick/ is a 404 at once."""

    def __init__(self):
        self.release = threading.Event()
        self.waiting = 0
        self.lock = threading.Lock()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path != "/v2/" and not self.path.startswith("/v2/quick/"):
                    with owner.lock:
                        owner.waiting += 1
                    owner.release.wait(300)
                    with owner.lock:
                        owner.waiting -= 1
                body = b"{}" if self.path == "/v2/" else b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}'
                self.send_response(200 if self.path == "/v2/" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_HEAD = do_GET

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.host = "127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def held(self):
        with self.lock:
            return self.waiting

    def close(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stalling():
    r = StallingRegistry()
    yield r
    r.close()


@pytest.fixture
def d():
    daemon = harness.Daemon(extra_args=["--worker-threads", str(WORKERS),
                                        "--max-imports-per-org", "1"])
    daemon.start()
    yield daemon
    close_daemon(daemon)


def until(pred, timeout=60):
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_stalled_pulls_hold_no_api_worker_and_deleted_ones_still_count(d, stalling):
    a, b = d.new_org(), d.new_org()
    ref = stalling.host + "/stall/img:1"
    status, first = a.api("POST", "/v1/images", {"reference": ref})
    assert status == 202, first
    status, theirs = b.api("POST", "/v1/images", {"reference": ref})
    assert status == 202, theirs
    until(lambda: stalling.held() == 2)
    # Both pulls wait on the registry, as many as adaptd has API workers: /v1 still answers.
    for client in (a, b):
        status, listing = client.api("GET", "/v1/images")
        assert status == 200 and len(listing["items"]) == 1, listing
    # Deleting the image does not stop its pull: it still counts, so no second one runs.
    assert a.api("DELETE", "/v1/images/" + first["id"])[0] == 204
    status, err = a.api("POST", "/v1/images", {"reference": ref})
    assert status == 429 and err["error"]["code"] == "resource_exhausted", err
    assert "deleted images' pulls count until they end" in err["error"]["message"], err
    stalling.release.set()
    # Once it has ended, the organization pulls again.
    until(lambda: stalling.held() == 0)

    def accepted():
        status, img = a.api("POST", "/v1/images", {"reference": ref})
        assert status in (202, 429), img
        return status == 202
    until(accepted, 60)


def test_a_sandbox_whose_image_is_pulled_first_holds_no_api_worker(d, stalling):
    # A create naming a reference nobody pulled yet pulls it while the sandbox provisions. That
    # pull ran on an API worker: two such sandboxes from a registry that stalls held both, and
    # every organization's requests waited. Now it is one of the organization's pulls in
    # progress, on the image pool.
    a, b = d.new_org(), d.new_org()
    ref = stalling.host + "/stall/sbx:1"
    first = a.create({"image": ref})
    assert first["status"] == "provisioning", first
    theirs = b.create({"image": ref})
    until(lambda: stalling.held() == 2)
    for client in (a, b):
        status, listing = client.api("GET", "/v1/sandboxes")
        assert status == 200 and len(listing["items"]) == 1, listing
    # The organization's pull cap (1 here) holds for pulls that creates start: the one past it
    # is refused and nothing is recorded.
    status, err = a.api("POST", "/v1/sandboxes", {"image": ref})
    assert status == 429 and err["error"]["code"] == "resource_exhausted", err
    assert len(a.api("GET", "/v1/sandboxes")[1]["items"]) == 1
    stalling.release.set()
    # The registry then has no such manifest: both sandboxes fail, saying so, and their places
    # are given back.
    for client, sbx in ((a, first), (b, theirs)):
        failed = client.wait_for_status(sbx["id"], "failed", 120)
        assert failed["error"], failed
    until(lambda: a.api("POST", "/v1/images", {"reference": ref})[0] == 202, 60)


def test_several_organizations_stalled_pulls_do_not_queue_another_organizations_pull(d, stalling):
    # The image pool had twice --max-imports-per-org threads (4 here): four organizations whose
    # registries stalled filled it, and every other organization's pull waited in its queue
    # until one of those was cut. It has sixteen times as many now.
    stalled = [d.new_org() for _ in range(6)]
    for i, org in enumerate(stalled):
        status, img = org.api("POST", "/v1/images", {"reference": stalling.host + "/stall/o%d:1" % i})
        assert status == 202, img
    until(lambda: stalling.held() == 6)  # all six running at once: 4 before
    other = d.new_org()
    status, img = other.api("POST", "/v1/images", {"reference": stalling.host + "/quick/img:1"})
    assert status == 202, img

    def ended():
        status, now = other.api("GET", "/v1/images/" + img["id"])
        assert status == 200, now
        return now["status"] != "pulling"
    until(ended)
    status, now = other.api("GET", "/v1/images/" + img["id"])
    assert now["status"] == "failed" and "HTTP 404" in (now.get("error") or ""), now
    assert stalling.held() == 6, "the other organization's pull ran while the six still stalled"
