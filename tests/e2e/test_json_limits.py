"""Every JSON body adaptd parses is refused beyond 64 levels of nesting, at parse time, with a
400 that names the field; a body nested 200,000 deep (400 KB, under the 1 MiB body limit) once
reached json::dump() or a deep copy and overflowed a worker's stack, killing adaptd. Also the
/oauth/register rate limit and the loopback checks that once took `127.evil.example` for
loopback."""

import http.client
import json

import harness
from mcp_support import initialize, post

DEEP = 200000


def nested(depth, inner="1"):
    return "[" * depth + inner + "]" * depth


def call(daemon, method, path, body, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=harness.HTTP_TIMEOUT)
    conn.request(method, path, body=body, headers=dict({"Content-Type": "application/json"}, **(headers or {})))
    resp = conn.getresponse()
    text = resp.read().decode()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, text


def assert_alive(daemon):
    assert daemon.proc.poll() is None, "adaptd died:\n" + daemon.log_tail()
    status, _, text = call(daemon, "GET", "/healthz", None)
    assert status == 200 and json.loads(text)["status"] == "ok"


def test_deeply_nested_bodies_are_refused_by_every_json_entry_point(fresh_daemon):
    d = fresh_daemon
    org = d.new_org()

    # OAuth dynamic registration, unauthenticated.
    status, _, text = call(d, "POST", "/oauth/register", '{"redirect_uris": %s}' % nested(DEEP))
    assert status == 400, text
    err = json.loads(text)
    assert err["error"] == "invalid_client_metadata"
    assert "redirect_uris" in err["error_description"] and "64" in err["error_description"], err
    assert_alive(d)

    # MCP, with a key: a JSON-RPC parse error naming params.
    status, _, text = post(d, None, org.key, raw='{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":%s}}' % nested(DEEP))
    assert status == 400, text
    err = json.loads(text)["error"]
    assert err["code"] == -32700 and "params" in err["message"] and "64" in err["message"], err
    assert_alive(d)

    # REST: API.md's error with the field.
    status, body = org.api("POST", "/v1/sandboxes", raw='{"labels": %s}' % nested(DEEP))
    assert status == 400, body
    assert body["error"]["code"] == "invalid_argument" and body["error"]["field"] == "labels", body
    assert "64" in body["error"]["message"]
    assert_alive(d)

    # A body that is an array nested deep, with no field to name.
    status, body = org.api("POST", "/v1/sandboxes", raw=nested(DEEP))
    assert status == 400 and "64" in body["error"]["message"], body
    assert_alive(d)


def test_sixty_four_levels_are_accepted_sixty_five_are_not(fresh_daemon):
    d = fresh_daemon
    org = d.new_org()
    session, _ = initialize(d, org.key)
    # The message object is level 1, params 2, _meta 3: 61 arrays inside make 64.
    for arrays, ok in ((61, True), (62, False)):
        raw = '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"_meta":{"x":%s}}}' % nested(arrays)
        status, _, text = post(d, None, org.key, session, raw=raw)
        if ok:
            assert status == 200 and json.loads(text)["result"] == {}, text
        else:
            assert status == 400 and json.loads(text)["error"]["code"] == -32700, text
    assert_alive(d)


def test_oauth_register_is_rate_limited(fresh_daemon):
    d = fresh_daemon
    body = json.dumps({"client_name": "burst", "redirect_uris": ["http://127.0.0.1:9/cb"]})
    statuses = [call(d, "POST", "/oauth/register", body)[0] for _ in range(40)]
    assert statuses[0] == 201
    assert 429 in statuses, statuses
    status, headers, text = call(d, "POST", "/oauth/register", body)
    assert status == 429 and json.loads(text)["error"] == "temporarily_unavailable" and "retry-after" in headers, text
    assert_alive(d)


def test_a_name_that_starts_with_127_is_not_loopback(daemon, org):
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    status, _, text = post(daemon, ping, org.key, headers={"Origin": "http://127.evil.example"})
    assert status == 403, text
    status, _, text = post(daemon, ping, org.key, headers={"Host": "127.evil.example:%d" % daemon.port})
    assert status == 403, text
    # Real loopback literals still pass.
    for origin in ("http://127.0.0.1:3000", "http://localhost:3000", "http://[::1]:3000"):
        status, _, text = post(daemon, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                                   "clientInfo": {"name": "t", "version": "1"}}},
                               org.key, headers={"Origin": origin})
        assert status == 200, (origin, text)
    # A client may not register an http redirect to such a name.
    status, _, text = call(daemon, "POST", "/oauth/register",
                           json.dumps({"redirect_uris": ["http://127.evil.example/cb"]}))
    assert status == 400 and json.loads(text)["error"] == "invalid_redirect_uri", text


def test_a_name_given_twice_in_one_object_is_refused_and_changes_nothing(daemon, org):
    """Readers disagree on which of two equal names counts (adaptd's parser kept the last, a
    proxy that checks the body may keep the first), so such a body is a 400 everywhere."""
    before = len(org.list_all())
    raw = '{"cpu": 1, "labels": {"name": "twice"}, "cpu": 16}'
    status, err = org.api("POST", "/v1/sandboxes", raw=raw)
    assert status == 400 and err["error"]["field"] == "cpu", err
    assert "'cpu' twice" in err["error"]["message"], err
    status, err = org.api("POST", "/v1/sandboxes", raw='{"env": {"A": "1", "A": "2"}}')
    assert status == 400 and err["error"]["field"] == "env", err
    assert len(org.list_all()) == before
    # MCP's JSON-RPC body too.
    status, _, text = call(daemon, "POST", "/mcp", '{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "ping"}',
                           {"Authorization": "Bearer " + org.key, "Accept": "application/json, text/event-stream"})
    assert status == 400, text
    assert_alive(daemon)
