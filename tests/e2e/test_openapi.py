"""docs/openapi.yaml is the REST contract: these tests walk it against a running adaptd.

Every operation in the spec is served, every route the server has is in the spec, and what
the server answers (sandboxes, errors, lists, defaults, limits) has the shapes and numbers the
spec gives.
"""

import http.client
import json
import os
import re

import pytest
import yaml

from harness import REPO, unique

SPEC_PATH = os.path.join(REPO, "docs", "openapi.yaml")
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")

# Every route adaptd registers: each `Add` or `AddPublic` call of src/api (MCP and OAuth, served
# by their own handlers, are in the spec too). A route added there must be in the spec.
ROUTE_CALL = re.compile(r'\bAdd(?:Public)?\(\s*"([A-Z]+)",\s*"(/[^"]*)"')


def served_routes():
    found = set()
    for name in sorted(os.listdir(os.path.join(REPO, "src", "api"))):
        if name.endswith(".cc") and not name.endswith("_test.cc"):
            with open(os.path.join(REPO, "src", "api", name)) as f:
                found |= set(ROUTE_CALL.findall(f.read()))
    return found


@pytest.fixture(scope="module")
def spec():
    with open(SPEC_PATH) as f:
        return yaml.safe_load(f)


def operations(spec):
    """(METHOD, path, operation) for every operation in the spec."""
    for path, item in spec["paths"].items():
        for method in METHODS:
            if method in item:
                yield method.upper(), path, item[method]


def resolve(spec, node):
    while isinstance(node, dict) and "$ref" in node:
        assert node["$ref"].startswith("#/"), node["$ref"]
        target = spec
        for part in node["$ref"][2:].split("/"):
            target = target[part]
        node = target
    return node


def schema(spec, name):
    return spec["components"]["schemas"][name]


# --- a small validator for the OpenAPI 3.0 schema subset the spec uses ---------------------

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}


def violations(spec, sch, value, where="$"):
    """The ways `value` does not match `sch`, as readable strings (empty: it matches)."""
    sch = resolve(spec, sch)
    if value is None:
        return [] if sch.get("nullable") else ["%s: null is not allowed" % where]
    out = []
    t = sch.get("type")
    if t and not TYPES[t](value):
        return ["%s: %r is not of type %s" % (where, value, t)]
    if "enum" in sch and value not in sch["enum"]:
        out.append("%s: %r is not one of %r" % (where, value, sch["enum"]))
    if isinstance(value, str):
        if len(value) < sch.get("minLength", 0) or len(value) > sch.get("maxLength", float("inf")):
            out.append("%s: length %d out of range" % (where, len(value)))
        if "pattern" in sch and not re.search(sch["pattern"], value):
            out.append("%s: %r does not match %s" % (where, value, sch["pattern"]))
    if TYPES["number"](value):
        if value < sch.get("minimum", float("-inf")) or value > sch.get("maximum", float("inf")):
            out.append("%s: %r out of range" % (where, value))
    if isinstance(value, list):
        if len(value) < sch.get("minItems", 0) or len(value) > sch.get("maxItems", float("inf")):
            out.append("%s: %d items out of range" % (where, len(value)))
        for i, item in enumerate(value):
            out += violations(spec, sch.get("items", {}), item, "%s[%d]" % (where, i))
    if isinstance(value, dict):
        for key in sch.get("required", []):
            if key not in value:
                out.append("%s: required property %r is missing" % (where, key))
        props = sch.get("properties", {})
        extra = sch.get("additionalProperties", True)
        for key, v in value.items():
            if key in props:
                out += violations(spec, props[key], v, "%s.%s" % (where, key))
            elif extra is False:
                out.append("%s: property %r is not in the schema" % (where, key))
            elif isinstance(extra, dict):
                out += violations(spec, extra, v, "%s.%s" % (where, key))
    return out


def assert_matches(spec, sch, value):
    problems = violations(spec, sch, value)
    assert not problems, "%s\nin %r" % ("\n".join(problems), value)


def response_schema(spec, op, status):
    """The JSON schema the spec gives for `status` of `op`, or None."""
    resp = resolve(spec, op["responses"].get(str(status), {}))
    content = resp.get("content", {}).get("application/json")
    return content.get("schema") if content else None


# --- the spec and the server's route table agree ------------------------------------------


def test_spec_is_openapi_3_0_3_with_bearer_auth(spec):
    assert spec["openapi"] == "3.0.3"
    bearer = spec["components"]["securitySchemes"]["bearerAuth"]
    assert (bearer["type"], bearer["scheme"]) == ("http", "bearer")
    assert spec["security"] == [{"bearerAuth": []}]


def test_every_route_the_server_serves_is_in_the_spec(spec):
    documented = {(m, p) for m, p, _ in operations(spec)}
    served = served_routes()
    # The scan finds the routes it should (a call written another way would escape it).
    assert len(served) > 100 and {("POST", "/v1/sandboxes"), ("GET", "/v1/billing"),
                                  ("GET", "/healthz")} <= served, sorted(served)
    missing = served - documented
    assert not missing, "served but not in docs/openapi.yaml: %s" % sorted(missing)


def test_create_sandbox_documents_the_idempotency_key_header(spec):
    op = spec["paths"]["/v1/sandboxes"]["post"]
    headers = [resolve(spec, p) for p in op.get("parameters", [])]
    assert any(p["in"] == "header" and p["name"] == "Idempotency-Key" for p in headers)


def _open(client, method, path, body):
    """Sends one request and reads only the status and headers (event streams never end)."""
    conn = http.client.HTTPConnection("127.0.0.1", client.daemon.port, timeout=60)
    hdrs = {"Authorization": "Bearer " + client.key}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        hdrs["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=hdrs)
    resp = conn.getresponse()
    return conn, resp


# Operations that need a protocol exchange first (an MCP session, an OAuth consent); the
# MCP tests (test_mcp*.py) walk them.
WALKED_ELSEWHERE = {
    ("POST", "/mcp"),
    ("DELETE", "/mcp"),
    ("GET", "/oauth/authorize"),
    ("POST", "/oauth/authorize"),
    ("POST", "/oauth/token"),
    ("POST", "/v1/images/import"),  # needs an image archive: tests/e2e/test_images_import.py
    # {name} here is a storage name, not a secret name: tests/e2e/test_secrets.py walks them.
    ("GET", "/v1/secrets/{name}"),
    ("DELETE", "/v1/secrets/{name}"),
}
# Object storage and sites need objects, keys and signatures made first: test_objects.py and
# test_sites.py walk them (with their error answers).
WALKED_ELSEWHERE |= {
    ("GET", "/v1/objects"), ("PUT", "/v1/objects/content"), ("GET", "/v1/objects/content"),
    ("HEAD", "/v1/objects/content"), ("DELETE", "/v1/objects/content"), ("POST", "/v1/objects/url"),
    ("GET", "/v1/objects/download"), ("POST", "/v1/storage-tokens"), ("GET", "/v1/storage-tokens"),
    ("DELETE", "/v1/storage-tokens/{id}"), ("POST", "/v1/sandboxes/{id}/object-storage"),
    ("GET", "/v1/sandboxes/{id}/artifacts"), ("POST", "/v1/sandboxes/{id}/artifacts"),
    ("POST", "/v1/sites"), ("GET", "/v1/sites"), ("GET", "/v1/sites/{id}"), ("DELETE", "/v1/sites/{id}"),
}
# Apps need a source sandbox with files and a deploy that starts replicas: test_apps.py,
# test_apps_readiness.py and test_apps_operations.py (a deploy's and a rollback's 202 operation,
# secrets) walk them against the spec.
WALKED_ELSEWHERE |= {
    ("POST", "/v1/apps"), ("GET", "/v1/apps"), ("GET", "/v1/apps/{id}"), ("DELETE", "/v1/apps/{id}"),
    ("POST", "/v1/apps/{id}/scale"), ("GET", "/v1/apps/{id}/releases"),
    ("POST", "/v1/apps/{id}/rollback"), ("GET", "/v1/apps/{id}/logs"),
}
# Jobs need a queued job, an ended one and a run: test_jobs.py walks them against the spec.
WALKED_ELSEWHERE |= {
    ("POST", "/v1/jobs"), ("GET", "/v1/jobs"), ("GET", "/v1/jobs/{id}"), ("DELETE", "/v1/jobs/{id}"),
    ("POST", "/v1/jobs/{id}/cancel"), ("GET", "/v1/runs"), ("GET", "/v1/runs/{id}"),
    ("POST", "/v1/runs/{id}/cancel"),
}
# A storage file needs a durable sandbox to write it: test_storage_files.py walks the route
# against the spec.
WALKED_ELSEWHERE |= {("GET", "/v1/storage/{name}/files")}
# Named checkpoints need a running durable sandbox: test_named_checkpoints.py walks them against
# the spec.
WALKED_ELSEWHERE |= {
    ("POST", "/v1/sandboxes/{id}/checkpoints"), ("GET", "/v1/sandboxes/{id}/checkpoints"),
    ("DELETE", "/v1/sandboxes/{id}/checkpoints/{name}"),
    ("POST", "/v1/sandboxes/{id}/checkpoints/{name}/restore"),
}
# The startup stream needs a sandbox with a startup command (the walk's is interactive: 409):
# test_startup_stream.py walks it against the spec.
WALKED_ELSEWHERE |= {("GET", "/v1/sandboxes/{id}/startup/stream")}
# Deleting the walk's organization would end the walk's own calls on it (its keys, its users):
# test_org_delete.py walks it against the spec.
WALKED_ELSEWHERE |= {("DELETE", "/v1/orgs/{id}")}
# Automations need a running sandbox of the caller: test_automations.py walks them against the
# spec.
WALKED_ELSEWHERE |= {
    ("POST", "/v1/automations"), ("GET", "/v1/automations"), ("GET", "/v1/automations/{id}"),
    ("DELETE", "/v1/automations/{id}"), ("POST", "/v1/automations/{id}/enable"),
    ("POST", "/v1/automations/{id}/disable"), ("POST", "/v1/automations/{id}/trigger"),
}


def test_every_operation_in_the_spec_is_served(spec, daemon, admin):
    sandbox = admin.create({"labels": {"name": unique("openapi-walk")}})
    status, org = admin.api("POST", "/v1/orgs", {"name": unique("openapi")})
    assert status == 201, org
    status, key = admin.api("POST", "/v1/orgs/%s/keys" % org["id"], {"name": "to-delete"})
    assert status == 201, key
    status, own_key = admin.api("POST", "/v1/keys", {"name": "to-revoke"})
    assert status == 201, own_key
    # An image pull from a registry that is not there: a real id whose pull fails soon.
    status, image = admin.api("POST", "/v1/images", {"reference": "127.0.0.1:9/openapi/walk:1"})
    assert status == 202, image
    # Two users, so that deleting one does not leave the organization without any.
    users = []
    for _ in range(2):
        status, user = admin.api("POST", "/v1/orgs/%s/users" % org["id"],
                                 {"email": unique("walk") + "@example.com"})
        assert status == 201, user
        users.append(user)
    params = {"/v1/orgs/{id}": org["id"], "/v1/sandboxes/{id}": sandbox["id"],
              "/v1/users/{id}": users[0]["id"], "/v1/keys/{id}": own_key["id"],
              "/v1/plans/{id}": "openapi-walk",
              "/v1/images/{id}": image["id"], "/v1/operations/{id}": image["id"]}
    status, plan = admin.api("PUT", "/v1/plans/openapi-walk", {"limits": {"cpu": 64}})
    assert status == 200, plan
    storage = unique("openapi")
    status, volume = admin.api("POST", "/v1/storage", {"name": storage, "sizeMiB": 64})
    assert status == 201, volume
    admin.wait_for_status(sandbox["id"], "running", 60)
    status, command = admin.api("POST", "/v1/sandboxes/%s/commands" % sandbox["id"], {"argv": ["true"]})
    assert status == 200, command
    status, endpoint = admin.api("POST", "/v1/sandboxes/%s/endpoints" % sandbox["id"], {"port": 8000})
    assert status == 201, endpoint
    bodies = {
        ("POST", "/v1/sandboxes/{id}/commands"): {"argv": ["true"]},
        ("POST", "/v1/sandboxes/{id}/python"): {"code": "print(1)"},
        ("POST", "/v1/sandboxes/{id}/endpoints"): {"port": 8001},
        ("POST", "/v1/orgs"): {"name": unique("openapi")},
        ("POST", "/v1/orgs/{id}/keys"): {"name": "openapi", "ttlSeconds": 3600},
        ("POST", "/v1/keys"): {"name": "openapi", "ttlSeconds": 3600},
        ("POST", "/v1/orgs/{id}/users"): {"email": unique("openapi") + "@example.com"},
        ("POST", "/v1/sandboxes"): {"labels": {"name": unique("openapi-walk")}},
        ("POST", "/v1/sandboxes/{id}/files/mkdir"): {"path": "/tmp/openapi-dir"},
        ("POST", "/oauth/register"): {"redirect_uris": ["http://127.0.0.1:9/cb"]},
        ("POST", "/v1/images"): {"reference": "127.0.0.1:9/openapi/walk:2"},
        ("POST", "/v1/sandboxes/{id}/image"): {"name": "openapi-walk"},
        ("POST", "/v1/storage"): {"name": unique("openapi"), "sizeMiB": 64},
        ("POST", "/v1/secrets"): {"name": "OPENAPI_WALK", "value": "walked"},
        ("PUT", "/v1/plans/{id}"): {"name": "OpenAPI walk", "limits": {"cpu": 64}},
        ("PUT", "/v1/orgs/{id}/plan"): {"planId": "default"},
        ("POST", "/v1/orgs/{id}/credits"): {"amountNanos": 1, "reason": "openapi walk"},
        ("PUT", "/v1/users/{id}/password"): {"password": "an openapi walk password"},
    }
    queries = {
        ("PUT", "/v1/sandboxes/{id}/files"): "?path=/tmp/openapi-file",
        ("GET", "/v1/sandboxes/{id}/files"): "?path=/etc/hostname",
        ("DELETE", "/v1/sandboxes/{id}/files"): "?path=/tmp/openapi-file",
        ("GET", "/v1/sandboxes/{id}/archive"): "?path=/etc/hostname",
        ("PUT", "/v1/sandboxes/{id}/archive"): "?path=/tmp/openapi-tree",
        ("DELETE", "/v1/storage/{name}"): "?confirm=" + storage,
        ("DELETE", "/v1/database"): "?confirm=" + admin.api("GET", "/v1/account")[1]["orgId"],
        ("DELETE", "/v1/sandboxes/{id}/endpoints"): "?port=8001",
    }
    # Deleting last, so the other operations see the sandbox alive.
    ops = sorted(operations(spec), key=lambda o: (o[0] == "DELETE", o[1] == "/v1/sandboxes/{id}"))
    for method, path, op in ops:
        if (method, path) in WALKED_ELSEWHERE:
            continue
        concrete = path
        for prefix, value in params.items():
            if concrete.startswith(prefix):
                concrete = value.join(concrete.split("{id}", 1))
        concrete = concrete.replace("{cid}", command["id"]).replace("{eid}", endpoint["id"])
        concrete = concrete.replace("{keyId}", key["id"])
        concrete = concrete.replace("{name}", storage)
        assert "{" not in concrete, "no value for the parameters of %s" % path
        ok_content = resolve(spec, op["responses"].get("200", {})).get("content", {})
        is_stream = "text/event-stream" in ok_content
        body = bodies.get((method, path), {} if method == "POST" else None)
        conn, resp = _open(admin, method, concrete + queries.get((method, path), ""), body)
        try:
            got = resp.status
            payload = None if is_stream and got == 200 else resp.read()
            ctype = resp.getheader("Content-Type", "")
        finally:
            conn.close()
        parsed = json.loads(payload) if payload and ctype.startswith("application/json") else None
        what = "%s %s -> %s %r" % (method, concrete, got, parsed)
        assert got != 405, what
        assert not (got == 404 and parsed and parsed["error"]["message"].startswith("no such endpoint")), what
        assert str(got) in op["responses"], "undocumented status: " + what
        assert got < 400, "real ids and a valid body should succeed: " + what
        if (method, path) == ("POST", "/v1/sandboxes/{id}/start"):
            admin.wait_for_status(sandbox["id"], "running", 120)  # the later operations need it
        if (method, path) == ("POST", "/v1/sandboxes") and got == 201:
            daemon.created.append((admin, parsed["id"]))
        if is_stream and got == 200:
            assert ctype.startswith("text/event-stream"), what
            continue
        sch = response_schema(spec, op, got)
        if sch is not None and ctype.startswith("application/json"):
            assert parsed is not None, what
            assert_matches(spec, sch, parsed)


# --- what the server answers has the spec's shapes ----------------------------------------


def test_created_sandbox_has_every_required_property_and_the_spec_defaults(spec, daemon, admin):
    sbx = admin.create({})
    sandbox_schema = schema(spec, "Sandbox")
    missing = [k for k in sandbox_schema["required"] if k not in sbx]
    assert not missing, "created sandbox lacks %s: %r" % (missing, sbx)
    assert_matches(spec, sandbox_schema, sbx)
    request = schema(spec, "CreateSandboxRequest")["properties"]
    for field in ("cpu", "memoryMiB", "diskMiB", "ttlSeconds", "image", "securityProfile", "startupClass"):
        assert sbx[field] == request[field]["default"], field
    assert sbx["network"]["egress"] == schema(spec, "NetworkRequest")["properties"]["egress"]["default"]
    assert sbx["startup"] is None


def test_finished_startup_command_matches_the_startup_schema(spec, daemon, admin):
    sbx = admin.run(["sh", "-c", "echo out; echo err >&2"])
    assert sbx["status"] == "completed", sbx
    assert_matches(spec, schema(spec, "Sandbox"), sbx)
    missing = [k for k in schema(spec, "Startup")["required"] if k not in sbx["startup"]]
    assert not missing, "startup lacks %s: %r" % (missing, sbx["startup"])


def test_sandbox_list_matches_the_list_schema(spec, daemon, admin):
    admin.create({"labels": {"name": unique("openapi-list")}})
    status, page = admin.api("GET", "/v1/sandboxes?limit=1")
    assert status == 200, page
    assert_matches(spec, schema(spec, "SandboxList"), page)
    assert len(page["items"]) == 1


def test_integer_limits_in_the_spec_are_the_servers(spec, admin):
    props = schema(spec, "CreateSandboxRequest")["properties"]
    limited = [k for k, p in props.items() if p.get("type") == "integer" and "minimum" in p]
    assert set(limited) >= {"cpu", "memoryMiB", "diskMiB", "ttlSeconds"}
    for field in limited:
        for value in (props[field]["minimum"] - 1, props[field]["maximum"] + 1):
            status, body = admin.api("POST", "/v1/sandboxes", {field: value})
            assert status == 400, "%s=%s -> %s %r" % (field, value, status, body)
            assert_matches(spec, schema(spec, "Error"), body)
            assert body["error"]["code"] == "invalid_argument"
            assert body["error"]["field"] == field


def test_list_limit_bounds_in_the_spec_are_the_servers(spec, admin):
    op = spec["paths"]["/v1/sandboxes"]["get"]
    limit = next(resolve(spec, p) for p in op["parameters"] if resolve(spec, p)["name"] == "limit")["schema"]
    for value in (limit["minimum"] - 1, limit["maximum"] + 1):
        status, body = admin.api("GET", "/v1/sandboxes?limit=%d" % value)
        assert status == 400, body
        assert_matches(spec, schema(spec, "Error"), body)
    status, _ = admin.api("GET", "/v1/sandboxes?limit=%d" % limit["maximum"])
    assert status == 200


@pytest.mark.parametrize(
    "raw, field",
    [
        ("{not json", None),
        ('{"cpu": 2, "colour": "red"}', "colour"),
        ('{"startup": {"mode": "command"}}', "startup.argv"),
        ('{"labels": {"platform.x": "y"}}', "labels.platform.x"),
    ],
)
def test_bad_request_body_is_a_400_matching_the_error_schema(spec, admin, raw, field):
    status, body = admin.api("POST", "/v1/sandboxes", raw=raw)
    assert status == 400, body
    assert_matches(spec, schema(spec, "Error"), body)
    assert body["error"]["code"] == "invalid_argument"
    if field:
        assert body["error"]["field"] == field


def test_unsupported_value_is_a_422_matching_the_error_schema(spec, admin):
    status, body = admin.api("POST", "/v1/sandboxes", {"gpu": {"type": "l4"}})
    assert status == 422, body
    assert_matches(spec, schema(spec, "Error"), body)
    assert body["error"]["field"] == "gpu"


def test_missing_key_is_a_401_matching_the_error_schema(spec, admin):
    status, body, _, headers = admin.request("GET", "/v1/sandboxes", key="")
    assert status == 401, body
    assert_matches(spec, schema(spec, "Error"), body)
    assert headers.get("www-authenticate") == "Bearer"


def test_non_admin_key_is_a_403_on_orgs(spec, org):
    status, body = org.api("GET", "/v1/orgs")
    assert status == 403, body
    assert_matches(spec, schema(spec, "Error"), body)


def test_unknown_path_is_404_and_wrong_method_is_405_both_as_errors(spec, admin):
    status, body = admin.api("GET", "/v1/no-such-thing")
    assert status == 404, body
    assert_matches(spec, schema(spec, "Error"), body)
    status, body = admin.api("PUT", "/v1/sandboxes", {})
    assert status == 405, body
    assert_matches(spec, schema(spec, "Error"), body)
    assert body["error"]["code"] == "method_not_allowed"
