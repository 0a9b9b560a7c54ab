"""The commands people and assistants reach for first work in every image the tests build
(issue 14: on Debian's runsc 20221219 coreutils 9's statx with AT_NO_AUTOMOUNT failed with
EINVAL, so `ls /` did), and an image with another libc is left unharmed by the fix."""

import pytest

import registry as reg
from harness import run_command

# Each step must succeed (set -e); stderr must stay empty, so a preload that cannot be loaded
# ("ERROR: ld.so: object ... cannot be preloaded") fails the test too.
EVERYDAY = r"""set -eu
ls -la / >/dev/null
ls -la /etc /tmp >/dev/null
stat / >/dev/null
stat -c %F / | grep -qx directory
cd /tmp
rm -rf ev ev.tar
mkdir -p ev/src/sub
echo hello > ev/src/sub/f
ln -s f ev/src/sub/l
touch -d 2001-02-03 ev/src/sub/f
cp -a ev/src ev/copy
test "$(stat -c %y ev/copy/sub/f | cut -c1-10)" = 2001-02-03
test -L ev/copy/sub/l
mv ev/copy ev/moved
test ! -e ev/copy
find ev -name f | sort | tr '\n' ' ' | grep -qx 'ev/moved/sub/f ev/src/sub/f '
du -s ev >/dev/null
du -sh /etc >/dev/null
tar -cf ev.tar ev
tar -tf ev.tar | grep -qx ev/moved/sub/l
chmod 600 ev/moved/sub/f
test "$(stat -c %a ev/moved/sub/f)" = 600
ps -e -o pid,comm >/dev/null
ps aux | grep -q PID
df / >/dev/null
df -h >/dev/null
rm -r ev ev.tar
test ! -e ev
echo piped | tr a-z A-Z > out.txt
grep -q PIPED < out.txt
cat out.txt | wc -l | grep -qx 1
rm out.txt
echo everyday-ok
"""

# What the default image holds beyond Debian's minbase (README "Images").
DEFAULT_IMAGE_TOOLS = r"""set -eu
python3 -c 'import ssl, sqlite3, venv'
pip --version >/dev/null
curl --version >/dev/null
git --version >/dev/null
less --version >/dev/null
unzip -v >/dev/null
test -s /etc/ssl/certs/ca-certificates.crt
free -m >/dev/null
command -v top >/dev/null
echo tools-ok
"""


def assert_ran_clean(end, marker):
    startup = end["startup"]
    assert end["status"] == "completed" and startup["exitCode"] == 0, (
        "exit %r, stderr %r" % (startup["exitCode"], startup["stderr"]))
    assert startup["stdout"] == marker + "\n", startup
    assert startup["stderr"] == "", startup


def test_everyday_tools_work_in_the_default_image(org):
    assert_ran_clean(org.run(["/bin/bash", "-c", EVERYDAY]), "everyday-ok")


def test_default_image_holds_the_first_tools_an_assistant_reaches_for(org):
    assert_ran_clean(org.run(["/bin/bash", "-c", DEFAULT_IMAGE_TOOLS]), "tools-ok")


def test_ls_of_the_root_works_in_a_command_of_a_running_sandbox(org):
    sbx = org.create({})
    org.wait_for_status(sbx["id"], "running", 60)
    cmd = run_command(org, sbx["id"], argv=["ls", "-la", "/"])
    assert cmd["exitCode"] == 0 and cmd["stderr"] == "", cmd
    assert " etc\n" in cmd["stdout"], cmd


@pytest.mark.parametrize("alias", ["node", "gcc", "rust"])
def test_everyday_tools_work_in_every_environment_image(org, alias):
    from test_images_environments import env_available

    env_available(org, alias)
    end = org.run(["/bin/bash", "-c", EVERYDAY], image=alias, memoryMiB=2048, timeout=600)
    assert_ran_clean(end, "everyday-ok")


# ---- another libc: a busybox image (static; no glibc, so /etc/ld.so.preload means nothing) ----

BUSYBOX_APPLETS = ("ls", "stat", "cp", "mv", "find", "du", "tar", "chmod", "ps", "df", "touch",
                   "rm", "mkdir", "ln", "cat", "grep", "wc", "tr", "sort", "test", "echo")
BUSYBOX_SCRIPT = r"""set -eu
ls -la / >/dev/null
stat / >/dev/null
cd /tmp
mkdir -p ev/src && echo hi > ev/src/f && ln -s f ev/src/l
cp -a ev/src ev/copy && mv ev/copy ev/moved
find ev -name f | sort | tr '\n' ' ' | grep -qx 'ev/moved/f ev/src/f '
du -s ev >/dev/null
tar -cf ev.tar ev && tar -tf ev.tar | grep -q moved/l
chmod 600 ev/moved/f && test "$(stat -c %a ev/moved/f)" = 600
ps >/dev/null
df / >/dev/null
touch ev/t && rm -r ev ev.tar && test ! -e ev
echo piped | tr a-z A-Z > out && grep -q PIPED < out && cat out | wc -l | grep -qx 1
cat /etc/ld.so.preload 2>/dev/null | grep -c image-own-entry || true
echo busybox-ok
"""


@pytest.fixture(scope="module")
def busybox_image():
    registry = reg.Registry()
    with open(reg.BUSYBOX, "rb") as f:
        bb = f.read()
    entries = [("bin", "d", None, 0), ("bin/busybox", "f", bb, 0)]
    entries += [("bin/" + a, "l", "busybox", 0) for a in ("sh",) + BUSYBOX_APPLETS]
    # An image with an /etc/ld.so.preload of its own keeps its entries.
    entries += [("etc", "d", None, 0),
                ("etc/passwd", "f", "root:x:0:0:root:/root:/bin/sh\n", 0),
                ("etc/ld.so.preload", "f", "/lib/image-own-entry.so\n", 0),
                ("tmp", "d", None, 0)]
    config = {"config": {"Env": ["PATH=/bin"], "Cmd": ["/bin/sh"]}}
    layout = reg.Layout([reg.layer(entries)], config)
    try:
        yield registry.push(layout, "everyday/busybox:1")
    finally:
        layout.close()
        registry.close()


def test_busybox_image_is_unharmed(admin, busybox_image):
    end = admin.run(["/bin/sh", "-c", BUSYBOX_SCRIPT], image=busybox_image)
    assert end["status"] == "completed", end
    startup = end["startup"]
    assert startup["exitCode"] == 0 and startup["stderr"] == "", startup
    # The image's own preload entry is still listed (once) whether or not adaptd adds its own.
    assert startup["stdout"] == "1\nbusybox-ok\n", startup


# ---- the switch-off: a runsc that accepts AT_NO_AUTOMOUNT gets no preload ----

FAKE_FIXED_RUNSC = """#!/bin/sh
# runsc whose start-up probe (`runsc ... do .../adapt-statx.so`) reports that statx accepts
# AT_NO_AUTOMOUNT, as a fixed release would; everything else is the real runsc.
case "$*" in *" do "*adapt-statx.so) exit 0 ;; esac
exec %s "$@"
"""


def test_a_runsc_that_accepts_the_flag_gets_no_preload(tmp_path):
    import shutil

    import harness

    runsc = tmp_path / "runsc"
    runsc.write_text(FAKE_FIXED_RUNSC % (shutil.which("runsc") or "/usr/bin/runsc"))
    runsc.chmod(0o755)
    d = harness.Daemon(extra_args=["--runsc", str(runsc)])
    try:
        d.start()
        with open(d.log_path, errors="replace") as f:
            assert "no statx fix needed" in f.read()
        client = d.new_org()
        # Python's os.stat uses fstatat, which this runsc serves without any fix.
        script = "cat /etc/ld.so.preload 2>/dev/null; python3 -c 'import os; os.stat(\"/\")'; echo ok"
        end = client.run(["/bin/sh", "-c", script])
        assert end["status"] == "completed", end
        assert end["startup"]["stdout"] == "ok\n", end["startup"]
    finally:
        harness.delete_concurrently(d.created)
        d.close()
