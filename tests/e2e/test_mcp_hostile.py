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
from test_openapi_hostile import bad_values, sandbox_and_volume, snapshot


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
