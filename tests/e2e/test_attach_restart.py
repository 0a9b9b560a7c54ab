"""attach_sandbox_object_storage on a running sandbox (seed 000: "A running sandbox restarts
once to pick them up, which ends its running processes"): the restart gives the first process
the new variables; a durable sandbox keeps its files through it, an instant one loses them."""

from harness import run_command, wait_for_agent

from test_stop_start import out, running_sandbox


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
