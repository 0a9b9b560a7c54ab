"""The adapt CLI, with seed 001's commands exactly as written there."""

import json
import re

SEED_CREATE = ["sandbox", "create", "--cpu", "2", "--memory", "4096", "--disk", "8192", "--ttl", "3600",
               "--label", "name=research-worker", "--label", "project=research"]
SEED_DATA = '{"image":"debian:12","startup":{"mode":"command","argv":["python3","-c","print(\'hello\')"]}}\n'


def ok(r):
    assert r.returncode == 0, "exit %s\nstdout: %s\nstderr: %s" % (r.returncode, r.stdout, r.stderr)
    return r


def one_line_error(r):
    assert r.returncode != 0, r.stdout
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, "one line on stderr, got: %r" % r.stderr
    return lines[0]


def test_seed_create_get_list_delete(org):
    r = ok(org.cli(*SEED_CREATE))
    ids = re.findall(r"sbx_[A-Za-z0-9]+", r.stdout)
    assert ids, "the table names the new sandbox: %r" % r.stdout
    sid = ids[0]
    org.daemon.created.append((org, sid))

    sbx = json.loads(ok(org.cli("sandbox", "get", sid, "--json")).stdout)
    assert sbx["id"] == sid
    assert (sbx["cpu"], sbx["memoryMiB"], sbx["diskMiB"], sbx["ttlSeconds"]) == (2, 4096, 8192, 3600)
    assert sbx["labels"] == {"name": "research-worker", "project": "research"}

    table = ok(org.cli("sandbox", "get", sid)).stdout
    assert sid in table and "research-worker" in table

    listed = ok(org.cli("sandbox", "list", "--limit", "50")).stdout
    assert sid in listed and "research-worker" in listed
    page = json.loads(ok(org.cli("sandbox", "list", "--limit", "50", "--json")).stdout)
    items = page["items"] if isinstance(page, dict) else page
    assert [s["id"] for s in items] == [sid]

    ok(org.cli("sandbox", "delete", sid))
    assert org.wait_for_status(sid, "deleted", 60)["status"] == "deleted"
    assert sid not in ok(org.cli("sandbox", "list", "--limit", "50")).stdout


def test_create_with_json_output_parses(org):
    r = ok(org.cli("sandbox", "create", "--label", "name=json-out", "--ttl", "600", "--json"))
    sbx = json.loads(r.stdout)
    assert sbx["id"].startswith("sbx_") and sbx["labels"] == {"name": "json-out"} and sbx["ttlSeconds"] == 600
    org.daemon.created.append((org, sbx["id"]))


def test_create_from_data_on_stdin_runs_the_startup_command(org):
    r = ok(org.cli("sandbox", "create", "--data", "-", "--json", input=SEED_DATA))
    sbx = json.loads(r.stdout)
    org.daemon.created.append((org, sbx["id"]))
    end = org.wait_end(sbx["id"])
    assert end["status"] == "completed", end
    assert end["startup"]["stdout"] == "hello\n"
    assert end["startup"]["argv"] == ["python3", "-c", "print('hello')"]


def test_invalid_cpu_exits_nonzero_with_one_line_and_creates_nothing(org):
    r = org.cli("sandbox", "create", "--cpu", "99")
    line = one_line_error(r)
    assert "cpu" in line.lower(), line
    assert org.list_all() == []


def test_unknown_sandbox_exits_nonzero_with_one_line(org):
    line = one_line_error(org.cli("sandbox", "get", "sbx_doesnotexist"))
    assert "not" in line.lower() or "404" in line, line


def test_bad_key_exits_nonzero_with_one_line(org):
    one_line_error(org.cli("sandbox", "list", env={"ADAPT_API_KEY": "adapt_wrong"}))


def test_unreachable_server_exits_nonzero_with_one_line(org):
    one_line_error(org.cli("sandbox", "list", env={"ADAPT_URL": "http://127.0.0.1:9"}))


# --- waiting for a sandbox to leave provisioning ------------------------------------------------

def test_create_waits_until_the_sandbox_runs_so_the_next_exec_works(org):
    r = ok(org.cli("sandbox", "create", "--quiet", "--ttl", "600", "--label", "name=waits"))
    sid = r.stdout.strip()
    assert re.fullmatch(r"sbx_[A-Za-z0-9]+", sid), r.stdout
    org.daemon.created.append((org, sid))
    assert org.get(sid)["status"] == "running"
    r = ok(org.cli("sandbox", "exec", sid, "--", "echo", "right after create"))
    assert r.stdout == "right after create\n"


def test_create_no_wait_returns_while_provisioning_and_exec_then_waits_for_it(org):
    sbx = json.loads(ok(org.cli("sandbox", "create", "--no-wait", "--json", "--ttl", "600")).stdout)
    org.daemon.created.append((org, sbx["id"]))
    assert sbx["status"] == "provisioning"
    # At once, while it boots: exec waits for it instead of failing with "is provisioning".
    r = ok(org.cli("sandbox", "exec", sbx["id"], "--", "echo", "waited"))
    assert r.stdout == "waited\n"


def test_cp_and_ls_on_a_provisioning_sandbox_wait_for_it(org, tmp_path):
    sbx = json.loads(ok(org.cli("sandbox", "create", "--no-wait", "--json", "--ttl", "600")).stdout)
    org.daemon.created.append((org, sbx["id"]))
    assert sbx["status"] == "provisioning"
    local = tmp_path / "note.txt"
    local.write_text("copied while it booted\n")
    ok(org.cli("sandbox", "cp", str(local), sbx["id"] + ":/tmp/note.txt"))
    assert "note.txt" in ok(org.cli("sandbox", "ls", sbx["id"], "/tmp")).stdout
    assert org.get(sbx["id"])["status"] == "running"


def test_create_of_a_sandbox_that_cannot_start_exits_one_with_its_error(org):
    # A registry on loopback that nothing listens on: the pull fails while it provisions.
    r = org.cli("sandbox", "create", "--quiet", "--image", "127.0.0.1:9/absent:1", "--ttl", "600")
    sid = r.stdout.strip()
    if sid:
        org.daemon.created.append((org, sid))
    line = one_line_error(r)
    assert line.startswith("adapt: sandbox %s failed: " % sid), line
    assert org.get(sid)["status"] == "failed"
