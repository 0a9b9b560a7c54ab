"""Metering and the prepaid balance (issue 16): usage entries written into the ledger while a
sandbox runs (every --metering-interval-seconds, 1 here), contiguous and never twice even
across a kill -9 of adaptd (the time it ran while adaptd was down is charged after the
restart); a balance running out on a priced plan hibernates a running durable sandbox, whose
file comes back after a top-up and a start; creates and starts at a balance of 0 answer 402 in
REST and the CLI and a job's run is skipped_quota; the 80% / 100% alerts; GET
/v1/account/usage, the ledger as JSON lines and CSV, and GET /metrics (admin key only)."""

import calendar
import csv
import io
import json
import os
import re
import time

import pytest
import yaml

import harness
import mcp_support as mcp
from conftest import close_daemon
from harness import run_command as run
from test_agent import wait_for_agent
from test_jobs import submit, wait_run
from test_openapi import assert_matches, schema

SPEC = yaml.safe_load(open(os.path.join(harness.REPO, "docs", "openapi.yaml")))
SMALL = {"cpu": 1, "memoryMiB": 256}


@pytest.fixture(scope="module")
def metered():
    d = harness.Daemon(extra_args=["--metering-interval-seconds", "1",
                                   "--storage-metering-interval-seconds", "2"])
    d.start()
    yield d
    d.delete_everything()
    close_daemon(d)


@pytest.fixture(autouse=True)
def _delete_sandboxes_on_metered(metered):
    first = len(metered.created)
    yield
    harness.delete_concurrently(metered.created[first:])


def ledger(client):
    items, cursor = [], None
    while True:
        path = "/v1/account/ledger?limit=200" + ("&cursor=" + cursor if cursor else "")
        status, page = client.api("GET", path)
        assert status == 200, (status, page)
        for e in page["items"]:
            assert_matches(SPEC, schema(SPEC, "LedgerEntry"), e)
        items += page["items"]
        cursor = page["nextCursor"]
        if not cursor:
            return items


def usage_of(client, sid):
    return [e for e in ledger(client) if e["kind"] == "usage" and e.get("subjectId") == sid]


def millis(rfc3339):
    t = time.strptime(rfc3339[:19], "%Y-%m-%dT%H:%M:%S")
    return int(calendar.timegm(t)) * 1000 + int(rfc3339[20:23])


def wait_until(what, pred, timeout=90):
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.3)


def text_of(client, path):
    status, _, payload, headers = client.request("GET", path)
    return status, payload.decode(), headers.get("content-type", "")


def running(client, body):
    sid = client.create(body)["id"]
    client.wait_for_status(sid, "running", 120)
    wait_for_agent(client, sid)
    return sid


def assert_contiguous(entries, cpu):
    """One entry per period, each starting where the one before ended, quantities exact."""
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids)), ids
    for before, after in zip(entries, entries[1:]):
        assert before["periodEnd"] == after["periodStart"], (before, after)
    for e in entries:
        span = millis(e["periodEnd"]) - millis(e["periodStart"])
        assert 0 < e["cpuMilliseconds"] <= cpu * span, e
        assert e["id"] == "use_%s_%d" % (e["subjectId"], millis(e["periodStart"])), e


def test_usage_accrues_while_running_and_a_kill_9_charges_nothing_twice(metered):
    org = metered.new_org()
    sid = running(org, SMALL)
    entries = wait_until("usage entries", lambda: len(usage_of(org, sid)) >= 3 and usage_of(org, sid))
    assert_contiguous(entries, 1)
    assert all(e["amountNanos"] == 0 for e in entries)  # the default plan is free
    assert entries[0]["memoryMiBMilliseconds"] == 256 * entries[0]["cpuMilliseconds"]

    # adaptd dies; the sandbox keeps running meanwhile, and that time is charged after.
    metered.kill()
    killed_ms = int(time.time() * 1000)
    time.sleep(4)
    metered.start(port=metered.port)
    assert org.get(sid)["status"] == "running"
    # One entry spans the time adaptd was down: it starts where the last entry before the kill
    # ended and ends at the restart's first pass.
    spanning = wait_until("usage across the restart", lambda: [
        e for e in usage_of(org, sid)
        if millis(e["periodStart"]) <= killed_ms and millis(e["periodEnd"]) >= killed_ms + 3500])
    assert len(spanning) == 1, spanning
    wait_until("usage after the restart",
               lambda: usage_of(org, sid)[-1]["periodStart"] > spanning[0]["periodStart"])
    assert_contiguous(usage_of(org, sid), 1)
    # Another organization sees none of it.
    other = metered.new_org()
    assert not [e for e in ledger(other) if e["kind"] == "usage"]
    status, report = other.api("GET", "/v1/account/usage")
    assert status == 200 and report["items"] == [], report
    status, body = other.api("GET", "/v1/sandboxes/" + sid)
    assert status == 404, (status, body)


def test_usage_report_and_ledger_exports(metered):
    org = metered.new_org()
    sid = running(org, SMALL)
    wait_until("usage", lambda: len(usage_of(org, sid)) >= 2)
    status, report = org.api("GET", "/v1/account/usage")
    assert status == 200, (status, report)
    assert_matches(SPEC, schema(SPEC, "UsageReport"), report)
    [item] = [i for i in report["items"] if i.get("subjectId") == sid]
    assert item["subjectKind"] == "sandbox" and item["jobId"] is None and item["entries"] >= 2
    assert report["total"]["cpuMilliseconds"] >= item["cpuMilliseconds"] > 0
    # A range before the sandbox existed holds nothing; bad ranges are 400 naming the field.
    status, empty = org.api("GET", "/v1/account/usage?from=2020-01-01&to=2020-02-01T00:00:00Z")
    assert status == 200 and empty["items"] == [] and empty["total"]["entries"] == 0, empty
    # sscanf's %d alone took signs and spaces; timegm then moved the time.
    for query, field in (("from=yesterday", "from"), ("to=2026-13-01", "to"),
                         ("from=2026-01-01T-1:-1:-1Z", "from"), ("from=2026-01-+1", "from"),
                         ("to=2026-01-01T%201:00:00Z", "to"),
                         ("from=2026-02-01&to=2026-01-01", "to")):
        status, body = org.api("GET", "/v1/account/usage?" + query)
        assert status == 400 and body["error"]["field"] == field, (query, status, body)

    entries = usage_of(org, sid)
    status, text, ctype = text_of(org, "/v1/account/ledger?format=jsonl")
    assert status == 200 and ctype == "application/x-ndjson", (status, ctype, text)
    lines = [json.loads(line) for line in text.splitlines()]
    assert {e["id"] for e in entries} <= {e["id"] for e in lines}
    status, text, ctype = text_of(org, "/v1/account/ledger?format=csv")
    assert status == 200 and ctype.startswith("text/csv"), (status, ctype, text)
    rows = list(csv.DictReader(io.StringIO(text)))
    by_id = {r["id"]: r for r in rows}
    for e in entries:
        assert by_id[e["id"]]["subjectId"] == sid
        assert int(by_id[e["id"]]["cpuMilliseconds"]) == e["cpuMilliseconds"]
    status, body = org.api("GET", "/v1/account/ledger?format=xml")
    assert status == 400 and body["error"]["field"] == "format", body

    # The CLI: the export as it is, and the usage table.
    cli = org.cli("account", "ledger", "--format", "csv")
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout.startswith("id,orgId,kind,amountNanos") and sid in cli.stdout
    cli = org.cli("account", "usage")
    assert cli.returncode == 0, cli.stderr
    assert "sandbox " + sid in cli.stdout and "total" in cli.stdout


def put_priced_plan(d, plan_id, cpu_second_nanos):
    status, plan = d.admin.api("PUT", "/v1/plans/" + plan_id, {
        "name": plan_id, "limits": {}, "prices": {"cpuSecondNanos": cpu_second_nanos}})
    assert status == 200, plan


def credit(d, org, nanos, reason="top-up"):
    status, entry = d.admin.api("POST", "/v1/orgs/%s/credits" % org.org_id,
                                {"amountNanos": nanos, "reason": reason})
    assert status == 201, entry


def test_an_empty_balance_refuses_creates_and_starts_and_hibernates_what_runs(metered):
    put_priced_plan(metered, "metered", 1_000_000)  # 0.001 a cpu-second
    org = metered.new_org()
    status, account = metered.admin.api("PUT", "/v1/orgs/%s/plan" % org.org_id,
                                        {"planId": "metered"})
    assert status == 200 and account["balanceNanos"] == 0, account

    # Nothing was credited: creates are 402 with the balance and what to do, nothing made.
    status, body = org.api("POST", "/v1/sandboxes", SMALL)
    assert status == 402, (status, body)
    assert body["error"]["code"] == "payment_required", body
    assert "balance is 0.00" in body["error"]["message"] and "top-up" in body["error"]["message"]
    assert org.list_all() == []
    cli = org.cli("sandbox", "create", "--cpu", "1", "--memory", "256")
    assert cli.returncode != 0 and "balance is 0.00" in cli.stderr, (cli.stdout, cli.stderr)
    session, _ = mcp.initialize(metered, org.key)
    answer = mcp.rpc(metered, org.key, session, "tools/call",
                     {"name": "create_sandbox", "arguments": {"name": "refused"}})
    result = answer["result"]
    assert result["isError"] is True, result
    assert "balance is 0.00" in result["content"][0]["text"], result
    account = mcp.rpc(metered, org.key, session, "tools/call",
                      {"name": "get_billing_account", "arguments": {}})["result"]
    assert account["structuredContent"]["balance_nanos"] == 0, account
    # A job's run is skipped for the quota, and nothing is deleted or made.
    job = submit(org, {"command": "echo hi"})
    skipped = wait_run(org, job["id"], lambda r: r["status"] == "skipped_quota")
    assert "balance" in skipped["error"], skipped

    # About 30 seconds of one cpu: the sandbox runs, then hibernates, its file kept.
    credit(metered, org, 30_000_000)
    sid = running(org, dict(SMALL, startupClass="durable"))
    out = run(org, sid, command="echo kept > /root/keep.txt")
    assert out["exitCode"] == 0, out
    sbx = org.wait_for_status(sid, "hibernated", 120)
    assert sbx["hibernation"]["workspace"] == "kept", sbx
    status, account = org.api("GET", "/v1/account")
    assert status == 200, account
    assert_matches(SPEC, schema(SPEC, "Account"), account)
    assert account["balanceNanos"] <= 0 and account["usageNanos"] >= 30_000_000, account
    kinds = [a["kind"] for a in account["alerts"]]
    assert kinds == ["balance_100", "balance_80"], account["alerts"]
    status, body = org.api("POST", "/v1/sandboxes/%s/start" % sid)
    assert status == 402 and body["error"]["code"] == "payment_required", body
    time.sleep(2)  # alerts are emitted once per credits total
    status, account = org.api("GET", "/v1/account")
    assert [a["kind"] for a in account["alerts"]] == kinds, account["alerts"]

    # A top-up: it starts again, with its file.
    credit(metered, org, 1_000_000_000)
    status, body = org.api("POST", "/v1/sandboxes/%s/start" % sid)
    assert status == 202, (status, body)
    org.wait_for_status(sid, "running", 120)
    wait_for_agent(org, sid)
    out = run(org, sid, command="cat /root/keep.txt")
    assert out["stdout"] == "kept\n", out


def test_an_empty_balance_skips_automation_runs_as_quota_without_pausing(metered):
    put_priced_plan(metered, "metered", 1_000_000)
    org = metered.new_org()
    sid = running(org, SMALL)  # on the free default plan
    status, a = org.api("POST", "/v1/automations",
                        {"sandboxId": sid, "intervalSeconds": 1, "command": "echo paid"})
    assert status == 201, (status, a)

    def runs():
        status, page = org.api("GET", "/v1/runs?limit=200&automationId=" + a["id"])
        assert status == 200, page
        return page["items"]

    wait_until("a run that succeeds", lambda: [r for r in runs() if r["status"] == "succeeded"])
    # The plan becomes priced with nothing credited: the next slots are skipped for the quota.
    status, account = metered.admin.api("PUT", "/v1/orgs/%s/plan" % org.org_id,
                                        {"planId": "metered"})
    assert status == 200 and account["balanceNanos"] <= 0, account
    skipped = wait_until("two skipped_quota runs", lambda: (
        lambda s: s if len(s) >= 2 else None)([r for r in runs() if r["status"] == "skipped_quota"]))
    for r in skipped:
        assert "balance" in r["error"] and r.get("exitCode") is None, r
    # A manual run is refused the same way; skipped runs are not failures, nothing pauses.
    status, manual = org.api("POST", "/v1/automations/%s/trigger" % a["id"])
    assert status == 202 and manual["status"] == "skipped_quota", (status, manual)
    status, after = org.api("GET", "/v1/automations/" + a["id"])
    assert status == 200 and after["enabled"] and after["pausedReason"] is None, after
    status, _ = org.api("DELETE", "/v1/automations/" + a["id"])
    assert status == 204


def parse_metrics(text):
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            assert re.match(r"^# (HELP|TYPE) adapt_\w+ ", line) or not line, line
            continue
        m = re.match(r'^(adapt_[a-z_]+)\{((?:[a-z_]+="[^"\\\n]*",?)*)\} (-?[0-9]+(?:\.[0-9]+)?)$',
                     line)
        assert m, line
        labels = dict(re.findall(r'([a-z_]+)="([^"]*)"', m.group(2)))
        samples[(m.group(1), tuple(sorted(labels.items())))] = m.group(3)
    return samples


def test_metrics_need_the_admin_key_and_parse(metered):
    org = metered.new_org()
    sid = running(org, SMALL)
    wait_until("usage", lambda: usage_of(org, sid))
    status, body = org.api("GET", "/metrics")
    assert status == 403, (status, body)
    status, body = org.api("GET", "/metrics", key="")
    assert status == 401, (status, body)
    status, text, ctype = text_of(metered.admin, "/metrics")
    assert status == 200 and ctype.startswith("text/plain; version=0.0.4"), (status, ctype, text)
    samples = parse_metrics(text)
    mine = ("org", org.org_id)
    assert samples[("adapt_sandboxes", (mine, ("status", "running")))] == "1"
    assert float(samples[("adapt_usage_cpu_seconds_total", (mine,))]) > 0
    assert samples[("adapt_account_balance", (mine,))] == "0.000000000"
    limit = samples[("adapt_plan_limit", (("limit", "concurrent_sandboxes"), mine,
                                          ("plan", "default")))]
    assert int(limit) > 0


def test_each_limit_alerts_at_80_and_100_percent_once_per_crossing(metered):
    status, _ = metered.admin.api("PUT", "/v1/plans/one-gib-volumes",
                                  {"name": "one-gib-volumes", "limits": {"persistentStorageGiB": 1}})
    assert status == 200
    org = metered.new_org()
    assert metered.admin.api("PUT", "/v1/orgs/%s/plan" % org.org_id, {"planId": "one-gib-volumes"})[0] == 200

    def limit_alerts():
        status, account = org.api("GET", "/v1/account")
        assert status == 200, account
        for a in account["alerts"]:
            assert_matches(SPEC, schema(SPEC, "AccountAlert"), a)
        return [(a["kind"], a["limitValue"], a["used"]) for a in account["alerts"]
                if a["kind"].startswith("limit_") and a["limit"] == "persistentStorageGiB"]

    assert org.api("POST", "/v1/storage", {"name": "big", "sizeMiB": 820})[0] == 201  # 80.1%
    wait_until("the 80% alert", lambda: limit_alerts() == [("limit_80", 1024, 820)])
    time.sleep(2.5)  # more passes: the same crossing alerts once
    assert limit_alerts() == [("limit_80", 1024, 820)]
    assert org.api("POST", "/v1/storage", {"name": "rest", "sizeMiB": 204})[0] == 201  # 100%
    wait_until("the 100% alert", lambda: len(limit_alerts()) == 2)
    assert limit_alerts()[0] == ("limit_100", 1024, 1024)  # newest first

    # Back under both re-arms them: the next crossing alerts again.
    for name in ("big", "rest"):
        assert org.api("DELETE", "/v1/storage/%s?confirm=%s" % (name, name))[0] in (200, 202, 204)
    time.sleep(2.5)
    assert org.api("POST", "/v1/storage", {"name": "again", "sizeMiB": 900})[0] == 201
    wait_until("the second 80% alert", lambda: len(limit_alerts()) == 3)
    assert limit_alerts()[0] == ("limit_80", 1024, 900)

    # Another organization's account shows none of them; MCP shows them too.
    assert metered.new_org().api("GET", "/v1/account")[1]["alerts"] == []
    session, _ = mcp.initialize(metered, org.key)
    result = mcp.rpc(metered, org.key, session, "tools/call",
                     {"name": "get_billing_account", "arguments": {}})["result"]
    alerts = [a for a in result["structuredContent"]["alerts"] if a["kind"] == "limit_80"]
    assert alerts and alerts[0]["limit"] == "persistent_storage_gib" and alerts[0]["used"] == 900, result


def test_a_job_runs_usage_is_split_out_per_run(metered):
    org = metered.new_org()
    job = submit(org, {"command": "sleep 4", "network": {"egress": "none"}, "cpu": 1, "memoryMiB": 128})
    run_ = wait_run(org, job["id"], lambda r: r["status"] == "running" and r["sandboxId"])

    def item():
        status, report = org.api("GET", "/v1/account/usage")
        assert status == 200, report
        assert_matches(SPEC, schema(SPEC, "UsageReport"), report)
        found = [i for i in report["items"] if i.get("subjectId") == run_["sandboxId"]]
        return found[0] if found else None

    got = wait_until("the run's usage", item)
    assert got["jobId"] == job["id"] and got["runId"] == run_["id"] and got["cpuMilliseconds"] > 0, got
    cli = org.cli("account", "usage")
    assert cli.returncode == 0 and run_["id"] in cli.stdout, (cli.stdout, cli.stderr)
    # A sandbox no job made has no run.
    sid = running(org, SMALL)
    wait_until("the sandbox's usage", lambda: usage_of(org, sid))
    status, report = org.api("GET", "/v1/account/usage")
    assert [i["runId"] for i in report["items"] if i.get("subjectId") == sid] == [None]
