"""Resource limits are enforced, not just recorded: memory, disk, lifetime."""

import os
import time

TOUCH_600_MIB = (
    "import sys\n"
    "b = bytearray(600 * 1024 * 1024)\n"
    "for i in range(0, len(b), 4096):\n"
    "    b[i] = 1\n"
    "print('survived', flush=True)\n"
)


def test_memory_limit_kills_a_process_that_exceeds_it(admin):
    sbx = admin.run(["python3", "-c", TOUCH_600_MIB], memoryMiB=256, timeout=300)
    assert sbx["status"] == "failed", sbx
    assert "survived" not in sbx["startup"]["stdout"]
    st = sbx["startup"]
    assert st["signal"] is not None or (st["exitCode"] not in (None, 0)) or st["error"], st


def test_memory_within_the_limit_is_usable(admin):
    # The control for the test above: the same program fits in 1 GiB.
    sbx = admin.run(["python3", "-c", TOUCH_600_MIB], memoryMiB=1024, timeout=300)
    assert sbx["status"] == "completed", sbx
    assert sbx["startup"]["stdout"] == "survived\n"


def test_disk_limit_ends_writes_with_no_space_left(admin):
    sbx = admin.run(["dd", "if=/dev/zero", "of=/big", "bs=1M", "count=200"], diskMiB=64, timeout=300)
    assert sbx["status"] == "failed", sbx
    assert "No space left on device" in sbx["startup"]["stderr"], sbx["startup"]


def test_disk_within_the_limit_is_writable(admin):
    sbx = admin.run(["dd", "if=/dev/zero", "of=/big", "bs=1M", "count=32"], diskMiB=128, timeout=300)
    assert sbx["status"] == "completed", sbx


def test_ttl_expiry_deletes_the_sandbox_with_reason_expired(admin):
    sbx = admin.create({"ttlSeconds": 2, "labels": {"name": "expires-soon"}})
    gone = admin.wait_for_status(sbx["id"], "deleted", 30)
    assert gone["terminationReason"] == "expired", gone
    assert sbx["id"] not in [s["id"] for s in admin.list_all()]


def test_ttl_expiry_also_ends_a_running_startup_command(admin):
    sbx = admin.create({"ttlSeconds": 3, "startup": {"mode": "command", "argv": ["sleep", "600"]}})
    gone = admin.wait_for_status(sbx["id"], "deleted", 30)
    assert gone["terminationReason"] == "expired", gone


def host_cpu_cgroup(sandbox_id, v1_name, v2_name):
    """A file of the sandbox's cpu cgroup on the host (v1 hierarchy or the v2 tree)."""
    for path in ("/sys/fs/cgroup/cpu/adapt/%s/%s" % (sandbox_id, v1_name),
                 "/sys/fs/cgroup/adapt/%s/%s" % (sandbox_id, v2_name)):
        if os.path.exists(path):
            with open(path) as f:
                return f.read()
    raise AssertionError("sandbox %s has no cpu cgroup on the host" % sandbox_id)


def host_cpu_quota(sandbox_id):
    return int(host_cpu_cgroup(sandbox_id, "cpu.cfs_quota_us", "cpu.max").split()[0])


def test_cpu_limit_is_the_hosts_quota_and_throttles_a_busy_sandbox(admin):
    # Two busy loops on a two-core host, in a sandbox of one CPU: the kernel throttles it.
    busy = admin.create({"cpu": 1, "startup": {
        "mode": "command", "argv": ["sh", "-c", "while :; do :; done & while :; do :; done"]}})
    admin.wait_for_status(busy["id"], "running", 60)
    assert host_cpu_quota(busy["id"]) == 100000
    deadline = time.monotonic() + 60
    throttled = 0
    while throttled == 0 and time.monotonic() < deadline:
        stat = host_cpu_cgroup(busy["id"], "cpu.stat", "cpu.stat")
        throttled = int(dict(line.split() for line in stat.splitlines())["nr_throttled"])
        time.sleep(0.2)
    assert throttled > 0, "a sandbox of one CPU running two busy loops was never throttled"
    admin.delete(busy["id"])

    # An interactive sandbox: its limit is in force once it is running.
    idle = admin.create({"cpu": 2})
    admin.wait_for_status(idle["id"], "running", 60)
    assert host_cpu_quota(idle["id"]) == 200000
    admin.delete(idle["id"])
