"""Seed 001's limits and defaults: out-of-range input is a 400 naming the field and creates
nothing; in-range input at both bounds is accepted."""

import json
from datetime import datetime

import pytest

TRUE = {"mode": "command", "argv": ["true"]}


@pytest.fixture(scope="module")
def tenant(daemon):
    """An organization of this module's own, so "nothing created" is an empty list."""
    return daemon.new_org()


def labels(n):
    return {"k%02d" % i: "v%d" % i for i in range(n)}


INVALID = [
    ("cpu", 0), ("cpu", 33), ("cpu", -1), ("cpu", 1.5), ("cpu", "2"), ("cpu", True),
    ("memoryMiB", 127), ("memoryMiB", 65537), ("memoryMiB", 1.5), ("memoryMiB", "1024"),
    ("diskMiB", 63), ("diskMiB", 131073), ("diskMiB", 2048.5),
    ("ttlSeconds", 0), ("ttlSeconds", 86401), ("ttlSeconds", -1), ("ttlSeconds", 1.5), ("ttlSeconds", "60"),
    ("labels", labels(33)), ("labels", {"platform.x": "y"}), ("labels", {"name": 1}), ("labels", ["a"]),
]


def field_matches(got, want):
    return got == want or (got or "").startswith(want + ".") or (got or "").startswith(want + "[")


def assert_nothing_created(tenant):
    assert tenant.list_all() == [], "bad input must not create a sandbox"


@pytest.mark.parametrize("field,value", INVALID, ids=["%s=%s" % (f, json.dumps(v)[:20]) for f, v in INVALID])
def test_out_of_range_value_is_400_naming_the_field(tenant, field, value):
    status, body = tenant.api("POST", "/v1/sandboxes", {field: value, "startup": TRUE})
    assert status == 400, (status, body)
    assert body["error"]["code"] == "invalid_argument"
    assert field_matches(body["error"].get("field"), field), body
    assert body["error"]["message"]
    assert_nothing_created(tenant)


def test_unknown_top_level_field_is_400_naming_it(tenant):
    status, body = tenant.api("POST", "/v1/sandboxes", {"cpu": 1, "bogusField": 1})
    assert status == 400, (status, body)
    assert body["error"]["field"] == "bogusField"
    assert_nothing_created(tenant)


@pytest.mark.parametrize(
    "startup",
    [{"mode": "sometimes", "argv": ["true"]}, {"mode": "command", "argv": ["true", 1]}, {"mode": "command", "argv": "true"}],
    ids=["bad-mode", "non-string-argv", "argv-not-array"],
)
def test_malformed_startup_is_400_naming_the_field(tenant, startup):
    status, body = tenant.api("POST", "/v1/sandboxes", {"startup": startup})
    assert status == 400, (status, body)
    assert field_matches(body["error"].get("field"), "startup"), body
    assert_nothing_created(tenant)


@pytest.mark.parametrize("raw", ['{"cpu": ', "not json", "[]", '"a string"', '{"cpu": 1} trailing'])
def test_malformed_json_is_400(tenant, raw):
    status, body = tenant.api("POST", "/v1/sandboxes", raw=raw)
    assert status == 400, (status, body)
    assert body["error"]["code"] == "invalid_argument"
    assert_nothing_created(tenant)


def test_body_over_one_mebibyte_is_413(tenant, daemon):
    raw = json.dumps({"labels": {"name": "x" * (1024 * 1024 + 16)}})
    status, body = tenant.api("POST", "/v1/sandboxes", raw=raw)
    assert status == 413, (status, body)
    assert_nothing_created(tenant)
    status, _ = tenant.api("GET", "/healthz")
    assert status == 200, "the server survives bad input"


def created_and_ended(tenant, body):
    status, sbx = tenant.api("POST", "/v1/sandboxes", body)
    assert status == 201, (status, sbx)
    tenant.daemon.created.append((tenant, sbx["id"]))
    return sbx, tenant.wait_end(sbx["id"])


def test_lowest_values_are_accepted(tenant):
    sbx, end = created_and_ended(tenant, {"cpu": 1, "memoryMiB": 128, "diskMiB": 64, "startup": TRUE})
    assert (sbx["cpu"], sbx["memoryMiB"], sbx["diskMiB"]) == (1, 128, 64)
    assert end["status"] == "completed", end
    tenant.delete(sbx["id"])


def test_highest_values_are_accepted_because_limits_are_not_reservations(tenant):
    # 32 CPUs and 64 GiB on a 2-core, 24 GiB machine: these are limits, not reservations.
    body = {"cpu": 32, "memoryMiB": 65536, "diskMiB": 131072, "ttlSeconds": 86400, "labels": labels(32), "startup": TRUE}
    sbx, end = created_and_ended(tenant, body)
    assert (sbx["cpu"], sbx["memoryMiB"], sbx["diskMiB"], sbx["ttlSeconds"]) == (32, 65536, 131072, 86400)
    assert sbx["labels"] == labels(32)
    assert end["status"] == "completed", end
    tenant.delete(sbx["id"])


def ts(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_ttl_of_one_second_is_accepted(tenant):
    sbx, end = created_and_ended(tenant, {"ttlSeconds": 1, "startup": TRUE})
    assert sbx["ttlSeconds"] == 1
    assert abs((ts(sbx["expiresAt"]) - ts(sbx["createdAt"])).total_seconds() - 1) < 1.5
    assert end["status"] in ("completed", "deleted"), end


def test_null_ttl_disables_expiry(tenant):
    sbx, end = created_and_ended(tenant, {"ttlSeconds": None, "startup": TRUE})
    assert sbx["ttlSeconds"] is None
    assert sbx["expiresAt"] is None
    assert end["status"] == "completed", end
    tenant.delete(sbx["id"])


def test_defaults_are_filled_in(tenant):
    sbx, end = created_and_ended(tenant, {"startup": TRUE})
    assert sbx["cpu"] == 1
    assert sbx["memoryMiB"] == 1024
    assert sbx["diskMiB"] == 2048
    assert sbx["ttlSeconds"] == 3600
    assert sbx["labels"] == {}
    assert sbx["image"] == "debian:12"
    assert sbx["network"]["egress"] == "open"
    assert sbx["environmentNames"] == []
    assert sbx["id"].startswith("sbx_")
    lifetime = (ts(sbx["expiresAt"]) - ts(sbx["createdAt"])).total_seconds()
    assert abs(lifetime - 3600) < 2, (sbx["createdAt"], sbx["expiresAt"])
    assert end["status"] == "completed", end
    tenant.delete(sbx["id"])
