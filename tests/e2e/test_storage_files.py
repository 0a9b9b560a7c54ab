"""Reading persistent storage's files without a running sandbox (seed 000's read_workspace_file:
"from the user's persistent workspace"): GET /v1/storage/{name}/files, `adapt storage get`, and
read_workspace_file by `storage` or by a durable sandbox that does not run. adaptd reads the
tenant's tree on the host, so the attacks are the tenant's own files: links and `..` that lead
out of the volume, a FIFO nothing writes, another organization's storage, no key at all."""
import os
import sqlite3

import yaml

from harness import REPO
from mcp_support import initialize
from test_object_artifacts import mcp_tool
from test_storage import durable, sh


def hibernated_durable_with_files(org):
    status, _ = org.api("POST", "/v1/storage", {"name": "results", "sizeMiB": 64})
    assert status == 201
    sid = durable(org, "results")["id"]
    out = sh(org, sid, "mkdir -p /workspace/out && printf 'done\\n' > /workspace/out/report.txt && "
                       "printf 'a\\0b' > /workspace/out/bin && ln -s /etc/passwd /workspace/passwd && "
                       "ln -s ../../../../../../etc/hostname /workspace/up && "
                       "mkfifo /workspace/out/pipe && echo ok")
    assert out["exitCode"] == 0, out
    status, body = org.api("POST", "/v1/sandboxes/%s/stop" % sid)
    assert status in (200, 202), body
    # A durable sandbox's stop keeps its processes: it hibernates, and runs no more.
    assert org.wait_for_status(sid, ("hibernated", "failed"), 120)["status"] == "hibernated"
    return sid


def volumes_of(daemon, org_id):
    """The names of the organization's volumes in adapt.db (read-only), without asking the
    API, whose list makes the default volume."""
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(daemon.state_dir, "adapt.db"), uri=True)
    try:
        return [row[0] for row in db.execute("SELECT name FROM volumes WHERE org_id = ?",
                                             (org_id,))]
    finally:
        db.close()


SPEC = yaml.safe_load(open(os.path.join(REPO, "docs", "openapi.yaml")))
DOCUMENTED = SPEC["paths"]["/v1/storage/{name}/files"]["get"]["responses"]


def get_file(org, name, path, key=None):
    status, parsed, raw, headers = org.request(
        "GET", "/v1/storage/%s/files?path=%s" % (name, path), key=key,
        headers={"Accept": "application/octet-stream"})
    # Every answer is one the spec gives for the route (test_openapi.py leaves it to this file).
    assert str(status) in DOCUMENTED, (name, path, status, parsed)
    return status, parsed, raw, headers


def test_storage_files_are_read_from_the_host_while_no_sandbox_runs(org, daemon, tmp_path):
    sid = hibernated_durable_with_files(org)
    for path in ("out/report.txt", "/workspace/out/report.txt"):
        status, _, raw, headers = get_file(org, "results", path)
        assert status == 200 and raw == b"done\n", (path, status, raw)
        assert {k.lower(): v for k, v in headers.items()}["adapt-served-by"] == "storage"
    # The tenant's links resolve inside the volume, never to the host's files.
    for path in ("passwd", "up", "/workspace/../../etc/hostname"):
        status, parsed, raw, _ = get_file(org, "results", path)
        assert status == 404, (path, status, raw)
        assert "/var/lib" not in raw.decode() and daemon.state_dir not in raw.decode()
    # A FIFO nothing writes must be answered, not waited on. This runsc keeps a FIFO made in the
    # sandbox in its own kernel (the host's tree has no such file: 404); one on the host is
    # refused as not a regular file (400; StorageFilesTest covers that one).
    status, parsed, _, _ = get_file(org, "results", "out/pipe")
    assert status in (400, 404), parsed
    assert "not a regular file" in parsed["error"]["message"] or \
        "does not exist" in parsed["error"]["message"], parsed
    # A path out of /workspace, or none at all, is 400; so is a name past 255 bytes (the host's
    # walk answered ENAMETOOLONG, a 500).
    for query in ("path=/etc/passwd", "path=", "", "path=out/" + "n" * 256):
        status, parsed = org.api("GET", "/v1/storage/results/files?" + query)
        assert status == 400 and parsed["error"]["field"] == "path", (query, parsed)
    assert get_file(org, "results", "out/none.txt")[0] == 404
    assert get_file(org, "missing", "out/report.txt")[0] == 404
    # Another organization, and no key at all, read nothing.
    other = daemon.new_org()
    assert get_file(other, "results", "out/report.txt")[0] == 404
    # A read makes nothing: the default storage of an organization that never used it stays
    # unmade (a list or a durable sandbox makes it).
    status, parsed, _, _ = get_file(other, "default", "out/report.txt")
    assert status == 404 and "default" in parsed["error"]["message"], parsed
    assert volumes_of(daemon, other.org_id) == []
    assert get_file(org, "results", "out/report.txt", key="")[0] == 401
    # The CLI's verb reads the same route.
    local = str(tmp_path / "report.txt")
    r = org.cli("storage", "get", "results", "out/report.txt", local)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert open(local, "rb").read() == b"done\n"
    r = org.cli("storage", "get", "results", "passwd", str(tmp_path / "x"))
    assert r.returncode != 0 and "does not exist" in r.stderr, (r.stdout, r.stderr)
    assert not os.path.exists(str(tmp_path / "x"))
    org.delete(sid)


def test_read_workspace_file_reads_storage_by_name_or_through_a_hibernated_sandbox(org, daemon):
    sid = hibernated_durable_with_files(org)
    session, _ = initialize(daemon, org.key)
    failed, text, read = mcp_tool(daemon, org, session, "read_workspace_file",
                                  {"sandbox_id": sid, "workspace_path": "out/report.txt"})
    assert not failed and read["text"] == "done\n" and read["sandbox_id"] == sid, text
    failed, text, read = mcp_tool(daemon, org, session, "read_workspace_file",
                                  {"storage": "results", "workspace_path": "/workspace/out/report.txt"})
    assert not failed and read["text"] == "done\n" and read["storage"] == "results", text
    failed, text, _ = mcp_tool(daemon, org, session, "read_workspace_file",
                               {"storage": "results", "workspace_path": "out/bin"})
    assert failed and "not text" in text, text
    # What lies outside /workspace is on the sandbox's own disk, read only while it runs.
    failed, text, _ = mcp_tool(daemon, org, session, "read_workspace_file",
                               {"sandbox_id": sid, "workspace_path": "/etc/hostname"})
    assert failed and "hibernated" in text, text
    failed, text, _ = mcp_tool(daemon, org, session, "read_workspace_file",
                               {"sandbox_id": sid, "storage": "results", "workspace_path": "x"})
    assert failed and "either sandbox_id or storage" in text, text
    # Another organization's session sees no such storage.
    other = daemon.new_org()
    other_session, _ = initialize(daemon, other.key)
    failed, text, _ = mcp_tool(daemon, other, other_session, "read_workspace_file",
                               {"storage": "results", "workspace_path": "out/report.txt"})
    assert failed and "done" not in text, text
    org.delete(sid)
