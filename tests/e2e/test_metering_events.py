"""Account alerts on the event stream and a job run's usage (issue 16): the 80% / 100% alerts
of a plan limit and of the credits reach the organization's GET /v1/events as `event: alert`
frames, once per crossing, kept like every event (Last-Event-ID resumes past them), only on
their own organization's stream, and read by both SDKs (client.account.alerts()); a job's run
carries its metered usage (`usage`) in REST, MCP and `adapt run get`, equal to the ledger's
entries for its sandbox. Metering passes every second here."""

import json
import os
import sys
import time

import pytest
import yaml

import harness
import mcp_support as mcp
from conftest import close_daemon
from sdk_support import SDK_PY, build_typescript_sdk, scenario
from test_events import frames, open_stream
from test_jobs import submit, wait_run
from test_openapi import assert_matches, schema

SPEC = yaml.safe_load(open(os.path.join(harness.REPO, "docs", "openapi.yaml")))


@pytest.fixture(scope="module")
def metered():
    d = harness.Daemon(extra_args=["--metering-interval-seconds", "1"])
    d.start()
    yield d
    d.delete_everything()
    close_daemon(d)


def org_on_plan(d, plan_id, limits=None, prices=None):
    status, plan = d.admin.api("PUT", "/v1/plans/" + plan_id,
                               {"name": plan_id, "limits": limits or {}, "prices": prices or {}})
    assert status == 200, plan
    org = d.new_org()
    status, account = d.admin.api("PUT", "/v1/orgs/%s/plan" % org.org_id, {"planId": plan_id})
    assert status == 200, account
    return org


def alerts_after(client, last_event_id=None, want=1, then=None, timeout=60):
    """The first `want` alert frames of client's organization stream (from now, or after
    last_event_id) as (id, data); `then` runs once the stream is open."""
    conn, resp = open_stream(client, last_event_id=last_event_id, timeout=30)
    got = []
    deadline = time.monotonic() + timeout
    try:
        assert resp.status == 200
        for f in frames(resp):
            if f.get("comment") == "open" and then:
                then()
            assert f.get("event") != "reset", f
            if f.get("event") == "alert":
                assert_matches(SPEC, schema(SPEC, "AlertEvent"), f["data"])
                got.append((int(f["id"]), f["data"]))
                if len(got) == want:
                    return got
            assert time.monotonic() < deadline, "timed out waiting for alerts: %r" % got
    finally:
        conn.close()
    raise AssertionError("the stream ended: %r" % got)


def test_limit_alerts_reach_the_event_stream_once_per_crossing_and_resume(metered):
    org = org_on_plan(metered, "one-gib", {"persistentStorageGiB": 1})
    other = org_on_plan(metered, "one-gib", {"persistentStorageGiB": 1})

    def make(client, name, mib):
        status, body = client.api("POST", "/v1/storage", {"name": name, "sizeMiB": mib})
        assert status == 201, body

    [(first, data)] = alerts_after(org, then=lambda: make(org, "big", 820))  # 80.1%
    assert {k: data[k] for k in ("type", "limit", "value", "used")} == {
        "type": "limit_80", "limit": "persistentStorageGiB", "value": 1024, "used": 820}, data
    assert data["at"].endswith("Z"), data
    time.sleep(2.5)  # more passes: the same crossing is not sent again
    make(org, "rest", 204)  # 100%
    # Resumed after the first: the next alert is the 100% one, nothing in between.
    [(second, data)] = alerts_after(org, last_event_id=first)
    assert second > first and (data["type"], data["used"]) == ("limit_100", 1024), data
    # Resumed before it: the 80% frame again, same id (it is kept as events are).
    replayed = alerts_after(org, last_event_id=first - 1, want=2)
    assert [(i, d["type"]) for i, d in replayed] == [(first, "limit_80"), (second, "limit_100")]

    # Another organization's stream never carries them: from before the first, the first
    # alert it reads is its own crossing.
    [(own, data)] = alerts_after(other, last_event_id=first - 1,
                                 then=lambda: make(other, "mine", 900))
    assert own > second and (data["type"], data["used"]) == ("limit_80", 900), data

    # Both SDKs read the frame.
    sys.path.insert(0, os.path.join(SDK_PY, "src"))
    import adapt
    client = adapt.Client(url=metered.url, api_key=org.key)
    alerts = client.account.alerts(last_event_id=str(first - 1), timeout=30)
    got = next(alerts)
    alerts.close()
    assert isinstance(got, adapt.AlertEvent) and got.id == str(first), got
    assert (got.type, got.limit, got.value, got.used) == ("limit_80", "persistentStorageGiB", 1024, 820)
    build_typescript_sdk()
    out = scenario("alerts", metered, org, timeout=120, LAST_EVENT_ID=second - 1)
    assert out["alert"]["id"] == str(second), out
    assert (out["alert"]["type"], out["alert"]["limit"], out["alert"]["used"]) == (
        "limit_100", "persistentStorageGiB", 1024), out


def test_credit_alerts_reach_the_event_stream(metered):
    # 1 cpu at 0.01 a cpu-second against 0.05 of credits: used up in about 5 s.
    org = org_on_plan(metered, "pricey", prices={"cpuSecondNanos": 10_000_000})
    status, entry = metered.admin.api("POST", "/v1/orgs/%s/credits" % org.org_id,
                                      {"amountNanos": 50_000_000, "reason": "test"})
    assert status == 201, entry
    made = []
    got = alerts_after(org, want=2, timeout=120,
                       then=lambda: made.append(org.create({"cpu": 1, "memoryMiB": 256})["id"]))
    assert [d["type"] for _, d in got] == ["credit_80", "credit_100"], got
    for _, d in got:
        assert d["limit"] is None and d["value"] == 50_000_000, d
    assert got[0][1]["used"] >= 40_000_000 and got[1][1]["used"] >= 50_000_000, got
    status, account = org.api("GET", "/v1/account")
    assert [a["kind"] for a in account["alerts"]] == ["balance_100", "balance_80"], account


def test_a_job_runs_usage_is_a_field_of_the_run(metered):
    org = metered.new_org()
    job = submit(org, {"command": "sleep 3", "network": {"egress": "none"}, "cpu": 1,
                       "memoryMiB": 128})
    run_ = wait_run(org, job["id"], lambda r: r["status"] == "succeeded", timeout=180)
    sandbox = run_["sandboxId"]

    def ledger_sums():
        status, page = org.api("GET", "/v1/account/ledger?limit=200")
        assert status == 200, page
        mine = [e for e in page["items"] if e.get("subjectId") == sandbox]
        return (sum(e["cpuMilliseconds"] for e in mine),
                sum(e["memoryMiBMilliseconds"] for e in mine),
                sum(e["amountNanos"] for e in mine), len(mine))

    def settled():
        # Metered up to its sandbox's deletion: two passes give the same sums.
        before = ledger_sums()
        time.sleep(1.5)
        return before if before[3] and ledger_sums() == before else None

    deadline = time.monotonic() + 60
    sums = settled()
    while not sums:
        assert time.monotonic() < deadline, "the run's usage did not settle"
        sums = settled()
    status, got = org.api("GET", "/v1/runs/" + run_["id"])
    assert status == 200, got
    assert_matches(SPEC, schema(SPEC, "Run"), got)
    usage = got["usage"]
    assert (usage["cpuMilliseconds"], usage["memoryMiBMilliseconds"], usage["amountNanos"],
            usage["entries"]) == sums, (usage, sums)
    assert usage["cpuMilliseconds"] >= 3000 and usage["gpuMilliseconds"] == 0, usage
    assert usage["memoryMiBMilliseconds"] == 128 * usage["cpuMilliseconds"], usage
    status, page = org.api("GET", "/v1/runs?jobId=" + job["id"])
    assert status == 200 and page["items"][0]["usage"] == usage, page

    cli = org.cli("--json", "run", "get", run_["id"])
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["usage"] == usage, cli.stdout

    session, _ = mcp.initialize(metered, org.key)
    result = mcp.rpc(metered, org.key, session, "tools/call",
                     {"name": "get_automation_run", "arguments": {"run_id": run_["id"]}})["result"]
    assert result.get("isError") is not True, result
    assert result["structuredContent"]["usage"] == {
        "cpu_milliseconds": usage["cpuMilliseconds"],
        "memory_mib_milliseconds": usage["memoryMiBMilliseconds"], "gpu_milliseconds": 0,
        "amount_nanos": usage["amountNanos"], "entries": usage["entries"]}, result

    # Another organization's run id is a 404, as before.
    assert metered.new_org().api("GET", "/v1/runs/" + run_["id"])[0] == 404
