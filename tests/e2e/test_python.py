"""Running Python in a sandbox (issue 15): one core verb behind REST's POST .../python, MCP's
run_python and `adapt sandbox python`."""

import pytest

import harness
from harness import poll_command as poll


@pytest.fixture(scope="module")
def box(daemon):
    client = daemon.new_org()
    sbx = client.create({})
    client.wait_for_status(sbx["id"], "running", 60)
    return client, sbx["id"]


def python(client, sid, body, expect):
    status, out = client.api("POST", "/v1/sandboxes/%s/python" % sid, body)
    assert status == expect, (body, status, out)
    return out


def test_rest_runs_code_on_python3_and_answers_the_command(box):
    client, sid = box
    cmd = python(client, sid, {"code": "import sys\nprint(6 * 7)\nsys.exit(3)"}, 200)
    assert cmd["status"] == "exited" and cmd["exitCode"] == 3, cmd
    assert cmd["stdout"] == "42\n", cmd
    assert cmd["id"].startswith("cmd_") and cmd["sandboxId"] == sid
    # The same command as any other: readable at /commands.
    status, again = client.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, cmd["id"]))
    assert status == 200 and again["stdout"] == "42\n", again


def test_rest_wait_zero_answers_202_and_the_command_polls_to_its_end(box):
    client, sid = box
    cmd = python(client, sid, {"code": "import time\ntime.sleep(1)\nprint('late')",
                               "waitSeconds": 0, "timeoutSeconds": 30}, 202)
    assert cmd["status"] == "running", cmd
    done = poll(client, sid, cmd["id"])
    assert done["status"] == "exited" and done["stdout"] == "late\n", done


def test_rest_bad_requests_name_the_field_and_run_nothing(box):
    client, sid = box
    status, before = client.api("GET", "/v1/sandboxes/%s/commands" % sid)
    assert status == 200
    for body, field in (({}, "code"), ({"code": 5}, "code"), ({"code": ""}, "code"),
                        ({"code": "1", "timeoutSeconds": 0}, "timeoutSeconds"),
                        ({"code": "1", "waitSeconds": 61}, "waitSeconds"),
                        ({"code": "1", "argv": ["x"]}, "argv")):
        status, err = client.api("POST", "/v1/sandboxes/%s/python" % sid, body)
        assert status == 400, (body, status, err)
        assert err["error"]["field"] == field, (body, err)
    status, after = client.api("GET", "/v1/sandboxes/%s/commands" % sid)
    assert [c["id"] for c in after["items"]] == [c["id"] for c in before["items"]]


def test_rest_unknown_or_foreign_sandbox_is_404(daemon, box):
    _, sid = box
    other = daemon.new_org()
    status, err = other.api("POST", "/v1/sandboxes/%s/python" % sid, {"code": "print(1)"})
    assert status == 404, err
    status, err = other.api("POST", "/v1/sandboxes/sbx_nope/python", {"code": "print(1)"})
    assert status == 404, err


def test_rest_an_image_without_python3_is_422(box):
    client, sid = box
    # No python3 on this sandbox's PATH: what an image without Python looks like to the run.
    status, err = client.api("POST", "/v1/sandboxes/%s/commands" % sid,
                             {"command": "mkdir -p /tmp/nopy", "waitSeconds": 30})
    assert status == 200, err
    sbx = client.create({"env": {"PATH": "/tmp/nopy"}})
    client.wait_for_status(sbx["id"], "running", 60)
    status, err = client.api("POST", "/v1/sandboxes/%s/python" % sbx["id"],
                             {"code": "print(1)", "waitSeconds": 30})
    assert status == 422, err
    assert "python3" in err["error"]["message"] and sbx["id"] in err["error"]["message"], err
    # A caller that does not wait (a client streaming the output) gets the command, ended or
    # not, however fast the run ended: the record says what happened.
    for _ in range(5):
        status, cmd = client.api("POST", "/v1/sandboxes/%s/python" % sbx["id"],
                                 {"code": "print(1)", "waitSeconds": 0})
        assert status in (200, 202), (status, cmd)
        done = poll(client, sbx["id"], cmd["id"])
        assert done["exitCode"] == 127, done
        assert done["stderr"] == "adapt: python3 is not installed in this image\n", done
    client.delete(sbx["id"])


def test_cli_python_prints_output_and_exits_with_the_code(box):
    client, sid = box
    r = client.cli("sandbox", "python", sid, "--code", "import sys\nprint('hi')\nsys.exit(4)")
    assert r.returncode == 4, (r.stdout, r.stderr)
    assert r.stdout == "hi\n", r.stdout
    # The program on standard input.
    r = client.cli("sandbox", "python", sid, input="print(2 ** 10)\n")
    assert r.returncode == 0 and r.stdout == "1024\n", (r.stdout, r.stderr)
    r = client.cli("sandbox", "python", sid, "--code", "print('j')", "--json")
    assert r.returncode == 0, r.stderr
    assert '"stdout": "j\\n"' in r.stdout, r.stdout


def test_cli_python_errors_are_one_sentence_and_nonzero(daemon, box):
    client, sid = box
    r = client.cli("sandbox", "python", "sbx_nope", "--code", "print(1)")
    assert r.returncode != 0 and "not found" in r.stderr, (r.stdout, r.stderr)
    r = client.cli("sandbox", "python", sid, input="")
    assert r.returncode == 2 and "empty" in r.stderr, (r.stdout, r.stderr)
