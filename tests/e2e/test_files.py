"""Files inside a running sandbox (issue 4): /files and /archive, served by adapt-agent's file
tool inside the sandbox, so every path resolves there: over the agent's session when it is
connected, through runsc exec when it is not. The tests on the `box` fixture run on both
paths, and every response of theirs must name the path that served it (Adapt-Served-By).

coreutils stat needs statx, which this gVisor lacks: find -printf reads modes and sizes."""

import hashlib
import http.client
import io
import json
import os
import sys
import tarfile
import threading
import time
import urllib.parse
import uuid

import pytest

GIB = 1 << 30
CHUNK = 1 << 20
# adaptd's own buffering per transfer is a few MiB (a 4 MiB response queue, 256 KiB pipe
# chunks); 96 MiB of growth allows for allocator slack and stays far below the 1 GiB moved,
# so a transfer that buffered the file would fail.
RSS_GROWTH_BOUND_KIB = 96 * 1024


# Sandboxes of the `box` fixture -> the path ("agent" or "runsc-exec") that must serve them.
SERVED = {}
SERVED_BY = "adapt-served-by"
FIND_AGENT = (
    "for p in /proc/[0-9]*; do "
    "tr '\\000' ' ' < $p/cmdline 2>/dev/null | grep -q '^/.adapt/adapt-agent serve' "
    "&& echo ${p#/proc/}; done"
)


def served_by(client, sid):
    status, _, _, headers = client.request("GET", files_url(sid, path="/", stat=1))
    assert status == 200
    return headers.get(SERVED_BY)


def wait_served_by(client, sid, path, timeout=30):
    """Stats / until the path named serves it: the agent connects just after the start."""
    deadline = time.monotonic() + timeout
    while served_by(client, sid) != path:
        assert time.monotonic() < deadline, "files are never served by " + path
        time.sleep(0.2)


def interactive(client, body=None):
    sbx = client.create(body or {})
    client.wait_for_status(sbx["id"], "running", 60)
    wait_served_by(client, sbx["id"], "agent")
    return sbx["id"]


@pytest.fixture(scope="module", params=["agent", "runsc-exec"])
def box(daemon, request):
    client = daemon.new_org()
    sid = interactive(client)
    if request.param == "runsc-exec":
        # Without its agent, the sandbox's files go through runsc exec (the fallback).
        pids = sh(client, sid, FIND_AGENT)["stdout"].split()
        assert len(pids) == 1, pids
        sh(client, sid, "kill -9 %s" % pids[0])
        wait_served_by(client, sid, "runsc-exec")
    SERVED[sid] = request.param
    return client, sid


def check_served(sid, status, headers):
    if sid in SERVED and status < 300:
        assert headers.get(SERVED_BY) == SERVED[sid], headers


def files_url(sid, resource="files", **query):
    return "/v1/sandboxes/%s/%s?%s" % (sid, resource, urllib.parse.urlencode(query))


def put(client, sid, path, data, resource="files", **query):
    status, body, raw, headers = client.request(
        "PUT", files_url(sid, resource, path=path, **query), raw=data,
        headers={"Content-Type": "application/octet-stream"})
    check_served(sid, status, headers)
    return status, body


def get(client, sid, path, resource="files", **query):
    status, body, raw, headers = client.request("GET", files_url(sid, resource, path=path, **query))
    check_served(sid, status, headers)
    return status, raw, body, headers


def sh(client, sid, script):
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % sid,
                             {"command": script, "waitSeconds": 60})
    assert status == 200, cmd
    return cmd


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for %d" % pid)


class RssWatch:
    """Samples a process's VmRSS in the background; peak growth over the starting value."""

    def __init__(self, pid):
        self.pid, self.start, self.peak = pid, rss_kib(pid), 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop.is_set():
            self.peak = max(self.peak, rss_kib(self.pid))
            time.sleep(0.1)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()

    @property
    def growth(self):
        return max(0, self.peak - self.start)


def test_binary_and_empty_round_trips_keep_every_byte(box):
    client, sid = box
    data = bytes(range(256)) * 4099
    status, body = put(client, sid, "/tmp/all-bytes.bin", data)
    assert status == 200, body
    assert body == {"path": "/tmp/all-bytes.bin", "size": len(data)}
    status, raw, _, headers = get(client, sid, "/tmp/all-bytes.bin")
    assert status == 200
    assert headers["content-type"] == "application/octet-stream"
    assert int(headers["content-length"]) == len(data)
    assert hashlib.sha256(raw).hexdigest() == hashlib.sha256(data).hexdigest()
    # The bytes are really in the sandbox's filesystem.
    cmd = sh(client, sid, "sha256sum /tmp/all-bytes.bin")
    assert cmd["stdout"].split()[0] == hashlib.sha256(data).hexdigest()

    status, body = put(client, sid, "/tmp/empty", b"")
    assert status == 200 and body["size"] == 0, body
    status, raw, _, headers = get(client, sid, "/tmp/empty")
    assert status == 200 and raw == b"" and headers["content-length"] == "0"


def test_upload_replaces_and_sets_mode_and_relative_paths_use_the_working_dir(box):
    client, sid = box
    assert put(client, sid, "/tmp/m.sh", b"#!/bin/sh\necho hi\n", mode="0755")[0] == 200
    assert sh(client, sid, "find /tmp/m.sh -printf '%m\\n'; /tmp/m.sh")["stdout"] == "755\nhi\n"
    assert put(client, sid, "/tmp/m.sh", b"x")[0] == 200
    status, raw, _, _ = get(client, sid, "/tmp/m.sh")
    assert raw == b"x"
    assert sh(client, sid, "find /tmp/m.sh -printf '%m\\n'")["stdout"] == "755\n"  # mode kept
    status, body = put(client, sid, "/tmp/m.sh", b"x", mode="9z")
    assert status == 400 and body["error"]["field"] == "mode"
    # Relative: the image's working directory.
    cwd = sh(client, sid, "pwd")["stdout"].strip()
    assert put(client, sid, "rel.txt", b"relative")[0] == 200
    assert sh(client, sid, "cat %s/rel.txt" % cwd.rstrip("/"))["stdout"] == "relative"


def test_an_upload_to_the_route_spelled_otherwise_writes_its_bytes(box):
    # The router matches doubled slashes, a trailing one and escaped letters; the server once
    # decided to stream from the exact spelling, so such an upload was read whole, the handler
    # read only the stream, and the file was replaced by an empty one with a 200.
    client, sid = box
    for n, url in enumerate(("/v1//sandboxes/%s/files/?path=/tmp/spelled0" % sid,
                             "/v1/sandboxes/%s/fil%%65s?path=/tmp/spelled1" % sid)):
        data = b"spelled %d\n" % n
        status, body, _, headers = client.request(
            "PUT", url, raw=data, headers={"Content-Type": "application/octet-stream"})
        check_served(sid, status, headers)
        assert status == 200 and body["size"] == len(data), (url, status, body)
        assert get(client, sid, "/tmp/spelled%d" % n)[1] == data, url


def test_list_and_stat_fields(box):
    client, sid = box
    sh(client, sid, "rm -rf /tmp/ls && mkdir -p /tmp/ls/sub && printf 12345 > /tmp/ls/f "
       "&& chmod 640 /tmp/ls/f && ln -s f /tmp/ls/link && touch -d @1700000000 /tmp/ls/f")
    status, page = client.api("GET", files_url(sid, path="/tmp/ls", list=1))
    assert status == 200, page
    assert page["path"] == "/tmp/ls"
    items = {e["name"]: e for e in page["items"]}
    assert set(items) == {"f", "link", "sub"}
    assert items["f"] == {"name": "f", "type": "file", "size": 5, "mode": "0640",
                          "mtime": "2023-11-14T22:13:20Z"}
    assert items["sub"]["type"] == "dir"
    assert items["link"]["type"] == "symlink" and items["link"]["linkTarget"] == "f"
    status, st = client.api("GET", files_url(sid, path="/tmp/ls/sub", stat=1))
    assert status == 200 and st["type"] == "dir" and st["name"] == "sub", st


def test_mkdir_and_rm(box):
    client, sid = box
    base = "/tmp/mk-%s" % uuid.uuid4().hex[:6]
    status, body = client.api("POST", "/v1/sandboxes/%s/files/mkdir" % sid, {"path": base + "/a/b"})
    assert status == 404, body  # no parents
    status, body = client.api("POST", "/v1/sandboxes/%s/files/mkdir" % sid,
                              {"path": base + "/a/b", "parents": True})
    assert status == 201 and body == {"path": base + "/a/b"}, body
    status, body = client.api("POST", "/v1/sandboxes/%s/files/mkdir" % sid, {"path": base + "/a/b"})
    assert status == 409, body
    status, body = client.api("POST", "/v1/sandboxes/%s/files/mkdir" % sid, {"path": base, "mode": 1})
    assert status == 400 and body["error"]["field"] == "mode", body
    assert put(client, sid, base + "/a/b/f", b"x")[0] == 200
    status, body = client.api("DELETE", files_url(sid, path=base + "/a"))
    assert status == 409 and "recursive" in body["error"]["message"], body
    status, _ = client.api("DELETE", files_url(sid, path=base + "/a/b/f"))
    assert status == 204
    status, _ = client.api("DELETE", files_url(sid, path=base + "/a/b/f"))
    assert status == 404
    assert put(client, sid, base + "/a/b/g", b"x")[0] == 200
    status, _ = client.api("DELETE", files_url(sid, path=base, recursive=1))
    assert status == 204
    assert sh(client, sid, "test -e %s; echo $?" % base)["stdout"] == "1\n"
    status, body = client.api("DELETE", files_url(sid, path="/", recursive=1))
    assert status == 400, body


def test_errors_are_clear(box):
    client, sid = box
    status, _, body, _ = get(client, sid, "/no/such/file")
    assert status == 404 and "/no/such/file" in body["error"]["message"], body
    status, _, body, _ = get(client, sid, "/tmp")
    assert status == 400 and "directory" in body["error"]["message"], body
    status, body = put(client, sid, "/tmp", b"x")
    assert status == 400 and "directory" in body["error"]["message"], body
    status, body = put(client, sid, "/no/such/dir/f", b"x")
    assert status == 404, body
    status, body = client.api("GET", "/v1/sandboxes/%s/files" % sid)
    assert status == 400 and body["error"]["field"] == "path", body
    status, body = client.api("GET", files_url(sid, path="x" * 5000))
    assert status == 400 and body["error"]["field"] == "path", body
    status, body = client.api("GET", "/v1/sandboxes/%s/files?path=a%%00b" % sid)
    assert status == 400, body
    status, body = client.api("GET", files_url(sid, path="/tmp", list="maybe"))
    assert status == 400 and body["error"]["field"] == "list", body
    # /proc/1/mem and friends are not regular files: never streamed forever.
    status, _, body, _ = get(client, sid, "/dev/zero")
    assert status == 400 and "regular" in body["error"]["message"], body


def test_a_file_with_no_size_on_disk_downloads_what_it_holds(box):
    # /proc makes its text as it is read and stats as 0 bytes: a download sized by stat was
    # an empty 200.
    client, sid = box
    status, raw, _, headers = get(client, sid, "/proc/cpuinfo")
    assert status == 200 and b"processor" in raw, raw[:200]
    assert int(headers["content-length"]) == len(raw), headers
    expected = sh(client, sid, "cat /proc/cpuinfo")["stdout"].encode()
    assert raw == expected


def test_a_fifo_is_refused_at_once_by_reads_and_uploads(box):
    # Nothing ever writes to the FIFO: a read that opened it blocking would wait forever (the
    # client's timeout only turns such a hang into a failure instead of a stuck run).
    client, sid = box
    sh(client, sid, "rm -rf /tmp/fifos && mkdir /tmp/fifos && mkfifo /tmp/fifos/fifo && "
                    "ln -s fifo /tmp/fifos/fifo-link && echo x > /tmp/fifos/plain")
    for path in ["/tmp/fifos/fifo", "/tmp/fifos/fifo-link"]:
        for resource in ["files", "archive"]:
            status, body, _, headers = client.request("GET", files_url(sid, resource, path=path),
                                                      timeout=60)
            assert status == 400, (resource, path, status, body)
            assert ("is not a regular file" in body["error"]["message"] or
                    "neither a file nor a directory" in body["error"]["message"]), body
        status, body, _, _ = client.request(
            "PUT", files_url(sid, path=path), raw=b"x", timeout=60,
            headers={"Content-Type": "application/octet-stream"})
        assert status == 400 and "is not a regular file" in body["error"]["message"], body
    # The upload left the FIFO (and the link to it) as they were.
    assert sh(client, sid, "test -p /tmp/fifos/fifo && test -L /tmp/fifos/fifo-link; echo $?")[
        "stdout"] == "0\n"
    # A directory holding a FIFO still archives, the FIFO left out.
    status, raw, _, _ = get(client, sid, "/tmp/fifos", resource="archive")
    assert status == 200
    names = sorted(tarfile.open(fileobj=io.BytesIO(raw)).getnames())
    assert names == ["fifo-link", "plain"], names


def test_traversal_never_reaches_the_host(box):
    client, sid = box
    marker = "/tmp/adapt-host-marker-%s" % uuid.uuid4().hex
    with open(marker, "w") as f:
        f.write("host secret")
    try:
        name = os.path.basename(marker)
        for path in ["../../../../../../" + marker, marker, "/../../" + marker]:
            status, raw, body, _ = get(client, sid, path)
            assert status == 404 and b"host secret" not in raw, (path, status, raw)
        # A symlink to / inside the sandbox is the sandbox's own root.
        sh(client, sid, "ln -sfn / /tmp/root-link")
        status, raw, body, _ = get(client, sid, "/tmp/root-link/tmp/" + name)
        # (This gVisor resolves a missing name below a link to / oddly: 400 "is a directory".)
        assert status in (400, 404) and b"host secret" not in raw, (status, body)
        status, page = client.api("GET", files_url(sid, path="/tmp/root-link/tmp", list=1))
        assert status == 200 and name not in [e["name"] for e in page["items"]]
        # Traversal to a host-only path finds the sandbox's filesystem, where it is absent.
        status, _, _, _ = get(client, sid, "../../../../" + os.path.dirname(os.path.abspath(__file__)))
        assert status == 404
        # Writing through traversal stays inside too.
        escape = "/tmp/adapt-escape-%s" % uuid.uuid4().hex
        assert put(client, sid, "../../../.." + escape, b"x")[0] == 200
        assert not os.path.exists(escape)
        assert sh(client, sid, "cat " + escape)["stdout"] == "x"
    finally:
        os.unlink(marker)


def make_tar(entries):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, kind, value in entries:
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size = len(value)
                info.mode = 0o644
                tar.addfile(info, io.BytesIO(value))
            elif kind == "dir":
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
            elif kind == "symlink":
                info.type = tarfile.SYMTYPE
                info.linkname = value
                tar.addfile(info)
    return buf.getvalue()


def test_archive_round_trip_with_a_symlink(box):
    client, sid = box
    sh(client, sid, "rm -rf /tmp/tree /tmp/tree2 && mkdir -p /tmp/tree/d/e && "
       "printf one > /tmp/tree/a && printf two > /tmp/tree/d/e/b && ln -s ../a /tmp/tree/d/l "
       "&& chmod 600 /tmp/tree/d/e/b")
    status, raw, body, headers = get(client, sid, "/tmp/tree", resource="archive")
    assert status == 200, body
    assert headers["content-type"] == "application/x-tar"
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        members = {m.name.rstrip("/"): m for m in tar.getmembers()}
        assert set(members) == {"a", "d", "d/e", "d/e/b", "d/l"}
        assert members["d/l"].issym() and members["d/l"].linkname == "../a"
        assert tar.extractfile("d/e/b").read() == b"two"
        assert members["d/e/b"].mode & 0o777 == 0o600
    status, body = put(client, sid, "/tmp/tree2", raw, resource="archive")
    assert status == 200, body
    out = sh(client, sid, "cd /tmp/tree2 && cat a d/e/b && readlink d/l && cat d/l && find d/e/b -printf '%m\\n'")
    assert out["stdout"] == "onetwo../a\none600\n", out
    # A Python-made archive (pax, long names) extracts too.
    long_name = "deep/" + "n" * 150 + "/file"
    tar = make_tar([("deep", "dir", None), (long_name, "file", b"long")])
    assert put(client, sid, "/tmp/tree3", tar, resource="archive")[0] == 200
    status, raw, _, _ = get(client, sid, "/tmp/tree3/" + long_name)
    assert status == 200 and raw == b"long"
    # A single file's archive holds it under its own name.
    status, raw, _, _ = get(client, sid, "/tmp/tree/a", resource="archive")
    with tarfile.open(fileobj=io.BytesIO(raw)) as t:
        assert t.getnames() == ["a"]


@pytest.mark.parametrize("entries,why", [
    ([("../escape-%s" % uuid.uuid4().hex[:6], "file", b"x")], ".."),
    ([("ok/../../escape", "file", b"x")], ".."),
    ([("/tmp/abs-escape-%s" % uuid.uuid4().hex[:6], "file", b"x")], "absolute"),
    ([("link", "symlink", "/")], "outside"),
    ([("link", "symlink", "../../etc")], "outside"),
])
def test_archive_put_refuses_entries_leaving_the_target(box, entries, why):
    client, sid = box
    target = "/tmp/target-%s" % uuid.uuid4().hex[:8]
    tar = make_tar(entries)
    status, body = put(client, sid, target, tar, resource="archive")
    assert status == 400, body
    assert why in body["error"]["message"], body
    # Nothing was written outside the target, in the sandbox or on the host.
    listing = sh(client, sid, "ls -A /tmp /").get("stdout").split()
    for name, _, _ in entries:
        base = os.path.basename(name)
        if "escape" in base:
            assert base not in listing, listing
            assert not os.path.exists(os.path.join("/tmp", base))


def test_archive_put_cannot_write_through_an_existing_symlink(box):
    client, sid = box
    sh(client, sid, "rm -rf /tmp/t4 /tmp/outside && mkdir -p /tmp/t4 /tmp/outside && "
       "ln -s /tmp/outside /tmp/t4/sub")
    status, body = put(client, sid, "/tmp/t4", make_tar([("sub/f", "file", b"x")]), resource="archive")
    assert status == 400 and "symlink" in body["error"]["message"], body
    assert sh(client, sid, "ls -A /tmp/outside")["stdout"] == ""


def test_read_text_through_the_service_errors(box):
    # read_text has no route of its own yet (the MCP tool will call FileService::ReadText);
    # the agent's operation is checked through runsc exec in the sandbox instead.
    client, sid = box
    put(client, sid, "/tmp/text.txt", "h\u00e9llo\n".encode())
    put(client, sid, "/tmp/bin.dat", b"a\x00b")
    put(client, sid, "/tmp/latin1.txt", b"caf\xe9")
    cmd = sh(client, sid, "/.adapt/adapt-agent file read-text /tmp/text.txt 100")
    assert cmd["exitCode"] == 0 and cmd["stdout"] == "h\u00e9llo\n", cmd
    cmd = sh(client, sid, "/.adapt/adapt-agent file read-text /tmp/text.txt 3")
    assert cmd["exitCode"] == 7 and "over the limit of 3 bytes" in cmd["stderr"], cmd
    cmd = sh(client, sid, "/.adapt/adapt-agent file read-text /tmp/bin.dat 100")
    assert cmd["exitCode"] == 8 and "binary" in cmd["stderr"], cmd
    cmd = sh(client, sid, "/.adapt/adapt-agent file read-text /tmp/latin1.txt 100")
    assert cmd["exitCode"] == 8 and "UTF-8" in cmd["stderr"], cmd


def test_operations_on_a_completed_sandbox_are_409_and_other_org_404(daemon, box):
    client, sid = box
    done = client.run(["true"])
    status, raw, body, _ = get(client, done["id"], "/etc/hostname")
    assert status == 409 and done["status"] in body["error"]["message"], body
    status, body = put(client, done["id"], "/tmp/x", b"x")
    assert status == 409, body
    status, body = client.api("GET", files_url(done["id"], path="/", list=1))
    assert status == 409, body
    other = daemon.new_org()
    status, body = other.api("GET", files_url(sid, path="/etc/hostname"))
    assert status == 404, body
    status, body, _, _ = other.request("PUT", files_url(sid, path="/tmp/x"), raw=b"x")
    assert status == 404, body


def test_files_work_with_egress_none(daemon):
    client = daemon.new_org()
    sid = interactive(client, {"network": {"egress": "none"}})
    assert put(client, sid, "/tmp/n", b"offline")[0] == 200
    status, raw, _, _ = get(client, sid, "/tmp/n")
    assert status == 200 and raw == b"offline"


def stream_up(daemon, client, sid, path, size):
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=600)
    conn.putrequest("PUT", files_url(sid, path=path))
    conn.putheader("Authorization", "Bearer " + client.key)
    conn.putheader("Content-Length", str(size))
    conn.endheaders()
    zeros = bytes(CHUNK)
    sent = 0
    while sent < size:
        conn.send(zeros)
        sent += len(zeros)
    resp = conn.getresponse()
    body = json.loads(resp.read())
    conn.close()
    assert resp.getheader("Adapt-Served-By") == "agent"
    return resp.status, body


def stream_down(daemon, client, sid, path):
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=600)
    conn.request("GET", files_url(sid, path=path), headers={"Authorization": "Bearer " + client.key})
    resp = conn.getresponse()
    digest, total = hashlib.sha256(), 0
    while True:
        chunk = resp.read(CHUNK)
        if not chunk:
            break
        digest.update(chunk)
        total += len(chunk)
    conn.close()
    assert resp.getheader("Adapt-Served-By") == "agent"
    return resp.status, resp.getheader("Content-Length"), total, digest.hexdigest()


def test_one_gib_streams_up_and_down_with_flat_memory(daemon):
    client = daemon.new_org()
    sid = interactive(client, {"diskMiB": 4096})
    expected = hashlib.sha256()
    zeros = bytes(CHUNK)
    for _ in range(GIB // CHUNK):
        expected.update(zeros)
    with RssWatch(daemon.proc.pid) as up:
        status, body = stream_up(daemon, client, sid, "/var/tmp/big", GIB)
    assert status == 200 and body["size"] == GIB, body
    sys.stderr.write("adaptd RSS growth: upload %d KiB\n" % up.growth)
    assert up.growth < RSS_GROWTH_BOUND_KIB, "adaptd grew by %d KiB on a 1 GiB upload" % up.growth
    assert sh(client, sid, "find /var/tmp/big -printf '%s\\n'")["stdout"] == "%d\n" % GIB
    with RssWatch(daemon.proc.pid) as down:
        status, length, total, digest = stream_down(daemon, client, sid, "/var/tmp/big")
    assert status == 200 and length == str(GIB) and total == GIB
    assert digest == expected.hexdigest()
    sys.stderr.write("adaptd RSS growth: download %d KiB\n" % down.growth)
    assert down.growth < RSS_GROWTH_BOUND_KIB, "adaptd grew by %d KiB on a 1 GiB download" % down.growth


def test_an_interrupted_upload_leaves_the_old_file(daemon, box):
    client, sid = box
    assert put(client, sid, "/tmp/keep", b"old")[0] == 200
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=60)
    conn.putrequest("PUT", files_url(sid, path="/tmp/keep"))
    conn.putheader("Authorization", "Bearer " + client.key)
    conn.putheader("Content-Length", str(10 * CHUNK))
    conn.endheaders()
    conn.send(bytes(CHUNK))
    time.sleep(0.5)
    conn.close()
    deadline = time.monotonic() + 30
    while True:  # the agent is killed, never renames
        status, raw, _, _ = get(client, sid, "/tmp/keep")
        assert status == 200 and raw == b"old", raw[:20]
        listing = sh(client, sid, "ls -A /tmp")["stdout"]
        if ".keep.adapt-" not in listing or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert ".keep.adapt-" not in listing, listing


def agent_processes(client, sid, op):
    out = sh(client, sid, "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done")["stdout"]
    return [l for l in out.splitlines() if l.startswith("/.adapt/adapt-agent file " + op)]


def test_a_client_leaving_a_download_kills_the_agent(daemon, box):
    client, sid = box
    sh(client, sid, "head -c 200000000 /dev/zero > /var/tmp/leave.bin")
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=60)
    conn.request("GET", files_url(sid, path="/var/tmp/leave.bin"),
                 headers={"Authorization": "Bearer " + client.key})
    resp = conn.getresponse()
    assert resp.status == 200 and len(resp.read(CHUNK)) == CHUNK
    resp.close()  # the response holds the socket too
    conn.close()
    deadline = time.monotonic() + 30
    while agent_processes(client, sid, "get") and time.monotonic() < deadline:
        time.sleep(0.5)
    assert agent_processes(client, sid, "get") == []
    sh(client, sid, "rm -f /var/tmp/leave.bin")


def test_cli_cp_both_ways_and_ls(box, tmp_path):
    client, sid = box
    src = tmp_path / "f.bin"
    src.write_bytes(bytes(range(256)) * 10)
    r = client.cli("sandbox", "cp", str(src), "%s:/tmp/cli.bin" % sid)
    assert r.returncode == 0, r.stderr
    back = tmp_path / "back.bin"
    r = client.cli("sandbox", "cp", "%s:/tmp/cli.bin" % sid, str(back))
    assert r.returncode == 0, r.stderr
    assert back.read_bytes() == src.read_bytes()
    # Directories, symlinks included.
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "x.txt").write_text("x")
    (tree / "top.txt").write_text("top")
    os.symlink("sub/x.txt", tree / "link")
    r = client.cli("sandbox", "cp", str(tree), "%s:/tmp/clitree" % sid)
    assert r.returncode == 0, r.stderr
    assert sh(client, sid, "cat /tmp/clitree/sub/x.txt /tmp/clitree/top.txt; readlink /tmp/clitree/link")["stdout"] == "xtopsub/x.txt\n"
    out = tmp_path / "out"
    r = client.cli("sandbox", "cp", "%s:/tmp/clitree" % sid, str(out))
    assert r.returncode == 0, r.stderr
    assert (out / "sub" / "x.txt").read_text() == "x"
    assert os.readlink(out / "link") == "sub/x.txt"
    r = client.cli("sandbox", "ls", sid, "/tmp/clitree")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["TYPE", "MODE", "SIZE", "MODIFIED", "NAME"]
    assert any(l.split()[0] == "dir" and l.split()[-1] == "sub/" for l in lines[1:]), r.stdout
    r = client.cli("sandbox", "ls", sid, "/tmp/clitree", "--json")
    assert r.returncode == 0, r.stderr
    assert sorted(e["name"] for e in json.loads(r.stdout)["items"]) == ["link", "sub", "top.txt"]
    r = client.cli("sandbox", "cp", "%s:/no/such" % sid, str(tmp_path / "z"))
    assert r.returncode == 1 and "no/such" in r.stderr, r.stderr
    r = client.cli("sandbox", "cp", str(src), str(back))
    assert r.returncode == 2, r.stderr
