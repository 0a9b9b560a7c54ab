"""GET /v1/sandboxes/{id}/startup/stream (issue 21): a sandbox's startup output as it is
produced, against a real adaptd: the first line arrives while the startup still runs, the
stream ends with the sandbox's record; an ended sandbox replays its output; who may open it
(another organization's id 404, an interactive sandbox 409, no key 401), checked against
docs/openapi.yaml; the Python SDK, the TypeScript SDK and `adapt sandbox logs` follow it."""
import os
import subprocess
import sys

import yaml

import harness
from harness import REPO
from sdk_support import build_typescript_sdk, scenario

SPEC = os.path.join(REPO, "docs", "openapi.yaml")
PATH = "/v1/sandboxes/%s/startup/stream"
# The first line, then a wait for a file that the test makes: the startup cannot end before.
WAITS = "echo first; while [ ! -e /tmp/go ]; do sleep 0.2; done; echo second; echo oops >&2"


def documented():
    with open(SPEC) as f:
        spec = yaml.safe_load(f)
    return spec["paths"]["/v1/sandboxes/{id}/startup/stream"]["get"]["responses"]


def startup_sandbox(org, script=WAITS, wait=True):
    sbx = org.create({"startup": {"mode": "command", "argv": ["/bin/sh", "-c", script]}})
    if wait:  # WAITS runs until the test makes /tmp/go
        org.wait_for_status(sbx["id"], "running", 90)
    return sbx["id"]


def test_the_first_line_arrives_before_the_startup_ends_and_the_record_closes_the_stream(daemon, org):
    sid = startup_sandbox(org)
    frames = []
    with harness.EventStream(org, PATH % sid, timeout=120) as stream:
        assert stream.status == 200 and stream.content_type.startswith("text/event-stream")
        for ev in stream.events():
            frames.append(ev)
            if ev["event"] == "stdout" and ev["data"]["data"] == "first\n":
                # Still running: the line came as it was printed, not with the end.
                assert org.get(sid)["status"] == "running"
                harness.run_command(org, sid, command="touch /tmp/go", waitSeconds=30)
    kinds = [f["event"] for f in frames]
    assert kinds[-1] == "result", kinds
    out = "".join(f["data"]["data"] for f in frames if f["event"] == "stdout")
    err = "".join(f["data"]["data"] for f in frames if f["event"] == "stderr")
    assert (out, err) == ("first\nsecond\n", "oops\n"), frames
    record = frames[-1]["data"]
    assert record["id"] == sid and record["status"] == "completed", record
    assert record["startup"]["exitCode"] == 0 and record["startup"]["stdout"] == "first\nsecond\n"
    assert "200" in documented()

    # An ended sandbox: its recorded output, then the record.
    with harness.EventStream(org, PATH % sid, timeout=60) as stream:
        again = list(stream.events())
    assert [f["event"] for f in again] == ["stdout", "stderr", "result"], again
    assert again[0]["data"]["data"] == "first\nsecond\n"


def test_other_organizations_interactive_sandboxes_and_no_key_are_refused(daemon, org):
    sid = startup_sandbox(org, "echo mine", wait=False)
    interactive = org.create({})
    other = daemon.new_org()
    responses = documented()
    for client, target, expected in ((other, sid, 404), (org, "sbx_doesnotexist", 404),
                                     (org, "../../v1/orgs", 404), (org, interactive["id"], 409)):
        with harness.EventStream(client, PATH % target, timeout=30) as stream:
            body = stream.resp.read()
            assert stream.status == expected, (target, stream.status, body)
            assert stream.content_type.startswith("application/json") and b'"error"' in body
        assert str(expected) in responses
    nobody = harness.Client(daemon, "adapt_not_a_key")
    with harness.EventStream(nobody, PATH % sid, timeout=30) as stream:
        assert stream.status == 401 and "401" in responses
        stream.resp.read()


def test_the_sdks_and_the_cli_follow_it(daemon, org):
    # The CLI, from provisioning on: the output as it comes, then the startup's exit status.
    sid = startup_sandbox(org, "echo from-cli; echo cli-err >&2; exit 3", wait=False)
    out = org.cli("sandbox", "logs", sid, timeout=120)
    assert out.returncode == 3, out
    assert out.stdout == "from-cli\n" and "cli-err" in out.stderr, out
    interactive = org.create({})
    out = org.cli("sandbox", "logs", interactive["id"], timeout=60)
    assert out.returncode == 1 and "no startup command" in out.stderr, out

    # The Python SDK, from the source tree.
    sid = startup_sandbox(org)
    code = ("import adapt\n"
            "sb = adapt.Sandbox.connect(%r, client=adapt.Client(url=%r, api_key=%r))\n"
            "pieces = []\n"
            "for stream, text in sb.startup_output(timeout=120):\n"
            "    pieces.append((stream, text))\n"
            "    if len(pieces) == 1:\n"
            "        print('first-status', sb.refresh().status)\n"
            "        sb.run('touch /tmp/go')\n"
            "print('first', pieces[0])\n"
            "print('stdout', repr(''.join(t for s, t in pieces if s == 'stdout')))\n"
            "print('stderr', repr(''.join(t for s, t in pieces if s == 'stderr')))\n"
            "print('final', sb.info.status, repr(sb.info.startup.stdout))\n") % (sid, daemon.url, org.key)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180,
                         env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "sdk", "python", "src")))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "first-status running", lines
    assert lines[1:] == ["first ('stdout', 'first\\n')", "stdout 'first\\nsecond\\n'", "stderr 'oops\\n'",
                         "final completed 'first\\nsecond\\n'"], lines

    # The TypeScript SDK.
    build_typescript_sdk()
    sid = startup_sandbox(org)
    interactive = org.create({})
    got = scenario("startup", daemon, org, SANDBOX_ID=sid, INTERACTIVE_ID=interactive["id"])
    assert got["pieces"][0] == ["stdout", "first\n"] and got["statusAtFirst"] == "running", got
    assert "".join(t for s, t in got["pieces"] if s == "stdout") == "first\nsecond\n", got
    assert (got["status"], got["stdout"]) == ("completed", "first\nsecond\n"), got
    assert got["interactive"]["status"] == 409, got
