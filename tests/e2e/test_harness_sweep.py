"""The harness's sweep of abandoned bases (harness.sweep_abandoned_bases): a test run killed
without closing its adaptd leaves mounts, loop devices, network namespaces and nftables tables
behind; the next run's first adaptd cleans up after it, and never after a process that still
runs (the other e2e shard). Each case builds its bases in a scratch parent directory of its own,
with a tmpfs standing in for a sandbox's mounts; no adaptd is started."""

import os
import subprocess
import tempfile
import uuid

import pytest

import harness


@pytest.fixture
def parent():
    path = tempfile.mkdtemp(prefix="adapt-sweep-test-", dir="/tmp")
    yield path
    for target in sorted(harness.mounts_under(path), key=len, reverse=True):
        subprocess.run(["umount", "-l", target], capture_output=True)
    subprocess.run(["rm", "-rf", "--one-file-system", path], check=False)


@pytest.fixture
def network():
    name = "swp" + uuid.uuid4().hex[:8]
    yield name
    harness.remove_network(name)


def dead_identity():
    """The identity a process had: it has exited since."""
    proc = subprocess.Popen(["sleep", "60"])
    identity = harness.process_identity(proc.pid)
    proc.kill()
    proc.wait()
    assert identity.startswith("%d " % proc.pid), identity
    return identity


def make_base(parent, identity, networks=(), kept=False):
    base = tempfile.mkdtemp(prefix=harness.BASE_PREFIX, dir=parent)
    mount = os.path.join(base, "state", "sandboxes", "sbx_x", "rootfs")
    os.makedirs(mount)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", mount], check=True)
    with open(os.path.join(base, harness.OWNER_FILE), "w") as f:
        f.write(identity)
    with open(os.path.join(base, harness.NETWORKS_FILE), "w") as f:
        f.write("".join(n + "\n" for n in networks))
    if kept:
        open(os.path.join(base, harness.KEPT_FILE), "w").close()
    return base


def make_network(name):
    subprocess.run(["ip", "netns", "add", name + "-sbx"], check=True)
    subprocess.run(["nft", "add", "table", "inet", name], check=True)


def nft_table_exists(name):
    return subprocess.run(["nft", "list", "table", "inet", name],
                          capture_output=True).returncode == 0


def test_an_abandoned_base_loses_its_mounts_namespaces_tables_and_directory(parent, network):
    make_network(network)
    base = make_base(parent, dead_identity(), [network])
    assert harness.mounts_under(base)

    assert harness.sweep_abandoned_bases(parent) == [base]
    assert not os.path.exists(base)
    assert not harness.mounts_under(parent)
    assert harness.netns_named(network + "-") == []
    assert not nft_table_exists(network)


def test_a_base_whose_owner_runs_is_left_as_it_is(parent, network):
    make_network(network)
    base = make_base(parent, harness.process_identity(os.getpid()), [network])

    assert harness.sweep_abandoned_bases(parent) == []
    assert harness.mounts_under(base)
    assert harness.netns_named(network + "-") == [network + "-sbx"]
    assert nft_table_exists(network)


def test_a_reused_pid_is_not_taken_for_the_owner(parent):
    pid, start = harness.process_identity(os.getpid()).split()
    base = make_base(parent, "%s %d" % (pid, int(start) - 1))

    assert harness.sweep_abandoned_bases(parent) == [base]
    assert not os.path.exists(base)


def test_a_network_a_live_base_names_too_is_kept(parent, network):
    """The dead run's pid came back as a live run's, with the same adaptd network name."""
    make_network(network)
    dead = make_base(parent, dead_identity(), [network])
    live = make_base(parent, harness.process_identity(os.getpid()), [network])

    assert harness.sweep_abandoned_bases(parent) == [dead]
    assert nft_table_exists(network)
    assert harness.netns_named(network + "-") == [network + "-sbx"]
    assert harness.mounts_under(live)


def test_a_kept_base_keeps_its_files_and_is_swept_once(parent):
    base = make_base(parent, dead_identity(), kept=True)
    with open(os.path.join(base, "adaptd.log"), "w") as f:
        f.write("what failed\n")

    assert harness.sweep_abandoned_bases(parent) == [base]
    assert not harness.mounts_under(base)
    assert os.path.exists(os.path.join(base, "adaptd.log"))
    assert not os.path.exists(os.path.join(base, harness.OWNER_FILE))
    assert harness.sweep_abandoned_bases(parent) == []


def test_a_directory_that_names_no_owner_is_not_touched(parent):
    base = make_base(parent, "")
    os.remove(os.path.join(base, harness.OWNER_FILE))

    assert harness.sweep_abandoned_bases(parent) == []
    assert harness.mounts_under(base)
