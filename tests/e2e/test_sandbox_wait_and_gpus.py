"""Two of seed 000's tools as REST routes and CLI commands (each tool is also both):
wait_for_sandbox is `GET /v1/sandboxes/{id}?waitSeconds=N` (the record once it has left
provisioning, or as it is after N seconds; up to 60) and `adapt sandbox wait`; list_gpu_types
is `GET /v1/gpu-types` and `adapt gpu ls`, and create_gpu_sandbox is `adapt sandbox create
--gpu TYPE`. This host has no GPUs (Debian's runsc has no GPU passthrough): the list is empty
and says why, and a GPU sandbox is refused saying so. Nothing is faked."""

import json
import time

import pytest

from harness import END_TIMEOUT


def test_a_read_that_waits_answers_once_the_sandbox_runs(org):
    sbx = org.create({})
    status, body = org.api("GET", "/v1/sandboxes/%s?waitSeconds=60" % sbx["id"])
    assert status == 200 and body["id"] == sbx["id"], body
    assert body["status"] == "running", body
    # A settled sandbox answers at once, whatever the wait asked for.
    start = time.monotonic()
    status, again = org.api("GET", "/v1/sandboxes/%s?waitSeconds=60" % sbx["id"])
    assert status == 200 and again["status"] == "running"
    assert time.monotonic() - start < 30
    org.delete(sbx["id"])


@pytest.mark.parametrize("value", ["-1", "61", "x", "1.5", ""])
def test_wait_seconds_outside_0_to_60_is_400_naming_it(org, value):
    sbx = org.create({"network": {"egress": "none"}})
    status, body = org.api("GET", "/v1/sandboxes/%s?waitSeconds=%s" % (sbx["id"], value))
    assert status == 400 and body["error"]["field"] == "waitSeconds", body
    org.delete(sbx["id"])


def test_another_organizations_sandbox_is_404_at_once_when_waiting(daemon, org):
    sbx = org.create({"network": {"egress": "none"}})
    other = daemon.new_org()
    start = time.monotonic()
    status, body = other.api("GET", "/v1/sandboxes/%s?waitSeconds=60" % sbx["id"])
    assert status == 404, body
    assert time.monotonic() - start < 30
    status, body = other.api("GET", "/v1/sandboxes/sbx_nosuchsandbox00000?waitSeconds=5")
    assert status == 404, body
    org.delete(sbx["id"])


def test_cli_sandbox_wait_exits_0_when_it_runs_and_1_when_it_cannot(org):
    made = org.cli("sandbox", "create", "--no-wait", "-q", "--egress", "none")
    assert made.returncode == 0, made.stderr
    sid = made.stdout.strip()
    waited = org.cli("--json", "sandbox", "wait", sid, "--timeout", "120", timeout=END_TIMEOUT)
    assert waited.returncode == 0, waited.stderr
    assert json.loads(waited.stdout)["status"] == "running"
    assert org.cli("sandbox", "delete", sid).returncode == 0
    gone = org.cli("sandbox", "wait", sid)
    assert gone.returncode != 0 and "deleted" in gone.stderr, (gone.stdout, gone.stderr)
    missing = org.cli("sandbox", "wait", "sbx_nosuchsandbox00000")
    assert missing.returncode != 0 and "not found" in missing.stderr, missing.stderr


def test_gpu_types_are_listed_empty_with_the_reason(org, daemon):
    status, body = org.api("GET", "/v1/gpu-types")
    assert status == 200 and body["items"] == [] and body["nextCursor"] is None, body
    assert "GPU passthrough" in body["explanation"], body
    status, _ = org.api("GET", "/v1/gpu-types", key="")
    assert status == 401
    listed = org.cli("gpu", "ls")
    assert listed.returncode == 0 and "No GPU types" in listed.stdout, listed
    as_json = org.cli("--json", "gpu", "ls")
    assert json.loads(as_json.stdout) == body


def test_cli_create_with_a_gpu_is_refused_saying_why_and_creates_nothing(org):
    before = org.list_all()
    made = org.cli("sandbox", "create", "--gpu", "l4")
    assert made.returncode != 0 and "no GPU" in made.stderr, (made.stdout, made.stderr)
    assert org.list_all() == before
