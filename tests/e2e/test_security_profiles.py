"""Security profiles (seed 000, issue 17): `developer` sandboxes install Debian packages with
apt-get from a local Debian-format repository; `restricted` ones run a root master that drops
to its worker user but cannot install; both show exactly their capability sets, in commands
too; an instant sandbox's installs are gone after stop and start.

The repository is a few .debs built here with dpkg-deb and indexed with dpkg-scanpackages,
served over HTTP by a stand-in host in a network namespace this test makes (198.18.78.10
behind 198.18.77.0/30, benchmarking addresses the host reaches only through the route made
here). No other address is contacted.
"""

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from harness import poll_command
from harness import run_command

from test_agent import wait_for_agent

REPO_HOST = "198.18.78.10"
SOURCES = "deb [trusted=yes] http://%s/ ./" % REPO_HOST
# CapEff as /proc/self/status shows it (capability numbers: linux/capability.h).
RESTRICTED = {"CHOWN": 0, "KILL": 5, "SETGID": 6, "SETUID": 7, "NET_BIND_SERVICE": 10,
              "AUDIT_WRITE": 29}
DEVELOPER = dict(RESTRICTED, DAC_OVERRIDE=1, FOWNER=3, FSETID=4, SETFCAP=31)


def run(client, sid, **body):
    """Runs a command to its end (apt-get may take longer than one wait)."""
    body.setdefault("waitSeconds", 60)
    cmd = run_command(client, sid, **body)
    if cmd["status"] == "running":
        cmd = poll_command(client, sid, cmd["id"], timeout=300)
    return cmd


def mask(caps):
    return "%016x" % sum(1 << n for n in caps.values())


def sh(*argv, check=True):
    r = subprocess.run(list(argv), capture_output=True, text=True, timeout=60)
    if check and r.returncode != 0:
        raise AssertionError("%s -> %s: %s" % (" ".join(argv), r.returncode, r.stderr))
    return r


def build_repository(root):
    """adapt-hello (depends on adapt-extra) and adapt-extra, indexed as a flat repository."""
    src = os.path.join(root, "src")
    repo = os.path.join(root, "repo")
    os.makedirs(repo)
    for name, depends in (("adapt-extra", None), ("adapt-hello", "adapt-extra")):
        pkg = os.path.join(src, name)
        os.makedirs(os.path.join(pkg, "DEBIAN"))
        os.makedirs(os.path.join(pkg, "usr", "bin"))
        with open(os.path.join(pkg, "usr", "bin", name), "w") as f:
            f.write("#!/bin/sh\necho %s works\n" % name)
        os.chmod(os.path.join(pkg, "usr", "bin", name), 0o755)
        control = ("Package: %s\nVersion: 1.0\nArchitecture: all\n"
                   "Maintainer: adapt tests <tests@adapt.invalid>\n" % name)
        if depends:
            control += "Depends: %s\n" % depends
        control += "Description: a package of adapt's tests\n"
        with open(os.path.join(pkg, "DEBIAN", "control"), "w") as f:
            f.write(control)
        sh("dpkg-deb", "--root-owner-group", "--build", pkg, repo)
    index = subprocess.run(["dpkg-scanpackages", "--multiversion", "."], cwd=repo,
                           capture_output=True, text=True, check=True).stdout
    assert "Package: adapt-hello" in index, index
    with open(os.path.join(repo, "Packages"), "w") as f:
        f.write(index)
    return repo


@contextlib.contextmanager
def package_host():
    """The stand-in package mirror: a namespace with REPO_HOST serving the repository on :80."""
    tag = "%d" % (os.getpid() % 100000)
    ns, host_if, peer_if = "adapt-e2e-apt" + tag, "apth" + tag, "aptp" + tag
    root = tempfile.mkdtemp(prefix="adapt-apt-", dir="/tmp")
    proc = None
    sh("ip", "netns", "add", ns)
    try:
        repo = build_repository(root)
        sh("ip", "link", "add", host_if, "type", "veth", "peer", "name", peer_if)
        sh("ip", "link", "set", peer_if, "netns", ns)
        sh("ip", "addr", "add", "198.18.77.1/30", "dev", host_if)
        sh("ip", "link", "set", host_if, "up")
        sh("ip", "-n", ns, "addr", "add", "198.18.77.2/30", "dev", peer_if)
        sh("ip", "-n", ns, "link", "set", peer_if, "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", ns, "addr", "add", REPO_HOST + "/32", "dev", "lo")
        sh("ip", "-n", ns, "route", "add", "default", "via", "198.18.77.1")
        sh("ip", "route", "add", "198.18.78.0/24", "via", "198.18.77.2", "dev", host_if)
        proc = subprocess.Popen(
            ["ip", "netns", "exec", ns, sys.executable, "-u", "-c",
             "import functools, http.server, sys\n"
             "h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])\n"
             "s = http.server.ThreadingHTTPServer((sys.argv[2], 80), h)\n"
             "print('ready', flush=True)\n"
             "s.serve_forever()\n", repo, REPO_HOST],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert proc.stdout.readline().strip() == "ready"
        yield
    finally:
        if proc:
            proc.kill()
            proc.wait()
        sh("ip", "route", "del", "198.18.78.0/24", check=False)
        sh("ip", "link", "del", host_if, check=False)
        sh("ip", "netns", "del", ns, check=False)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def mirror():
    with package_host():
        yield


def sandbox(client, profile, **fields):
    body = {"securityProfile": profile,
            # Egress reaches the mirror and nothing else.
            "network": {"egress": "allowlist",
                        "allow": [{"protocol": "tcp", "address": REPO_HOST, "port": 80}]}}
    body.update(fields)
    sid = client.create(body)["id"]
    client.wait_for_status(sid, "running", 120)
    wait_for_agent(client, sid)
    return sid


def use_mirror(client, sid):
    # The image's own sources name deb.debian.org, which egress does not reach.
    cmd = run(client, sid, command="rm -f /etc/apt/sources.list.d/* /etc/apt/sources.list; "
                                   "echo '%s' > /etc/apt/sources.list.d/adapt-test.list" % SOURCES)
    return cmd


INSTALL = ("apt-get update -o Acquire::Retries=0 2>&1 && "
           "DEBIAN_FRONTEND=noninteractive apt-get install -y adapt-hello 2>&1 && adapt-hello")


def test_developer_installs_packages_with_apt_get_from_the_mirror(org, mirror):
    sid = sandbox(org, "developer")
    assert org.get(sid)["securityProfile"] == "developer"
    assert use_mirror(org, sid)["exitCode"] == 0
    cmd = run(org, sid, command=INSTALL)
    assert cmd["exitCode"] == 0, cmd
    assert cmd["stdout"].endswith("adapt-hello works\n"), cmd
    # The dependency came along, from the same mirror.
    cmd = run(org, sid, command="dpkg -s adapt-extra | grep Status; adapt-extra")
    assert cmd["stdout"] == "Status: install ok installed\nadapt-extra works\n", cmd


def test_commands_have_exactly_their_profiles_capabilities(org, mirror):
    for profile, caps in (("restricted", RESTRICTED), ("developer", DEVELOPER)):
        sid = sandbox(org, profile)
        cmd = run(org, sid, command="grep -E '^Cap(Eff|Prm|Bnd):' /proc/self/status")
        assert cmd["exitCode"] == 0, cmd
        lines = dict(line.split(":\t") for line in cmd["stdout"].splitlines())
        assert lines == {"CapEff": mask(caps), "CapPrm": mask(caps), "CapBnd": mask(caps)}, (
            profile, cmd)
        # Never the capabilities that reach past the sandbox's own files and processes.
        for never in (12, 13, 19, 21):  # NET_ADMIN, NET_RAW, SYS_PTRACE, SYS_ADMIN
            assert not int(lines["CapBnd"], 16) & (1 << never), (profile, never)
        # A command as another user gets none at all.
        cmd = run(org, sid, command="grep CapEff /proc/self/status", user="65534")
        assert cmd["stdout"] == "CapEff:\t%016x\n" % 0, cmd


def test_restricted_cannot_install_and_says_why(org, mirror):
    sid = sandbox(org, "restricted")
    assert org.get(sid)["securityProfile"] == "restricted"
    assert use_mirror(org, sid)["exitCode"] == 0
    cmd = run(org, sid, command=INSTALL)
    assert cmd["exitCode"] != 0, cmd
    assert "adapt-hello works" not in cmd["stdout"], cmd
    # dpkg itself, given the package file, stops at once: its database is read-only.
    fetch = ("python3 -c \"import urllib.request; urllib.request.urlretrieve("
             "'http://%s/adapt-extra_1.0_all.deb', '/tmp/x.deb')\"" % REPO_HOST)
    assert run(org, sid, command=fetch)["exitCode"] == 0
    cmd = run(org, sid, command="dpkg -i /tmp/x.deb")
    assert cmd["exitCode"] != 0, cmd
    assert "/var/lib/dpkg" in cmd["stderr"] and "Read-only file system" in cmd["stderr"], cmd
    cmd = run(org, sid, command="test -e /usr/bin/adapt-extra || echo absent")
    assert cmd["stdout"] == "absent\n", cmd


MASTER = r"""
import os, pwd, socket, time
w = pwd.getpwnam("www-data")
os.makedirs("/var/cache/web/tmp", exist_ok=True)
os.chown("/var/cache/web/tmp", w.pw_uid, w.pw_gid)        # CHOWN
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 80)); s.listen(8)                       # NET_BIND_SERVICE
pid = os.fork()
if pid == 0:
    os.setgroups([]); os.setgid(w.pw_gid); os.setuid(w.pw_uid)   # SETGID, SETUID
    open("/var/cache/web/tmp/worker", "w").write("ok")
    while True:
        c, _ = s.accept()
        c.sendall(("HTTP/1.0 200 OK\r\n\r\nworker uid %d\n" % os.getuid()).encode()); c.close()
open("/tmp/worker.pid", "w").write(str(pid))
while True:
    time.sleep(1)
"""


def test_restricted_runs_a_root_master_that_drops_to_its_worker_user(org, mirror):
    sid = sandbox(org, "restricted",
                  startup={"mode": "command", "argv": ["python3", "-c", MASTER]})
    fetch = ("for i in $(seq 50); do python3 -c \"import urllib.request; print(urllib.request."
             "urlopen('http://127.0.0.1:80/').read().decode(), end='')\" 2>/dev/null && exit 0; "
             "sleep 0.2; done; exit 1")
    cmd = run(org, sid, command=fetch)
    assert cmd["exitCode"] == 0 and cmd["stdout"] == "worker uid 33\n", cmd
    # Root signals its worker (KILL) as a master does on reload.
    # (The master does not reap it: it ends as a zombie.)
    cmd = run(org, sid, command="p=$(cat /tmp/worker.pid); kill -TERM $p && sleep 0.5 && "
                                "grep -q '^State:.Z' /proc/$p/status && echo stopped")
    assert cmd["stdout"] == "stopped\n", cmd


def test_an_instant_sandboxs_installs_are_gone_after_stop_and_start(org, mirror):
    sid = sandbox(org, "developer")
    assert use_mirror(org, sid)["exitCode"] == 0
    assert run(org, sid, command=INSTALL)["exitCode"] == 0
    status, body = org.api("POST", "/v1/sandboxes/%s/stop" % sid)
    assert status == 200 and body["status"] == "hibernated", (status, body)
    status, body = org.api("POST", "/v1/sandboxes/%s/start" % sid)
    assert status == 202, (status, body)
    org.wait_for_status(sid, "running", 120)
    wait_for_agent(org, sid)
    assert org.get(sid)["securityProfile"] == "developer"
    cmd = run(org, sid, command="dpkg -s adapt-hello; test -e /usr/bin/adapt-hello")
    assert cmd["exitCode"] != 0 and "not installed" in cmd["stderr"], cmd


def test_file_operations_follow_the_profile(org, mirror):
    """The agent writes files as root with the workload's capabilities: developer's
    DAC_OVERRIDE reaches another user's private directory, restricted's root does not, and
    restricted's package database is read-only to file writes too."""
    for profile in ("developer", "restricted"):
        sid = sandbox(org, profile)
        made = run(org, sid, command="mkdir -m 700 -p /srv/private && chown 65534 /srv/private")
        assert made["exitCode"] == 0, made
        status, _, _, _ = org.request(
            "PUT", "/v1/sandboxes/%s/files?path=/srv/private/note" % sid, raw=b"hello",
            headers={"Content-Type": "application/octet-stream"})
        written = run(org, sid, command="cat /srv/private/note")
        if profile == "developer":
            assert status in (200, 201, 204), status
            assert written["stdout"] == "hello", written
        else:
            assert 400 <= status < 500, status
            assert written["exitCode"] != 0, written
            status, _, _, _ = org.request(
                "PUT", "/v1/sandboxes/%s/files?path=/var/lib/dpkg/planted" % sid, raw=b"x",
                headers={"Content-Type": "application/octet-stream"})
            assert 400 <= status < 500, status
            assert run(org, sid, command="test -e /var/lib/dpkg/planted")["exitCode"] != 0
