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
