"""The SDKs' models (sdk/python/src/adapt/models.py, sdk/typescript/src/models.ts) are
docs/openapi.yaml's schemas, names and types: a field the API answers that a model lacks, a
field of another type, or a model field the API does not answer fails here. Also the Python
SDK passes `mypy --strict` and the TypeScript SDK compiles with `tsc` (strict), so the types
the models promise are the types the code uses. No adaptd needed."""

import os
import re
import shutil
import subprocess
import sys
from typing import Any, Dict, List, Optional, get_type_hints

import pytest
import yaml

from harness import REPO
from sdk_support import SDK_PY, SDK_TS

sys.path.insert(0, os.path.join(SDK_PY, "src"))
from adapt import _model, models  # noqa: E402

SPEC = yaml.safe_load(open(os.path.join(REPO, "docs", "openapi.yaml")))
SCHEMAS = SPEC["components"]["schemas"]

# Spec schema (or inline object at "Schema.field") -> the SDKs' model name.
MODELS = {
    "Sandbox": "SandboxInfo", "Command": "CommandResult", "Endpoint": "Endpoint",
    "Network": "Network", "Startup": "Startup", "FileEntry": "FileEntry", "FileList": "FileList",
    "FileWritten": "FileWritten", "StatusEvent": "StatusEvent", "Progress": "Progress",
    "Image": "Image", "Operation": "Operation", "Secret": "Secret", "Storage": "Storage",
    "Object": "StoredObject", "Site": "Site", "Org": "Org", "ApiKey": "ApiKey",
    "NewApiKey": "NewApiKey", "ObjectLink": "ObjectLink", "StorageToken": "StorageToken",
    "NewStorageToken": "NewStorageToken", "User": "User", "NewUser": "NewUser",
    "POST /v1/sandboxes/{id}/object-storage": "ObjectStorageAttachment",
    "POST /v1/sandboxes/{id}/artifacts": "Artifact", "GET /v1/sandboxes/{id}/artifacts": "ArtifactList",
    "Sandbox.hibernation": "Hibernation", "Sandbox.pool": "Pool",
    "Sandbox.environmentSources": "EnvironmentSource", "Image.operation": "ImageOperation",
    "Storage.attachments": "StorageAttachment",
    "Account": "Account", "AccountUsage": "AccountUsage", "Plan": "Plan",
    "PlanLimits": "PlanLimits", "PlanPrices": "PlanPrices", "LedgerEntry": "LedgerEntry",
    "AccountAlert": "AccountAlert", "UsageTotal": "UsageTotal", "UsageReport": "UsageReport",
    "Storage.attachments": "StorageAttachment", "Job": "Job", "Run": "Run", "RunUsage": "RunUsage",
    "AlertEvent": "AlertEvent",
    "App": "App", "AppReplica": "AppReplica", "AppRelease": "AppRelease",
    "AppReplicaLog": "AppReplicaLog",
    "Automation": "Automation", "Automation.nextChanges": "AutomationStateChange", "RunEvent": "RunEvent",
    "Database": "Database", "DatabaseDump": "DatabaseDump", "Checkpoint": "Checkpoint",
}
# Fields an SDK adds on purpose: the SSE `id:` of a status, run or alert event (for Last-Event-ID).
SDK_ONLY = {("StatusEvent", "id"), ("AlertEvent", "id"), ("RunEvent", "id")}


def merged(schema):
    """An allOf of objects as the one object it describes (its properties and required)."""
    if "allOf" not in schema:
        return schema
    out = {"type": "object", "properties": {}, "required": []}
    for part in schema["allOf"]:
        part = merged(SCHEMAS[part["$ref"].split("/")[-1]] if "$ref" in part else part)
        out["properties"].update(part.get("properties", {}))
        out["required"] += part.get("required", [])
    return out


def schema_of(name):
    if " " in name:  # an operation's inline answer
        method, path = name.split(" ")
        responses = SPEC["paths"][path][method.lower()]["responses"]
        ok = next(v for k, v in responses.items() if k.startswith("2"))
        return merged(ok["content"]["application/json"]["schema"])
    if "." not in name:
        return SCHEMAS[name]
    parent, field = name.split(".")
    prop = SCHEMAS[parent]["properties"][field]
    return prop.get("items", prop)


def python_type(prop, where):
    if "$ref" in prop:
        return getattr(models, MODELS[prop["$ref"].split("/")[-1]])
    t = prop.get("type")
    if t == "array":
        inner = prop.get("items", {})
        if inner.get("type") == "object" and "properties" in inner:
            return List[getattr(models, MODELS[where])]
        return List[python_type(inner, where)]
    if t == "object":
        if "properties" in prop:
            return getattr(models, MODELS[where])
        ap = prop.get("additionalProperties")
        if isinstance(ap, dict) and ap.get("type") == "string":
            return Dict[str, str]
        return Dict[str, Any]
    return {"string": str, "integer": int, "boolean": bool, "number": float}[t]


def ts_type(prop, where):
    if "$ref" in prop:
        return MODELS[prop["$ref"].split("/")[-1]]
    t = prop.get("type")
    if t == "array":
        inner = prop.get("items", {})
        if inner.get("type") == "object" and "properties" in inner:
            return MODELS[where] + "[]"
        return ts_type(inner, where) + "[]"
    if t == "object":
        if "properties" in prop:
            return MODELS[where]
        ap = prop.get("additionalProperties")
        if isinstance(ap, dict) and ap.get("type") == "string":
            return "Record<string, string>"
        return "Record<string, unknown>"
    return {"string": "string", "integer": "number", "boolean": "boolean", "number": "number"}[t]


def nullable(prop):
    if "$ref" in prop:
        return bool(schema_of(prop["$ref"].split("/")[-1]).get("nullable"))
    return bool(prop.get("nullable"))


def ts_interfaces():
    text = "".join(open(os.path.join(SDK_TS, "src", f)).read()
                   for f in ("models.ts", "account_models.ts"))
    found = {}
    for name, body in re.findall(r"export interface (\w+)(?:<\w+>)? \{(.*?)\n\}", text, re.S):
        fields = {}
        for fname, opt, ftype in re.findall(r"^\s+(\w+)(\?)?: ([^;]+);", body, re.M):
            fields[fname] = (ftype.strip(), bool(opt))
        found[name] = fields
    return found


@pytest.mark.parametrize("schema", sorted(MODELS))
def test_python_model_has_the_spec_fields_and_types(schema):
    spec = schema_of(schema)
    cls = getattr(models, MODELS[schema])
    hints = get_type_hints(cls)
    fields = {_model.wire_name(n): n for n in hints if n != "extra"}
    spec_props = spec["properties"]
    missing = set(spec_props) - set(fields)
    extra = set(fields) - set(spec_props) - {f for s, f in SDK_ONLY if s == schema}
    assert not missing and not extra, "%s: missing %s, not in the spec %s" % (cls.__name__, sorted(missing), sorted(extra))
    required = set(spec.get("required", []))
    for wire, prop in spec_props.items():
        want = python_type(prop, "%s.%s" % (schema, wire))
        if nullable(prop) or wire not in required:
            want = Optional[want]
        assert hints[fields[wire]] == want, "%s.%s is %r, the spec says %r" % (
            cls.__name__, fields[wire], hints[fields[wire]], want)


@pytest.mark.parametrize("schema", sorted(MODELS))
def test_typescript_model_has_the_spec_fields_and_types(schema):
    spec = schema_of(schema)
    name = MODELS[schema]
    iface = ts_interfaces().get(name)
    assert iface is not None, "sdk/typescript/src/models.ts has no interface " + name
    spec_props = spec["properties"]
    missing = set(spec_props) - set(iface)
    extra = set(iface) - set(spec_props) - {f for s, f in SDK_ONLY if s == schema}
    assert not missing and not extra, "%s: missing %s, not in the spec %s" % (name, sorted(missing), sorted(extra))
    required = set(spec.get("required", []))
    for wire, prop in spec_props.items():
        want = ts_type(prop, "%s.%s" % (schema, wire))
        if nullable(prop):
            want += " | null"
        got, optional = iface[wire]
        assert (got, optional) == (want, wire not in required), "%s.%s is %s%s, the spec says %s%s" % (
            name, wire, "?" if optional else "", got, "?" if wire not in required else "", want)


def test_a_sandbox_record_parses_into_nested_models_and_keeps_unknown_fields():
    raw = {_model.wire_name(f): None for f in get_type_hints(models.SandboxInfo) if f != "extra"}
    raw.update({"id": "sbx_a", "status": "running", "memoryMiB": 1024, "labels": {"name": "x"},
                "network": {"egress": "open", "allow": [], "dns": "1.1.1.1", "hostnames": []},
                "endpoints": [{"id": "ep_1", "sandboxId": "sbx_a", "port": 80, "hostname": "h",
                               "url": "u", "httpUrl": "hu", "createdAt": "t"}],
                "environmentSources": [{"name": "K", "source": "secret", "version": 2}],
                "futureField": 7})
    info = _model.from_json(models.SandboxInfo, raw)
    assert isinstance(info.network, models.Network) and info.network.dns == "1.1.1.1"
    assert isinstance(info.endpoints[0], models.Endpoint) and info.endpoints[0].http_url == "hu"
    assert isinstance(info.environment_sources[0], models.EnvironmentSource)
    assert info.environment_sources[0].version == 2 and info.memory_mib == 1024
    assert info.extra == {"futureField": 7}
    assert _model.to_json(info.endpoints[0])["httpUrl"] == "hu"


def test_the_python_sdk_passes_mypy_strict():
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", "/dev/null", "src/adapt"],
                       cwd=SDK_PY, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "Success" in r.stdout, r.stdout + r.stderr


def test_the_typescript_sdk_compiles_strict():
    tsc = os.path.join(SDK_TS, "node_modules", ".bin", "tsc")
    assert os.access(tsc, os.X_OK), "run sdk/typescript/install.sh (scripts/test.sh's npm-sdk stage)"
    r = subprocess.run([tsc, "-p", "tsconfig.json", "--noEmit"], cwd=SDK_TS, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert shutil.which("node")


# Every operation of the spec -> the SDK verb that calls it, as (class, Python method,
# TypeScript method). A route added to the spec fails here until both SDKs have it.
OPERATIONS = {
    "getHealth": ("Client", "health", "health"),
    "createOrg": ("Orgs", "create", "create"),
    "listOrgs": ("Orgs", "list", "list"),
    "deleteOrg": ("Orgs", "delete", "delete"),
    "createApiKey": ("Orgs", "create_key", "createKey"),
    "listApiKeys": ("Orgs", "list_keys", "listKeys"),
    "deleteApiKey": ("Orgs", "delete_key", "deleteKey"),
    "createOwnApiKey": ("Keys", "create", "create"),
    "listOwnApiKeys": ("Keys", "list", "list"),
    "revokeOwnApiKey": ("Keys", "revoke", "revoke"),
    "createUser": ("Orgs", "create_user", "createUser"),
    "listUsers": ("Orgs", "list_users", "listUsers"),
    "deleteUser": ("Orgs", "delete_user", "deleteUser"),
    "setUserPassword": ("Orgs", "set_user_password", "setUserPassword"),
    "createSandbox": ("Sandboxes", "create", "create"),
    "listSandboxes": ("Sandboxes", "list", "list"),
    "getSandbox": ("Sandboxes", "get", "get"),
    "deleteSandbox": ("Sandbox", "delete", "delete"),
    "stopSandbox": ("Sandbox", "stop", "stop"),
    "getSandboxStats": ("Sandbox", "stats", "stats"),
    "streamStartupOutput": ("Sandbox", "startup_output", "startupOutput"),
    "startSandbox": ("Sandbox", "start", "start"),
    "createCheckpoint": ("Sandbox", "create_checkpoint", "createCheckpoint"),
    "listCheckpoints": ("Sandbox", "list_checkpoints", "listCheckpoints"),
    "deleteCheckpoint": ("Sandbox", "delete_checkpoint", "deleteCheckpoint"),
    "restoreCheckpoint": ("Sandbox", "restore_checkpoint", "restoreCheckpoint"),
    "listOrganizationCheckpoints": ("Sandboxes", "checkpoints", "checkpoints"),
    "streamSandboxEvents": ("Sandbox", "events", "events"),
    "streamEvents": ("Sandboxes", "events", "events"),
    "createEndpoint": ("Endpoints", "create", "create"),
    "listEndpoints": ("Endpoints", "list", "list"),
    "deleteEndpoint": ("Endpoints", "delete", "delete"),
    "deleteEndpointsByPort": ("Endpoints", "delete_by_port", "deleteByPort"),
    "listAllEndpoints": ("Sandboxes", "endpoints", "endpoints"),
    "runCommand": ("Commands", "start", "start"),
    "listCommands": ("Commands", "list", "list"),
    "getCommand": ("Commands", "get", "get"),
    "runPython": ("Commands", "run_python", "runPython"),
    "killCommand": ("CommandHandle", "kill", "kill"),
    "streamCommandOutput": ("CommandHandle", "wait", "wait"),
    "uploadFile": ("Files", "write", "write"),
    "downloadFile": ("Files", "read", "read"),
    "removeFile": ("Files", "remove", "remove"),
    "makeDirectory": ("Files", "mkdir", "mkdir"),
    "downloadArchive": ("Files", "download_archive", "downloadArchive"),
    "uploadArchive": ("Files", "upload_archive", "uploadArchive"),
    "pullImage": ("Images", "pull", "pull"),
    "commitSandbox": ("Images", "commit", "commit"),
    "listImages": ("Images", "list", "list"),
    "importImage": ("Images", "import_archive", "importArchive"),
    "getImage": ("Images", "get", "get"),
    "deleteImage": ("Images", "delete", "delete"),
    "getOperation": ("Images", "operation", "operation"),
    "listEnvironments": ("Client", "environments", "environments"),
    "listGpuTypes": ("Client", "gpu_types", "gpuTypes"),
    "createStorage": ("StorageVolumes", "create", "create"),
    "listStorage": ("StorageVolumes", "list", "list"),
    "getStorage": ("StorageVolumes", "get", "get"),
    "deleteStorage": ("StorageVolumes", "delete", "delete"),
    "downloadStorageFile": ("StorageVolumes", "read", "read"),
    "setSecret": ("Secrets", "set", "set"),
    "listSecrets": ("Secrets", "list", "list"),
    "getSecret": ("Secrets", "get", "get"),
    "deleteSecret": ("Secrets", "delete", "delete"),
    "listObjects": ("Objects", "list", "list"),
    "putObject": ("Objects", "put", "put"),
    "getObject": ("Objects", "get", "get"),
    "headObject": ("Objects", "exists", "exists"),
    "deleteObject": ("Objects", "delete", "delete"),
    "createObjectLink": ("Objects", "link", "link"),
    "createStorageToken": ("Objects", "create_token", "createToken"),
    "listStorageTokens": ("Objects", "list_tokens", "listTokens"),
    "revokeStorageToken": ("Objects", "revoke_token", "revokeToken"),
    "attachObjectStorage": ("Sandbox", "attach_object_storage", "attachObjectStorage"),
    "saveArtifact": ("Artifacts", "save", "save"),
    "listArtifacts": ("Artifacts", "list", "list"),
    "publishSite": ("Sites", "publish", "publish"),
    "listSites": ("Sites", "list", "list"),
    "getSite": ("Sites", "get", "get"),
    "deleteSite": ("Sites", "delete", "delete"),
    "getAccount": ("Accounts", "get", "get"),
    # GET /v1/billing (API.md's name) answers what GET /v1/account does: the same verb.
    "getBillingAccount": ("Accounts", "get", "get"),
    "registerAccount": ("Accounts", "register", "register"),
    "listLedger": ("Accounts", "ledger", "ledger"),
    "getAccountUsage": ("Accounts", "usage", "usage"),
    "getMetrics": ("Client", "metrics", "metrics"),
    "listPlans": ("Plans", "list", "list"),
    "getPlan": ("Plans", "get", "get"),
    "putPlan": ("Plans", "put", "put"),
    "setOrgPlan": ("Orgs", "set_plan", "setPlan"),
    "addCredit": ("Orgs", "add_credit", "addCredit"),
    "submitJob": ("Jobs", "submit", "submit"),
    "listJobs": ("Jobs", "list", "list"),
    "getJob": ("Jobs", "get", "get"),
    "deployApp": ("Apps", "deploy", "deploy"),
    "listApps": ("Apps", "list", "list"),
    "getApp": ("Apps", "get", "get"),
    "scaleApp": ("Apps", "scale", "scale"),
    "rollbackApp": ("Apps", "rollback", "rollback"),
    "deleteApp": ("Apps", "delete", "delete"),
    "listAppReleases": ("Apps", "releases", "releases"),
    "getAppLogs": ("Apps", "logs", "logs"),
    "cancelJob": ("Jobs", "cancel", "cancel"),
    "deleteJob": ("Jobs", "delete", "delete"),
    "listRuns": ("Runs", "list", "list"),
    "getRun": ("Runs", "get", "get"),
    "cancelRun": ("Runs", "cancel", "cancel"),
    "createAutomation": ("Automations", "create", "create"),
    "listAutomations": ("Automations", "list", "list"),
    "getAutomation": ("Automations", "get", "get"),
    "enableAutomation": ("Automations", "enable", "enable"),
    "disableAutomation": ("Automations", "disable", "disable"),
    "triggerAutomation": ("Automations", "trigger", "trigger"),
    "deleteAutomation": ("Automations", "delete", "delete"),
    "getDatabase": ("Databases", "get", "get"),
    "createDatabase": ("Databases", "create", "create"),
    "rotateDatabasePassword": ("Databases", "rotate", "rotate"),
    "dumpDatabase": ("Databases", "dump", "dump"),
    "deleteDatabase": ("Databases", "delete", "delete"),
}
# Not SDK verbs: a link's URL is used as it is (no credentials), and MCP with its OAuth is for
# MCP clients.
NOT_SDK = {"downloadObjectByLink", "postMcpMessage", "deleteMcpSession", "preflightMcp",
           "getProtectedResourceMetadata", "getMcpProtectedResourceMetadata",
           "getAuthorizationServerMetadata", "registerOAuthClient", "showOAuthConsent",
           "submitOAuthConsent", "exchangeOAuthToken"}


def ts_classes():
    text = "".join(open(os.path.join(SDK_TS, "src", f)).read() for f in sorted(os.listdir(os.path.join(SDK_TS, "src"))))
    return {m.group(1): m.group(2) for m in re.finditer(r"export class (\w+)[^{]*\{(.*?)\n\}", text, re.S)}


def test_every_operation_of_the_spec_has_a_verb_in_both_sdks():
    import adapt
    from adapt import resources, sandbox
    ops = {op["operationId"] for path in SPEC["paths"].values() for m, op in path.items() if m != "parameters"}
    assert ops - NOT_SDK == set(OPERATIONS), "operations without an SDK verb: %s; verbs of no operation: %s" % (
        sorted(ops - NOT_SDK - set(OPERATIONS)), sorted(set(OPERATIONS) - ops))
    classes = ts_classes()
    for op, (cls, py, ts) in sorted(OPERATIONS.items()):
        owner = getattr(adapt, cls, None) or getattr(resources, cls, None) or getattr(sandbox, cls)
        assert callable(getattr(owner, py, None)), "%s: Python %s.%s is missing" % (op, cls, py)
        assert cls in classes, "%s: TypeScript has no class %s" % (op, cls)
        assert re.search(r"^\s+(?:async \*?|\*)?%s\(" % ts, classes[cls], re.M), (
            "%s: TypeScript %s.%s is missing" % (op, cls, ts))
