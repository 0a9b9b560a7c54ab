"""A sandbox's artifacts over REST and the CLI: copying a workspace file into object storage
with a link (POST /v1/sandboxes/{id}/artifacts, `adapt object save`), refusing files that look
like credentials, listing them (GET .../artifacts, `adapt object artifacts`), and attaching
object storage (`adapt object attach`): the verbs MCP's artifact tools call."""
import json
import urllib.request

from test_objects import get


def workspace(org, sid, script):
    status, cmd = org.api("POST", "/v1/sandboxes/%s/commands" % sid,
                          {"command": "mkdir -p /workspace/out && cd /workspace && " + script,
                           "timeoutSeconds": 30})
    assert status == 200 and cmd["exitCode"] == 0, cmd


def test_save_list_and_refusals_over_rest(org, daemon):
    sbx = org.create({})
    sid = sbx["id"]
    org.wait_for_status(sid, "running", 90)
    workspace(org, sid, "printf 'report\\n' > out/report.txt; printf 'x' > .env; "
                        "printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\\nabc\\n' > out/key.txt")
    status, saved = org.api("POST", "/v1/sandboxes/%s/artifacts" % sid,
                            {"path": "out/report.txt", "ttlSeconds": 60})
    assert status == 201, saved
    assert saved["key"] == "artifacts/%s/report.txt" % sid and saved["size"] == len("report\n")
    assert saved["contentType"].startswith("text/plain") and saved["expiresAt"]
    # The link reads exactly that object, without a key.
    url = saved["url"]
    assert "/v1/objects/download?" in url
    with urllib.request.urlopen(url, timeout=20) as r:
        assert r.read() == b"report\n"
    status, saved2 = org.api("POST", "/v1/sandboxes/%s/artifacts" % sid,
                             {"path": "/workspace/out/report.txt", "key": "mine/r.txt"})
    assert status == 201 and saved2["key"] == "mine/r.txt", saved2
    assert get(org, "mine/r.txt")[2] == b"report\n"
    status, listed = org.api("GET", "/v1/sandboxes/%s/artifacts" % sid)
    assert status == 200 and listed["prefix"] == "artifacts/%s/" % sid, listed
    assert [o["key"] for o in listed["objects"]] == [saved["key"]] and listed["truncated"] is False
    # Credentials by name or by content, paths outside /workspace, bad bodies: 400, nothing stored.
    for body, field in [({"path": ".env"}, "path"), ({"path": "out/key.txt"}, "path"),
                        ({"path": "../etc/passwd"}, "path"), ({"path": "/etc/hostname"}, "path"),
                        ({}, "path"), ({"path": 1}, "path"), ({"path": "out/report.txt", "x": 1}, "x"),
                        ({"path": "out/report.txt", "key": "../k"}, "key"),
                        ({"path": "out/report.txt", "ttlSeconds": 0}, "ttlSeconds")]:
        status, err = org.api("POST", "/v1/sandboxes/%s/artifacts" % sid, body)
        assert status == 400 and err["error"]["field"] == field, (body, err)
    assert [o["key"] for o in org.api("GET", "/v1/sandboxes/%s/artifacts" % sid)[1]["objects"]] == \
        [saved["key"]]
    status, err = org.api("POST", "/v1/sandboxes/%s/artifacts" % sid, {"path": "out/none.txt"})
    assert status == 404, err
    # Another organization sees no such sandbox.
    other = daemon.new_org()
    assert other.api("GET", "/v1/sandboxes/%s/artifacts" % sid)[0] == 404
    assert other.api("POST", "/v1/sandboxes/%s/artifacts" % sid, {"path": "out/report.txt"})[0] == 404


def test_cli_save_artifacts_and_attach(org):
    sbx = org.create({})
    sid = sbx["id"]
    org.wait_for_status(sid, "running", 90)
    workspace(org, sid, "printf 'from the cli\\n' > out/cli.txt; printf 'x' > .env")
    p = org.cli("object", "save", sid, "out/cli.txt", "--ttl", "60")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "saved artifacts/%s/cli.txt" % sid and "/v1/objects/download?" in lines[1], p.stdout
    with urllib.request.urlopen(lines[1], timeout=20) as r:
        assert r.read() == b"from the cli\n"
    p = org.cli("object", "save", sid, ".env")
    assert p.returncode != 0 and "credential" in p.stderr, (p.stdout, p.stderr)
    p = org.cli("object", "artifacts", sid)
    assert p.returncode == 0 and "artifacts/%s/cli.txt" % sid in p.stdout, p.stdout
    assert ".env" not in p.stdout
    p = org.cli("--json", "object", "attach", sid, "--ttl", "600")
    assert p.returncode == 0, p.stderr
    att = json.loads(p.stdout)
    assert att["sandboxId"] == sid and att["endpoint"].startswith("http://10.") and att["restarted"] is True
    org.wait_for_status(sid, "running", 90)
    # --wait: the CLI returns once the restarted sandbox runs again, as `sandbox start --wait`.
    p = org.cli("object", "attach", sid, "--wait", "90")
    assert p.returncode == 0 and p.stdout.rstrip().endswith("; restarted)"), (p.stdout, p.stderr)
    assert org.get(sid)["status"] == "running"
    status, cmd = org.api("POST", "/v1/sandboxes/%s/commands" % sid,
                          {"command": "test -n \"$SANDBOX_STORAGE_TOKEN\" && echo attached",
                           "timeoutSeconds": 30})
    assert status == 200 and cmd["stdout"] == "attached\n", cmd
    p = org.cli("object", "attach", "sbx_doesnotexist00000000")
    assert p.returncode != 0 and "not found" in p.stderr, (p.stdout, p.stderr)
