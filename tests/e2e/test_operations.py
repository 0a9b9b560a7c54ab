"""Checkpoints and restores as operations (GET /v1/operations/{id}): a stop of a sandbox is a
checkpoint, a start a restore; stop and start answer the operation's id beside the sandbox,
the CLI follows it (`adapt op get`, `adapt sandbox stop --wait`), MCP's
get_checkpoint_operation polls it (through the official SDK client), and the records survive a
restart of adaptd. Another organization's operation is 404."""

import json
import re
import time

from harness import run_command as run
from mcp_support import initialize, rpc, sdk

from test_agent import wait_for_agent

RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
FINISHED = ("Completed", "Failed")


def running_sandbox(client, body):
    sid = client.create(body)["id"]
    client.wait_for_status(sid, "running", 120)
    wait_for_agent(client, sid)
    return sid


def operation(client, op_id, expect=200):
    status, body = client.api("GET", "/v1/operations/" + op_id)
    assert status == expect, (status, body)
    return body


def finished_operation(client, op_id, timeout=120):
    """Polls until the operation is Completed or Failed; its phase only moves forward."""
    order = ["Pending", "Running", "Completed", "Failed"]
    seen = []
    deadline = time.monotonic() + timeout
    while True:
        op = operation(client, op_id)
        if not seen or seen[-1] != op["phase"]:
            seen.append(op["phase"])
        if op["phase"] in FINISHED or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert op["phase"] in FINISHED, op
    assert [order.index(p) for p in seen] == sorted(order.index(p) for p in seen), seen
    return op


def assert_sandbox_operation(op, op_id, kind, sid):
    assert op["id"] == op_id and op["kind"] == kind and op["sandboxId"] == sid, op
    assert op["phase"] in ("Pending", "Running", "Completed", "Failed"), op
    assert RFC3339.match(op["startedAt"]), op
    assert set(op["progress"]) == {"bytes", "totalBytes"}, op
    assert "imageId" not in op, op
    if op["phase"] in FINISHED:
        assert RFC3339.match(op["finishedAt"]) and op["finishedAt"] >= op["startedAt"], op
    else:
        assert op["finishedAt"] is None, op


def test_durable_stop_and_start_are_checkpoint_and_restore_operations(org, daemon):
    sid = running_sandbox(org, {"startupClass": "durable"})
    run(org, sid, command="echo kept > /root/note.txt")
    status, stopped = org.api("POST", "/v1/sandboxes/%s/stop" % sid)
    assert status == 200 and stopped["status"] == "hibernated", (status, stopped)
    assert stopped["hibernation"]["processes"] == "saved", stopped
    op_id = stopped["operationId"]
    assert op_id.startswith("op_"), stopped
    # The stop answers once the checkpoint is on disk: the operation is finished already.
    op = operation(org, op_id)
    assert_sandbox_operation(op, op_id, "checkpoint", sid)
    assert op["phase"] == "Completed" and op["error"] is None, op
    assert op["progress"]["bytes"] > 64 * 1024, op  # a memory image, not an empty file
    assert op["progress"]["totalBytes"] == op["progress"]["bytes"], op

    # Another organization, unknown and malformed ids: 404, as for any resource.
    other = daemon.new_org()
    for client, path in ((other, op_id), (org, "op_doesnotexist0000000"), (org, "nonsense")):
        status, body = client.api("GET", "/v1/operations/" + path)
        assert status == 404 and body["error"]["code"] == "not_found", (path, status, body)

    status, started = org.api("POST", "/v1/sandboxes/%s/start" % sid)
    assert status == 202 and started["status"] in ("provisioning", "running"), (status, started)
    restore_id = started["operationId"]
    assert restore_id.startswith("op_") and restore_id != op_id, started
    first = operation(org, restore_id)
    assert_sandbox_operation(first, restore_id, "restore", sid)
    assert first["progress"]["totalBytes"] == op["progress"]["bytes"], (first, op)
    restored = finished_operation(org, restore_id)
    assert_sandbox_operation(restored, restore_id, "restore", sid)
    assert restored["phase"] == "Completed" and restored["error"] is None, restored
    assert restored["progress"]["bytes"] == restored["progress"]["totalBytes"] > 0, restored
    assert org.get(sid)["status"] == "running"
    wait_for_agent(org, sid)
    assert run(org, sid, command="cat /root/note.txt")["stdout"] == "kept\n"


def test_instant_stop_and_start_are_operations_too(org):
    sid = running_sandbox(org, {})
    status, stopped = org.api("POST", "/v1/sandboxes/%s/stop" % sid)
    assert status == 200, stopped
    op = operation(org, stopped["operationId"])
    assert_sandbox_operation(op, stopped["operationId"], "checkpoint", sid)
    # Nothing to save: the checkpoint is complete with no image.
    assert op["phase"] == "Completed" and op["progress"]["bytes"] == 0, op
    status, started = org.api("POST", "/v1/sandboxes/%s/start" % sid)
    assert status == 202, started
    restored = finished_operation(org, started["operationId"])
    assert restored["phase"] == "Completed" and restored["kind"] == "restore", restored
    # A refused stop or start (409) is no operation.
    status, body = org.api("POST", "/v1/sandboxes/%s/start" % sid)
    assert status == 409 and "operationId" not in body, body


def test_cli_op_get_and_stop_wait(org):
    sid = running_sandbox(org, {"startupClass": "durable"})
    r = org.cli("--json", "sandbox", "stop", "--wait", sid, timeout=180)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["sandbox"]["status"] == "hibernated", out
    op = out["operation"]
    assert op["kind"] == "checkpoint" and op["phase"] == "Completed", op
    r = org.cli("op", "get", op["id"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "%s checkpoint of %s: Completed (%d bytes)\n" % (
        op["id"], sid, op["progress"]["bytes"]), r.stdout
    r = org.cli("--json", "op", "get", op["id"])
    assert r.returncode == 0 and json.loads(r.stdout) == op, (r.stdout, r.stderr)
    r = org.cli("op", "get", "op_doesnotexist0000000")
    assert r.returncode == 1 and "not found" in r.stderr, (r.stdout, r.stderr)
    status, started = org.api("POST", "/v1/sandboxes/%s/start" % sid)
    assert status == 202, started
    r = org.cli("op", "get", "--wait", "120", started["operationId"], timeout=180)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("%s restore of %s: Completed" % (started["operationId"], sid)), r.stdout


def test_operations_survive_a_restart_of_adaptd(fresh_daemon):
    d = fresh_daemon
    sid = d.admin.create({"startupClass": "durable"})["id"]
    d.admin.wait_for_status(sid, "running", 120)
    wait_for_agent(d.admin, sid)
    status, stopped = d.admin.api("POST", "/v1/sandboxes/%s/stop" % sid)
    assert status == 200, stopped
    before = operation(d.admin, stopped["operationId"])
    assert before["phase"] == "Completed", before
    assert d.stop() == 0, d.log_tail()
    d.start(port=d.port)
    assert operation(d.admin, stopped["operationId"]) == before


def test_mcp_stop_start_and_get_checkpoint_operation_through_the_sdk(org, daemon):
    report = sdk(daemon, org, "http", "checkpoint")
    sid = report["sandbox_id"]
    try:
        calls = report["calls"]
        for c in calls:
            if not c["isError"]:
                assert c["schemaValid"], (c["name"], c["schemaErrors"])
        by_name = {}
        for c in calls:
            by_name.setdefault(c["name"], []).append(c)
        stopped = by_name["stop_sandbox"][0]["structuredContent"]
        assert (stopped["status"], stopped["processes"]) == ("hibernated", "saved"), stopped
        polls = by_name["get_checkpoint_operation"]
        unknown = polls[0]
        assert unknown["isError"] and "not found" in unknown["text"], unknown
        checkpoint = [p["structuredContent"] for p in polls[1:]
                      if p["structuredContent"]["operation_id"] == stopped["operation_id"]]
        assert checkpoint[-1]["kind"] == "checkpoint" and checkpoint[-1]["phase"] == "Completed"
        assert checkpoint[-1]["sandbox_id"] == sid and checkpoint[-1]["error"] is None
        assert checkpoint[-1]["progress_bytes"] > 0, checkpoint[-1]
        started = by_name["start_sandbox"][0]["structuredContent"]
        assert started["operation_id"].startswith("op_") and started["sandbox_id"] == sid, started
        restore = [p["structuredContent"] for p in polls[1:]
                   if p["structuredContent"]["operation_id"] == started["operation_id"]]
        assert restore and restore[-1]["kind"] == "restore", restore
        assert restore[-1]["phase"] == "Completed", restore
        assert [p["phase"] for p in restore] == sorted(
            (p["phase"] for p in restore), key=["Pending", "Running", "Completed"].index)
        assert by_name["wait_for_sandbox"][-1]["structuredContent"]["ready"] is True
        # Another organization's client cannot read them.
        other = daemon.new_org()
        status, body = other.api("GET", "/v1/operations/" + started["operation_id"])
        assert status == 404, (status, body)
    finally:
        org.api("DELETE", "/v1/sandboxes/" + sid)


def test_mcp_get_checkpoint_operation_refuses_other_tenants_images_and_bad_ids(org, daemon):
    sid = running_sandbox(org, {})
    status, stopped = org.api("POST", "/v1/sandboxes/%s/stop" % sid)
    assert status == 200, stopped
    other = daemon.new_org()
    session, _ = initialize(daemon, other.key)
    for op_id in (stopped["operationId"], "op_doesnotexist0000000", "../../etc/passwd"):
        answer = rpc(daemon, other.key, session, "tools/call",
                     {"name": "get_checkpoint_operation", "arguments": {"operation_id": op_id}})
        result = answer["result"]
        assert result["isError"] is True and "not found" in result["content"][0]["text"], (op_id, result)
    answer = rpc(daemon, other.key, session, "tools/call",
                 {"name": "get_checkpoint_operation", "arguments": {"operation_id": "x" * 65}})
    assert answer.get("error") or answer["result"]["isError"], answer
    # Its own organization reads it.
    session, _ = initialize(daemon, org.key)
    answer = rpc(daemon, org.key, session, "tools/call",
                 {"name": "get_checkpoint_operation", "arguments": {"operation_id": stopped["operationId"]}})
    assert answer["result"]["structuredContent"]["phase"] == "Completed", answer
