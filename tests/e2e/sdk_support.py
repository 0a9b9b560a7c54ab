"""Shared by the SDK tests: the Python SDK installed as a user installs it, and a loopback
proxy that drops the first answer to a chosen request (to prove retries are idempotent)."""

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import threading

from harness import REPO

SDK_PY = os.path.join(REPO, "sdk", "python")
SDK_TS = os.path.join(REPO, "sdk", "typescript")
SCENARIOS = os.path.join(SDK_TS, "test", "scenarios.mjs")
NODE = shutil.which("node")


def pip_install_python_sdk(target):
    """`pip install ./sdk/python` into target with no package index (the SDK's build backend
    is in the standard library); answers the directory to put on sys.path."""
    r = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-index", "--no-compile", "--quiet",
         "--target", str(target), SDK_PY],
        capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, "pip install ./sdk/python failed:\n%s\n%s" % (r.stdout, r.stderr)
    assert os.path.isfile(os.path.join(str(target), "adapt", "py.typed"))
    return str(target)


class DroppingProxy:
    """An HTTP/1.1 proxy on 127.0.0.1 in front of adaptd. Each request is forwarded; the answer
    to the first request that `drop(method, path)` selects is read from adaptd and then thrown
    away with the connection closed, as a network cut after the server acted would (or, with
    `answer`, that request is answered by the proxy itself and never reaches adaptd)."""

    def __init__(self, upstream_port, drop, answer=None):
        """answer: (status, headers) sent instead of forwarding the selected request (a 503,
        a 429 with Retry-After), rather than cutting its answer."""
        self.upstream_port = upstream_port
        self.drop = drop
        self.answer = answer
        self.dropped = 0
        self.seen = []  # (method, path, headers) of every request
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def close(self):
        self.sock.close()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        with conn:
            f = conn.makefile("rb")
            line = f.readline().decode("latin-1")
            if not line:
                return
            method, path, _ = line.split(" ", 2)
            headers = {}
            while True:
                h = f.readline().decode("latin-1").rstrip("\r\n")
                if not h:
                    break
                k, _, v = h.partition(":")
                headers[k.strip().lower()] = v.strip()
            body = f.read(int(headers.get("content-length", "0") or 0))
            self.seen.append((method, path, headers))
            if self.answer and self.dropped == 0 and self.drop(method, path):
                self.dropped += 1
                status, extra = self.answer
                code = {429: "resource_exhausted"}.get(status, "unavailable")
                body = b'{"error": {"code": "%s", "message": "try again"}}' % code.encode()
                head = ["HTTP/1.1 %d Fault" % status, "Content-Type: application/json",
                        "Content-Length: %d" % len(body), "Connection: close"]
                head += ["%s: %s" % kv for kv in extra.items()]
                conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
                return
            up = http.client.HTTPConnection("127.0.0.1", self.upstream_port, timeout=120)
            fwd = {k: v for k, v in headers.items() if k not in ("host", "connection", "content-length")}
            up.request(method, path, body=body or None, headers=fwd)
            resp = up.getresponse()
            data = resp.read()
            up.close()
            if self.dropped == 0 and self.drop(method, path):
                self.dropped += 1
                conn.shutdown(socket.SHUT_RDWR)
                return
            out = ["HTTP/1.1 %d %s" % (resp.status, resp.reason)]
            for k, v in resp.getheaders():
                if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                    out.append("%s: %s" % (k, v))
            out += ["Content-Length: %d" % len(data), "Connection: close", "", ""]
            conn.sendall("\r\n".join(out).encode("latin-1") + data)


def readme_example(language):
    """The ```language block of README.md's "SDKs" section, as a user would copy it."""
    with open(os.path.join(REPO, "README.md")) as f:
        text = f.read()
    section = text.split("\n## SDKs\n", 1)[1].split("\n## ", 1)[0]
    fence = "```%s\n" % language
    assert fence in section, "README's SDKs section has no %s example" % language
    return section.split(fence, 1)[1].split("```", 1)[0]


# What the README's examples print, in both languages.
README_OUTPUT = "hello\nline 1\nline 2\nfrom {lang}\nrefused: timeoutSeconds\n"


def build_typescript_sdk():
    """sdk/typescript/dist/index.js, current: sdk/typescript/install.sh (scripts/test.sh's
    npm-sdk stage) installs tsc and builds dist/; a dist/ older than src/ is rebuilt here."""
    assert NODE, "node is not installed (scripts/install-deps.sh)"
    dist = os.path.join(SDK_TS, "dist", "index.js")
    src = os.path.join(SDK_TS, "src")
    newest = max(os.path.getmtime(os.path.join(src, f)) for f in os.listdir(src))
    if not os.path.exists(dist) or os.path.getmtime(dist) < newest:
        r = subprocess.run([os.path.join(SDK_TS, "install.sh")], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, "sdk/typescript/install.sh failed:\n%s\n%s" % (r.stdout, r.stderr)
    version = subprocess.run([NODE, "--version"], capture_output=True, text=True).stdout.strip()
    assert int(version.lstrip("v").split(".")[0]) >= 18, version
    return dist


def scenario(name, daemon, client, timeout=600, **env):
    """Runs scenario `name` of sdk/typescript/test/scenarios.mjs as client's key; answers the
    JSON it printed."""
    e = dict(os.environ)
    e.update({"ADAPT_URL": daemon.url, "ADAPT_API_KEY": client.key})
    e.update({k: str(v) for k, v in env.items()})
    r = subprocess.run([NODE, "--expose-gc", SCENARIOS, name], capture_output=True, text=True,
                       timeout=timeout, env=e)
    assert r.returncode == 0, "scenario %s failed (%s):\n%s\n%s" % (name, r.returncode, r.stdout, r.stderr)
    return json.loads(r.stdout.strip().splitlines()[-1])
