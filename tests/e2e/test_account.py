"""Accounts, plans and limits (issue 16): register_user / POST /v1/account/register,
GET /v1/account, the admin plan API and --plans-file, credits and the balance, and every
plan limit refused at exactly its value in the transaction that records the thing (50
concurrent creates against a limit of 10 make exactly 10), in REST, MCP and the CLI.

The daemon here loads an operator plans file and a terms version of its own."""

import json
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import harness
import mcp_support as mcp
from conftest import close_daemon

TERMS = "2026-12-tos"
SMALL = {"cpu": 1, "memoryMiB": 128}


@pytest.fixture(scope="module")
def plans_file():
    d = tempfile.mkdtemp(prefix="adapt-plans-")
    path = os.path.join(d, "plans.json")
    with open(path, "w") as f:
        json.dump({"plans": [{"id": "starter", "name": "Starter",
                              "limits": {"concurrentSandboxes": 3, "cpu": 4, "memoryMiB": 4096,
                                         "maxRunSeconds": 3600, "gpus": 0},
                              "prices": {"cpuSecondNanos": 12000,
                                         "memoryGiBSecondNanos": 1500,
                                         "storageGiBMonthNanos": 80000000,
                                         "gpuSecondNanos": 0}}]}, f)
    return path


@pytest.fixture(scope="module")
def acct(plans_file):
    d = harness.Daemon(extra_args=["--plans-file", plans_file, "--terms-version", TERMS])
    d.start()
    yield d
    d.delete_everything()
    close_daemon(d)


@pytest.fixture(autouse=True)
def _delete_sandboxes_on_acct(acct):
    first = len(acct.created)
    yield
    harness.delete_concurrently(acct.created[first:])


def put_plan(d, plan_id, limits):
    status, plan = d.admin.api("PUT", "/v1/plans/" + plan_id, {"name": plan_id, "limits": limits})
    assert status == 200, plan
    return plan


def org_on_plan(d, plan_id, limits):
    put_plan(d, plan_id, limits)
    org = d.new_org()
    status, account = d.admin.api("PUT", "/v1/orgs/%s/plan" % org.org_id, {"planId": plan_id})
    assert status == 200, account
    assert account["plan"]["id"] == plan_id and account["orgId"] == org.org_id
    return org


def refused(status, body, limit_text):
    assert status == 429, (status, body)
    assert body["error"]["code"] == "resource_exhausted", body
    message = body["error"]["message"]
    assert limit_text in message, message
    assert "larger plan" in message, message


# --- registration and the account ------------------------------------------------------------

def test_registration_is_idempotent_and_makes_the_default_storage(acct):
    org = acct.new_org()
    status, before = org.api("GET", "/v1/account")
    assert status == 200, before
    # An operator-made organization is registered on creation, on the default plan.
    assert before["registered"] is True and before["plan"]["id"] == "default", before
    assert before["balanceNanos"] == 0
    status, first = org.api("POST", "/v1/account/register")
    assert status == 200, first
    status, second = org.api("POST", "/v1/account/register", {})
    assert status == 200, second
    assert first == second
    assert first["registeredAt"] == before["registeredAt"]
    assert first["orgId"] == org.org_id and first["termsVersion"] == TERMS
    status, storage = org.api("GET", "/v1/storage/default")
    assert status == 200, storage
    status, err = org.api("POST", "/v1/account/register", {"terms": "yes"})
    assert status == 400 and err["error"]["field"] == "terms", err


def test_the_default_plan_allows_seed_001s_largest_sandbox(acct):
    status, plan = acct.admin.api("GET", "/v1/plans/default")
    assert status == 200, plan
    limits = plan["limits"]
    assert limits["cpu"] >= 32 and limits["memoryMiB"] >= 65536, plan
    assert limits["concurrentSandboxes"] == 50 and limits["maxRunSeconds"] is None, plan
    # A queue of jobs has a bound on the default plan too.
    assert limits["queuedJobs"] == 1000, plan
    org = acct.new_org()
    sbx = org.create({"cpu": 32, "memoryMiB": 65536, "ttlSeconds": 60})
    assert sbx["cpu"] == 32


def test_plans_file_and_admin_plan_api(acct):
    status, page = acct.admin.api("GET", "/v1/plans")
    assert status == 200, page
    by_id = {p["id"]: p for p in page["items"]}
    assert {"default", "starter"} <= set(by_id)
    starter = by_id["starter"]
    assert starter["limits"]["concurrentSandboxes"] == 3 and starter["limits"]["gpus"] == 0
    assert starter["limits"]["endpoints"] is None
    assert starter["prices"] == {"cpuSecondNanos": 12000, "memoryGiBSecondNanos": 1500,
                                 "storageGiBMonthNanos": 80000000, "gpuSecondNanos": 0}
    plan = put_plan(acct, "pro-e2e", {"cpu": 64})
    assert plan["limits"]["cpu"] == 64 and plan["limits"]["memoryMiB"] is None
    assert acct.admin.api("GET", "/v1/plans/pro-e2e")[1]["limits"]["cpu"] == 64
    # Bad input: a clear 400 naming the field, nothing stored.
    for body, field in (({"limits": {"cpu": -1}}, "limits.cpu"),
                        ({"limits": {"cpus": 1}}, "limits.cpus"),
                        ({"prices": {"cpuSecondNanos": 0.5}}, "prices.cpuSecondNanos"),
                        ({"id": "other"}, "id")):
        status, err = acct.admin.api("PUT", "/v1/plans/pro-e2e", body)
        assert status == 400 and err["error"]["field"] == field, (body, err)
    status, err = acct.admin.api("PUT", "/v1/plans/Bad%20Id", {})
    assert status == 400, err
    assert acct.admin.api("GET", "/v1/plans/pro-e2e")[1]["limits"]["cpu"] == 64
    assert acct.admin.api("GET", "/v1/plans/missing")[0] == 404


def test_tenants_cannot_read_or_change_plans_credits_or_other_accounts(acct):
    a, b = acct.new_org(), acct.new_org()
    for method, path, body in (("GET", "/v1/plans", None),
                               ("GET", "/v1/plans/default", None),
                               ("PUT", "/v1/plans/default", {"limits": {"cpu": 1000}}),
                               ("PUT", "/v1/orgs/%s/plan" % a.org_id, {"planId": "starter"}),
                               ("PUT", "/v1/orgs/%s/plan" % b.org_id, {"planId": "starter"}),
                               ("POST", "/v1/orgs/%s/credits" % b.org_id,
                                {"amountNanos": 5, "reason": "self-service"})):
        status, err = b.api(method, path, body)
        assert status == 403 and err["error"]["code"] == "permission_denied", (method, path, err)
    # GET /v1/account, and /v1/billing (API.md's name for it), is always the caller's own: b
    # never sees a's.
    assert b.api("GET", "/v1/account")[1]["orgId"] == b.org_id
    status, billing = b.api("GET", "/v1/billing")
    assert status == 200 and billing["orgId"] == b.org_id, billing
    assert billing["plan"] == b.api("GET", "/v1/account")[1]["plan"]
    assert b.api("GET", "/v1/billing", key="")[0] == 401
    assert acct.admin.api("GET", "/v1/plans/default")[1]["limits"]["cpu"] != 1000
    # The admin naming an organization that does not exist: 404, nothing made.
    status, err = acct.admin.api("PUT", "/v1/orgs/org_nosuchorg/plan", {"planId": "starter"})
    assert status == 404, err
    status, err = acct.admin.api("POST", "/v1/orgs/org_nosuchorg/credits",
                                 {"amountNanos": 5, "reason": "x"})
    assert status == 404, err
    status, err = acct.admin.api("PUT", "/v1/orgs/%s/plan" % a.org_id, {"planId": "nope"})
    assert status == 404, err
    assert a.api("GET", "/v1/account")[1]["plan"]["id"] == "default"


def test_credits_make_the_balance_and_retries_do_not_count_twice(acct):
    org = acct.new_org()
    body = {"amountNanos": 12_500_000_000, "reason": "welcome grant", "id": "grant-" + org.org_id}
    status, entry = acct.admin.api("POST", "/v1/orgs/%s/credits" % org.org_id, body)
    assert status == 201, entry
    assert entry["kind"] == "credit" and entry["amountNanos"] == 12_500_000_000
    status, again = acct.admin.api("POST", "/v1/orgs/%s/credits" % org.org_id, body)
    assert status == 201 and again["id"] == entry["id"], again
    status, _ = acct.admin.api("POST", "/v1/orgs/%s/credits" % org.org_id,
                               {"amountNanos": 1_000_000_000, "reason": "trial",
                                "expiresInDays": 30})
    assert status == 201
    assert org.api("GET", "/v1/account")[1]["balanceNanos"] == 13_500_000_000
    status, ledger = org.api("GET", "/v1/account/ledger")
    assert status == 200, ledger
    assert [(e["amountNanos"], e["reason"]) for e in ledger["items"]] == [
        (12_500_000_000, "welcome grant"), (1_000_000_000, "trial")], ledger
    assert ledger["items"][0]["expiresAt"] is None and ledger["items"][1]["expiresAt"]
    # Another organization's ledger is its own (empty), never this one's.
    assert acct.new_org().api("GET", "/v1/account/ledger")[1]["items"] == []
    for bad, field in (({"amountNanos": 0, "reason": "x"}, "amountNanos"),
                       ({"amountNanos": -5, "reason": "x"}, "amountNanos"),
                       ({"amountNanos": 1.5, "reason": "x"}, "amountNanos"),
                       ({"amountNanos": 5}, "reason"),
                       ({"amountNanos": 5, "reason": "x", "expiresInDays": 0}, "expiresInDays"),
                       ({"amountNanos": 5, "reason": "x", "colour": 1}, "colour")):
        status, err = acct.admin.api("POST", "/v1/orgs/%s/credits" % org.org_id, bad)
        assert status == 400 and err["error"]["field"] == field, (bad, err)
    assert org.api("GET", "/v1/account")[1]["balanceNanos"] == 13_500_000_000


def test_the_ledger_pages_with_limit_and_cursor_in_json_and_in_the_exports(acct):
    org = acct.new_org()
    for i in range(5):
        status, _ = acct.admin.api("POST", "/v1/orgs/%s/credits" % org.org_id,
                                   {"amountNanos": i + 1, "reason": "grant %d" % i})
        assert status == 201
    acct.new_org()  # another organization's entries never show here
    seen, cursor, pages = [], None, 0
    while True:
        status, page = org.api("GET", "/v1/account/ledger?limit=2" + ("&cursor=" + cursor if cursor else ""))
        assert status == 200 and len(page["items"]) <= 2, page
        seen += [e["reason"] for e in page["items"]]
        pages += 1
        cursor = page["nextCursor"]
        if not cursor:
            break
    assert seen == ["grant %d" % i for i in range(5)] and pages == 3, (seen, pages)
    assert len(org.api("GET", "/v1/account/ledger")[1]["items"]) == 5  # 50 by default

    # The exports page the same way, the next cursor in X-Next-Cursor; without limit, all.
    status, _, body, headers = org.request("GET", "/v1/account/ledger?format=jsonl&limit=3")
    lines = [json.loads(line) for line in body.decode().splitlines()]
    assert status == 200 and [e["reason"] for e in lines] == ["grant 0", "grant 1", "grant 2"]
    nxt = headers.get("x-next-cursor")
    assert nxt, headers
    status, _, body, headers = org.request("GET", "/v1/account/ledger?format=csv&limit=3&cursor=" + nxt)
    rows = body.decode().strip().split("\r\n")
    assert status == 200 and len(rows) == 3 and "grant 3" in rows[1] and "grant 4" in rows[2], rows
    assert "x-next-cursor" not in headers
    status, _, body, headers = org.request("GET", "/v1/account/ledger?format=jsonl")
    assert len(body.decode().splitlines()) == 5 and "x-next-cursor" not in headers
    # Without limit from a cursor: the rest, streamed a page at a time, one CSV header.
    status, _, body, headers = org.request("GET", "/v1/account/ledger?format=csv&cursor=" + nxt)
    rows = body.decode().strip().split("\r\n")
    assert status == 200 and len(rows) == 3 and rows[0].startswith("id,orgId,"), rows
    assert "grant 3" in rows[1] and "grant 4" in rows[2], rows

    for query, field in (("limit=0", "limit"), ("limit=201", "limit"), ("limit=two", "limit"),
                         ("format=csv&limit=0", "limit"), ("cursor=made-up", "cursor"),
                         ("format=jsonl&cursor=made-up", "cursor")):
        status, err = org.api("GET", "/v1/account/ledger?" + query)
        assert status == 400 and err["error"]["field"] == field, (query, status, err)


# --- limits, each refused at exactly its value ---------------------------------------------

def test_concurrent_sandboxes_limit(acct):
    org = org_on_plan(acct, "two-sandboxes", {"concurrentSandboxes": 2})
    org.create(SMALL)
    org.create(SMALL)
    status, err = org.api("POST", "/v1/sandboxes", SMALL)
    refused(status, err, "limit concurrent_sandboxes = 2")
    assert len(org.list_all()) == 2


def test_cpu_and_memory_limits_count_running_sandboxes(acct):
    org = org_on_plan(acct, "three-cpus", {"cpu": 3, "memoryMiB": 1024})
    org.create({"cpu": 2, "memoryMiB": 512})
    status, err = org.api("POST", "/v1/sandboxes", {"cpu": 2, "memoryMiB": 128})
    refused(status, err, "limit cpu = 3")
    org.create({"cpu": 1, "memoryMiB": 512})  # exactly 3 cpus and 1024 MiB
    status, err = org.api("POST", "/v1/sandboxes", {"cpu": 1, "memoryMiB": 128})
    refused(status, err, "limit cpu = 3")
    other = org_on_plan(acct, "one-gib", {"memoryMiB": 1024})
    other.create({"cpu": 1, "memoryMiB": 1024})
    status, err = other.api("POST", "/v1/sandboxes", {"cpu": 1, "memoryMiB": 128})
    refused(status, err, "limit memory_mib = 1024")


def test_max_run_time_caps_the_sandbox_timeout(acct):
    org = org_on_plan(acct, "ten-minutes", {"maxRunSeconds": 600})
    status, err = org.api("POST", "/v1/sandboxes", dict(SMALL, ttlSeconds=601))
    refused(status, err, "limit max_run_seconds = 600")
    assert err["error"]["field"] == "ttlSeconds", err
    status, err = org.api("POST", "/v1/sandboxes", dict(SMALL, ttlSeconds=None))
    refused(status, err, "limit max_run_seconds = 600")
    assert org.create(dict(SMALL, ttlSeconds=600))["ttlSeconds"] == 600
    assert len(org.list_all()) == 1


def test_starting_a_hibernated_sandbox_is_checked_against_the_plan(acct):
    org = org_on_plan(acct, "two-cpus", {"cpu": 2})
    first = org.create({"cpu": 2, "memoryMiB": 256})
    org.wait_for_status(first["id"], "running")
    status, stopped = org.api("POST", "/v1/sandboxes/%s/stop" % first["id"])
    assert status == 200 and stopped["status"] == "hibernated", stopped
    second = org.create({"cpu": 1, "memoryMiB": 256})
    status, err = org.api("POST", "/v1/sandboxes/%s/start" % first["id"])
    refused(status, err, "limit cpu = 2")
    assert org.get(first["id"])["status"] == "hibernated"
    org.delete(second["id"])
    status, started = org.api("POST", "/v1/sandboxes/%s/start" % first["id"])
    assert status == 202 and started["status"] in ("provisioning", "running"), started


def test_persistent_storage_limit(acct):
    org = org_on_plan(acct, "three-gib", {"persistentStorageGiB": 3})
    assert org.api("POST", "/v1/storage", {"name": "one", "sizeMiB": 1024})[0] == 201
    assert org.api("POST", "/v1/storage", {"name": "two", "sizeMiB": 2048})[0] == 201
    status, err = org.api("POST", "/v1/storage", {"name": "three", "sizeMiB": 64})
    refused(status, err, "limit persistent_storage_gib = 3")
    assert org.api("GET", "/v1/storage/three")[0] == 404


def test_object_storage_limit_is_the_organizations_quota(acct):
    org = org_on_plan(acct, "one-gib-objects", {"objectStorageGiB": 1})
    status, page = org.api("GET", "/v1/objects")
    assert status == 200, page
    assert page["usage"]["quotaBytes"] == 1 << 30, page  # the daemon-wide one is 50 GiB
    status, err = acct.admin.api("PUT", "/v1/plans/no-objects", {"limits": {"objectStorageGiB": 0}})
    assert status == 400 and err["error"]["field"] == "limits.objectStorageGiB", err


def test_endpoints_limit(acct):
    org = org_on_plan(acct, "one-endpoint", {"endpoints": 1})
    sbx = org.create(SMALL)
    org.wait_for_status(sbx["id"], "running")
    status, ep = org.api("POST", "/v1/sandboxes/%s/endpoints" % sbx["id"], {"port": 8000})
    assert status == 201, ep
    status, err = org.api("POST", "/v1/sandboxes/%s/endpoints" % sbx["id"], {"port": 8001})
    refused(status, err, "limit endpoints = 1")
    assert len(org.api("GET", "/v1/endpoints")[1]["items"]) == 1
    status, account = org.api("GET", "/v1/account")
    assert account["usage"]["endpoints"] == 1 and account["usage"]["runningSandboxes"] == 1


def test_queued_jobs_limit_refuses_a_submit_at_exactly_its_value_also_concurrently(plans_file):
    # One job runs at a time here, so the ones after it stay queued and can be counted.
    d = harness.Daemon(extra_args=["--plans-file", plans_file, "--job-concurrency-per-org", "1"])
    d.start()
    try:
        org = org_on_plan(d, "two-queued", {"queuedJobs": 2})
        sleep = {"command": "sleep 120", "network": {"egress": "none"}, "cpu": 1, "memoryMiB": 128}
        status, running = org.api("POST", "/v1/jobs", sleep)
        assert status == 201, running
        waiting = []
        for _ in range(2):
            status, job = org.api("POST", "/v1/jobs", {"command": "echo later"})
            assert status == 201 and job["status"] == "queued", job
            waiting.append(job)
        status, err = org.api("POST", "/v1/jobs", {"command": "echo one-too-many"})
        refused(status, err, "limit queued_jobs = 2")
        assert len(org.api("GET", "/v1/jobs")[1]["items"]) == 3
        session, _ = mcp.initialize(d, org.key)
        result = mcp.rpc(d, org.key, session, "tools/call",
                         {"name": "submit_sandbox_job", "arguments": {"command": "echo mcp"}})["result"]
        assert result["isError"], result
        assert "limit queued_jobs = 2" in result["content"][0]["text"], result
        cli = org.cli("job", "submit", "--", "echo", "cli")
        assert cli.returncode != 0 and "limit queued_jobs = 2" in cli.stderr, (cli.stdout, cli.stderr)
        # Another organization's queue does not count; a cancelled job frees its place.
        other = org_on_plan(d, "two-queued", {"queuedJobs": 2})
        assert other.api("POST", "/v1/jobs", {"command": "echo other"})[0] == 201
        assert org.api("POST", "/v1/jobs/%s/cancel" % waiting[0]["id"])[0] == 200
        status, job = org.api("POST", "/v1/jobs", {"command": "echo fits-again"})
        assert status == 201, job
        for job in [running, waiting[1], job]:
            org.api("POST", "/v1/jobs/%s/cancel" % job["id"])

        # Concurrently: twenty submits at once against the limit make exactly two queued jobs
        # (the count is read in the transaction that inserts the job).
        third = org_on_plan(d, "two-queued", {"queuedJobs": 2})
        status, blocker = third.api("POST", "/v1/jobs", sleep)
        assert status == 201, blocker
        deadline = time.monotonic() + 60
        while third.api("GET", "/v1/jobs/" + blocker["id"])[1]["status"] == "queued":
            assert time.monotonic() < deadline, "the first job never left the queue"
            time.sleep(0.2)
        with ThreadPoolExecutor(20) as pool:
            results = list(pool.map(lambda i: third.api("POST", "/v1/jobs", {"command": "echo %d" % i}),
                                    range(20)))
        accepted = [job for status, job in results if status == 201]
        assert len(accepted) == 2, [status for status, _ in results]
        for status, err in results:
            if status != 201:
                refused(status, err, "limit queued_jobs = 2")
        assert sum(j["status"] == "queued" for j in third.api("GET", "/v1/jobs")[1]["items"]) == 2
        for job in [blocker] + accepted:
            third.api("POST", "/v1/jobs/%s/cancel" % job["id"])
    finally:
        d.delete_everything()
        close_daemon(d)


def test_gpus_limit_is_enforced_before_this_host_says_it_has_no_gpus(acct):
    gpu = dict(SMALL, gpu={"type": "l4-3gb"})
    org = org_on_plan(acct, "no-gpus", {"gpus": 0})
    status, err = org.api("POST", "/v1/sandboxes", gpu)
    refused(status, err, "limit gpus = 0")
    assert err["error"]["field"] == "gpu", err
    session, _ = mcp.initialize(acct, org.key)
    result = mcp.rpc(acct, org.key, session, "tools/call",
                     {"name": "create_gpu_sandbox", "arguments": {"gpu_type": "l4-3gb"}})["result"]
    assert result["isError"] and "limit gpus = 0" in result["content"][0]["text"], result
    # Bad input is still a 400 first, and nothing is made.
    status, err = org.api("POST", "/v1/sandboxes", dict(gpu, cpu=0))
    assert status == 400 and err["error"]["field"] == "cpu", err
    # Within the limit, the answer is this host's: it has no GPUs (none is faked).
    allowed = org_on_plan(acct, "one-gpu", {"gpus": 1})
    status, err = allowed.api("POST", "/v1/sandboxes", gpu)
    assert status != 429 and "no GPU" in err["error"]["message"], (status, err)
    session, _ = mcp.initialize(acct, allowed.key)
    result = mcp.rpc(acct, allowed.key, session, "tools/call",
                     {"name": "create_gpu_sandbox", "arguments": {"gpu_type": "l4-3gb"}})["result"]
    assert result["isError"] and "This node has no GPUs" in result["content"][0]["text"], result
    status, account = allowed.api("GET", "/v1/account")
    assert account["plan"]["limits"]["gpus"] == 1, account
    assert org.list_all() == [] and allowed.list_all() == []


def test_fifty_concurrent_creates_against_a_limit_of_ten_make_exactly_ten(acct):
    org = org_on_plan(acct, "ten-sandboxes", {"concurrentSandboxes": 10})
    body = {"cpu": 1, "memoryMiB": 128, "startup": {"mode": "command", "argv": ["/bin/true"]}}
    with ThreadPoolExecutor(50) as pool:
        results = list(pool.map(lambda _: org.api("POST", "/v1/sandboxes", body), range(50)))
    created = [sbx for status, sbx in results if status == 201]
    for sbx in created:
        acct.created.append((org, sbx["id"]))
    assert len(created) == 10, [s for s, _ in results]
    for status, err in results:
        if status != 201:
            refused(status, err, "limit concurrent_sandboxes = 10")
    assert len(org.list_all()) == 10


# --- CLI and MCP ----------------------------------------------------------------------------

def test_cli_account_plans_and_credit(acct):
    org = acct.new_org()
    p = org.cli("account")
    assert p.returncode == 0, p.stderr
    assert "default" in p.stdout and "balance" in p.stdout and "0.00" in p.stdout, p.stdout
    p = org.cli("account", "register", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["termsVersion"] == TERMS
    admin = acct.admin
    p = admin.cli("admin", "plan", "set", "cli-plan", "--name", "CLI plan",
                  "--limit", "concurrentSandboxes=1", "--limit", "cpu=4",
                  "--price", "cpuSecondNanos=7")
    assert p.returncode == 0, p.stderr
    assert "limits.concurrentSandboxes" in p.stdout and "CLI plan" in p.stdout, p.stdout
    # `set` starts from the stored plan: one change keeps the rest.
    p = admin.cli("admin", "plan", "set", "cli-plan", "--limit", "cpu=none", "--json")
    assert p.returncode == 0, p.stderr
    plan = json.loads(p.stdout)
    assert plan["limits"]["cpu"] is None and plan["limits"]["concurrentSandboxes"] == 1, plan
    assert plan["prices"]["cpuSecondNanos"] == 7
    p = admin.cli("admin", "plan", "ls")
    assert p.returncode == 0 and "cli-plan" in p.stdout and "starter" in p.stdout, p.stdout
    p = admin.cli("admin", "plan", "get", "starter")
    assert p.returncode == 0 and "Starter" in p.stdout, p.stdout
    p = admin.cli("admin", "plan", "assign", org.org_id, "cli-plan")
    assert p.returncode == 0, p.stderr
    p = admin.cli("admin", "credit", org.org_id, "12.5", "--reason", "cli grant")
    assert p.returncode == 0, p.stderr
    assert "12.50" in p.stdout, p.stdout
    p = org.cli("account")
    assert "cli-plan" in p.stdout and "12.50" in p.stdout, p.stdout
    p = org.cli("account", "ledger")
    assert p.returncode == 0 and "cli grant" in p.stdout and "12.50" in p.stdout, p.stdout
    # Bad input: a usage error, nothing sent.
    p = admin.cli("admin", "credit", org.org_id, "1.2.3", "--reason", "x")
    assert p.returncode == 2 and "amount" in p.stderr, (p.returncode, p.stderr)
    # A tenant key: the server's refusal, one sentence.
    p = org.cli("admin", "credit", org.org_id, "5", "--reason", "x")
    assert p.returncode == 1 and "admin key" in p.stderr, p.stderr
    # The limit's refusal reads the same in the CLI.
    org.create(SMALL)
    p = org.cli("sandbox", "create", "--cpu", "1", "--memory", "128")
    assert p.returncode == 1 and "limit concurrent_sandboxes = 1" in p.stderr, p.stderr
    assert acct.admin.api("GET", "/v1/account")[0] == 200


def test_mcp_register_user_and_get_billing_account_through_the_sdk(acct):
    org = org_on_plan(acct, "no-sandboxes", {"concurrentSandboxes": 0, "appReplicas": 3})
    report = mcp.sdk(acct, org, "http", "account")
    for name in ("before", "first", "second", "after"):
        call = report[name]
        assert not call["isError"], call
        assert call["schemaValid"], (name, call["schemaErrors"])
    first = report["first"]["structuredContent"]
    assert first == report["second"]["structuredContent"]
    assert first["registered"] is True and first["terms_version"] == TERMS
    assert first["account_id"] == org.org_id
    after = report["after"]["structuredContent"]
    assert after["plan"]["id"] == "no-sandboxes" and after["limits"]["concurrent_sandboxes"] == 0
    assert after["limits"]["app_replicas"] == 3
    assert after["balance"] == "0.00" and after["balance_nanos"] == 0
    refusal = report["refused"]
    assert refusal["isError"], refusal
    assert "limit concurrent_sandboxes = 0" in refusal["text"], refusal
    assert "larger plan" in refusal["text"], refusal


def test_a_bad_plans_file_stops_adaptd_with_a_clear_message():
    d = harness.Daemon()
    bad = os.path.join(d.base, "plans.json")
    os.makedirs(d.base, exist_ok=True)
    with open(bad, "w") as f:
        json.dump({"plans": [{"id": "x", "limits": {"cpu": -2}}]}, f)
    d.extra_args += ["--plans-file", bad]
    with pytest.raises(AssertionError) as failed:
        d.start()
    assert "limits.cpu" in str(failed.value), str(failed.value)[-2000:]
    close_daemon(d)
