"""Commands inside a running sandbox (issue 4), served by runsc exec."""

import concurrent.futures
import json
import re
import time

import pytest

from harness import poll_command as poll
from harness import run_command as run
from test_images_ssrf import Server


def interactive(client, body=None):
    sbx = client.create(body or {})
    client.wait_for_status(sbx["id"], "running", 60)
    return sbx["id"]


@pytest.fixture(scope="module")
def box(daemon):
    client = daemon.new_org()
    sid = interactive(client, {"env": {"SECRET_TOKEN": "hunter2-secret"}})
    return client, sid


def test_exit_code_stdout_and_stderr(box):
    client, sid = box
    cmd = run(client, sid, argv=["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert cmd["status"] == "exited"
    assert cmd["exitCode"] == 3 and cmd["signal"] is None
    assert cmd["stdout"] == "out\n" and cmd["stderr"] == "err\n"
    assert cmd["truncated"] is False
    assert cmd["terminationReason"] == "exited" and cmd["error"] is None
    assert cmd["servedBy"] in ("agent", "runsc-exec")
    assert cmd["id"].startswith("cmd_") and cmd["sandboxId"] == sid
    assert cmd["startedAt"] and cmd["finishedAt"]


def test_command_runs_through_the_shell_and_env_values_are_redacted(box):
    client, sid = box
    cmd = run(client, sid, command="echo $((2+3)) | tr 5 6; echo $SECRET_TOKEN")
    assert cmd["argv"] == ["/bin/sh", "-c", "echo $((2+3)) | tr 5 6; echo $SECRET_TOKEN"]
    assert cmd["stdout"] == "6\n[REDACTED]\n"


def test_stdin_cwd_env_and_user(box):
    client, sid = box
    assert run(client, sid, argv=["cat"], stdin="hello\n")["stdout"] == "hello\n"
    assert run(client, sid, argv=["pwd"], cwd="/tmp")["stdout"] == "/tmp\n"
    assert run(client, sid, command="echo $FOO", env={"FOO": "bar"})["stdout"] == "bar\n"
    assert run(client, sid, argv=["id", "-u"], user="1000")["stdout"] == "1000\n"
    assert run(client, sid, argv=["id", "-un"], user="nobody")["stdout"] == "nobody\n"
    # A group by name: the image's groups have no members ("sandbox:x:1000:").
    assert run(client, sid, argv=["id", "-g"], user="nobody:sandbox")["stdout"] == "1000\n"
    assert run(client, sid, command="id -u; id -g", user="sandbox:root")["stdout"] == "1000\n0\n"


def test_bad_requests_are_400(box):
    client, sid = box
    for body in ({}, {"argv": ["true"], "command": "true"}, {"argv": ["true"], "bogus": 1},
                 {"argv": ["true"], "timeoutSeconds": 0}, {"argv": ["true"], "waitSeconds": 61}):
        status, err = client.api("POST", "/v1/sandboxes/%s/commands" % sid, body)
        assert status == 400, (body, status, err)
        assert err["error"]["code"] and err["error"]["message"]


def test_wait_zero_answers_202_then_polls_to_exited(box):
    client, sid = box
    cmd = run(client, sid, expect=202, command="sleep 1; echo late", waitSeconds=0)
    assert cmd["status"] == "running" and cmd["id"].startswith("cmd_")
    done = poll(client, sid, cmd["id"])
    assert done["status"] == "exited" and done["exitCode"] == 0 and done["stdout"] == "late\n"
    status, page = client.api("GET", "/v1/sandboxes/%s/commands?limit=2" % sid)
    assert status == 200 and page["items"][0]["id"] == cmd["id"]


def test_timeout_kills_the_process_tree(box):
    client, sid = box
    cmd = run(client, sid, command="sleep 30 & echo $! > /tmp/bg.pid; sleep 30",
              timeoutSeconds=1, waitSeconds=20)
    assert cmd["status"] == "timeout" and cmd["terminationReason"] == "timeout", cmd
    assert cmd["signal"] == 9, cmd
    time.sleep(0.5)
    check = run(client, sid, command="kill -0 $(cat /tmp/bg.pid) && echo alive || echo gone")
    assert check["stdout"].strip().endswith("gone"), check


def test_delete_kills_a_running_command(box):
    client, sid = box
    cmd = run(client, sid, expect=202, argv=["sleep", "60"], waitSeconds=0)
    status, killed = client.api("DELETE", "/v1/sandboxes/%s/commands/%s" % (sid, cmd["id"]))
    assert status == 200, killed
    assert killed["status"] == "killed" and killed["terminationReason"] == "killed", killed
    assert killed["signal"] == 9 and killed["exitCode"] is None, killed
    assert poll(client, sid, cmd["id"])["status"] == "killed"


def test_ten_concurrent_commands(box):
    client, sid = box
    with concurrent.futures.ThreadPoolExecutor(10) as pool:
        results = list(pool.map(lambda i: run(client, sid, command="sleep 1; echo %d" % i,
                                              waitSeconds=60), range(10)))
    assert [r["stdout"] for r in results] == ["%d\n" % i for i in range(10)]


def test_output_flood_keeps_the_last_mebibyte(box):
    client, sid = box
    cmd = run(client, sid, command="head -c 5242880 /dev/zero | tr '\\0' a; echo END",
              waitSeconds=60)
    assert cmd["status"] == "exited", cmd["status"]
    assert cmd["truncated"] is True
    assert len(cmd["stdout"]) == 1024 * 1024
    assert cmd["stdout"].endswith("aaaa\nEND\n") or cmd["stdout"].endswith("aEND\n")


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_a_large_flood_leaves_adaptd_memory_flat(daemon, box):
    client, sid = box
    before = rss_kib(daemon.proc.pid)
    cmd = run(client, sid, command="head -c 268435456 /dev/zero | tr '\\0' b", waitSeconds=60,
              timeoutSeconds=120)
    assert cmd["status"] == "exited" and cmd["truncated"], cmd["status"]
    grown = rss_kib(daemon.proc.pid) - before
    assert grown < 64 * 1024, "adaptd grew by %d KiB on a 256 MiB flood" % grown


def test_not_running_sandbox_is_409_and_other_org_is_404(daemon, box):
    client, sid = box
    done = client.run(["true"])
    status, err = client.api("POST", "/v1/sandboxes/%s/commands" % done["id"], {"argv": ["true"]})
    assert status == 409, err
    assert done["status"] in err["error"]["message"]
    other = daemon.new_org()
    status, err = other.api("POST", "/v1/sandboxes/%s/commands" % sid, {"argv": ["true"]})
    assert status == 404, err
    cmd = run(client, sid, argv=["true"])
    status, _ = other.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, cmd["id"]))
    assert status == 404


def test_a_command_lost_with_its_sandboxs_end_says_so_in_its_answer(daemon):
    """The startup command ends while a command runs through the agent: the answer that waited
    on the command says the sandbox stopped running (not only that the agent's connection was
    lost), and the record then carries the sandbox's own reason."""
    from harness import wait_for_agent

    client = daemon.new_org()
    sid = interactive(client, {"startup": {"mode": "command", "argv": [
        "sh", "-c", "while [ ! -e /tmp/end ]; do sleep 0.2; done"]}})
    wait_for_agent(client, sid)
    cmd = run(client, sid, argv=["sh", "-c", "touch /tmp/end; sleep 60"], waitSeconds=30)
    assert cmd["servedBy"] == "agent" and cmd["status"] == "lost", cmd
    ended = "the sandbox's startup command ended, and the sandbox with it"
    # Which of the two adaptd sees first (the store's completed, or the runtime's exited
    # workload) is a race: each names the sandbox's end, not only the agent's lost connection.
    assert cmd["error"] == ended or cmd["error"] in (
        "the sandbox stopped running while the command ran (%s); its outcome is unknown" % why
        for why in ("it is completed now", "its workload ended")), cmd
    client.wait_for_status(sid, "completed", 30)
    deadline = time.monotonic() + 10
    while True:
        status, kept = client.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, cmd["id"]))
        assert status == 200, kept
        if kept["error"] == ended or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert kept["status"] == "lost" and kept["error"] == ended, kept


def test_a_command_sent_while_the_sandbox_boots_waits_for_the_boot(daemon):
    # A create answers while the sandbox boots: a command sent at once waits for the boot
    # within its waitSeconds (as `adapt sandbox exec` and MCP's run_command do), not 409.
    client = daemon.new_org()
    sbx = client.create({})
    assert sbx["status"] == "provisioning", sbx
    cmd = run(client, sbx["id"], argv=["sh", "-c", "echo booted"], waitSeconds=30)
    assert cmd["exitCode"] == 0 and cmd["stdout"] == "booted\n", cmd
    assert client.get(sbx["id"])["status"] == "running"
    again = client.create({})
    status, py = client.api("POST", "/v1/sandboxes/%s/python" % again["id"],
                            {"code": "print(6 * 7)", "waitSeconds": 30})
    assert status == 200 and py["exitCode"] == 0 and py["stdout"] == "42\n", (status, py)


def test_a_command_that_does_not_wait_for_a_booting_sandbox_is_409_and_another_org_404(daemon):
    client = daemon.new_org()
    sbx = client.create({})
    status, err = client.api("POST", "/v1/sandboxes/%s/commands" % sbx["id"],
                             {"argv": ["true"], "waitSeconds": 0})
    assert status == 409 and "provisioning" in err["error"]["message"], (status, err)
    # Another organization's booting sandbox is not waited for: 404 at once, as any unknown id.
    status, err = daemon.new_org().api("POST", "/v1/sandboxes/%s/commands" % sbx["id"],
                                       {"argv": ["true"], "waitSeconds": 30})
    assert status == 404 and err["error"]["code"] == "not_found", (status, err)
    assert client.api("GET", "/v1/sandboxes/%s/commands" % sbx["id"])[1]["items"] == []
    client.wait_for_status(sbx["id"], "running", 60)


def test_a_sandbox_still_booting_at_the_end_of_the_wait_is_409_provisioning(daemon):
    # Its image's registry stalls (the sandbox is provisioning during the pull): the command's
    # wait ends at its waitSeconds with the sandbox's status, and nothing ran.
    def stall(_handler):
        time.sleep(8)
        return 404, {}, b""

    registry = Server({"/": stall})
    try:
        client = daemon.new_org()
        sbx = client.create({"image": "127.0.0.1:%d/stalls/forever:1" % registry.port})
        status, err = client.api("POST", "/v1/sandboxes/%s/commands" % sbx["id"],
                                 {"argv": ["true"], "waitSeconds": 2})
        assert status == 409 and "provisioning" in err["error"]["message"], (status, err)
        assert client.get(sbx["id"])["status"] == "provisioning"
        assert client.api("GET", "/v1/sandboxes/%s/commands" % sbx["id"])[1]["items"] == []
        client.wait_for_status(sbx["id"], "failed", 60)
    finally:
        registry.close()


def test_a_command_waiting_for_a_boot_that_fails_is_409_with_the_status(daemon):
    # The boot ends in failed (its startup program does not exist): the waiting command is
    # refused with that status, and nothing ran.
    client = daemon.new_org()
    sbx = client.create({"startup": {"mode": "command", "argv": ["/no/such/program"]}})
    status, err = client.api("POST", "/v1/sandboxes/%s/commands" % sbx["id"],
                             {"argv": ["true"], "waitSeconds": 30})
    assert status == 409 and "failed" in err["error"]["message"], (status, err)
    assert client.get(sbx["id"])["status"] == "failed"


def test_command_running_when_adaptd_dies_is_lost_after_restart(fresh_daemon):
    d = fresh_daemon
    admin = d.admin
    sid = interactive(admin)
    # Without the agent (killed), the command runs under runsc exec, a child of adaptd that
    # dies with it; an agent-served command is attached again instead (test_agent.py).
    find_agent = ("for p in /proc/[0-9]*; do tr '\\000' ' ' < $p/cmdline 2>/dev/null | "
                  "grep -q '^/.adapt/adapt-agent serve' && echo ${p#/proc/}; done")
    deadline = time.monotonic() + 30
    while True:
        for pid in run(admin, sid, command=find_agent, waitSeconds=30)["stdout"].split():
            run(admin, sid, command="kill -9 %s; sleep 1" % pid, waitSeconds=30)
        cmd = run(admin, sid, expect=202, argv=["sleep", "60"], waitSeconds=0)
        if cmd["servedBy"] == "runsc-exec":
            break
        assert time.monotonic() < deadline, cmd
        time.sleep(0.2)
    d.kill()
    d.start(port=d.port)
    status, after = admin.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, cmd["id"]))
    assert status == 200, after
    assert after["status"] == "lost" and after["terminationReason"] == "lost", after
    assert "adaptd restarted" in after["error"], after
    admin.delete(sid)


def test_cli_exec_prints_output_and_exits_with_the_code(box):
    client, sid = box
    r = client.cli("sandbox", "exec", sid, "--env", "X=42", "--", "sh", "-c", "echo $X; echo e >&2; exit 7")
    assert r.returncode == 7, (r.stdout, r.stderr)
    assert r.stdout == "42\n" and "e\n" in r.stderr
    r = client.cli("sandbox", "exec", sid, "--detach", "--", "sleep", "30")
    assert r.returncode == 0, r.stderr
    cid = r.stdout.strip()
    assert cid.startswith("cmd_")
    r = client.cli("--json", "command", "kill", sid, cid)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"] == "killed"
    # Without --json, a listing (API.md: a table otherwise).
    r = client.cli("command", "get", sid, cid)
    assert r.returncode == 0 and re.search(r"^status:\s+killed$", r.stdout, re.M), r.stdout
    assert re.search(r"^id:\s+%s$" % cid, r.stdout, re.M), r.stdout


def test_cli_exec_passes_standard_input_and_runs_as_the_user_asked(box):
    client, sid = box
    r = client.cli("sandbox", "exec", sid, "-i", "--user", "1000:1000", "--",
                   "sh", "-c", "id -u; tr a-z A-Z", input="café au lait\nline two\n")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert r.stdout == "1000\nCAFé AU LAIT\nLINE TWO\n", r.stdout
    # Without -i the command's standard input is empty, whatever the CLI's is.
    r = client.cli("sandbox", "exec", sid, "--", "wc", "-c", input="not passed\n")
    assert r.returncode == 0 and r.stdout.strip() == "0", (r.stdout, r.stderr)
