"""scripts/setup.sh's pieces that CI cannot run for real here: the systemd unit it installs where
systemd is init (scripts/adaptd-unit.sh), and its checks of the overrides. The background start,
the install and the README's quick start run for real in scripts/quickstart-check.sh."""

import os
import re
import shutil
import subprocess

from harness import ADAPTD, REPO

UNIT_SCRIPT = os.path.join(REPO, "scripts", "adaptd-unit.sh")
ARGS = ["--listen", "127.0.0.1:8080", "--state-dir", "/var/lib/adapt", "--images-dir", "/var/lib/adapt/images"]


def unit_text(*args):
    r = subprocess.run([UNIT_SCRIPT, *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def directives(text):
    """{key: [values]} of the unit's Key=Value lines."""
    found = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z]+)=(.*)$", line)
        if m:
            found.setdefault(m.group(1), []).append(m.group(2))
    return found


def verify(tmp_path, text):
    """systemd-analyze verify on the unit as adaptd.service: (exit status, its complaints)."""
    path = tmp_path / "adaptd.service"
    path.write_text(text)
    r = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True, text=True, timeout=60)
    return r.returncode, (r.stdout + r.stderr).strip()


def test_the_unit_passes_systemd_analyze_verify_without_a_warning(tmp_path):
    assert os.access(ADAPTD, os.X_OK), "adaptd not built at %s" % ADAPTD
    text = unit_text(ADAPTD, *ARGS)
    # Every line a section, a comment or Key=Value, in systemd's three sections.
    sections = [line for line in text.splitlines() if line.startswith("[")]
    assert sections == ["[Unit]", "[Service]", "[Install]"], sections
    odd = [line for line in text.splitlines()
           if line and not line.startswith(("[", "#")) and not re.match(r"^[A-Za-z]+=\S", line)]
    assert odd == [], odd
    if not shutil.which("systemd-analyze"):
        return  # a machine without systemd (a container): the checks above and below only
    rc, complaints = verify(tmp_path, text)
    assert (rc, complaints) == (0, ""), complaints
    # The check can fail: a directive systemd cannot parse is a complaint (it still exits 0).
    rc, complaints = verify(tmp_path, text.replace("KillMode=process", "KillMode=gently"))
    assert "kill mode" in complaints.lower(), complaints


def test_the_unit_restarts_adaptd_after_the_network_and_leaves_sandboxes_running():
    d = directives(unit_text(ADAPTD, *ARGS))
    assert d["ExecStart"] == [" ".join([ADAPTD, *ARGS])]
    assert d["Restart"] == ["on-failure"]
    assert "network-online.target" in d["After"][0].split()
    assert "network-online.target" in d["Wants"][0].split()
    # Stopping or restarting adaptd must not kill the sandboxes' monitors and runsc.
    assert d["KillMode"] == ["process"]
    assert int(d["LimitNOFILE"][0]) >= 65536
    assert d["TasksMax"] == ["infinity"]
    assert d["WantedBy"] == ["multi-user.target"]


def test_the_unit_escapes_what_systemd_would_expand_and_refuses_what_it_cannot_quote():
    d = directives(unit_text(ADAPTD, "--state-dir", "/srv/my adapt", "--dns", "50%$HOME"))
    assert d["ExecStart"] == [ADAPTD + ' --state-dir "/srv/my adapt" --dns 50%%$$HOME']
    r = subprocess.run([UNIT_SCRIPT, ADAPTD, "--state-dir", 'a"b'], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "ExecStart" in r.stderr, r.stderr


def test_setup_refuses_an_unknown_service_mode_before_doing_anything():
    r = subprocess.run([os.path.join(REPO, "scripts", "setup.sh")], capture_output=True, text=True, timeout=30,
                       env={**os.environ, "ADAPT_SERVICE": "cron"})
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.strip() == "setup: ADAPT_SERVICE must be systemd, background or auto, not 'cron'"
    assert r.stdout == ""
