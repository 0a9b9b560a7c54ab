"""CORS for browser MCP clients: preflights (OPTIONS) of /mcp and the OAuth endpoints, and the
Access-Control headers on /mcp's answers; a foreign origin still gets 403."""

import http.client

import harness
from mcp_support import LATEST, post

BROWSER = "http://localhost:3000"


def options(daemon, path, origin, asked_headers="authorization, content-type, mcp-session-id"):
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=harness.HTTP_TIMEOUT)
    conn.request("OPTIONS", path, headers={
        "Origin": origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": asked_headers})
    resp = conn.getresponse()
    resp.read()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}


def test_mcp_preflight_allows_a_loopback_page_and_refuses_a_foreign_one(daemon):
    status, headers = options(daemon, "/mcp", BROWSER)
    assert status == 204, headers
    assert headers["access-control-allow-origin"] == BROWSER
    assert "POST" in headers["access-control-allow-methods"]
    allowed = headers["access-control-allow-headers"].lower()
    for name in ("authorization", "content-type", "mcp-session-id", "mcp-protocol-version"):
        assert name in allowed, allowed
    assert "mcp-session-id" in headers["access-control-expose-headers"].lower()
    assert int(headers["access-control-max-age"]) > 0
    status, headers = options(daemon, "/mcp", "http://evil.example.com")
    assert status == 403
    assert "access-control-allow-origin" not in headers


def test_mcp_answers_carry_the_origin_and_expose_the_session_header(org, daemon):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": LATEST, "capabilities": {},
                       "clientInfo": {"name": "browser", "version": "1"}}}
    status, headers, text = post(daemon, init, org.key, headers={"Origin": BROWSER})
    assert status == 200, text
    assert headers["access-control-allow-origin"] == BROWSER
    assert "mcp-session-id" in headers["access-control-expose-headers"].lower()
    assert headers.get("mcp-session-id")
    # Without a key: 401 whose WWW-Authenticate a browser can read (it starts OAuth).
    status, headers, _ = post(daemon, init, None, headers={"Origin": BROWSER})
    assert status == 401
    assert "www-authenticate" in headers["access-control-expose-headers"].lower()
    # Without an Origin (not a browser): no CORS headers.
    status, headers, _ = post(daemon, init, org.key)
    assert status == 200 and "access-control-allow-origin" not in headers


def test_oauth_endpoints_answer_preflights_for_any_origin(daemon):
    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server",
                 "/oauth/register", "/oauth/token"):
        status, headers = options(daemon, path, "https://client.example", "content-type")
        assert status == 204, (path, headers)
        assert headers["access-control-allow-origin"] == "*", path
        assert "POST" in headers["access-control-allow-methods"], path
        assert "content-type" in headers["access-control-allow-headers"].lower(), path
