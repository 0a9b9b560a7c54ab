"""A sandbox's artifacts over REST and the CLI: copying a workspace file into object storage
with a link (POST /v1/sandboxes/{id}/artifacts, `adapt object save`), refusing files that look
like credentials, listing them (GET .../artifacts, `adapt object artifacts`), and attaching
object storage (`adapt object attach`): the verbs MCP's artifact tools call. The MCP tools
themselves: a symlink to a secret or out of /workspace is refused by the file it opens, a
FIFO is refused at once, and the download tools answer a resource_link (seed 000's file
reference) beside the JSON, to sessions whose protocol has one, the official SDK client's
included."""
import json
import urllib.request

from mcp_support import initialize, rpc, sdk
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
    assert [o["key"] for o in listed["items"]] == [saved["key"]] and listed["nextCursor"] is None
    # Credentials by name or by content, paths outside /workspace, bad bodies: 400, nothing stored.
    for body, field in [({"path": ".env"}, "path"), ({"path": "out/key.txt"}, "path"),
                        ({"path": "../etc/passwd"}, "path"), ({"path": "/etc/hostname"}, "path"),
                        ({}, "path"), ({"path": 1}, "path"), ({"path": "out/report.txt", "x": 1}, "x"),
                        ({"path": "out/report.txt", "key": "../k"}, "key"),
                        ({"path": "out/report.txt", "ttlSeconds": 0}, "ttlSeconds")]:
        status, err = org.api("POST", "/v1/sandboxes/%s/artifacts" % sid, body)
        assert status == 400 and err["error"]["field"] == field, (body, err)
    assert [o["key"] for o in org.api("GET", "/v1/sandboxes/%s/artifacts" % sid)[1]["items"]] == \
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


def mcp_tool(daemon, org, session, name, args):
    """(isError, text, structuredContent) of one tools/call."""
    result = rpc(daemon, org.key, session, "tools/call", {"name": name, "arguments": args})["result"]
    return result.get("isError") is True, result["content"][0]["text"], result.get("structuredContent")


def stored_keys(org):
    status, page = org.api("GET", "/v1/objects")
    assert status == 200, page
    return [o["key"] for o in page["items"]]


def test_symlinks_to_a_secret_or_out_of_the_workspace_are_refused_and_store_nothing(org, daemon):
    # The name asked for passes the rules (report.txt, notenv); the file the sandbox opens for
    # it does not: the checks follow the link to the file actually read.
    sbx = org.create({})
    sid = sbx["id"]
    org.wait_for_status(sid, "running", 90)
    workspace(org, sid, "printf 'TOKEN=abc\\n' > .env; ln -s /etc/shadow report.txt; "
                        "ln -s .env notenv; ln -s /etc out/etc; printf 'fine\\n' > out/real.txt; "
                        "ln -s out/real.txt ok.txt")
    session, _ = initialize(daemon, org.key)
    for path, why in [("report.txt", "resolves to /etc/shadow, outside /workspace"),
                      ("/workspace/report.txt", "resolves to /etc/shadow, outside /workspace"),
                      ("out/etc/shadow", "resolves to /etc/shadow, outside /workspace"),
                      ("notenv", "resolves to /workspace/.env, which looks like a credential")]:
        for name in ["save_workspace_file_to_object_storage", "download_workspace_artifact"]:
            failed, text, _ = mcp_tool(daemon, org, session, name,
                                       {"sandbox_id": sid, "workspace_path": path})
            assert failed and why in text, (name, path, text)
        status, err = org.api("POST", "/v1/sandboxes/%s/artifacts" % sid, {"path": path})
        assert status == 400 and err["error"]["field"] == "path", (path, err)
        assert why in err["error"]["message"], err
    assert stored_keys(org) == []
    # A link that stays in the workspace, to an ordinary file, is still copied.
    failed, text, saved = mcp_tool(daemon, org, session, "download_workspace_artifact",
                                   {"sandbox_id": sid, "workspace_path": "ok.txt"})
    assert not failed, text
    with urllib.request.urlopen(saved["download_url"], timeout=20) as r:
        assert r.read() == b"fine\n"
    assert stored_keys(org) == ["artifacts/%s/ok.txt" % sid]


def test_a_fifo_in_the_workspace_is_refused_at_once_by_every_mcp_file_tool(org, daemon):
    # Nothing writes to the FIFO: a tool that opened it blocking would hold its call (and one of
    # the server's tool-call slots) forever.
    sbx = org.create({})
    sid = sbx["id"]
    org.wait_for_status(sid, "running", 90)
    workspace(org, sid, "mkfifo out/pipe; ln -s out/pipe pipe-link")
    session, _ = initialize(daemon, org.key)
    for path in ["out/pipe", "/workspace/out/pipe", "pipe-link"]:
        for name in ["read_workspace_file", "save_workspace_file_to_object_storage",
                     "download_workspace_artifact"]:
            failed, text, _ = mcp_tool(daemon, org, session, name,
                                       {"sandbox_id": sid, "workspace_path": path})
            assert failed and "is not a regular file" in text, (name, path, text)
    assert stored_keys(org) == []
    # The server is still free to serve this sandbox's files.
    workspace(org, sid, "printf 'after\\n' > out/after.txt")
    failed, text, read = mcp_tool(daemon, org, session, "read_workspace_file",
                                  {"sandbox_id": sid, "workspace_path": "out/after.txt"})
    assert not failed and read["text"] == "after\n", text


def assert_links_to_the_file(content, structured):
    assert len(content) == 2 and content[0]["type"] == "text", content
    assert json.loads(content[0]["text"]) == structured
    link = content[1]
    assert link["type"] == "resource_link" and link["uri"] == structured["download_url"], link
    assert link["name"] == "r.csv" and link["size"] == 4, link
    assert link["mimeType"] == structured["content_type"] and "read-only" in link["description"]
    with urllib.request.urlopen(link["uri"], timeout=20) as r:
        assert r.read() == b"a,b\n"


def test_download_tools_answer_a_resource_link_where_the_protocol_has_one(org, daemon):
    sbx = org.create({})
    sid = sbx["id"]
    org.wait_for_status(sid, "running", 90)
    workspace(org, sid, "printf 'a,b\\n' > out/r.csv")
    calls = [("save_workspace_file_to_object_storage",
              {"sandbox_id": sid, "workspace_path": "out/r.csv", "key": "reports/r.csv"}),
             ("download_workspace_artifact",
              {"sandbox_id": sid, "workspace_path": "/workspace/out/r.csv"}),
             ("download_object_artifact", {"key": "reports/r.csv"})]
    for version, links in (("2025-11-25", True), ("2025-06-18", True), ("2025-03-26", False)):
        session, _ = initialize(daemon, org.key, version)
        for name, args in calls:
            result = rpc(daemon, org.key, session, "tools/call",
                         {"name": name, "arguments": args})["result"]
            assert result["isError"] is False, result
            if links:
                assert_links_to_the_file(result["content"], result["structuredContent"])
            else:  # 2025-03-26 has no resource_link: the URL is in the JSON only
                assert [c["type"] for c in result["content"]] == ["text"], (version, result)
    # The official SDK client accepts the block (its result schema validates content).
    report = sdk(daemon, org, "http", "calls", [[name, args] for name, args in calls])
    for entry in report["calls"]:
        assert not entry["isError"] and entry["schemaValid"], entry
        assert_links_to_the_file(entry["content"], entry["structuredContent"])
