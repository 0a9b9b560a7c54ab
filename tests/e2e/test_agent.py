"""Commands served by the in-sandbox agent (issue 4): adapt-agent serve, reached through a
per-sandbox host Unix socket; fallback to runsc exec when it is gone."""

import concurrent.futures
import json
import os
import subprocess
import sys
import time

import pytest

from harness import EventStream
from harness import poll_command as poll
from harness import run_command as run
from harness import wait_for_agent

FIND_AGENT = (
    "for p in /proc/[0-9]*; do "
    "tr '\\000' ' ' < $p/cmdline 2>/dev/null | grep -q '^/.adapt/adapt-agent serve' "
    "&& echo ${p#/proc/}; done"
)


def interactive(client, body=None):
    sbx = client.create(body or {})
    client.wait_for_status(sbx["id"], "running", 60)
    wait_for_agent(client, sbx["id"])
    return sbx["id"]


@pytest.fixture(scope="module")
def box(daemon):
    client = daemon.new_org()
    sid = interactive(client, {"env": {"SECRET_TOKEN": "hunter2-secret", "GREETING": "hi"}})
    return client, sid


def test_exit_codes_and_signals_through_the_agent(box):
    client, sid = box
    cmd = run(client, sid, argv=["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert cmd["servedBy"] == "agent", cmd
    assert cmd["status"] == "exited" and cmd["terminationReason"] == "exited"
    assert cmd["exitCode"] == 3 and cmd["signal"] is None
    assert cmd["stdout"] == "out\n" and cmd["stderr"] == "err\n" and cmd["truncated"] is False
    cmd = run(client, sid, command="kill -TERM $$")
    assert cmd["servedBy"] == "agent"
    assert cmd["exitCode"] is None and cmd["signal"] == 15, cmd
    cmd = run(client, sid, argv=["/no/such/program"])
    assert cmd["exitCode"] == 127 and "/no/such/program" in cmd["stderr"], cmd


def test_stdin_cwd_env_and_user(box):
    client, sid = box
    assert run(client, sid, argv=["cat"], stdin="hello\n")["stdout"] == "hello\n"
    big = "x" * (900 * 1024)  # beyond a pipe's and a frame's buffers, within the 1 MiB body
    cmd = run(client, sid, argv=["wc", "-c"], stdin=big)
    assert cmd["stdout"].strip() == str(len(big)), cmd["stdout"]
    assert run(client, sid, argv=["pwd"], cwd="/tmp")["stdout"] == "/tmp\n"
    # The workload's environment is inherited, the request's added; secrets stay redacted.
    cmd = run(client, sid, command="echo $GREETING $FOO $SECRET_TOKEN; echo $PATH",
              env={"FOO": "bar"})
    lines = cmd["stdout"].splitlines()
    assert lines[0] == "hi bar [REDACTED]", cmd["stdout"]
    assert "/bin" in lines[1]
    assert run(client, sid, command="echo $GREETING", env={"GREETING": "yo"})["stdout"] == "yo\n"
    assert run(client, sid, argv=["id", "-u"], user="1000")["stdout"] == "1000\n"
    assert run(client, sid, argv=["id", "-un"], user="nobody")["stdout"] == "nobody\n"
    # A root command gets the workload's capabilities (restricted's: CHOWN, KILL, SETGID,
    # SETUID, NET_BIND_SERVICE, AUDIT_WRITE), not what the agent adds to switch users (SETPCAP).
    caps = dict(line.split(":\t") for line in
                run(client, sid, argv=["grep", "^Cap", "/proc/self/status"])["stdout"].splitlines())
    restricted = sum(1 << n for n in (0, 5, 6, 7, 10, 29))
    for name in ("CapEff", "CapPrm", "CapBnd"):
        assert int(caps[name], 16) == restricted, (name, caps[name])
        assert not int(caps[name], 16) & (1 << 8), (name, caps[name])  # SETPCAP
    cmd = run(client, sid, argv=["pwd"], cwd="/no/such/dir")
    assert cmd["exitCode"] == 127 and "/no/such/dir" in cmd["stderr"], cmd


def test_timeout_kills_the_process_tree(box):
    client, sid = box
    cmd = run(client, sid, command="sleep 30 & echo $! > /tmp/agent-bg.pid; sleep 30",
              timeoutSeconds=1, waitSeconds=20)
    assert cmd["servedBy"] == "agent"
    assert cmd["status"] == "timeout" and cmd["terminationReason"] == "timeout", cmd
    assert cmd["signal"] == 9, cmd
    time.sleep(0.5)
    check = run(client, sid, command="kill -0 $(cat /tmp/agent-bg.pid) 2>/dev/null && echo alive || echo gone")
    assert check["stdout"] == "gone\n", check


def test_delete_kills_the_whole_tree(box):
    client, sid = box
    cmd = run(client, sid, expect=202, waitSeconds=0,
              command="sh -c 'sleep 60 & echo $! > /tmp/agent-tree.pid; wait' & wait")
    assert cmd["servedBy"] == "agent"
    for _ in range(100):
        if run(client, sid, command="test -s /tmp/agent-tree.pid && echo ok")["stdout"] == "ok\n":
            break
        time.sleep(0.1)
    status, killed = client.api("DELETE", "/v1/sandboxes/%s/commands/%s" % (sid, cmd["id"]))
    assert status == 200, killed
    assert killed["status"] == "killed" and killed["terminationReason"] == "killed", killed
    assert killed["signal"] == 9 and killed["exitCode"] is None, killed
    time.sleep(0.3)
    check = run(client, sid, command="kill -0 $(cat /tmp/agent-tree.pid) 2>/dev/null && echo alive || echo gone")
    assert check["stdout"] == "gone\n", check


def test_background_process_survives_its_command(box):
    client, sid = box
    # The background child keeps stdout open: the command still ends with its shell.
    cmd = run(client, sid, command="sleep 30 & echo $! > /tmp/agent-keep.pid; echo started",
              waitSeconds=20)
    assert cmd["status"] == "exited" and cmd["exitCode"] == 0 and cmd["stdout"] == "started\n", cmd
    time.sleep(0.3)
    check = run(client, sid, command="kill -0 $(cat /tmp/agent-keep.pid) && echo alive || echo gone")
    assert check["stdout"] == "alive\n", check
    run(client, sid, command="kill $(cat /tmp/agent-keep.pid)")


def test_a_silent_connection_to_the_agent_socket_holds_up_nothing(daemon):
    client = daemon.new_org()
    sid = interactive(client)
    # A process of the sandbox connects to the agent's socket and says nothing for 30 s.
    silent = ("import socket, time\n"
              "s = socket.socket(socket.AF_UNIX)\n"
              "s.connect('/.adapt/agent.sock')\n"
              "print('connected', flush=True)\n"
              "time.sleep(30)\n")
    started = run(client, sid, expect=202, argv=["python3", "-c", silent], waitSeconds=0)
    deadline = time.monotonic() + 30
    while "connected" not in poll_output(client, sid, started["id"]):
        assert time.monotonic() < deadline, "the silent client never connected"
        time.sleep(0.2)
    # A file read needs a new connection from the agent (its data stream): it is heard at
    # once, not after the silent one's wait, so the agent still serves it.
    status, _, raw, headers = client.request(
        "GET", "/v1/sandboxes/%s/files?path=/etc/os-release" % sid)
    assert status == 200 and b"Debian" in raw, (status, raw)
    assert headers.get("adapt-served-by") == "agent", headers
    assert run(client, sid, argv=["true"])["servedBy"] == "agent"


def poll_output(client, sid, cid):
    status, cmd = client.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, cid))
    assert status == 200, cmd
    return cmd["stdout"]


def test_fifty_concurrent_commands(box):
    client, sid = box
    with concurrent.futures.ThreadPoolExecutor(50) as pool:
        results = list(pool.map(lambda i: run(client, sid, command="sleep 1; echo %d" % i,
                                              waitSeconds=60), range(50)))
    assert [r["stdout"] for r in results] == ["%d\n" % i for i in range(50)]
    assert {r["servedBy"] for r in results} == {"agent"}
    assert {r["exitCode"] for r in results} == {0}


def collect(stream):
    out, err, result = [], [], None
    for ev in stream.events():
        if ev.get("event") == "stdout":
            out.append(ev["data"]["data"])
        elif ev.get("event") == "stderr":
            err.append(ev["data"]["data"])
        elif ev.get("event") == "result":
            result = ev["data"]
    return "".join(out), "".join(err), result


def test_stream_follows_a_long_command_then_replays_it(box):
    client, sid = box
    script = "for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.4; done; echo bye >&2; exit 4"
    cmd = run(client, sid, expect=202, command=script, waitSeconds=0)
    path = "/v1/sandboxes/%s/commands/%s/stream" % (sid, cmd["id"])
    with EventStream(client, path, timeout=60) as s:
        assert s.status == 200 and s.content_type.startswith("text/event-stream")
        seen_running = False
        out, err, result = [], [], None
        for ev in s.events():
            if ev.get("event") == "stdout":
                out.append(ev["data"]["data"])
                if len(out) == 1:
                    # Live: the first tick arrives while the command still runs.
                    status, now = client.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, cmd["id"]))
                    seen_running = now["status"] == "running"
            elif ev.get("event") == "stderr":
                err.append(ev["data"]["data"])
            elif ev.get("event") == "result":
                result = ev["data"]
    assert seen_running
    assert "".join(out) == "".join("tick %d\n" % i for i in range(1, 7))
    assert "".join(err) == "bye\n"
    assert result["status"] == "exited" and result["exitCode"] == 4, result
    with EventStream(client, path, timeout=30) as s:
        out, err, result = collect(s)
    assert out == "".join("tick %d\n" % i for i in range(1, 7)) and err == "bye\n"
    assert result["exitCode"] == 4
    status, _ = client.api("GET", "/v1/sandboxes/%s/commands/cmd_nope/stream" % sid)
    assert status == 404


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_output_flood_keeps_adaptd_memory_flat(daemon, box):
    client, sid = box
    cmd = run(client, sid, command="head -c 5242880 /dev/zero | tr '\\0' a; echo END",
              waitSeconds=60)
    assert cmd["servedBy"] == "agent" and cmd["truncated"] is True
    assert len(cmd["stdout"]) == 1024 * 1024 and cmd["stdout"].endswith("aEND\n")
    before = rss_kib(daemon.proc.pid)
    # 256 MiB (about 10 s through the agent here; 512 MiB took 20 s): a daemon that kept even
    # a fifth of it would grow past the bound, which leaves room for allocator noise.
    cmd = run(client, sid, command="head -c 268435456 /dev/zero | tr '\\0' b", waitSeconds=60,
              timeoutSeconds=120)
    assert cmd["status"] == "exited" and cmd["truncated"], cmd["status"]
    grown = rss_kib(daemon.proc.pid) - before
    assert grown < 48 * 1024, "adaptd grew by %d KiB on a 256 MiB flood" % grown


def test_cli_exec_streams_and_command_wait(box):
    client, sid = box
    r = client.cli("sandbox", "exec", sid, "--", "sh", "-c", "echo one; sleep 0.5; echo two; echo e >&2; exit 9")
    assert r.returncode == 9, (r.stdout, r.stderr)
    assert r.stdout == "one\ntwo\n" and "e\n" in r.stderr
    r = client.cli("sandbox", "exec", sid, "--detach", "--", "sh", "-c", "sleep 1; exit 5")
    assert r.returncode == 0, r.stderr
    cid = r.stdout.strip()
    r = client.cli("--json", "command", "wait", sid, cid)
    assert r.returncode == 5, (r.stdout, r.stderr)
    assert json.loads(r.stdout)["status"] == "exited"


def host_agent_execs(sid):
    """The host's `runsc exec` processes that started sandbox `sid`'s agent."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"exec" in argv and sid.encode() in argv and b"/.adapt/adapt-agent" in argv:
            found.append(int(pid))
    return found


def parent_of(client, sid, pid):
    stat = run(client, sid, argv=["cat", "/proc/%s/stat" % pid])["stdout"]
    return int(stat.rsplit(")", 1)[1].split()[1])


def test_an_interactive_sandboxs_init_starts_its_agent_with_no_host_process(daemon):
    client = daemon.new_org()
    sbx = client.create({})
    sid = sbx["id"]
    client.wait_for_status(sid, "running", 60)
    # The search finds such a process when there is one: a decoy with the same arguments.
    decoy = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "exec", sid,
                              "/.adapt/adapt-agent"])
    try:
        # Its command line shows once it has exec'd, which Popen need not wait for.
        deadline = time.monotonic() + 10
        while host_agent_execs(sid) != [decoy.pid] and time.monotonic() < deadline:
            time.sleep(0.02)
        assert host_agent_execs(sid) == [decoy.pid]
    finally:
        decoy.kill()
        decoy.wait()
    wait_for_agent(client, sid)
    assert host_agent_execs(sid) == []
    pids = run(client, sid, command=FIND_AGENT)["stdout"].split()
    assert len(pids) == 1, pids
    assert parent_of(client, sid, pids[0]) == 1
    init = run(client, sid, command="tr '\\000' ' ' < /proc/1/cmdline")["stdout"].split()
    assert init[:3] == ["/.adapt/adapt-pause", "/.adapt/adapt-agent", "serve"], init
    # The key reached the agent on the init's stdin; a root command finds neither.
    assert run(client, sid, argv=["readlink", "/proc/1/fd/0"])["stdout"] == "/dev/null\n"
    peek = run(client, sid, command="readlink /proc/%s/fd/0; cat /proc/%s/fd/0" % (pids[0], pids[0]))
    assert peek["stdout"] in ("", "/dev/null\n"), peek
    cmd = run(client, sid, command="echo still; exit 4")
    assert cmd["servedBy"] == "agent" and cmd["stdout"] == "still\n" and cmd["exitCode"] == 4, cmd


def test_a_startup_commands_agent_runs_in_the_sandbox_with_no_host_process_left(daemon):
    client = daemon.new_org()
    sbx = client.create({"startup": {"mode": "command", "argv": ["sleep", "600"]}})
    sid = sbx["id"]
    client.wait_for_status(sid, "running", 60)
    wait_for_agent(client, sid)
    # The shim lets the `runsc exec` that started the agent go once the agent runs.
    deadline = time.monotonic() + 10
    while host_agent_execs(sid):
        assert time.monotonic() < deadline, host_agent_execs(sid)
        time.sleep(0.1)
    assert len(run(client, sid, command=FIND_AGENT)["stdout"].split()) == 1
    cmd = run(client, sid, command="echo still; exit 4")
    assert cmd["servedBy"] == "agent" and cmd["stdout"] == "still\n" and cmd["exitCode"] == 4, cmd
    # The sandbox's own PID 1 is its startup command, untouched.
    init = run(client, sid, command="tr '\\000' ' ' < /proc/1/cmdline")["stdout"]
    assert init == "sleep 600 ", init


# What a root command of the sandbox (no CAP_SYS_PTRACE) gets from a process's /proc files:
# "<file> denied <errno name>" or "<file> read <bytes>"; mem is read at the start of the first
# writable mapping that maps shows (the process's data: the agent's key lives there); "child"
# probes a `sleep` the probe starts itself.
PEEK = r"""
import errno, subprocess, sys
pid = sys.argv[1]
if pid == "child":
    pid = str(subprocess.Popen(["sleep", "30"]).pid)
def peek(name, offset=0):
    try:
        with open("/proc/%s/%s" % (pid, name), "rb", buffering=0) as f:
            if offset:
                f.seek(offset)
            data = f.read(4096)
        print(name, "read", len(data))
        return data
    except OSError as e:
        print(name, "denied", errno.errorcode.get(e.errno, e.errno))
peek("environ")
maps = peek("maps") or b""
writable = [l.split()[0] for l in maps.decode().splitlines() if l.split()[1].startswith("rw")]
peek("mem", int(writable[0].split("-")[0], 16) if writable else 4096)
"""


def peek(client, sid, pid):
    cmd = run(client, sid, argv=["sh", "-c", 'python3 -c "$0" "$1"', PEEK, pid])
    assert cmd["exitCode"] == 0, cmd
    return dict(line.split(" ", 1) for line in cmd["stdout"].splitlines())


@pytest.mark.parametrize("startup", [None, ["sleep", "600"]], ids=["interactive", "startup-command"])
def test_a_root_command_cannot_read_the_agents_memory_nor_find_its_key(daemon, startup):
    client = daemon.new_org()
    body = {"startup": {"mode": "command", "argv": startup}} if startup else {}
    sid = interactive(client, body)
    pids = run(client, sid, command=FIND_AGENT)["stdout"].split()
    assert len(pids) == 1, pids
    # The agent is non-dumpable: its memory, where the key lives, is closed to the workload.
    assert peek(client, sid, pids[0])["mem"].startswith("denied"), pids
    # This gVisor (20221219) lets root read a non-dumpable process's environ, maps and fd
    # links (Linux would not): none of them holds the key, which came on a pipe.
    with open(os.path.join(daemon.state_dir, "sandboxes", sid, "agent.key")) as f:
        key = f.read().split("\n")[0]
    assert len(key) >= 32
    seen = run(client, sid, command="cat /proc/%s/environ /proc/%s/cmdline; ls -l /proc/%s/fd"
                                    % (pids[0], pids[0], pids[0]))
    assert key not in seen["stdout"] and key not in seen["stderr"], seen
    # The probe reads the memory of a process it may trace (its own child), so the denial
    # above is the agent's alone.
    own = peek(client, sid, "child")
    assert own["mem"].startswith("read") and own["environ"].startswith("read"), own


def test_works_with_egress_none_and_falls_back_when_the_agent_dies(daemon):
    client = daemon.new_org()
    sid = interactive(client, {"network": {"egress": "none"}})
    pids = run(client, sid, command=FIND_AGENT)["stdout"].split()
    assert len(pids) == 1, pids
    # Killing the agent ends the command that did it as "lost" or "exited"; either way
    # the next commands go through runsc exec, and say so.
    killer = run(client, sid, command="kill -9 %s; sleep 1" % pids[0], waitSeconds=30)
    assert killer["status"] in ("lost", "exited"), killer
    if killer["status"] == "lost":
        assert "sandbox's agent was lost" in killer["error"], killer
    deadline = time.monotonic() + 20
    while True:
        cmd = run(client, sid, command="echo via; exit 2")
        if cmd["servedBy"] == "runsc-exec":
            break
        assert time.monotonic() < deadline, cmd
        time.sleep(0.2)
    assert cmd["stdout"] == "via\n" and cmd["exitCode"] == 2
    status, page = client.api("GET", "/v1/sandboxes/%s/commands?limit=1" % sid)
    assert page["items"][0]["servedBy"] == "runsc-exec"
    assert run(client, sid, command=FIND_AGENT)["stdout"] == ""
    # A child left writing in the background holds the command's stdout: the command ends
    # with its process all the same (adaptd read on for as long as output came, for ever).
    # Its pid goes to stderr, which nothing else writes.
    cmd = run(client, sid, command="(while :; do echo y; done) & echo $! >&2; exit 0",
              waitSeconds=30)
    assert cmd["servedBy"] == "runsc-exec" and cmd["status"] == "exited", cmd
    assert cmd["exitCode"] == 0 and "y\n" in cmd["stdout"], cmd["stdout"][:200]
    writer = cmd["stderr"].strip()
    assert writer.isdigit(), cmd["stderr"]
    run(client, sid, command="kill %s 2>/dev/null; true" % writer)


def test_agent_reconnects_after_adaptd_restart(fresh_daemon):
    d = fresh_daemon
    admin = d.admin
    sid = interactive(admin)
    # Runs across the restart: what it prints while adaptd is away, and its exit, are kept by
    # the agent and recorded by the next adaptd.
    script = "echo before; sleep 4; echo while-away; echo err >&2; exit 7"
    cmd = run(admin, sid, expect=202, command=script, waitSeconds=1)
    assert cmd["servedBy"] == "agent"
    d.kill()
    d.start(port=d.port)
    status, after = admin.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, cmd["id"]))
    assert status == 200, after
    assert after["status"] in ("running", "exited"), after
    done = poll(admin, sid, cmd["id"], timeout=60)
    assert done["status"] == "exited" and done["exitCode"] == 7, done
    assert done["terminationReason"] == "exited" and done["servedBy"] == "agent", done
    assert "while-away\n" in done["stdout"] and done["stderr"] == "err\n", done
    wait_for_agent(admin, sid)
    again = run(admin, sid, argv=["echo", "back"])
    assert again["servedBy"] == "agent" and again["stdout"] == "back\n"
    admin.delete(sid)


def test_a_command_the_agent_no_longer_runs_is_lost_after_a_restart(fresh_daemon):
    d = fresh_daemon
    admin = d.admin
    sid = interactive(admin)
    cmd = run(admin, sid, expect=202, argv=["sleep", "60"], waitSeconds=0)
    assert cmd["servedBy"] == "agent"
    # While adaptd is away the agent dies: nobody can attach the command again.
    pids = run(admin, sid, command=FIND_AGENT)["stdout"].split()
    assert len(pids) == 1, pids
    run(admin, sid, command="setsid sh -c 'sleep 2; kill -9 %s' >/dev/null 2>&1 &" % pids[0])
    d.kill()
    time.sleep(3)
    d.start(port=d.port)
    status, after = admin.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, cmd["id"]))
    assert status == 200, after
    done = poll(admin, sid, cmd["id"], timeout=60)
    assert done["status"] == "lost" and done["terminationReason"] == "lost", done
    assert "adaptd restarted" in done["error"], done
    admin.delete(sid)
