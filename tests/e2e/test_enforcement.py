"""Resource limits are enforced, not just recorded: memory, disk, lifetime."""

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
