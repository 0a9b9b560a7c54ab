"""Every JSON request body in docs/openapi.yaml, attacked from its own schema.

For each operation with a JSON body, the walk derives hostile bodies from the schema: each
property (and each property of a nested object or map) given a value of every wrong type,
one past its bounds, an over-long or empty string, an unknown enum value, too many items,
numbers no integer holds, strings with NUL, invalid UTF-8 and lone surrogates; unknown
properties; and whole bodies that are not objects, cut short, nested 100,000 deep or past the
body limit. Each is sent to a real resource of the caller (its running sandbox, its volume,
its user) so that the body is what is judged.

Every answer must be a 4xx in the error format of API.md, adaptd must still serve, and
nothing may have changed: the caller's sandboxes, volumes, secrets, keys, images, jobs,
automations, apps, sites, storage tokens, organizations, users, endpoints and commands list
exactly as before ("Bad input gets a clear error and changes nothing").
"""

import json
import time

from harness import unique
from test_openapi import assert_matches, operations, resolve, schema, spec  # noqa: F401

WRONG = {
    "string": [123, True, {}, []],
    "integer": ["1", 1.5, True, {}, []],
    "number": ["1", True, {}, []],
    "boolean": ["true", 1, {}, []],
    "array": ["x", 1, {}],
    "object": ["x", 1, []],
}
# Numbers no field holds, and strings no field should take, sent as raw JSON text.
RAW_VALUES = ["1e999", "-1e999", "18446744073709551616", "-9223372036854775809", "1e-999",
              '"\\u0000"', '"a\\u0000b"', '"\\ud800"',
              # invalid UTF-8, and a surrogate encoded as UTF-8 (bytes, see encode())
              '"\udcff\udcfe"', '"\udced\udca0\udc80"']
# Whole bodies that are not a JSON object of the request.
# (An empty body is `{}` where the spec says the body is not required; a byte order mark
# before the object is allowed by RFC 8259, and ignored.)
RAW_BODIES = ["[]", '"x"', "1", "null", "true", "{", '{"a":', "{} {}", "{}x",
              "[" * 100000 + "]" * 100000, '{"a":' * 100000 + "1" + "}" * 100000,
              '{"a":"' + "x" * (2 << 20) + '"}']
SKIP_OPERATIONS = {("POST", "/mcp")}  # JSON-RPC: fuzz_json_entry_points and test_mcp*.py


def encode(raw):
    """The body's bytes: a lone \\udcXX stands for the byte XX, so bodies can be invalid UTF-8."""
    return raw.encode("utf-8", "surrogateescape")


def bad_values(spec, sch):
    """Hostile values for one property of schema `sch` (resolved), as Python values."""
    sch = resolve(spec, sch)
    t = sch.get("type")
    out = list(WRONG.get(t, []))
    if not sch.get("nullable"):
        out.append(None)
    if t in ("integer", "number"):
        if "minimum" in sch:
            out.append(sch["minimum"] - 1)
        if "maximum" in sch:
            out.append(sch["maximum"] + 1)
        out += [2 ** 63, -(2 ** 63) - 1, 2 ** 64]
    if t == "string":
        if "maxLength" in sch:
            out.append("x" * (sch["maxLength"] + 1))
        if sch.get("minLength", 0) > 0:
            out.append("")
        if "enum" in sch:
            out.append("not-" + str(sch["enum"][0]))
    if t == "array":
        items = resolve(spec, sch.get("items", {}))
        out.append([v for v in WRONG.get(items.get("type"), [])[:1]])
        if "maxItems" in sch:
            good = "a" if items.get("type") == "string" else 1 if items.get("type") == "integer" else {}
            out.append([good] * (sch["maxItems"] + 1))
        out.append([None] * 100000)
    return out


def hostile_bodies(spec, body_schema, required):
    """(description, raw JSON text) pairs for one request body schema; `required`: the
    operation's body is (so an empty one is refused too)."""
    sch = resolve(spec, body_schema)
    props = sch.get("properties", {})
    out = []
    for name, prop in props.items():
        prop = resolve(spec, prop)
        if "Ignored" in prop.get("description", ""):
            continue  # a plan's updatedAt: any string is as good as another
        for value in bad_values(spec, prop):
            out.append(("%s=%.60r" % (name, value), json.dumps({name: value})))
        for raw in RAW_VALUES:
            out.append(("%s=%s" % (name, raw[:20]), '{"%s":%s}' % (name, raw)))
        if prop.get("type") != "object":
            continue
        # One level down: each property of a nested object, or each value of a map.
        for sub, subschema in resolve(spec, prop).get("properties", {}).items():
            for value in bad_values(spec, subschema):
                out.append(("%s.%s=%.60r" % (name, sub, value), json.dumps({name: {sub: value}})))
        extra = prop.get("additionalProperties")
        if isinstance(extra, dict):
            for value in bad_values(spec, extra):
                out.append(("%s.K=%.60r" % (name, value), json.dumps({name: {"K": value}})))
            out.append(("%s: 10,000 keys" % name,
                        json.dumps({name: {"K%d" % i: "v" for i in range(10000)}})))
        if prop.get("additionalProperties") is False:
            out.append(("%s.unknown" % name, json.dumps({name: {"zzUnknown": 1}})))
    if sch.get("additionalProperties") is False:
        out.append(("unknown property", json.dumps({"zzUnknown": 1})))
        out.append(("10,000 unknown properties", json.dumps({"z%d" % i: 1 for i in range(10000)})))
    for raw in RAW_BODIES:
        out.append(("body %.30r (%d bytes)" % (raw, len(raw)), raw))
    if required:
        out += [("an empty body", ""), ("a body of white space", " \t\r\n")]
    return out


COLLECTIONS = ["/v1/sandboxes", "/v1/storage", "/v1/secrets", "/v1/keys", "/v1/images",
               "/v1/jobs", "/v1/automations", "/v1/apps", "/v1/sites", "/v1/storage-tokens",
               "/v1/orgs", "/v1/users", "/v1/endpoints", "/v1/checkpoints"]


def snapshot(client, sandbox_id):
    """What the caller has, as JSON text per collection (volatile fields left out)."""
    out = {}
    for path in COLLECTIONS + ["/v1/sandboxes/%s/commands" % sandbox_id,
                               "/v1/sandboxes/%s/endpoints" % sandbox_id]:
        status, body = client.api("GET", path)
        assert status in (200, 403), (path, status, body)  # 403: admin only
        out[path] = (status, json.dumps(ids_of(body), sort_keys=True))
    status, sbx = client.api("GET", "/v1/sandboxes/" + sandbox_id)
    out["sandbox"] = (sbx["status"], json.dumps(sbx.get("labels"), sort_keys=True))
    return out


def ids_of(body):
    """The identities in a list answer: each item's id or name, whatever the list is called."""
    if isinstance(body, dict):
        lists = [v for v in body.values() if isinstance(v, list)]
        return sorted(str(item.get("id") or item.get("name") or item) if isinstance(item, dict)
                      else str(item) for items in lists for item in items)
    return body


def sandbox_and_volume(client):
    """A running sandbox and a volume of the caller's: real resources to aim at."""
    sandbox = client.create({"labels": {"name": unique("hostile")}})
    client.wait_for_status(sandbox["id"], "running", 120)
    status, volume = client.api("POST", "/v1/storage", {"name": unique("hostile"), "sizeMiB": 64})
    assert status == 201, volume
    return sandbox, volume


def test_hostile_bodies_for_every_json_operation_are_4xx_and_change_nothing(spec, fresh_daemon):
    admin = fresh_daemon.admin
    sandbox, volume = sandbox_and_volume(admin)
    status, org = admin.api("POST", "/v1/orgs", {"name": unique("hostile")})
    assert status == 201, org
    status, user = admin.api("POST", "/v1/orgs/%s/users" % org["id"],
                             {"email": unique("hostile") + "@example.com"})
    assert status == 201, user
    status, plan = admin.api("PUT", "/v1/plans/hostile", {"limits": {"cpu": 64}})
    assert status == 200, plan
    params = {"{id}": None, "{name}": volume["name"]}
    by_prefix = [("/v1/sandboxes/{id}", sandbox["id"]), ("/v1/orgs/{id}", org["id"]),
                 ("/v1/users/{id}", user["id"]), ("/v1/plans/{id}", "hostile"),
                 ("/v1/apps/{id}", "app_" + "0" * 20)]
    before = snapshot(admin, sandbox["id"])
    error_schema = schema(spec, "Error")
    sent, problems = 0, []
    for method, path, op in operations(spec):
        if (method, path) in SKIP_OPERATIONS or "requestBody" not in op:
            continue
        content = resolve(spec, op["requestBody"]).get("content", {})
        if "application/json" not in content:
            continue
        concrete = path.replace("{name}", params["{name}"])
        for prefix, value in by_prefix:
            if concrete.startswith(prefix):
                concrete = concrete.replace("{id}", value, 1)
        assert "{" not in concrete, "no value for the parameters of %s" % path
        required = resolve(spec, op["requestBody"]).get("required") is True
        for what, raw in hostile_bodies(spec, content["application/json"]["schema"], required):
            status, body, payload, _ = admin.request(method, concrete, raw=encode(raw))
            sent += 1
            line = "%s %s [%s] -> %s %.200r" % (method, path, what, status, payload)
            if not 400 <= status < 500 or status == 401:
                problems.append(line)
                continue
            if body is None:
                problems.append(line + " (not JSON)")
                continue
            try:
                if path.startswith("/oauth/") and "error_description" in body:
                    # OAuth's own error shape (RFC 6749 5.2)
                    assert isinstance(body.get("error"), str), body
                    assert isinstance(body.get("error_description"), str), body
                    continue
                assert_matches(spec, error_schema, body)
            except AssertionError as e:
                problems.append(line + " (%s)" % e)
        assert fresh_daemon.proc.poll() is None, "adaptd exited during %s %s:\n%s" % (
            method, path, fresh_daemon.log_tail())
    status, _ = admin.api("GET", "/healthz")
    assert status == 200
    assert not problems, "%d of %d hostile bodies were not refused well:\n%s" % (
        len(problems), sent, "\n".join(problems[:2000]))
    assert snapshot(admin, sandbox["id"]) == before
    assert sent > 1500, sent


# --- another organization's ids -------------------------------------------------------------

# Valid bodies, so that what decides the answer is whose the id is.
FOREIGN_BODIES = {
    ("POST", "/v1/sandboxes/{id}/commands"): {"argv": ["true"]},
    ("POST", "/v1/sandboxes/{id}/python"): {"code": "print(1)"},
    ("POST", "/v1/sandboxes/{id}/endpoints"): {"port": 8001},
    ("POST", "/v1/sandboxes/{id}/files/mkdir"): {"path": "/tmp/foreign"},
    ("POST", "/v1/sandboxes/{id}/image"): {"name": "foreign"},
    ("POST", "/v1/sandboxes/{id}/checkpoints"): {"name": "foreign"},
    ("POST", "/v1/sandboxes/{id}/artifacts"): {"path": "/workspace/report.txt"},
    ("POST", "/v1/orgs/{id}/keys"): {"name": "foreign"},
    ("POST", "/v1/orgs/{id}/users"): {"email": "foreign@example.com"},
    ("PUT", "/v1/users/{id}/password"): {"password": "a foreign password here"},
    ("POST", "/v1/apps/{id}/scale"): {"replicas": 0},
    ("PUT", "/v1/orgs/{id}/plan"): {"planId": "default"},
    ("POST", "/v1/orgs/{id}/credits"): {"amountNanos": 1, "reason": "foreign"},
}
FOREIGN_QUERIES = {"/v1/sandboxes/{id}/files": "?path=/etc/hostname",
                   "/v1/sandboxes/{id}/archive": "?path=/etc/hostname",
                   "/v1/sandboxes/{id}/endpoints": "?port=8000"}


def job_automation_and_run(client, sandbox_id):
    """A job of the caller's, an automation on its sandbox, and the job's run id: (job,
    automation, run id)."""
    status, job = client.api("POST", "/v1/jobs", {"command": "true", "network": {"egress": "none"}})
    assert status in (201, 202), job
    status, automation = client.api("POST", "/v1/automations", {
        "sandboxId": sandbox_id, "command": "true", "intervalSeconds": 3600})
    assert status == 201, automation
    # The job's sandbox is deleted once its run is recorded: wait for that, so a snapshot of
    # the caller's sandboxes taken after this does not change under the test.
    deadline = time.time() + 120
    while True:
        status, runs = client.api("GET", "/v1/runs?jobId=" + job["id"])
        assert status == 200, runs
        run = runs["items"][0] if runs["items"] else None
        if run and run["status"] in ("succeeded", "failed", "cancelled", "infrastructure_failed"):
            status, listed = client.api("GET", "/v1/sandboxes")
            assert status == 200, listed
            if run.get("sandboxId") not in ids_of(listed):
                return job, automation, run["id"]
        assert time.time() < deadline, (runs, client.api("GET", "/v1/sandboxes"))
        time.sleep(0.2)


def other_id(real):
    """An id of the same shape as `real` that names nothing."""
    head, _, tail = real.rpartition("_")
    return (head + "_" if head else "") + ("z" * len(tail) if tail != "z" * len(tail) else "y" * len(tail))


def test_another_organizations_ids_answer_as_ids_that_do_not_exist_and_change_nothing(spec, daemon):
    victim, attacker = daemon.new_org(), daemon.new_org()
    sandbox = victim.create({"labels": {"name": unique("victim")}})
    victim.wait_for_status(sandbox["id"], "running", 120)
    status, command = victim.api("POST", "/v1/sandboxes/%s/commands" % sandbox["id"], {"argv": ["true"]})
    assert status == 200, command
    status, endpoint = victim.api("POST", "/v1/sandboxes/%s/endpoints" % sandbox["id"], {"port": 8000})
    assert status == 201, endpoint
    status, image = victim.api("POST", "/v1/images", {"reference": "127.0.0.1:9/victim/image:1"})
    assert status == 202, image
    status, secret = victim.api("POST", "/v1/secrets", {"name": "VICTIM_SECRET", "value": "kept"})
    assert status in (200, 201), secret
    status, volume = victim.api("POST", "/v1/storage", {"name": unique("victim"), "sizeMiB": 64})
    assert status == 201, volume
    status, token = victim.api("POST", "/v1/storage-tokens", {"name": "victim"})
    assert status == 201, token
    status, key = victim.api("POST", "/v1/keys", {"name": "victim"})
    assert status == 201, key
    job, automation, run_id = job_automation_and_run(victim, sandbox["id"])
    ids = {"/v1/sandboxes/{id}": sandbox["id"], "/v1/images/{id}": image["id"],
           "/v1/operations/{id}": image["id"], "/v1/jobs/{id}": job["id"],
           "/v1/automations/{id}": automation["id"], "/v1/runs/{id}": run_id,
           "/v1/storage-tokens/{id}": token["id"], "/v1/keys/{id}": key["id"],
           "/v1/orgs/{id}": victim.org_id, "/v1/apps/{id}": "app_" + "a" * 20,
           "/v1/sites/{id}": "site_" + "a" * 20, "/v1/users/{id}": "usr_" + "a" * 20,
           "/v1/plans/{id}": "default"}
    names = {"/v1/secrets/{name}": "VICTIM_SECRET", "/v1/storage/{name}": volume["name"]}
    before = snapshot(victim, sandbox["id"])
    compared, problems = 0, []
    ops = sorted(operations(spec), key=lambda o: o[0] == "DELETE")
    for method, path, op in ops:
        prefix = next((p for p in list(ids) + list(names) if path.startswith(p)), None)
        if prefix is None or method in ("HEAD", "OPTIONS"):
            continue
        real = ids.get(prefix) or names[prefix]
        answers = []
        for value in (real, other_id(real)):
            concrete = path.replace("{id}" if "{id}" in prefix else "{name}", value, 1)
            concrete = concrete.replace("{cid}", command["id"]).replace("{eid}", endpoint["id"])
            concrete = concrete.replace("{keyId}", key["id"]).replace("{name}", "foreign")
            concrete += FOREIGN_QUERIES.get(path, "")
            body = FOREIGN_BODIES.get((method, path), {} if method in ("POST", "PUT") else None)
            status, parsed, payload, _ = attacker.request(method, concrete, body=body, timeout=20)
            code = (parsed or {}).get("error", {}).get("code") if isinstance(parsed, dict) else None
            answers.append((status, code))
        compared += 1
        line = "%s %s: %r for the other organization's, %r for none" % (method, path, answers[0], answers[1])
        if answers[0] != answers[1] or answers[0][0] < 400 or answers[0][0] >= 500:
            problems.append(line)
    assert daemon.proc.poll() is None, daemon.log_tail()
    assert not problems, "\n".join(problems)
    assert compared > 60, compared
    assert snapshot(victim, sandbox["id"]) == before
    assert victim.get(sandbox["id"])["status"] == "running"
    status, kept = victim.api("GET", "/v1/secrets/VICTIM_SECRET")
    assert status == 200, kept


# --- query parameters ------------------------------------------------------------------------

QUERY_VALUES = ["", "-1", "0", "99999999999999999999", "1e3", "0x10", "%205", "5%20", "abc", "%00",
                "a%00b", "%ff%fe", "%ed%a0%80", "..%2F..%2F..%2Fetc%2Fpasswd", "%0d%0aX-A:%20b",
                "x" * 5000]


def test_hostile_query_parameters_are_never_a_server_error_and_change_nothing(spec, fresh_daemon):
    admin = fresh_daemon.admin
    sandbox, volume = sandbox_and_volume(admin)
    before = snapshot(admin, sandbox["id"])
    error_schema = schema(spec, "Error")
    sent, problems = 0, []
    for method, path, op in operations(spec):
        params = [resolve(spec, p) for p in op.get("parameters", []) + spec["paths"][path].get("parameters", [])]
        query = [(p["name"], resolve(spec, p.get("schema", {}))) for p in params if p.get("in") == "query"]
        if not query or method == "HEAD":
            continue
        concrete = path.replace("{id}", sandbox["id"]).replace("{name}", volume["name"])
        for name, sch in query:
            values = list(QUERY_VALUES)
            if sch.get("type") == "integer":
                values += [str(sch["minimum"] - 1)] if "minimum" in sch else []
                values += [str(sch["maximum"] + 1)] if "maximum" in sch else []
            if "maxLength" in sch:
                values.append("y" * (sch["maxLength"] + 1))
            for value in values:
                # A PUT's body is empty: only the query is judged (an empty file or archive is
                # what a valid path would get, and none of these paths is valid).
                raw = b"" if method in ("PUT", "POST") else None
                status, body, payload, _ = admin.request(
                    method, "%s?%s=%s" % (concrete, name, value), raw=raw, timeout=20)
                sent += 1
                line = "%s %s?%s=%.40s -> %s %.200r" % (method, path, name, value, status, payload)
                if status >= 500:
                    problems.append(line)
                elif status >= 400 and not path.startswith("/v1/objects/download"):
                    try:
                        assert_matches(spec, error_schema, body)
                    except AssertionError as e:
                        problems.append(line + " (%s)" % e)
                # A number a field cannot hold is refused, never taken as some other number.
                integer = sch.get("type") == "integer"
                bad_int = value not in ("",) and (not value.lstrip("-").isdigit() or not (
                    sch.get("minimum", -2 ** 63) <= int(value) <= sch.get("maximum", 2 ** 63 - 1)))
                if integer and bad_int and status < 400:
                    problems.append(line + " (an integer it cannot be was taken)")
        assert fresh_daemon.proc.poll() is None, "adaptd exited during %s %s:\n%s" % (
            method, path, fresh_daemon.log_tail())
    assert not problems, "%d of %d hostile queries were answered badly:\n%s" % (
        len(problems), sent, "\n".join(problems[:80]))
    after = snapshot(admin, sandbox["id"])
    assert after == before
    assert sent > 300, sent
