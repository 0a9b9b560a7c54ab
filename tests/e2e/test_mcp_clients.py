"""Third-party MCP clients against adaptd: the MCP Inspector's CLI and the official
conformance suite's server scenarios (both pinned in tests/mcp/package.json)."""

import http.client
import http.server
import json
import os
import re
import tempfile
import threading

import pytest

from mcp_support import MCP_DIR, run_node

INSPECTOR = os.path.join(MCP_DIR, "node_modules", "@modelcontextprotocol", "inspector", "clients",
                         "launcher", "build", "index.js")
CONFORMANCE = os.path.join(MCP_DIR, "node_modules", "@modelcontextprotocol", "conformance", "dist",
                           "index.js")


def inspector(daemon, key, *args, expect_rc=0):
    # HOME is a temporary directory: the Inspector keeps its catalog there.
    with tempfile.TemporaryDirectory() as home:
        p = run_node([INSPECTOR, "--cli", daemon.url + "/mcp", "--transport", "http",
                      "--header", "Authorization: Bearer " + key] + list(args),
                     timeout=180, env={"HOME": home})
    assert p.returncode == expect_rc, "inspector %r failed (%s):\n%s\n%s" % (args, p.returncode, p.stdout[-3000:], p.stderr[-3000:])
    return json.loads(p.stdout)


def test_inspector_cli_lists_and_calls_tools(org, daemon):
    listed = inspector(daemon, org.key, "--method", "tools/list")
    names = {t["name"] for t in listed["tools"]}
    assert {"create_sandbox", "run_command", "get_command_result", "list_gpu_types"} <= names
    called = inspector(daemon, org.key, "--method", "tools/call", "--tool-name", "list_gpu_types")
    assert called["isError"] is False
    assert called["structuredContent"]["gpu_types"] == []
    called = inspector(daemon, org.key, "--method", "tools/call", "--tool-name", "get_sandbox",
                       "--tool-arg", "sandbox_id=sbx_missing", expect_rc=5)  # 5: a tool error
    assert called["isError"] is True


class _AuthProxy:
    """Forwards requests to adaptd unchanged (Host and Origin included) and adds the bearer key,
    because the conformance runner has no option for credentials."""

    def __init__(self, daemon, key):
        target_port = daemon.port

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _forward(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                conn = http.client.HTTPConnection("127.0.0.1", target_port, timeout=120)
                conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for k, v in self.headers.items():
                    if k.lower() not in ("authorization", "content-length", "connection"):
                        conn.putheader(k, v)
                conn.putheader("Authorization", "Bearer " + key)
                if body is not None:
                    conn.putheader("Content-Length", str(len(body)))
                conn.endheaders(body)
                resp = conn.getresponse()
                data = resp.read()
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in ("content-length", "connection", "transfer-encoding"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                conn.close()

            do_GET = do_POST = do_DELETE = _forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def proxy(org, daemon):
    p = _AuthProxy(daemon, org.key)
    yield p
    p.close()


@pytest.mark.parametrize("scenario", ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"])
def test_conformance_server_scenario(proxy, scenario):
    with tempfile.TemporaryDirectory() as out:
        p = run_node([CONFORMANCE, "server", "--url", "http://localhost:%d/mcp" % proxy.port,
                      "--scenario", scenario, "-o", out, "--verbose"], timeout=300, env={"HOME": out})
        text = p.stdout + p.stderr
    assert p.returncode == 0, "conformance %s failed (%s):\n%s" % (scenario, p.returncode, text[-6000:])
    assert "FAILURE" not in text, text[-6000:]
    counts = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", text)
    assert counts, text[-6000:]
    passed, total, failed = (int(x) for x in counts.groups())
    assert total > 0 and passed == total and failed == 0, text[-6000:]
