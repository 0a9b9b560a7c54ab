"""Every MCP tool's arguments, attacked from its own inputSchema (as test_openapi_hostile.py
does for REST bodies).

For each tool that tools/list answers, the walk sends the caller's real running sandbox as
`sandbox_id` (where the tool takes one) beside one hostile argument: every wrong type, null
where the schema does not allow it, one past each bound, 2^63 and 2^64, an over-long or empty
string, an unknown enum value, too many items; an argument the schema does not name; and
`arguments` that are not an object. Every answer must be a refusal (a JSON-RPC error or a
result with isError), adaptd must still serve, and nothing may change: a destructive tool
(delete_sandbox, stop_sandbox, ...) called with the real id and one bad argument must leave
the sandbox as it was.
"""

import json

from mcp_support import initialize, rpc
from test_openapi_hostile import (bad_values, job_automation_and_run, other_id, sandbox_and_volume,
                                  snapshot)


def tool_list(daemon, key, session):
    tools, cursor = [], None
    while True:
        answer = rpc(daemon, key, session, "tools/list", {"cursor": cursor} if cursor else {})
        tools += answer["result"]["tools"]
        cursor = answer["result"].get("nextCursor")
        if not cursor:
            return tools


def plain(sch):
    """`sch` with a type list such as ["integer", "null"] taken as its first non-null type,
    and nullable where null was in it."""
    sch = dict(sch)
    t = sch.get("type")
    if isinstance(t, list):
        kinds = [k for k in t if k != "null"]
        sch["type"] = kinds[0] if kinds else None
        if "null" in t:
            sch["nullable"] = True
    return sch


def hostile_arguments(schema, base):
    """(description, arguments) pairs: `base` with one property made hostile, or more."""
    out = []
    for name, prop in schema.get("properties", {}).items():
        for value in bad_values(None, plain(prop)):
            out.append(("%s=%.60r" % (name, value), dict(base, **{name: value})))
    if schema.get("additionalProperties") is False:
        out.append(("an unknown argument", dict(base, zzUnknown=1)))
    return out


def test_hostile_arguments_for_every_tool_are_refused_and_change_nothing(org, daemon):
    sandbox, _ = sandbox_and_volume(org)
    session, _ = initialize(daemon, org.key)
    tools = tool_list(daemon, org.key, session)
    assert len(tools) >= 40, [t["name"] for t in tools]
    before = snapshot(org, sandbox["id"])
    sent, problems = 0, []
    for tool in tools:
        schema = tool["inputSchema"]
        base = {"sandbox_id": sandbox["id"]} if "sandbox_id" in schema.get("properties", {}) else {}
        cases = hostile_arguments(schema, base)
        # (null arguments are absent ones, which MCP allows: not hostile)
        cases += [("arguments %r" % (a,), a) for a in ([], "x", 1, True)]
        for what, arguments in cases:
            answer = rpc(daemon, org.key, session, "tools/call",
                         {"name": tool["name"], "arguments": arguments}, id=sent + 10)
            sent += 1
            refused = "error" in answer or answer.get("result", {}).get("isError") is True
            if not refused:
                problems.append("%s [%s] -> %.300s" % (tool["name"], what, json.dumps(answer)))
            elif "result" in answer:
                text = answer["result"]["content"][0]["text"]
                if not text or "structuredContent" in answer["result"]:
                    problems.append("%s [%s]: a refusal without one sentence: %.300s" % (
                        tool["name"], what, json.dumps(answer)))
        assert daemon.proc.poll() is None, "adaptd exited during %s:\n%s" % (tool["name"], daemon.log_tail())
    status, _ = org.api("GET", "/healthz")
    assert status == 200
    assert not problems, "%d of %d hostile calls were not refused:\n%s" % (
        len(problems), sent, "\n".join(problems[:100]))
    assert snapshot(org, sandbox["id"]) == before
    assert org.get(sandbox["id"])["status"] == "running"
    assert sent > 500, sent


# Values for the other required arguments, so that the id is what decides the answer.
PLAIN_ARGUMENTS = {"command": "true", "code": "print(1)", "port": 8000, "workspace_path": "a.txt",
                   "key": "a.txt", "name": "foreign", "start_command": "true",
                   "source_path": "/workspace", "replicas": 0, "enabled": False, "version": 1,
                   "interval_seconds": 3600, "source": "site", "size_gib": 0.125,
                   "email": "foreign@example.com", "accept_terms": True}


def test_another_organizations_ids_answer_as_ids_that_do_not_exist(daemon):
    """Every tool that takes an id, given another organization's real id and an id of the same
    shape that names nothing: the same refusal, word for word but the id (no oracle), and the
    other organization's objects unchanged."""
    victim, attacker = daemon.new_org(), daemon.new_org()
    sandbox, _ = sandbox_and_volume(victim)
    status, command = victim.api("POST", "/v1/sandboxes/%s/commands" % sandbox["id"],
                                 {"argv": ["sleep", "600"], "waitSeconds": 0})
    assert status in (200, 202), command
    job, automation, run_id = job_automation_and_run(victim, sandbox["id"])
    ids = {"sandbox_id": sandbox["id"], "job_id": job["id"], "automation_id": automation["id"],
           "run_id": run_id, "request_id": sandbox["id"] + "/" + command["id"],
           "operation_id": job["id"].replace("job_", "op_"), "app_id": "app_" + "a" * 20}
    session, _ = initialize(daemon, attacker.key)
    before = snapshot(victim, sandbox["id"])
    compared, problems = 0, []
    for tool in tool_list(daemon, attacker.key, session):
        props = tool["inputSchema"].get("properties", {})
        named = [p for p in props if p in ids]
        if not named:
            continue
        args = {p: PLAIN_ARGUMENTS[p] for p in tool["inputSchema"].get("required", [])
                if p in PLAIN_ARGUMENTS}
        for p in named:
            real = ids[p]
            answers, refusals = [], []
            for value in (real, other_id(real.split("/")[-1]) if "/" not in real else
                          real.split("/")[0] + "/" + other_id(real.split("/")[1])):
                call = dict(args, **{q: ids[q] for q in named if q != p})
                call[p] = value
                if "confirm" in props:
                    call["confirm"] = value
                answer = rpc(daemon, attacker.key, session, "tools/call",
                             {"name": tool["name"], "arguments": call}, id=compared + 10)
                refusals.append("error" in answer or answer["result"].get("isError") is True)
                text = json.dumps(answer.get("error") or answer["result"], sort_keys=True)
                for v in (value, value.split("/")[-1]):
                    text = text.replace(v, "<id>")
                answers.append(text)
            compared += 1
            refused = refusals[0]
            # A list filtered by another organization's id lists nothing, as for no id.
            content = json.loads(answers[0]).get("structuredContent") or {}
            empty_list = tool["name"].startswith("list_") and not any(
                v for v in content.values() if isinstance(v, list))
            if answers[0] != answers[1] or not (refused or empty_list):
                problems.append("%s(%s): %.300s | for none: %.300s" % (tool["name"], p, answers[0], answers[1]))
    assert daemon.proc.poll() is None, daemon.log_tail()
    assert not problems, "\n".join(problems)
    assert compared >= 25, compared
    assert snapshot(victim, sandbox["id"]) == before
    assert victim.get(sandbox["id"])["status"] == "running"
