"""GET /v1/sandboxes/{id}/stats and `adapt sandbox stats` (issue 21: the figures behind the
dashboard's CPU and memory charts), read from the running sandbox's cgroup."""
import json
import time


def stats(client, sid, expect=200):
    status, body = client.api("GET", "/v1/sandboxes/%s/stats" % sid)
    assert status == expect, "GET stats -> %s %r" % (status, body)
    return body


def test_a_running_sandbox_has_figures_and_its_cpu_time_grows_with_work(org):
    sid = org.create({"cpu": 1, "memoryMiB": 512, "labels": {"name": "stats"}})["id"]
    org.wait_for_status(sid, ["running"])
    first = stats(org, sid)
    assert set(first) == {"sandboxId", "at", "cpu", "memoryMiB", "cpuUsageUsec", "memoryBytes", "pids"}
    assert first["sandboxId"] == sid and first["cpu"] == 1 and first["memoryMiB"] == 512
    assert first["memoryBytes"] > 0 and first["pids"] > 0
    # A second of busy work inside shows up as CPU time.
    status, cmd = org.api("POST", "/v1/sandboxes/%s/commands" % sid,
                          {"command": "end=$(($(date +%s)+2)); while [ $(date +%s) -lt $end ]; do :; done",
                           "waitSeconds": 30})
    assert status == 200 and cmd["exitCode"] == 0, cmd
    second = stats(org, sid)
    assert second["cpuUsageUsec"] - first["cpuUsageUsec"] >= 500_000, (first, second)
    assert second["at"] >= first["at"]

    out = org.cli("sandbox", "stats", sid)
    assert out.returncode == 0, out.stderr
    assert "cpu time" in out.stdout and "of 512 MiB" in out.stdout, out.stdout
    out = org.cli("sandbox", "stats", sid, "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["sandboxId"] == sid, out


def test_stats_answer_404_for_another_organization_and_409_unless_running(daemon, org):
    sid = org.create({})["id"]
    org.wait_for_status(sid, ["running"])
    other = daemon.new_org()
    err = stats(other, sid, expect=404)
    assert err["error"]["code"] == "not_found"
    stats(org, "sbx_doesnotexist0000000000", expect=404)
    status, body = org.api("POST", "/v1/sandboxes/%s/stop" % sid)
    assert status == 200, body
    err = stats(org, sid, expect=409)
    assert "hibernated" in err["error"]["message"]
    out = org.cli("sandbox", "stats", sid)
    assert out.returncode != 0 and "hibernated" in out.stderr, out
