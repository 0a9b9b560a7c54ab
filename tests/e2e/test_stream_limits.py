"""One organization's open event streams are capped (--max-streams-per-org): past the cap a new
stream is a 429, another organization's streams are not touched, and a closed stream gives its
place back. Without the cap one tenant could hold every connection the API takes."""
import http.client
import json
import time

import pytest

import harness

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
        deadline = time.monotonic() + 30
        while True:
            status, conn, err = open_stream(org)
            if status == 200:
                held.append(conn)
                break
            assert status == 429 and time.monotonic() < deadline, err
            time.sleep(0.2)
    finally:
        for conn in held:
            conn.close()
