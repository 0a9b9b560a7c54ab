"""The MCP server at /mcp (Streamable HTTP) and `adapt mcp` (stdio), driven by the official
TypeScript SDK client and by raw JSON-RPC where a client library would hide the detail."""

import json
import os
import time

import pytest

import harness
from mcp_support import LATEST, initialize, post, request, rpc, sdk

EXPECTED_TOOLS = {
    "create_sandbox", "create_gpu_sandbox", "get_sandbox", "list_sandboxes", "wait_for_sandbox",
    "delete_sandbox", "list_sandbox_environments", "list_gpu_types", "run_command", "run_python",
    "get_command_result", "read_workspace_file", "expose_sandbox_app", "disable_sandbox_app",
    "list_public_apps", "stop_sandbox", "start_sandbox", "get_checkpoint_operation",
    "list_public_apps",
    "create_persistent_storage", "list_persistent_storage", "delete_persistent_storage",
    "delete_sandbox_keep_storage",
    "attach_sandbox_object_storage", "list_object_storage", "read_object_storage_text",
    "list_object_artifacts", "read_object_text_artifact", "save_workspace_file_to_object_storage",
    "download_object_artifact", "download_workspace_artifact", "publish_static_website",
    "register_user", "get_billing_account",
    "submit_sandbox_job", "list_sandbox_jobs", "cancel_sandbox_job", "delete_sandbox_job",
    "list_automation_runs", "get_automation_run", "cancel_automation_run",
    "deploy_sandbox_app", "scale_deployed_app", "delete_deployed_app",
    "create_sandbox_automation", "list_sandbox_automations", "set_sandbox_automation_enabled",
    "delete_sandbox_automation",
    "get_user_database",
}


def seed_tools():
    with open(os.path.join(os.path.dirname(__file__), "seed_000_tools.json")) as f:
        return json.load(f)["tools"]


READ_ONLY = {"get_sandbox", "list_sandboxes", "wait_for_sandbox", "list_sandbox_environments",
             "list_gpu_types", "get_command_result", "read_workspace_file", "list_public_apps",
             "list_persistent_storage", "get_checkpoint_operation",
             "list_object_storage", "read_object_storage_text", "list_object_artifacts",
             "read_object_text_artifact", "download_object_artifact", "get_billing_account",
             "list_sandbox_jobs", "list_automation_runs", "get_automation_run",
             "list_sandbox_automations", "get_user_database"}


# --- transport, raw -------------------------------------------------------------------------

def test_initialize_issues_a_session_and_negotiates_the_version(org, daemon):
    session, _ = initialize(daemon, org.key)
    assert len(session) >= 16
    other, _ = initialize(daemon, org.key)
    assert other != session
    for asked, expected in (("2025-06-18", "2025-06-18"), ("2025-03-26", "2025-03-26"), ("1999-01-01", LATEST)):
        status, _, text = post(daemon, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                        "params": {"protocolVersion": asked, "capabilities": {},
                                                   "clientInfo": {"name": "t", "version": "1"}}}, org.key)
        assert status == 200
        result = json.loads(text)["result"]
        assert result["protocolVersion"] == expected
        assert result["capabilities"]["tools"] == {"listChanged": False}


def test_ping_and_unknown_method(org, daemon):
    session, _ = initialize(daemon, org.key)
    assert rpc(daemon, org.key, session, "ping") == {"jsonrpc": "2.0", "id": 7, "result": {}}
    answer = rpc(daemon, org.key, session, "resources/list")
    assert answer["error"]["code"] == -32601


def test_missing_key_is_401_with_resource_metadata(daemon):
    status, headers, _ = post(daemon, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, None)
    assert status == 401
    challenge = headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert 'resource_metadata="http://127.0.0.1:%d/.well-known/oauth-protected-resource/mcp"' % daemon.port in challenge
    status, headers, _ = post(daemon, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, "adapt_wrong")
    assert status == 401 and 'error="invalid_token"' in headers["www-authenticate"]


def test_foreign_origin_and_host_are_403(org, daemon):
    msg = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    status, _, _ = post(daemon, msg, org.key, headers={"Origin": "http://evil.example.com"})
    assert status == 403
    status, _, _ = post(daemon, msg, org.key, headers={"Host": "evil.example.com"})
    assert status == 403
    session, _ = initialize(daemon, org.key)
    status, _, _ = post(daemon, msg, org.key, session, headers={"Origin": "http://localhost:3000"})
    assert status == 200


def test_session_rules(org, daemon):
    msg = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
    status, _, _ = post(daemon, msg, org.key)  # no session
    assert status == 400
    status, _, _ = post(daemon, msg, org.key, "not-a-session")
    assert status == 404
    session, _ = initialize(daemon, org.key)
    status, _, text = post(daemon, msg, org.key, session, headers={"MCP-Protocol-Version": "2024-01-01"})
    assert status == 400 and "MCP-Protocol-Version" in text
    # Another organization cannot use the session.
    stranger = daemon.new_org()
    status, _, _ = post(daemon, msg, stranger.key, session)
    assert status == 404
    # GET has no server stream here; DELETE ends the session.
    status, headers, _ = request(daemon, "GET", headers={"Authorization": "Bearer " + org.key})
    assert status == 405
    auth = {"Authorization": "Bearer " + org.key, "Mcp-Session-Id": session}
    assert request(daemon, "DELETE", headers=auth)[0] == 204
    assert request(daemon, "DELETE", headers=auth)[0] == 404
    status, _, _ = post(daemon, msg, org.key, session)
    assert status == 404


def test_malformed_messages_are_json_rpc_errors(org, daemon):
    session, _ = initialize(daemon, org.key)
    status, _, text = post(daemon, None, org.key, session, raw="{not json")
    assert status == 400 and json.loads(text)["error"]["code"] == -32700
    status, _, text = post(daemon, [{"jsonrpc": "2.0", "id": 1, "method": "ping"}], org.key, session)
    assert status == 400 and json.loads(text)["error"]["code"] == -32600
    # A body over the 1 MiB limit: still 413, answered as JSON-RPC (MCP clients parse that).
    big = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"x": "y" * (1 << 20)}})
    status, body = org.api("POST", "/mcp", raw=big, headers={"Mcp-Session-Id": session})
    assert status == 413, (status, body)
    assert body["jsonrpc"] == "2.0" and body["id"] is None, body
    assert body["error"]["code"] == -32600 and "1048576 bytes" in body["error"]["message"], body
    answer = rpc(daemon, org.key, session, "tools/list", {"cursor": "bogus"})
    assert answer["error"]["code"] == -32602
    answer = rpc(daemon, org.key, session, "tools/call", {"name": "no_such_tool", "arguments": {}})
    assert answer["error"]["code"] == -32602


def test_tool_list_pages_and_annotations(org, daemon):
    session, _ = initialize(daemon, org.key)
    names, cursor, pages = [], None, 0
    while True:
        answer = rpc(daemon, org.key, session, "tools/list", {"cursor": cursor} if cursor else {})
        pages += 1
        names += [t["name"] for t in answer["result"]["tools"]]
        for t in answer["result"]["tools"]:
            a = t["annotations"]
            for hint in ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"):
                assert isinstance(a[hint], bool), (t["name"], hint)
            assert a["readOnlyHint"] == (t["name"] in READ_ONLY), t["name"]
            assert a["destructiveHint"] == (t["name"] not in READ_ONLY), t["name"]
            assert t["inputSchema"]["type"] == "object" and t["outputSchema"]["type"] == "object"
        cursor = answer["result"].get("nextCursor")
        if not cursor:
            break
    # One page: a client that lists once (the SDKs' listTools()) sees every tool.
    assert pages == 1
    assert sorted(names) == sorted(EXPECTED_TOOLS)


def test_tool_errors_are_results(org, daemon):
    session, _ = initialize(daemon, org.key)
    for name, args, words in (
        ("get_sandbox", {"sandbox_id": "sbx_nope"}, "not found"),
        ("create_gpu_sandbox", {"gpu_type": "a100"}, "no GPUs"),
        ("create_sandbox", {"memory_gib": 1000}, "memory_gib"),
        ("create_sandbox", {"startup_class": "warm"}, "startup_class"),
        ("create_sandbox", {"startup_class": "instant", "storage": "default"}, "no persistent attachment"),
        ("delete_persistent_storage", {"name": "default", "confirm": "default"}, "cannot be deleted"),
        ("delete_persistent_storage", {"name": "nope", "confirm": "nope"}, "not found"),
        ("delete_sandbox_keep_storage", {"sandbox_id": "sbx_nope", "confirm": "other"}, "confirm"),
        ("create_sandbox", {"image": "nosuch:bad tag!"}, "nosuch"),
        ("run_command", {"sandbox_id": "sbx_nope"}, "command is required"),
        ("get_command_result", {"request_id": "nonsense"}, "request_id"),
    ):
        answer = rpc(daemon, org.key, session, "tools/call", {"name": name, "arguments": args})
        result = answer["result"]
        assert result["isError"] is True, (name, result)
        assert words.lower() in result["content"][0]["text"].lower(), (name, result)
        assert "structuredContent" not in result


def test_a_command_lost_with_its_sandbox_says_why(org, daemon):
    # The sandbox (512 MiB) is OOM-killed under the command: get_command_result says so.
    session, _ = initialize(daemon, org.key)

    def call(name, args):
        answer = rpc(daemon, org.key, session, "tools/call", {"name": name, "arguments": args})
        assert answer["result"].get("isError") is not True, (name, answer)
        return answer["result"]["structuredContent"]

    sid = call("create_sandbox", {"memory_gib": 0.5})["sandbox_id"]
    org.wait_for_status(sid, "running", 60)
    harness.wait_for_agent(org, sid)
    started = call("run_python", {"sandbox_id": sid, "wait_seconds": 0,
                                  "code": "x = b'a' * (2 << 30)\nprint(len(x))"})
    org.wait_for_status(sid, ("failed",), 120)
    deadline = time.monotonic() + 60
    while True:
        result = call("get_command_result", {"request_id": started["request_id"]})
        if result["done"] and "memory" in (result["error"] or ""):
            break
        assert time.monotonic() < deadline, result
        time.sleep(0.5)
    assert result["status"] == "lost" and result["exit_code"] is None, result
    assert "ran out of memory" in result["error"], result
    assert result["error"] in result["next_action"], result


def test_progress_arrives_as_sse_before_the_result(org, daemon):
    session, _ = initialize(daemon, org.key)
    sid = rpc(daemon, org.key, session, "tools/call",
              {"name": "create_sandbox", "arguments": {"name": "mcp-progress"}})["result"]["structuredContent"]["sandbox_id"]
    try:
        ready = rpc(daemon, org.key, session, "tools/call",
                    {"name": "wait_for_sandbox", "arguments": {"sandbox_id": sid}})["result"]["structuredContent"]["ready"]
        assert ready
        status, headers, text = post(daemon, {
            "jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "run_command", "arguments": {"sandbox_id": sid, "command": "sleep 3; echo fin"},
                       "_meta": {"progressToken": "tok-1"}}}, org.key, session)
        assert status == 200 and headers["content-type"].startswith("text/event-stream")
        events = [json.loads(line[len("data: "):]) for line in text.splitlines() if line.startswith("data: ")]
        assert events[-1]["id"] == 9
        assert events[-1]["result"]["structuredContent"]["stdout"] == "fin\n"
        progress = [e for e in events[:-1] if e.get("method") == "notifications/progress"]
        assert progress and all(p["params"]["progressToken"] == "tok-1" for p in progress)
        values = [p["params"]["progress"] for p in progress]
        assert values == sorted(values) and len(set(values)) == len(values)
    finally:
        org.api("DELETE", "/v1/sandboxes/" + sid)


# --- the official SDK client ------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["http", "stdio"])
def test_sdk_lists_every_tool_with_schemas(org, daemon, mode):
    report = sdk(daemon, org, mode, "tools")
    assert report["pages"] == 1  # every tool on the first page
    tools = {t["name"]: t for t in report["tools"]}
    assert set(tools) == EXPECTED_TOOLS
    seed = seed_tools()
    for name, t in tools.items():
        # Seed 000's words are the contract: each tool's description is the seed's, verbatim
        # (a tool the seed gives no description has its own).
        assert t["description"] == (seed[name] or t["description"]) and t["description"], name
        assert t["inputSchema"]["type"] == "object"
        assert "properties" in t["outputSchema"]
        assert t["annotations"]["destructiveHint"] is (name not in READ_ONLY)
        # API.md's page size, the same on every surface: 1..200.
        limit = t["inputSchema"]["properties"].get("limit")
        if limit is not None:
            assert (limit["minimum"], limit["maximum"]) == (1, 200), (name, limit)


@pytest.mark.parametrize("mode", ["http", "stdio"])
def test_sdk_full_flow(org, daemon, mode):
    report = sdk(daemon, org, mode, "flow")
    calls = report["calls"]
    try:
        for c in calls:
            if not c["isError"]:
                assert c["schemaValid"], (c["name"], c["schemaErrors"])
                assert c["textMatches"], c["name"]
        by_name = {}
        for c in calls:
            by_name.setdefault(c["name"], []).append(c)
        # Every tool that can succeed here returned structuredContent its outputSchema accepts.
        validated = {c["name"] for c in calls if not c["isError"] and c["schemaValid"]}
        assert validated == EXPECTED_TOOLS - {"create_gpu_sandbox"}, validated
        database = by_name["get_user_database"][0]["structuredContent"]
        assert database["status"] == "not_created", database
        assert not {"host", "password", "url"} & set(database), database
        envs = by_name["list_sandbox_environments"][0]["structuredContent"]["environments"]
        by_alias = {e["alias"]: e for e in envs}
        assert set(by_alias) == {"python", "node", "gcc", "rust", "blender"}
        assert by_alias["python"]["available"] is True and by_alias["python"]["image"] == "debian:12"
        for e in envs:
            assert e["available"] or e["reason"], e
        # A workspace file holding a private key is not copied to object storage.
        assert report["secret"]["isError"] and "secret" in report["secret"]["text"], report["secret"]
        link = by_name["download_object_artifact"][0]["structuredContent"]
        assert "/v1/objects/download?" in link["download_url"] and link["size"] == len("report\n")
        site = by_name["publish_static_website"][0]["structuredContent"]
        assert site["url"].endswith("/index.html")
        gpus = by_name["list_gpu_types"][0]["structuredContent"]
        assert gpus["gpu_types"] == [] and "GPU" in gpus["explanation"]
        assert by_name["create_gpu_sandbox"][0]["isError"]
        assert by_name["get_sandbox"][0]["isError"]  # an unknown id
        assert by_name["create_sandbox"][0]["isError"]
        assert "unknown_thing" in by_name["create_sandbox"][0]["text"]
        created = by_name["create_sandbox"][1]["structuredContent"]
        assert created["memory_gib"] == 0.5 and created["name"] == "mcp-flow"
        assert by_name["get_sandbox"][1]["structuredContent"]["ready"] is True
        listed = by_name["list_sandboxes"][0]["structuredContent"]["sandboxes"]
        assert [s["sandbox_id"] for s in listed] == [report["sandbox_id"]]
        cmd = by_name["run_command"][0]["structuredContent"]
        assert (cmd["done"], cmd["exit_code"], cmd["stdout"], cmd["stderr"]) == (True, 3, "hello\n", "oops\n")
        first_py = by_name["run_python"][0]["structuredContent"]
        assert first_py["done"] is False and first_py["request_id"]
        assert by_name["get_command_result"], "the long run was never polled"
        py = report["python"]
        assert py["done"] and py["exit_code"] == 0
        assert py["stdout"] == "tick 0\ntick 1\ntick 2\ntick 3\ndone\n"
        assert report["progress"], "no progress notification reached the client"
        note, binary = by_name["read_workspace_file"]
        assert note["structuredContent"]["text"] == "note: caf\u00e9\n"
        assert note["structuredContent"]["bytes"] == len("note: caf\u00e9\n".encode())
        assert binary["isError"] and "text" in binary["text"].lower(), binary["text"]
        apps = [c["structuredContent"]["apps"] for c in by_name["list_public_apps"]]
        exposed = by_name["expose_sandbox_app"][0]["structuredContent"]
        assert apps[0] == [] and [a["app_id"] for a in apps[1]] == [exposed["app_id"]]
        assert exposed["port"] == 8000 and exposed["url"].startswith("https://")
        assert by_name["disable_sandbox_app"][0]["structuredContent"]["removed"] == [exposed["app_id"]]
        assert apps[2] == []
        attached = by_name["attach_sandbox_object_storage"][0]["structuredContent"]
        assert attached["restarted"] is True and attached["ready"] is True, attached
        stopped = by_name["stop_sandbox"][0]["structuredContent"]
        assert (stopped["status"], stopped["workspace"]) == ("hibernated", "discarded")
        assert by_name["get_checkpoint_operation"][0]["structuredContent"]["operation_id"] == stopped["operation_id"]
        assert by_name["get_checkpoint_operation"][0]["structuredContent"]["phase"] == "Completed"
        assert by_name["start_sandbox"][0]["structuredContent"]["status"] in ("provisioning", "running")
        assert by_name["start_sandbox"][0]["structuredContent"]["operation_id"].startswith("op_")
        kept = by_name["delete_sandbox_keep_storage"][0]
        assert not kept["isError"] and kept["structuredContent"]["kept_storage"] is None
        deleted = by_name["delete_sandbox"]
        assert all(not d["isError"] for d in deleted)
        assert deleted[-1]["structuredContent"]["deleted"] is True
        made = by_name["create_persistent_storage"][0]["structuredContent"]
        assert made["name"] == "mcp-flow-data" and made["size_mib"] == 128 and made["encrypted"]
        listed = by_name["list_persistent_storage"][0]["structuredContent"]["storage"]
        assert {v["name"] for v in listed} == {"default", "mcp-flow-data"}
        wrong, right = by_name["delete_persistent_storage"]
        assert wrong["isError"] and "confirm" in wrong["text"]
        assert right["structuredContent"] == {"name": "mcp-flow-data", "deleted": True}
    finally:
        if report.get("sandbox_id"):
            org.api("DELETE", "/v1/sandboxes/" + report["sandbox_id"])


@pytest.mark.parametrize("mode", ["http", "stdio"])
def test_sdk_cancellation_stops_the_command(org, daemon, mode):
    report = sdk(daemon, org, mode, "cancel")
    sid = report["sandbox_id"]
    try:
        assert report["cancelled"] is True, report
        assert report["pingAfterCancel"] == {}
        status, page = org.api("GET", "/v1/sandboxes/%s/commands" % sid)
        assert status == 200
        sleeps = [c for c in page["items"] if "sleep 45" in " ".join(c["argv"])]
        assert len(sleeps) == 1
        # The cancelled call killed its command rather than leaving it to run 45 s.
        deadline = harness.time.monotonic() + 30
        while sleeps[0]["status"] == "running" and harness.time.monotonic() < deadline:
            harness.time.sleep(0.5)
            sleeps = [org.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, sleeps[0]["id"]))[1]]
        assert sleeps[0]["status"] == "killed", sleeps[0]
    finally:
        org.api("DELETE", "/v1/sandboxes/" + sid)


def test_adapt_mcp_writes_only_mcp_messages_on_stdout(org, daemon):
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": LATEST, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_gpu_types", "arguments": {}}},
    ]
    # Valid JSON that is no single message is answered as over HTTP (-32600), not as -32700.
    stdin = "\n".join(json.dumps(m) for m in lines) + "\nnot json\n" + \
        '[{"jsonrpc":"2.0","id":5,"method":"ping"}]\n5\n'
    p = harness.subprocess.run([harness.ADAPT, "mcp", "--url", daemon.url, "--api-key", org.key],
                               input=stdin, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = [json.loads(line) for line in p.stdout.splitlines()]
    assert all(m["jsonrpc"] == "2.0" for m in out)
    by_id = {m["id"]: m for m in out}
    assert by_id[1]["result"]["protocolVersion"] == LATEST
    assert len(by_id[2]["result"]["tools"]) == len(EXPECTED_TOOLS)
    assert "nextCursor" not in by_id[2]["result"]
    assert by_id[3]["result"]["structuredContent"]["gpu_types"] == []
    unanswered = [m for m in out if m["id"] is None]
    assert sorted(m["error"]["code"] for m in unanswered) == [-32700, -32600, -32600], unanswered
    assert any("batches are not supported" in m["error"]["message"] for m in unanswered), out
    assert 5 not in by_id  # the batch's ping is not run
    # Many messages: each call's thread is joined as it ends (a thread per message, never
    # joined, ran the bridge out of threads); a line past 16 MiB is refused, not read whole.
    many = [json.dumps(lines[0]), json.dumps(lines[1])]
    many += [json.dumps({"jsonrpc": "2.0", "id": 100 + i, "method": "ping"}) for i in range(400)]
    stdin = "\n".join(many) + "\n" + "x" * (17 << 20) + "\n" + json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}) + "\n"
    p = harness.subprocess.run([harness.ADAPT, "mcp", "--url", daemon.url, "--api-key", org.key],
                               input=stdin, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    out = [json.loads(line) for line in p.stdout.splitlines()]
    assert sorted(m["id"] for m in out if isinstance(m["id"], int) and m["id"] >= 100) == list(range(100, 500))
    assert any(m["id"] == 9 and "result" in m for m in out), out[-3:]
    (too_long,) = [m for m in out if m["id"] is None]
    assert too_long["error"]["code"] == -32600 and "16 MiB" in too_long["error"]["message"]
    # A wrong key: every request is answered with a JSON-RPC error, logs go to stderr.
    p = harness.subprocess.run([harness.ADAPT, "mcp", "--url", daemon.url, "--api-key", "adapt_wrong"],
                               input=json.dumps(lines[0]) + "\n", capture_output=True, text=True, timeout=120)
    assert p.returncode == 0
    (answer,) = [json.loads(line) for line in p.stdout.splitlines()]
    assert answer["id"] == 1 and answer["error"]
    assert "401" in p.stderr
