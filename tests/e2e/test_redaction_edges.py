"""Environment values stay hidden at the edges of the output (seed 001: "Frozen environment
values are redacted from live and retained startup logs"), against a real adaptd:

- a value printed in two writes, the second a while after the first: neither the live record
  (GET while it runs) nor the SSE stream shows its first part, for a startup command and for a
  command;
- a value that the kept output's start cuts in two (256 KiB of startup output, 1 MiB of a
  command's): the part left in the window is hidden too."""
import time

import harness
from harness import poll_command, run_command

VALUE = "hunter2secretZZ"
PARTS = ("hunter2sec", "retZZ", "ter2secretZZ", "secretZZ")
# The first part, then a wait for a file that the test makes, then the rest.
TWO_WRITES = ("printf 'start %s' \"$(printf %s \"$S\" | cut -c1-10)\"; "
              "while [ ! -e /tmp/go ]; do sleep 0.2; done; "
              "printf '%s end\\n' \"$(printf %s \"$S\" | cut -c11-)\"")


def hides_every_part(text):
    return not any(part in text for part in PARTS)


def test_a_value_printed_in_two_writes_never_shows_half_in_the_startup_output(org):
    sbx = org.create({"env": {"S": VALUE},
                      "startup": {"mode": "command", "argv": ["/bin/sh", "-c", TWO_WRITES]}})
    sid = sbx["id"]
    org.wait_for_status(sid, "running", 90)
    frames = []
    with harness.EventStream(org, "/v1/sandboxes/%s/startup/stream" % sid, timeout=120) as stream:
        for ev in stream.events():
            first = ev["event"] == "stdout" and all(f["event"] != "stdout" for f in frames)
            frames.append(ev)
            if first:
                # The first write: without its half of the value, and the live record the same.
                assert ev["data"]["data"] == "start ", ev
                time.sleep(1)  # a shim write interval or more past the printf
                live = org.get(sid)
                assert live["status"] == "running", live
                assert live["startup"]["stdout"] == "start ", live["startup"]
                run_command(org, sid, command="touch /tmp/go", waitSeconds=30)
    assert frames[-1]["event"] == "result", frames
    sent = "".join(f["data"]["data"] for f in frames if f["event"] == "stdout")
    assert sent == "start [REDACTED] end\n", frames
    assert [f["event"] for f in frames if f["event"] == "reset"] == [], frames
    assert frames[-1]["data"]["startup"]["stdout"] == "start [REDACTED] end\n"


def test_a_value_printed_in_two_writes_never_shows_half_in_a_command_stream(org):
    sid = org.create({"env": {"S": VALUE}})["id"]
    org.wait_for_status(sid, "running", 90)
    cmd = run_command(org, sid, expect=202, command=TWO_WRITES, waitSeconds=0)
    frames = []
    with harness.EventStream(org, "/v1/sandboxes/%s/commands/%s/stream" % (sid, cmd["id"]),
                             timeout=120) as stream:
        for ev in stream.events():
            first = ev["event"] == "stdout" and all(f["event"] != "stdout" for f in frames)
            frames.append(ev)
            if first:
                assert ev["data"]["data"] == "start ", ev
                time.sleep(1)
                status, live = org.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, cmd["id"]))
                assert status == 200 and live["status"] == "running", live
                assert live["stdout"] == "start ", live
                run_command(org, sid, command="touch /tmp/go", waitSeconds=30)
    assert frames[-1]["event"] == "result", frames
    sent = "".join(f["data"]["data"] for f in frames if f["event"] == "stdout")
    assert sent == "start [REDACTED] end\n", frames
    assert poll_command(org, sid, cmd["id"])["stdout"] == "start [REDACTED] end\n"


def fill(n, letter):
    return "head -c %d /dev/zero | tr '\\0' %s" % (n, letter)


def test_a_value_cut_by_the_start_of_the_kept_output_stays_hidden(org):
    # 256 KiB of startup output are kept: the window begins 12 bytes before the value's end.
    script = "%s; printf %%s \"$S\"; %s" % (fill(50000, "A"), fill(256 * 1024 - 12, "B"))
    sbx = org.run(["/bin/sh", "-c", script], env={"S": VALUE})
    assert sbx["status"] == "completed", sbx
    out = sbx["startup"]["stdout"]
    assert sbx["startup"]["truncated"] is True
    assert hides_every_part(out) and out.startswith("[REDACTED]B"), out[:40]

    # A command keeps 1 MiB.
    sid = org.create({"env": {"S": VALUE}})["id"]
    org.wait_for_status(sid, "running", 90)
    script = "%s; printf %%s \"$S\"; %s" % (fill(50000, "A"), fill(1024 * 1024 - 12, "B"))
    cmd = run_command(org, sid, command=script, waitSeconds=60)
    if cmd["status"] == "running":
        cmd = poll_command(org, sid, cmd["id"])
    assert cmd["exitCode"] == 0 and cmd["truncated"] is True, {k: cmd[k] for k in ("status", "exitCode")}
    assert hides_every_part(cmd["stdout"]) and cmd["stdout"].startswith("[REDACTED]B"), cmd["stdout"][:40]
