"""attach_sandbox_object_storage on a running sandbox (seed 000: "A running sandbox restarts
once to pick them up, which ends its running processes"): the restart gives the first process
the new variables; a durable sandbox keeps its files through it, an instant one loses them.
A stopped sandbox gets them without a restart: its commands see them after its start, and its
restored processes live on."""

from harness import run_command, wait_for_agent
from mcp_support import initialize, rpc

from test_objects import SANDBOX_PUT, get
from test_stop_start import out, running_sandbox, start, stop


def attach_and_read(org, sid):
    status, att = org.api("POST", "/v1/sandboxes/%s/object-storage" % sid, {})
    assert status == 200 and att["restarted"] is True, (status, att)
    org.wait_for_status(sid, "running", 120)
    wait_for_agent(org, sid)
    cmd = run_command(org, sid, command="tr '\\0' '\\n' < /proc/1/environ; cat /root/mine.txt",
                      waitSeconds=30)
    assert "SANDBOX_STORAGE_ENDPOINT=[REDACTED]" in cmd["stdout"], cmd
    assert "SANDBOX_STORAGE_TOKEN=[REDACTED]" in cmd["stdout"], cmd
    return cmd


def test_a_durable_sandbox_restarts_with_the_variables_and_keeps_its_files(org):
    sid = running_sandbox(org, {"startupClass": "durable"})
    out(org, sid, "echo mine > /root/mine.txt")
    pid = out(org, sid, "nohup sleep 100000 >/dev/null 2>&1 & echo $!")["stdout"].strip()
    cmd = attach_and_read(org, sid)
    assert cmd["exitCode"] == 0 and cmd["stdout"].endswith("mine\n"), cmd
    # The restart ended the processes (no checkpoint: a restore would keep the old environment).
    # (its pid may be reused after the fresh boot: its command line tells them apart)
    gone = run_command(org, sid, command="cat /proc/%s/cmdline" % pid, waitSeconds=30)
    assert "100000" not in gone["stdout"], gone


def test_an_instant_sandbox_restarts_with_the_variables_and_loses_its_files(org):
    sid = running_sandbox(org, {})
    out(org, sid, "echo mine > /root/mine.txt")
    cmd = attach_and_read(org, sid)
    assert cmd["exitCode"] != 0 and "mine" not in cmd["stdout"], cmd


def test_a_stopped_sandbox_gets_the_variables_at_its_start_and_keeps_its_processes(org):
    sid = running_sandbox(org, {"startupClass": "durable"})
    pid = out(org, sid, "nohup sleep 100000 >/dev/null 2>&1 & echo $!")["stdout"].strip()
    assert stop(org, sid)["hibernation"]["processes"] == "saved"
    status, att = org.api("POST", "/v1/sandboxes/%s/object-storage" % sid, {})
    assert status == 200 and att["restarted"] is False, (status, att)
    assert att["endpoint"].startswith("http://10."), att
    assert org.get(sid)["status"] == "hibernated"
    start(org, sid)
    org.wait_for_status(sid, "running", 120)
    wait_for_agent(org, sid)
    # Restored, not rebooted: the process started before the stop lives on.
    assert out(org, sid, "cat /proc/%s/cmdline | tr '\\0' ' '" % pid)["stdout"] == "sleep 100000 ", pid
    # The variables reach the gateway from inside: the address recorded is the sandbox's.
    cmd = run_command(org, sid, argv=["python3", "-c", SANDBOX_PUT], timeoutSeconds=60)
    assert cmd["exitCode"] == 0, (cmd["stdout"], cmd["stderr"])
    assert cmd["stdout"].split("\n")[:2] == ["200", "hi from inside"], cmd
    assert get(org, "from-sandbox/hello.txt")[2] == b"hi from inside"


def mcp_call(daemon, org, session, name, args):
    answer = rpc(daemon, org.key, session, "tools/call", {"name": name, "arguments": args})
    assert answer["result"].get("isError") is not True, (name, answer)
    return answer["result"]["structuredContent"]


def test_the_mcp_attach_answers_once_the_restarted_sandbox_runs(org, daemon):
    # So that the assistant's next call (a command, a stop) finds it running, not booting.
    sid = running_sandbox(org, {})
    session, _ = initialize(daemon, org.key)
    att = mcp_call(daemon, org, session, "attach_sandbox_object_storage", {"sandbox_id": sid})
    assert att["restarted"] is True and att["ready"] is True, att
    assert org.api("GET", "/v1/sandboxes/%s" % sid)[1]["status"] == "running"
    cmd = mcp_call(daemon, org, session, "run_command",
                   {"sandbox_id": sid, "command": 'test -n "$SANDBOX_STORAGE_TOKEN" && echo has-token'})
    assert cmd["exit_code"] == 0 and cmd["stdout"] == "has-token\n", cmd


def booting_again(org, daemon):
    """A sandbox the REST attach has restarted (it answers while the sandbox boots again),
    and an MCP session: (sandbox id, session)."""
    sid = running_sandbox(org, {})
    session, _ = initialize(daemon, org.key)
    status, att = org.api("POST", "/v1/sandboxes/%s/object-storage" % sid, {})
    assert status == 200 and att["restarted"] is True, (status, att)
    return sid, session


def test_an_mcp_command_for_a_booting_sandbox_waits_for_its_boot(org, daemon):
    # run_command, called while the sandbox boots, waits for the boot within its wait_seconds
    # (as `adapt sandbox exec` does) instead of failing.
    sid, session = booting_again(org, daemon)
    assert org.api("GET", "/v1/sandboxes/%s" % sid)[1]["status"] == "provisioning"
    cmd = mcp_call(daemon, org, session, "run_command",
                   {"sandbox_id": sid, "command": "echo booted", "wait_seconds": 30})
    assert cmd["exit_code"] == 0 and cmd["stdout"] == "booted\n", cmd


def test_an_mcp_command_with_no_wait_for_a_booting_sandbox_says_it_is_starting(org, daemon):
    sid, session = booting_again(org, daemon)
    answer = rpc(daemon, org.key, session, "tools/call",
                 {"name": "run_command",
                  "arguments": {"sandbox_id": sid, "command": "true", "wait_seconds": 0}})
    assert answer["result"]["isError"] is True, answer
    assert "provisioning" in answer["result"]["content"][0]["text"], answer
    org.wait_for_status(sid, "running", 120)
