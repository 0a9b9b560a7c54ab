"""OAuth 2.1 for MCP clients, end to end with a scripted client: discovery from the 401,
metadata, dynamic registration, authorization code with PKCE S256 through the consent page,
token, refresh rotation, and a tool call with the access token."""

import base64
import hashlib
import http.client
import json
import re
import secrets
import urllib.parse

import harness
from mcp_support import initialize, post, rpc


def http_call(daemon, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=harness.HTTP_TIMEOUT)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    text = resp.read().decode()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, text


def form(daemon, path, fields):
    return http_call(daemon, "POST", path, urllib.parse.urlencode(fields),
                     {"Content-Type": "application/x-www-form-urlencoded"})


def pkce():
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def path_of(url):
    u = urllib.parse.urlsplit(url)
    return u.path + ("?" + u.query if u.query else "")


def discover(daemon):
    status, headers, _ = post(daemon, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, None)
    assert status == 401
    metadata_url = re.search(r'resource_metadata="([^"]+)"', headers["www-authenticate"]).group(1)
    status, _, text = http_call(daemon, "GET", path_of(metadata_url))
    assert status == 200
    resource = json.loads(text)
    assert resource["resource"] == daemon.url + "/mcp"
    status, _, plain = http_call(daemon, "GET", "/.well-known/oauth-protected-resource")
    assert status == 200 and json.loads(plain) == resource
    issuer = resource["authorization_servers"][0]
    status, _, text = http_call(daemon, "GET", path_of(issuer + "/.well-known/oauth-authorization-server"))
    assert status == 200
    server = json.loads(text)
    assert server["issuer"] == issuer
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert server["authorization_response_iss_parameter_supported"] is True
    return resource, server


def register(daemon, server, redirect="http://127.0.0.1:9/callback"):
    status, _, text = http_call(daemon, "POST", path_of(server["registration_endpoint"]),
                                json.dumps({"client_name": "Scripted assistant", "redirect_uris": [redirect],
                                            "token_endpoint_auth_method": "none"}),
                                {"Content-Type": "application/json"})
    assert status == 201, text
    client = json.loads(text)
    assert client["client_id"] and client["token_endpoint_auth_method"] == "none"
    return client


def authorize(daemon, server, client, resource, api_key, challenge, state="st-1", redirect=None):
    params = {"response_type": "code", "client_id": client["client_id"],
              "redirect_uri": redirect or client["redirect_uris"][0], "code_challenge": challenge,
              "code_challenge_method": "S256", "state": state, "resource": resource["resource"], "scope": "mcp"}
    auth_path = path_of(server["authorization_endpoint"])
    status, headers, page = http_call(daemon, "GET", auth_path + "?" + urllib.parse.urlencode(params))
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert "Scripted assistant" in page and 'name="api_key"' in page
    # The form carries the request; the user signs in with an API key and allows.
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page))
    assert fields["code_challenge"] == challenge
    fields.update({"api_key": api_key, "action": "allow"})
    return form(daemon, auth_path, fields)


def test_oauth_flow_end_to_end(org, daemon):
    resource, server = discover(daemon)
    client = register(daemon, server)
    verifier, challenge = pkce()

    status, _, page = authorize(daemon, server, client, resource, "adapt_wrong", challenge)
    assert status == 401 and "not valid" in page
    status, headers, _ = authorize(daemon, server, client, resource, org.key, challenge)
    assert status == 302
    location = urllib.parse.urlsplit(headers["location"])
    assert location.netloc == "127.0.0.1:9" and location.path == "/callback"
    query = dict(urllib.parse.parse_qsl(location.query))
    assert query["state"] == "st-1" and query["iss"] == server["issuer"]
    code = query["code"]

    token_path = path_of(server["token_endpoint"])
    base = {"grant_type": "authorization_code", "code": code, "client_id": client["client_id"],
            "redirect_uri": client["redirect_uris"][0], "resource": resource["resource"]}
    status, _, text = form(daemon, token_path, dict(base, code_verifier=pkce()[0]))
    assert status == 400 and json.loads(text)["error"] == "invalid_grant"  # wrong verifier
    # A failed exchange used the code up (single use), so authorize again.
    status, headers, _ = authorize(daemon, server, client, resource, org.key, challenge)
    code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(headers["location"]).query))["code"]
    status, headers, text = form(daemon, token_path, dict(base, code=code, code_verifier=verifier))
    assert status == 200, text
    assert headers["cache-control"] == "no-store"
    tokens = json.loads(text)
    assert tokens["token_type"] == "Bearer" and 0 < tokens["expires_in"] <= 3600
    status, _, text = form(daemon, token_path, dict(base, code=code, code_verifier=verifier))
    assert status == 400  # replayed code

    # The access token works on /mcp, for the organization that signed in.
    access = tokens["access_token"]
    session, _ = initialize(daemon, access)
    sid = rpc(daemon, access, session, "tools/call",
              {"name": "create_sandbox", "arguments": {"name": "via-oauth"}})["result"]["structuredContent"]["sandbox_id"]
    try:
        status, sandbox = org.api("GET", "/v1/sandboxes/" + sid)
        assert status == 200 and sandbox["labels"]["name"] == "via-oauth"
        # It is not an API key: the REST API refuses it.
        status, _ = org.api("GET", "/v1/sandboxes", key=access)
        assert status == 401
    finally:
        org.api("DELETE", "/v1/sandboxes/" + sid)

    # Refresh rotates: the old refresh token stops working.
    refresh = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client["client_id"]}
    status, _, text = form(daemon, token_path, refresh)
    assert status == 200
    renewed = json.loads(text)
    assert renewed["access_token"] != access
    assert form(daemon, token_path, refresh)[0] == 400
    session, _ = initialize(daemon, renewed["access_token"])
    assert rpc(daemon, renewed["access_token"], session, "ping")["result"] == {}

    # Deleting the API key that signed in revokes its tokens, access and refresh alike.
    status, keys = org.api("GET", "/v1/orgs/%s/keys" % org.org_id)
    key_id = [k["id"] for k in keys["items"] if k["name"] == "e2e"][0]
    assert org.api("DELETE", "/v1/orgs/%s/keys/%s" % (org.org_id, key_id), key=daemon.admin.key)[0] == 204
    assert post(daemon, {"jsonrpc": "2.0", "id": 9, "method": "ping"}, renewed["access_token"], session)[0] == 401
    refresh = dict(refresh, refresh_token=renewed["refresh_token"])
    status, _, text = form(daemon, token_path, refresh)
    assert status == 400 and json.loads(text)["error"] == "invalid_grant"


def test_oauth_refuses_what_it_must(org, daemon):
    resource, server = discover(daemon)
    client = register(daemon, server)
    auth_path = path_of(server["authorization_endpoint"])
    _, challenge = pkce()
    good = {"response_type": "code", "client_id": client["client_id"], "redirect_uri": client["redirect_uris"][0],
            "code_challenge": challenge, "code_challenge_method": "S256", "state": "s"}
    # An unknown client or redirect URI never redirects.
    for bad in ({"client_id": "oac_nope"}, {"redirect_uri": "https://evil.example.com/cb"}):
        status, headers, _ = http_call(daemon, "GET", auth_path + "?" + urllib.parse.urlencode(dict(good, **bad)))
        assert status == 400 and "location" not in headers
    # Nor does any other malformed request (anyone can register any redirect URI, so a
    # redirect on error would make the page an open redirector): the error is shown, as a
    # POST's is, and nothing is authorized.
    for bad, error in (({"code_challenge_method": "plain"}, "invalid_request"),
                       ({"code_challenge": ""}, "invalid_request"),
                       ({"response_type": "token"}, "unsupported_response_type"),
                       ({"response_type": None}, "unsupported_response_type"),
                       ({"resource": "https://other.example.com/mcp"}, "invalid_target"),
                       ({"scope": "admin"}, "invalid_scope")):
        params = {k: v for k, v in dict(good, **bad).items() if v is not None}
        status, headers, text = http_call(daemon, "GET", auth_path + "?" + urllib.parse.urlencode(params))
        assert status == 400 and "location" not in headers and error in text, (bad, status, headers)
        status, headers, text = form(daemon, auth_path, dict(params, api_key=org.key, action="allow"))
        assert status == 400 and "location" not in headers and error in text, (bad, status, headers)
    # Deny: the user's own refusal goes back to the client, with state and iss.
    status, headers, _ = form(daemon, auth_path, dict(good, action="deny"))
    assert status == 302, status
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(headers["location"]).query))
    assert q["error"] == "access_denied" and q["state"] == "s" and q["iss"] == server["issuer"], q
    # A consent POST from a foreign origin.
    status, _, _ = http_call(daemon, "POST", auth_path, urllib.parse.urlencode(dict(good, api_key=org.key, action="allow")),
                             {"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.example.com"})
    assert status == 403
    # Registration checks redirect URIs.
    for uris in ([], ["http://evil.example.com/cb"], ["https://x.example.com/cb#frag"], "nope"):
        status, _, text = http_call(daemon, "POST", path_of(server["registration_endpoint"]),
                                    json.dumps({"redirect_uris": uris}), {"Content-Type": "application/json"})
        assert status == 400 and json.loads(text)["error"] == "invalid_redirect_uri", uris
    status, _, text = form(daemon, path_of(server["token_endpoint"]), {"grant_type": "password"})
    assert status == 400 and json.loads(text)["error"] == "unsupported_grant_type"
    # A made-up access token is a 401 on /mcp.
    status, headers, _ = post(daemon, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, "adapt_at_made_up")
    assert status == 401 and "resource_metadata" in headers["www-authenticate"]
