"""One organization's open event streams and downloads are capped (--max-streams-per-org): past
the cap a new stream is a 429, another organization's streams are not touched, and a closed stream gives its
place back. Without the cap one tenant could hold every connection the API takes."""
import http.client
import json
import time
import urllib.parse

import pytest

import harness
from test_objects import storage_token

CAP = 3


@pytest.fixture(scope="module")
def d():
    daemon = harness.Daemon(extra_args=["--max-streams-per-org", str(CAP)])
    daemon.start()
    yield daemon
    daemon.close()


def open_stream(client, path="/v1/events"):
    """Opens an SSE stream; returns (status, the open response or None, error JSON). The
    response must be kept: it owns the socket, which closes when it is collected."""
    conn = http.client.HTTPConnection("127.0.0.1", client.daemon.port, timeout=30)
    conn.request("GET", path, headers={"Authorization": "Bearer " + client.key,
                                       "Accept": "text/event-stream"})
    resp = conn.getresponse()
    if resp.status != 200:
        body = json.loads(resp.read())
        conn.close()
        return resp.status, None, body
    assert resp.getheader("Content-Type", "").startswith("text/event-stream")
    return 200, resp, None


def open_once_a_place_is_back(opener, timeout=30):
    """What `opener` opens once a closed stream's place is given back (429 until then)."""
    deadline = time.monotonic() + timeout
    while True:
        status, conn, err = opener()
        if status == 200:
            return conn
        assert status == 429 and time.monotonic() < deadline, err
        time.sleep(0.2)


def test_past_the_cap_a_stream_is_429_and_a_closed_one_gives_its_place_back(d):
    org = d.new_org()
    other = d.new_org()
    sid = org.create({})["id"]
    held = []
    try:
        for path in ("/v1/events", "/v1/sandboxes/%s/events" % sid, "/v1/events"):
            status, conn, err = open_stream(org, path)
            assert status == 200, err
            held.append(conn)
        status, conn, err = open_stream(org, "/v1/sandboxes/%s/events" % sid)
        assert status == 429 and conn is None, err
        assert err["error"]["code"] == "resource_exhausted", err
        assert "--max-streams-per-org" in err["error"]["message"], err
        # The organization's other requests still work, and another organization streams.
        assert org.api("GET", "/v1/sandboxes/" + sid)[0] == 200
        status, conn, err = open_stream(other)
        assert status == 200, err
        held.append(conn)

        held.pop(0).close()
        held.append(open_once_a_place_is_back(lambda: open_stream(org)))
    finally:
        for conn in held:
            conn.close()


def test_past_the_cap_a_wait_answers_at_once_and_its_command_still_runs(d):
    """Waiting requests count with the streams: past the cap a command is still started, and
    its request answers at once what a wait that ran out answers (202, running), holding no
    connection; the organization's streams and other organizations are untouched."""
    org = d.new_org()
    other = d.new_org()
    sid = org.create({})["id"]
    org.wait_for_status(sid, "running", 90)
    held = []
    try:
        for _ in range(CAP):
            status, conn, err = open_stream(org)
            assert status == 200, err
            held.append(conn)
        status, cmd = org.api("POST", "/v1/sandboxes/%s/commands" % sid,
                              {"argv": ["sh", "-c", "sleep 5; echo done"], "waitSeconds": 60})
        assert status == 202 and cmd["status"] == "running", cmd
        # It ran: its end is there to poll once it comes.
        deadline = time.monotonic() + 60
        while True:
            status, got = org.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, cmd["id"]))
            assert status == 200, got
            if got["status"] != "running":
                break
            assert time.monotonic() < deadline, got
            time.sleep(0.5)
        assert got["exitCode"] == 0 and got["stdout"] == "done\n", got
        # Another organization's wait is held as usual: it answers with the command's end.
        osid = other.create({})["id"]
        other.wait_for_status(osid, "running", 90)
        status, done = other.api("POST", "/v1/sandboxes/%s/commands" % osid,
                                 {"argv": ["sh", "-c", "sleep 1; echo held"], "waitSeconds": 60})
        assert status == 200 and done["stdout"] == "held\n", done
        # With a stream closed, the organization's next wait is held again.
        held.pop().close()
        deadline = time.monotonic() + 30
        while True:
            status, done = org.api("POST", "/v1/sandboxes/%s/commands" % sid,
                                   {"argv": ["sh", "-c", "sleep 1; echo again"], "waitSeconds": 60})
            if status == 200:
                break
            assert status == 202 and time.monotonic() < deadline, done
            time.sleep(0.2)
        assert done["stdout"] == "again\n", done
    finally:
        for conn in held:
            conn.close()


def open_download(client, key):
    """Starts a GET of an object and reads only its status: the body waits, unread. The
    response must be kept: it owns the socket."""
    conn = http.client.HTTPConnection("127.0.0.1", client.daemon.port, timeout=30)
    conn.request("GET", "/v1/objects/content?key=" + urllib.parse.quote(key, safe=""),
                 headers={"Authorization": "Bearer " + client.key})
    return started(conn)


def started(conn):
    """(200, the response, None) of a download that began, its body unread; or (status, None,
    the error) of one refused."""
    resp = conn.getresponse()
    if resp.status != 200:
        body = json.loads(resp.read())
        conn.close()
        return resp.status, None, body
    return 200, resp, None


def test_downloads_a_client_does_not_read_count_toward_the_cap(d):
    """A download holds a thread (a sandbox's file, a tool in the sandbox too) for as long as its
    client takes to read it: one organization's unread downloads are capped like its streams."""
    org = d.new_org()
    other = d.new_org()
    # More than the socket buffers and the server's queue hold: each stays open, unread.
    big = b"x" * (48 << 20)
    path = "/v1/objects/content?key=big.bin"
    for c in (org, other):
        status, _, _, _ = c.request("PUT", path, raw=big,
                                    headers={"Content-Type": "application/octet-stream"})
        assert status in (200, 201), status
    held = []
    try:
        for _ in range(CAP):
            status, conn, err = open_download(org, "big.bin")
            assert status == 200, err
            held.append(conn)
        status, conn, err = open_download(org, "big.bin")
        assert status == 429 and conn is None, err
        assert "--max-streams-per-org" in err["error"]["message"], err
        status, conn, err = open_download(other, "big.bin")
        assert status == 200, err
        held.append(conn)
        held.pop(0).close()
        held.append(open_once_a_place_is_back(lambda: open_download(org, "big.bin")))
    finally:
        for conn in held:
            conn.close()


def open_site_download(url, path):
    """Starts an unauthenticated GET of a site's file through the ingress."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection("127.0.0.1", u.port, timeout=30)
    conn.request("GET", path, headers={"Host": u.netloc})
    return started(conn)


def test_a_sites_downloads_nobody_reads_are_capped_and_other_sites_serve(d):
    """Anyone on the internet can open a site's downloads and not read them, each holding a
    thread and a queue: they count per organization (--max-streams-per-org), apart from its
    API streams, and another organization's site still serves."""
    org = d.new_org()
    other = d.new_org()
    big = b"x" * (48 << 20)
    urls = {}
    for c in (org, other):
        for key, data, ctype in (("web/index.html", b"<h1>hi</h1>", "text/html"),
                                 ("web/big.bin", big, "application/octet-stream")):
            path = "/v1/objects/content?key=" + urllib.parse.quote(key, safe="")
            status, _, _, _ = c.request("PUT", path, raw=data, headers={"Content-Type": ctype})
            assert status in (200, 201), status
        status, site = c.api("POST", "/v1/sites", {"source": "web"})
        assert status == 201, site
        urls[c.org_id] = [u for u in site["urls"] if u.startswith("http://")][0]
    held = []
    try:
        for _ in range(CAP):
            status, conn, err = open_site_download(urls[org.org_id], "/big.bin")
            assert status == 200, err
            held.append(conn)
        status, conn, err = open_site_download(urls[org.org_id], "/big.bin")
        assert status == 429 and conn is None, err
        assert "as many downloads as it may" in err["error"]["message"], err
        # The organization's own API streams are counted apart: its events still open.
        status, events, err = open_stream(org)
        assert status == 200, err
        held.append(events)
        status, conn, err = open_site_download(urls[other.org_id], "/big.bin")
        assert status == 200, err
        held.append(conn)
        held.pop(0).close()
        held.append(open_once_a_place_is_back(
            lambda: open_site_download(urls[org.org_id], "/big.bin")))
    finally:
        for conn in held:
            conn.close()


def open_gateway_download(tok, key):
    """Starts a storage gateway GET of an object, as open_download does on the API."""
    conn = http.client.HTTPConnection("127.0.0.1", tok["port"], timeout=30)
    conn.request("GET", "/objects/" + key, headers={"Authorization": "Bearer " + tok["token"]})
    resp = conn.getresponse()
    if resp.status != 200:
        body = resp.read()
        conn.close()
        return resp.status, None, body
    return 200, resp, None


def open_link_download(client, url):
    """Starts a GET of a signed download link (no credentials)."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection("127.0.0.1", client.daemon.port, timeout=30)
    conn.request("GET", parts.path + "?" + parts.query)
    return started(conn)


def test_gateway_downloads_and_download_links_count_toward_the_cap(d):
    """The storage gateway's downloads and the public download links hold a thread each too:
    they count with the organization's API streams, by the token's and the link's organization."""
    org = d.new_org()
    other = d.new_org()
    big = b"x" * (48 << 20)
    for c in (org, other):
        status, _, _, _ = c.request("PUT", "/v1/objects/content?key=big.bin", raw=big,
                                    headers={"Content-Type": "application/octet-stream"})
        assert status in (200, 201), status
    tok, other_tok = storage_token(org), storage_token(other)
    status, link = org.api("POST", "/v1/objects/url", {"key": "big.bin"})
    assert status == 200, link
    held = []
    try:
        for _ in range(CAP - 1):
            status, conn, err = open_gateway_download(tok, "big.bin")
            assert status == 200, err
            held.append(conn)
        status, conn, err = open_download(org, "big.bin")
        assert status == 200, err
        held.append(conn)
        # Past the cap: the gateway answers S3's SlowDown, which clients retry.
        status, conn, body = open_gateway_download(tok, "big.bin")
        assert status == 503 and b"SlowDown" in body and b"--max-streams-per-org" in body, body
        status, conn, err = open_link_download(org, link["url"])
        assert status == 429 and "--max-streams-per-org" in err["error"]["message"], err
        status, conn, err = open_download(org, "big.bin")
        assert status == 429, err
        # Another organization's gateway downloads are untouched.
        status, conn, err = open_gateway_download(other_tok, "big.bin")
        assert status == 200, err
        held.append(conn)
        held.pop(0).close()
        held.append(open_once_a_place_is_back(lambda: open_link_download(org, link["url"])))
        held.pop(0).close()
        deadline = time.monotonic() + 30
        while True:
            status, conn, body = open_gateway_download(tok, "big.bin")
            if status == 200:
                held.append(conn)
                break
            assert status == 503 and time.monotonic() < deadline, body
            time.sleep(0.2)
    finally:
        for conn in held:
            conn.close()
