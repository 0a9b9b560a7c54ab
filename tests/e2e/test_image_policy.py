"""Trusted image sources and developer_public_images (seed 000, issue 17): the assistant
(MCP, through the official SDK client) creates restricted sandboxes from environment aliases
and trusted sources only, developer ones from any public image when the operator turns
developer_public_images on; the REST API stays open (seed 001) unless --image-policy
assistant; refusals are 403s naming the rule (REST, MCP, CLI); the environment listings
report the sources and the switch.

The images come from a real registry on loopback (registry.py): <host>/trusted/app:1 is
under the trusted prefix these daemons are given, <host>/other/app:1 is not.
"""

import json

import pytest

import harness
import registry as reg
from mcp_support import sdk

RULE = "trusted image sources rule"


@pytest.fixture(scope="module")
def images():
    r = reg.Registry()
    layout = reg.Layout([reg.layer(reg.busybox_base())],
                        {"config": {"Cmd": ["/bin/sh", "-c", "sleep 3600"], "Env": ["PATH=/bin"]}})
    try:
        refs = {name: r.push(layout, name + "/app:1") for name in ("trusted", "other")}
    finally:
        layout.close()
    refs["host"] = r.host
    yield refs
    r.close()


def start_daemon(images, *args):
    d = harness.Daemon(extra_args=["--trusted-image-source", "docker.io/library/*",
                                   "--trusted-image-source", images["host"] + "/trusted/*"]
                       + list(args))
    d.start()
    return d


@pytest.fixture(scope="module")
def default_daemon(images):
    """Public images off, REST open: the defaults, with one more trusted prefix."""
    d = start_daemon(images)
    yield d
    d.close()


@pytest.fixture(scope="module")
def strict_daemon(images):
    """developer_public_images on and the assistant's rule applied to REST too."""
    d = start_daemon(images, "--developer-public-images", "true", "--image-policy", "assistant")
    yield d
    d.close()


def mcp_calls(daemon, client, calls):
    report = sdk(daemon, client, "http", "calls", calls)
    assert len(report["calls"]) == len(calls), report
    return report["calls"]


def test_the_listings_report_the_sources_and_the_switch(default_daemon, strict_daemon, images):
    trusted = ["docker.io/library/*", images["host"] + "/trusted/*"]
    for d, public, policy in ((default_daemon, False, "open"), (strict_daemon, True, "assistant")):
        org = d.new_org()
        status, body = org.api("GET", "/v1/environments")
        assert status == 200, body
        assert body["trustedImageSources"] == trusted, body
        assert body["developerPublicImages"] is public and body["imagePolicy"] == policy, body
        [listed] = mcp_calls(d, org, [["list_sandbox_environments", {}]])
        assert not listed["isError"] and listed["schemaValid"], listed
        env = listed["structuredContent"]
        assert env["trusted_image_sources"] == trusted, env
        assert env["developer_public_images"] is public, env
        assert any(images["host"] + "/trusted/*" in s for s in env["image_sources"]), env
        assert any("any public image" in s for s in env["image_sources"]) is public, env


def test_the_assistant_takes_aliases_and_trusted_sources_only(default_daemon, images):
    org = default_daemon.new_org()
    calls = mcp_calls(default_daemon, org, [
        ["create_sandbox", {"image": images["other"]}],
        ["create_sandbox", {"image": images["other"], "security_profile": "developer"}],
        ["create_sandbox", {"image": "ghcr.io/acme/app:1"}],
        ["create_sandbox", {"image": images["trusted"], "name": "trusted"}],
        ["create_sandbox", {"image": "python", "name": "alias"}],
    ])
    for refused in calls[:3]:
        assert refused["isError"], refused
        assert RULE in refused["text"] and "trusted sources only" in refused["text"], refused
    assert "developer_public_images is off" in calls[1]["text"], calls[1]
    for accepted in calls[3:]:
        assert not accepted["isError"], accepted
        sid = accepted["structuredContent"]["sandbox_id"]
        org.wait_for_status(sid, "running", 120)
    status, listed = org.api("GET", "/v1/sandboxes")
    assert status == 200 and len(listed["items"]) == 2, listed  # the refusals made nothing


def test_jobs_from_the_assistant_follow_the_rule_and_rest_jobs_stay_open(default_daemon, images):
    org = default_daemon.new_org()
    calls = mcp_calls(default_daemon, org, [
        ["submit_sandbox_job", {"command": "true", "image": "ghcr.io/evil/x"}],
        ["submit_sandbox_job", {"command": "true", "image": "someuser/img"}],
        ["submit_sandbox_job", {"command": "true", "image": images["other"],
                                "idempotency_key": "k1"}],
        ["list_sandbox_jobs", {}],
        ["list_automation_runs", {}],
    ])
    for refused in calls[:3]:
        assert refused["isError"], refused
        assert RULE in refused["text"] and "trusted sources only" in refused["text"], refused
    assert calls[3]["structuredContent"]["jobs"] == [], calls[3]
    assert calls[4]["structuredContent"]["runs"] == [], calls[4]
    # Nothing was queued: no job, no run, no sandbox.
    for path in ("/v1/jobs", "/v1/runs", "/v1/sandboxes"):
        status, page = org.api("GET", path)
        assert status == 200 and page["items"] == [], (path, page)
    # The REST API stays open (seed 001): the same untrusted image runs as a job there.
    status, job = org.api("POST", "/v1/jobs", {"command": "true", "image": images["other"]})
    assert status == 201, (status, job)
    deadline = harness.time.monotonic() + 180
    while job["status"] not in ("succeeded", "failed", "cancelled", "infrastructure_failed"):
        assert harness.time.monotonic() < deadline, job
        harness.time.sleep(0.5)
        job = org.api("GET", "/v1/jobs/" + job["id"])[1]
    assert job["status"] == "succeeded", job
    # A trusted source is accepted from the assistant (queued; it need not run here).
    [accepted] = mcp_calls(default_daemon, org, [
        ["submit_sandbox_job", {"command": "true", "image": images["trusted"]}]])
    assert not accepted["isError"] and accepted["schemaValid"], accepted


def test_developer_public_images_admits_any_image_for_developer_only(strict_daemon, images):
    org = strict_daemon.new_org()
    calls = mcp_calls(strict_daemon, org, [
        ["create_sandbox", {"image": images["other"]}],
        ["create_sandbox", {"image": images["other"], "security_profile": "developer"}],
    ])
    assert calls[0]["isError"] and RULE in calls[0]["text"], calls[0]
    assert "security_profile developer also accepts any public image" in calls[0]["text"], calls
    assert not calls[1]["isError"], calls[1]
    sid = calls[1]["structuredContent"]["sandbox_id"]
    org.wait_for_status(sid, "running", 120)
    assert org.get(sid)["securityProfile"] == "developer"


def test_rest_is_open_by_default(default_daemon, images):
    org = default_daemon.new_org()
    sid = org.create({"image": images["other"]})["id"]
    org.wait_for_status(sid, "running", 120)


def test_rest_and_cli_follow_the_assistant_rule_when_the_operator_says_so(strict_daemon, images):
    org = strict_daemon.new_org()
    status, body = org.api("POST", "/v1/sandboxes", {"image": images["other"]})
    assert status == 403, (status, body)
    assert body["error"]["code"] == "permission_denied" and body["error"]["field"] == "image", body
    assert RULE in body["error"]["message"] and 'image policy "assistant"' in body["error"]["message"]
    assert "securityProfile developer also accepts" in body["error"]["message"], body
    p = org.cli("sandbox", "create", "--image", images["other"])
    assert p.returncode != 0 and RULE in p.stderr, (p.returncode, p.stdout, p.stderr)
    # Jobs too, refused when submitted (nothing queued), not when their attempt starts.
    status, body = org.api("POST", "/v1/jobs", {"command": "true", "image": images["other"]})
    assert status == 403 and RULE in body["error"]["message"], (status, body)
    p = org.cli("job", "submit", "--image", images["other"], "--", "true")
    assert p.returncode != 0 and RULE in p.stderr, (p.returncode, p.stdout, p.stderr)
    assert org.api("GET", "/v1/jobs")[1]["items"] == []
    # Trusted sources, aliases and developer's public images still pass.
    for fields in ({"image": images["trusted"]}, {"image": "python"}):
        sid = org.create(fields)["id"]
        org.wait_for_status(sid, "running", 120)
    p = org.cli("sandbox", "create", "--image", images["other"], "--security-profile",
                "developer", "--json")
    assert p.returncode == 0, (p.stdout, p.stderr)
    created = json.loads(p.stdout)
    assert created["securityProfile"] == "developer", created
    org.wait_for_status(created["id"], "running", 120)
    status, listed = org.api("GET", "/v1/sandboxes")
    assert status == 200 and len(listed["items"]) == 3, json.dumps(listed)[:2000]


@pytest.fixture(scope="module")
def assistant_daemon(images):
    """The assistant's rule applied to REST, public images off."""
    d = start_daemon(images, "--image-policy", "assistant")
    yield d
    d.close()


def test_pulls_and_imports_follow_the_assistant_rule_when_the_operator_says_so(
        assistant_daemon, strict_daemon, default_daemon, images):
    org = assistant_daemon.new_org()
    status, body = org.api("POST", "/v1/images", {"reference": images["other"]})
    assert status == 403, (status, body)
    assert body["error"]["code"] == "permission_denied", body
    assert body["error"]["field"] == "reference", body
    assert RULE in body["error"]["message"] and 'image policy "assistant"' in body["error"]["message"]
    # Refused before anything was recorded.
    assert org.api("GET", "/v1/images")[1]["items"] == []
    p = org.cli("image", "pull", images["other"])
    assert p.returncode != 0 and RULE in p.stderr, (p.returncode, p.stdout, p.stderr)
    status, body = org.api("POST", "/v1/images/import", raw=b"not an archive",
                           headers={"Content-Type": "application/x-tar"})
    assert status == 403 and RULE in body["error"]["message"], (status, body)
    # A trusted source is pulled as before.
    status, body = org.api("POST", "/v1/images", {"reference": images["trusted"]})
    assert status == 202, (status, body)
    # With developer_public_images on, a developer sandbox could use any image: pulled.
    status, body = strict_daemon.new_org().api("POST", "/v1/images", {"reference": images["other"]})
    assert status == 202, (status, body)
    # The default REST policy is open.
    status, body = default_daemon.new_org().api("POST", "/v1/images", {"reference": images["other"]})
    assert status == 202, (status, body)
