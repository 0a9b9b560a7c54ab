"""The TypeScript SDK (sdk/typescript, @adapt/sdk, issue 23) against a real adaptd: each test
runs one scenario of sdk/typescript/test/scenarios.mjs with the system's node (the SDK
targets Node >= 18 and its global fetch), then asserts what the scenario printed."""

import io
import json
import os
import subprocess
import tarfile
import uuid

import pytest

from sdk_support import NODE, README_OUTPUT, DroppingProxy, build_typescript_sdk, readme_example, scenario


@pytest.fixture(scope="module")
def built():
    return build_typescript_sdk()


def test_create_from_the_environment_runs_commands_and_round_trips_files(built, daemon, org):
    out = scenario("basic", daemon, org)
    daemon.created.append((org, out["id"]))
    assert out["status"] == "running" and out["memoryMiB"] == 512
    assert out["labels"] == {"name": "sdk-ts", "team": "sdk"}
    e = out["echo"]
    assert (e["exitCode"], e["stdout"], e["status"]) == (0, "hello\n", "exited")
    s = out["shell"]
    assert (s["exitCode"], s["stdout"], s["stderr"]) == (3, "out\n", "err\n")
    assert out["check"]["cls"] == "CommandFailed" and "exited with 3" in out["check"]["message"]
    assert out["written"] == {"path": "/tmp/sdk/note.txt", "size": 15}
    assert out["text"] == "from typescript" and out["binaryRoundTrip"] is True
    entries = {x["name"]: x for x in out["entries"]}
    assert entries["note.txt"]["type"] == "file" and entries["note.txt"]["mode"] == "0600"
    assert entries["bin"]["size"] == 768 and out["stat"]["size"] == 15
    assert out["existsAfterRemove"] is False
    assert (out["python"]["exitCode"], out["python"]["stdout"]) == (4, "3\n")
    # asyncDispose (`await using`) deleted it.
    status, body = org.api("GET", "/v1/sandboxes/" + out["id"])
    assert status == 200 and body["status"] in ("deleting", "deleted"), body


def test_output_streams_while_the_command_runs_and_a_long_one_is_waited(built, daemon, org):
    out = scenario("stream", daemon, org)
    r = out["result"]
    assert (r["exitCode"], r["stdout"], r["stderr"]) == (0, "first\nthird\n", "second\n")
    assert out["streamedStdout"] == "first\nthird\n" and out["streamedStderr"] == "second\n"
    assert out["firstChunkLeadMs"] >= 2000, "the first line arrived only when the command ended"
    assert out["startedStatus"] == "running"
    w = out["waited"]
    assert (w["status"], w["exitCode"], w["stdout"]) == ("exited", 0, "done\n")
    assert out["killed"]["status"] == "killed"
    assert out["slow"] == "slow\n"
    assert out["listed"] == out["expectedList"]
    assert out["afterDelete"] == "deleted"


def test_errors_are_typed_and_carry_the_field(built, daemon, org):
    other = daemon.new_org()
    theirs = other.create({})
    out = scenario("errors", daemon, org, OTHER_SANDBOX_ID=theirs["id"])
    m = out["memory"]
    assert (m["cls"], m["field"], m["status"], m["code"]) == ("InvalidArgument", "memoryMiB", 400, "invalid_argument")
    assert "memoryMiB" in m["message"]
    assert out["platformLabel"]["field"] == "labels.platform.x"
    assert out["listed"] == [], "bad input created something"
    for key in ("get", "run", "read", "delete"):
        assert (out[key]["cls"], out[key]["status"], out[key]["code"]) == ("NotFound", 404, "not_found"), (key, out[key])
    assert other.get(theirs["id"])["status"] != "deleted"
    assert out["badKey"]["cls"] == "Unauthenticated" and out["badKey"]["status"] == 401
    assert out["unreachable"]["cls"] == "Unavailable"


def test_list_follows_next_cursor_across_pages(built, daemon, org):
    out = scenario("pages", daemon, org)
    assert out["listed"] == list(reversed(out["created"]))
    assert out["queried"] == [out["created"][1]]


def test_a_create_whose_answer_was_cut_is_retried_with_its_key_and_makes_one_sandbox(built, daemon, org):
    proxy = DroppingProxy(daemon.port, lambda m, p: m == "POST" and p == "/v1/sandboxes")
    try:
        out = scenario("retry", daemon, org, PROXY_URL=proxy.url)
        daemon.created.append((org, out["id"]))
    finally:
        proxy.close()
    posts = [h for m, p, h in proxy.seen if m == "POST"]
    assert proxy.dropped == 1 and len(posts) == 2
    assert posts[0]["idempotency-key"] == posts[1]["idempotency-key"]
    assert [s["id"] for s in org.list_all()] == [out["id"]]


def test_a_hundred_mib_streams_both_ways_with_flat_memory(built, daemon, org, tmp_path):
    out = scenario("big", daemon, org, WORK_DIR=tmp_path)
    assert out["written"]["size"] == 100 << 20 and out["writtenChunked"]["size"] == 100 << 20
    assert out["downloaded"] == 100 << 20
    assert out["downSha256"] == out["sha256"] and out["remote"] == [out["sha256"]]
    # A few MiB of chunks in flight (about 4 measured on a quiet machine; up to 26 seen on a busy
    # CI machine, where garbage waits longer for the collector). A buffered 100 MiB file would
    # show at least 100, so half of it still tells streaming from buffering.
    assert max(out["rssGrowthMiB"].values()) < 50, out["rssGrowthMiB"]


def test_archives_round_trip(built, daemon, org, tmp_path):
    tar_in, tar_out = tmp_path / "in.tar", tmp_path / "out.tar"
    with tarfile.open(tar_in, "w") as tar:
        for name, data in (("a.txt", b"alpha"), ("d/b.txt", b"beta")):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tar.addfile(ti, io.BytesIO(data))
    # A name beside the download that exists already (a symlink a sandbox's files brought, at
    # the name the SDK once wrote to) is never followed: the download is a new file.
    victim, got = tmp_path / "victim", tmp_path / "got.txt"
    victim.write_bytes(b"mine")
    os.symlink(victim, str(got) + ".part")
    out = scenario("archive", daemon, org, TAR_IN=tar_in, TAR_OUT=tar_out, GOT=got)
    assert out["beta"] == "beta" and out["bytes"] > 0
    with tarfile.open(tar_out) as tar:
        assert {m.name.lstrip("./") for m in tar.getmembers() if m.isfile()} == {"a.txt", "d/b.txt"}
    assert out["got"] == 5 and got.read_bytes() == b"alpha" and not got.is_symlink()
    assert victim.read_bytes() == b"mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["got.txt", "got.txt.part", "in.tar", "out.tar", "victim"]


def test_the_readme_example_runs_as_written(built, daemon, org, tmp_path):
    # The example imports "@adapt/sdk" as an installed package would be: here, dist/.
    code = readme_example("ts").replace('"@adapt/sdk"', json.dumps(built))
    script = tmp_path / "readme.mjs"
    script.write_text(code)
    e = dict(os.environ, ADAPT_URL=daemon.url, ADAPT_API_KEY=org.key)
    r = subprocess.run([NODE, str(script)], capture_output=True, text=True, timeout=300, env=e)
    assert r.returncode == 0, r.stderr
    assert r.stdout == README_OUTPUT.format(lang="typescript")
    assert [s["status"] for s in org.list_all()] in ([], ["deleting"]), "finally did not delete it"


@pytest.mark.parametrize("answer", [(503, {}), (429, {"Retry-After": "1"})], ids=["503", "429"])
def test_a_transient_refusal_is_retried(built, daemon, org, answer):
    proxy = DroppingProxy(daemon.port, lambda m, p: m == "GET", answer=answer)
    try:
        out = scenario("transient", daemon, org, PROXY_URL=proxy.url)
    finally:
        proxy.close()
    assert out["listed"] == [] and proxy.dropped == 1 and len(proxy.seen) == 2
    if answer[0] == 429:
        assert out["tookMs"] >= 1000, "Retry-After was not waited"
    proxy = DroppingProxy(daemon.port, lambda m, p: m == "GET", answer=answer)
    try:
        out = scenario("transientNoRetry", daemon, org, PROXY_URL=proxy.url)
    finally:
        proxy.close()
    want = "Unavailable" if answer[0] == 503 else "RateLimited"
    assert (out["error"]["cls"], out["error"]["status"]) == (want, answer[0])
    assert out["error"]["message"] == "try again"


def test_secrets_objects_storage_and_endpoints(built, daemon, org, tmp_path):
    name = "SDK_TS_" + uuid.uuid4().hex[:8].upper()
    out = scenario("resources", daemon, org, SECRET_NAME=name, WORK_DIR=tmp_path)
    assert out["exists"] == [True, False] and out["health"] is True
    assert out["downloadedBytes"] == 12 and (tmp_path / "obj.txt").read_bytes() == b"object bytes"
    assert (out["v1"], out["v2"], out["got"]) == (1, 2, 2) and name in out["secretNames"]
    assert out["secretAfterDelete"]["cls"] == "NotFound"
    o = out["object"]
    assert (o["key"], o["size"], o["contentType"]) == ("sdk/a.txt", 12, "text/plain")
    assert out["objectText"] == "object bytes" and out["objectKeys"] == ["sdk/a.txt"]
    assert out["objectAfterDelete"]["cls"] == "NotFound"
    assert out["link"]["key"] == "sdk/a.txt" and out["linkText"] == "object bytes"
    t = out["token"]
    assert t["bucket"] == "objects" and t["accessKeyId"] and t["secretAccessKey"]
    assert out["tokens"] == [[t["id"], False]] and out["tokensAfterRevoke"] in ([True], [])
    att = out["attached"]
    assert {"SANDBOX_STORAGE_ENDPOINT", "SANDBOX_STORAGE_TOKEN"} <= set(att["variables"])
    assert att["restarted"] is True and out["statusAfterAttach"] == "running"
    assert out["endpointVariable"] == "SANDBOX_STORAGE_ENDPOINT=[REDACTED]\n"
    v = out["volume"]
    assert (v["name"], v["sizeMiB"], v["status"], v["default"]) == ("sdk-notes", 64, "ready", False)
    assert out["volumeGot"] == v["id"] and out["volumeAfterDelete"]["cls"] == "NotFound"
    assert ["default", True] in out["storage"] and ["sdk-notes", False] in out["storage"]
    ep = out["endpoint"]
    assert ep["port"] == 8000 and ep["id"].startswith("ep_") and out["endpointIds"] == [ep["id"]]
    assert out["endpointsAfterDelete"] == []
    assert (out["badPort"]["cls"], out["badPort"]["field"]) == ("InvalidArgument", "port")


def test_endpoints_by_port_artifacts_and_python_on_its_route(built, daemon, org):
    out = scenario("extras", daemon, org)
    a, b, c = out["endpointIds"]
    assert [e["id"] for e in out["every"]] == [c, b, a]  # the organization's, newest first
    assert sorted(out["removed"]) == sorted([a, b]) and out["left"] == [c] and out["removedAgain"] == []
    assert (out["badPort"]["cls"], out["badPort"]["field"]) == ("InvalidArgument", "port")
    art = out["artifact"]
    assert art["key"].startswith("artifacts/sbx_") and art["key"].endswith("/report.txt")
    assert art["size"] == 7 and art["expiresAt"] and out["artifactText"] == "report\n"
    assert out["mine"]["key"] == "sdk/mine.txt" and out["mineText"] == "report\n"
    assert (out["credential"]["cls"], out["credential"]["field"]) == ("InvalidArgument", "path")
    listed = out["artifacts"]
    assert listed["prefix"] == "artifacts/%s/" % listed["sandboxId"] and listed["nextCursor"] is None
    assert [o["key"] for o in listed["items"]] == [art["key"]]
    p = out["python"]
    assert (p["status"], p["exitCode"], p["stdout"]) == ("exited", 3, "42\n") and out["pythonById"] == "42\n"
    s = out["pythonStreamed"]
    assert (s["exitCode"], s["stdout"], out["pythonChunks"]) == (0, "a\nb\n", "a\nb\n")
    assert out["pythonCheck"]["cls"] == "CommandFailed" and "python exited with 2" in out["pythonCheck"]["message"]
    assert out["pythonCwd"] == "/tmp\n"
    n = out["noPython"]
    assert (n["cls"], n["status"]) == ("Unsupported", 422) and "python3" in n["message"] and out["nopyId"] in n["message"]
    ns = out["noPythonStreamed"]
    assert (ns["exitCode"], ns["stderr"]) == (127, out["pythonMissing"] + "\n"), ns


def test_events_stop_start_and_sites(built, daemon, org):
    out = scenario("lifecycle", daemon, org)
    assert out["waitedStatus"] == "running", out
    assert out["gpuTypes"]["items"] == [] and "GPU" in out["gpuTypes"]["explanation"], out
    statuses = [e["status"] for e in out["events"]]
    assert statuses[0] == "provisioning" and statuses[-1] == "running"
    assert all(e["id"] for e in out["events"])
    assert out["stopped"]["status"] == "hibernated"
    assert out["stopped"]["hibernation"]["workspace"] == "discarded"
    assert out["stopAgain"]["cls"] == "Conflict"
    assert out["started"]["status"] == "running" and out["echo"] == "back\n"
    site = out["site"]
    assert site["name"] == "sdk-site" and site["url"].endswith("/index.html")
    assert out["siteIds"] == [site["id"]] and out["siteRelease"] == site["releaseId"]
    assert out["siteAfterDelete"]["cls"] == "NotFound"


def test_fork_of_a_kept_checkpoint(built, daemon, org):
    out = scenario("fork", daemon, org, timeout=300)
    assert out["taken"]["keep"] is True and out["taken"]["platform"] == "ptrace", out
    assert out["forkStatus"] == "running", out
    assert out["operation"]["kind"] == "fork" and out["operation"]["sandboxId"] == out["forkId"], out
    assert out["file"] == "from ts\n", out
    assert out["keptAfterDelete"] == ["ts-base"], out
    assert out["orgKept"] == [["ts-base", True]], out
    assert out["orgAfterDelete"] == [], out


def test_org_events_throw_events_reset_when_the_resume_point_is_not_kept(built, daemon, org):
    out = scenario("eventsReset", daemon, org, timeout=60)
    assert "event" not in out, out
    reset = out["reset"]
    assert reset["cls"] == "EventsReset" and reset["code"] == "events_reset", reset
    assert "newer than any event" in reset["message"], reset
    assert 0 <= int(reset["lastEventId"]) < 999999999999, reset


def test_run_events_of_a_job_from_the_organizations_stream(built, daemon, org):
    out = scenario("runEvents", daemon, org, timeout=300)
    events = out["events"]
    assert [e["status"] for e in events] == ["starting", "running", "failed"], events
    assert all(e["jobId"] == out["jobId"] and "automationId" not in e and e["id"] for e in events), events
    assert events[-1]["exitCode"] == 3 and events[-1]["sandboxId"], events


def test_organizations_and_keys_with_the_admin_key(built, daemon):
    name = "sdk-ts-" + uuid.uuid4().hex[:8]
    out = scenario("orgs", daemon, daemon.admin, ORG_NAME=name)
    made = out["made"]
    assert made["id"].startswith("org_") and made["name"] == name and made["admin"] is False
    assert made["id"] in out["orgIds"]
    key = out["key"]
    assert key["key"].startswith("adapt_") and key["orgId"] == made["id"] and key["name"] == "ci"
    assert out["theirList"] == [] and out["keyIds"] == [key["id"]]
    assert (out["afterDelete"]["cls"], out["afterDelete"]["status"]) == ("Unauthenticated", 401)
    assert (out["again"]["cls"], out["again"]["status"]) == ("Conflict", 409)


def test_an_organization_makes_lists_and_revokes_its_own_keys(built, daemon, org):
    out = scenario("ownKeys", daemon, org)
    key = out["key"]
    assert key["key"].startswith("adapt_") and key["orgId"] == org.org_id and key["name"] == "ts-own"
    assert key["expiresAt"] is not None
    listed = {k["id"]: k for k in out["listed"]}
    assert key["id"] in listed and "key" not in listed[key["id"]]
    assert listed[key["id"]]["expiresAt"] == key["expiresAt"]
    # Revoked with itself: the next request is refused at once.
    assert (out["afterRevoke"]["cls"], out["afterRevoke"]["status"]) == ("Unauthenticated", 401)
    assert (out["again"]["cls"], out["again"]["status"]) == ("NotFound", 404)


def test_an_app_rolled_back_through_its_operation(built, daemon, org):
    out = scenario("appRollback", daemon, org, timeout=300)
    assert out["sameApp"] and out["first"] != out["second"], out
    assert out["back"]["releaseId"] == out["first"] and out["back"]["readyReplicas"] >= 1, out
    assert out["noneBefore"]["cls"] == "Conflict", out
    assert "has no release before" in out["noneBefore"]["message"], out
    assert out["again"]["releaseId"] == out["second"], out
    assert (out["badWait"]["cls"], out["badWait"]["field"]) == ("InvalidArgument", "waitSeconds"), out
