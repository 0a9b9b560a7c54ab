"""Startup output retention (seed 001): the latest 256 KiB or 1024 chunks, NULs replaced."""

LIMIT = 256 * 1024

NUMBERED_600_KIB = (
    "import sys\n"
    "w = sys.stdout.write\n"
    "for i in range(68267):\n"  # 9 bytes a line: 614,403 bytes, just over 600 KiB
    "    w('%08d\\n' % i)\n"
)

SMALL_WRITES = (
    "import sys, time\n"
    "for i in range(1, 3001):\n"
    "    sys.stdout.write('%d\\n' % i)\n"
    "    sys.stdout.flush()\n"
    "    time.sleep(0.002)\n"
)


def consecutive_tail(text, last):
    """Checks that text's complete lines are the numbers ...last-1, last, in order."""
    lines = text.split("\n")
    assert lines[-1] == "", "output ends with a newline"
    numbers = [int(x) for x in lines[1:-1]]  # the first line may have been cut
    assert numbers, text[:200]
    assert numbers[-1] == last
    assert numbers == list(range(last - len(numbers) + 1, last + 1)), "the kept output is one contiguous tail"
    return numbers


def test_large_output_keeps_the_latest_256_kib(admin):
    sbx = admin.run(["python3", "-c", NUMBERED_600_KIB])
    assert sbx["status"] == "completed", {k: v for k, v in sbx.items() if k != "startup"}
    st = sbx["startup"]
    out = st["stdout"]
    assert st["truncated"] is True
    assert len(out.encode()) <= LIMIT
    assert len(out.encode()) >= LIMIT // 2, "keeps about 256 KiB, not much less: %d bytes" % len(out)
    assert out.endswith("00068266\n"), out[-100:]
    consecutive_tail(out, 68266)


def test_many_small_writes_keep_the_latest_1024_chunks(admin):
    sbx = admin.run(["python3", "-c", SMALL_WRITES], timeout=300)
    assert sbx["status"] == "completed", sbx
    st = sbx["startup"]
    out = st["stdout"]
    assert st["truncated"] is True, "3000 flushed writes are more than 1024 chunks (kept %d bytes)" % len(out)
    assert out.endswith("\n2999\n3000\n"), out[-100:]
    assert not out.startswith("1\n2\n3\n")
    numbers = consecutive_tail(out, 3000)
    assert len(numbers) < 3000


def test_small_output_is_not_truncated(admin):
    sbx = admin.run(["sh", "-c", "for i in $(seq 100); do echo $i; done"])
    assert sbx["status"] == "completed", sbx
    assert sbx["startup"]["truncated"] is False
    assert sbx["startup"]["stdout"] == "".join("%d\n" % i for i in range(1, 101))


def test_nul_bytes_become_the_replacement_character(admin):
    code = "import sys; sys.stdout.buffer.write(b'a\\x00b\\n'); sys.stderr.buffer.write(b'\\x00\\x00')"
    sbx = admin.run(["python3", "-c", code])
    assert sbx["status"] == "completed", sbx
    assert sbx["startup"]["stdout"] == "a\ufffdb\n"
    assert sbx["startup"]["stderr"] == "\ufffd\ufffd"


def test_invalid_utf8_output_keeps_the_record_readable(admin):
    code = "import sys; sys.stdout.buffer.write(b'before\\xff\\xfe\\xc3after\\n')"
    sbx = admin.run(["python3", "-c", code])
    assert sbx["status"] == "completed", sbx
    out = admin.get(sbx["id"])["startup"]["stdout"]
    assert out.startswith("before") and out.endswith("after\n"), repr(out)
    assert "\ufffd" in out
