"""Checkpoint images are encrypted at rest: the memory a durable sandbox's stop saves (and a
named checkpoint's copy) lives in the encrypted checkpoint store, an fscrypt-encrypted ext4
image in the state directory. A marker the sandbox held in memory is found in the unlocked
view of its checkpoint (so the test can fail) and never in the raw bytes of the store's image
on the host disk; a plaintext checkpoint an older adaptd left in the sandbox's directory is
moved into the store at start-up and restores from there."""

import hashlib
import os
import shutil
import time

from harness import wait_for_agent
from test_named_checkpoints import out
from test_named_checkpoints import running_sandbox as durable

SEED = b"adapt-checkpoint-encryption"
# Random bytes do not compress: runsc's (compressed) image holds them as they are, so the
# unlocked view shows them.
MEMORY = hashlib.shake_256(SEED).digest(1 << 20)
WINDOWS = [MEMORY[i + 100:i + 164] for i in range(0, 1 << 20, 1 << 16)]
HOLD = ("nohup python3 -c 'import hashlib, time; "
        "m = hashlib.shake_256(bytes.fromhex(\"%s\")).digest(1 << 20); "
        "time.sleep(10 ** 6)' >/dev/null 2>&1 & echo $!" % SEED.hex())


def store(d):
    image = os.path.join(d.state_dir, "checkpoint-store.img")
    root = os.path.join(d.state_dir, "checkpoint-store", "data")
    return image, root


def allocated_bytes(path):
    """The data ranges of sparse `path` (its size is the host disk's), read with SEEK_DATA."""
    chunks = []
    fd = os.open(path, os.O_RDONLY)
    try:
        at = 0
        while True:
            try:
                at = os.lseek(fd, at, os.SEEK_DATA)
            except OSError:
                break
            end = os.lseek(fd, at, os.SEEK_HOLE)
            while at < end:
                data = os.pread(fd, min(1 << 24, end - at), at)
                if not data:
                    break
                chunks.append(data)
                at += len(data)
    finally:
        os.close(fd)
    return b"".join(chunks)


def windows_in(data):
    return sum(1 for w in WINDOWS if w in data)


def hold_marker_and_stop(client, sid):
    pid = out(client, sid, HOLD).strip()
    # The process has made its bytes once /proc shows it sleeping on them.
    out(client, sid, "for i in $(seq 100); do grep -q 'State:.*S' /proc/%s/status && exit 0; "
                     "sleep 0.1; done; exit 1" % pid)
    time.sleep(1)
    status, body = client.api("POST", "/v1/sandboxes/%s/stop" % sid, {})
    assert status in (200, 202), (status, body)
    stopped = client.wait_for_status(sid, "hibernated", 300)
    assert stopped["hibernation"]["processes"] == "saved", stopped
    return pid


def test_a_stopped_sandboxs_memory_is_ciphertext_on_the_host_disk(fresh_daemon):
    d = fresh_daemon
    client = d.admin
    image, root = store(d)
    sid = durable(client)
    pid = hold_marker_and_stop(client, sid)

    # Nothing in plaintext where checkpoints used to be.
    assert not os.path.exists(os.path.join(d.state_dir, "sandboxes", sid, "checkpoint"))
    unlocked = os.path.join(root, "sandboxes", sid, "checkpoint", "checkpoint.img")
    with open(unlocked, "rb") as f:
        found = windows_in(f.read())
    assert found >= len(WINDOWS) // 2, "the marker is not in the unlocked image (%d)" % found
    raw = allocated_bytes(image)
    assert len(raw) > os.path.getsize(unlocked)
    assert windows_in(raw) == 0, "the sandbox's memory is in plaintext in the store's image"

    # The start restores it: the same process still holds its bytes.
    status, body = client.api("POST", "/v1/sandboxes/%s/start" % sid, {})
    assert status in (200, 202), (status, body)
    client.wait_for_status(sid, "running", 300)
    wait_for_agent(client, sid)
    assert out(client, sid, "test -d /proc/%s && echo alive" % pid) == "alive\n"

    # A named checkpoint's copy of the memory is in the store too.
    status, body = client.api("POST", "/v1/sandboxes/%s/checkpoints" % sid, {"name": "enc"})
    assert status in (201, 202), (status, body)
    named = os.path.join(root, "sandboxes", sid, "checkpoints", "enc", "image", "checkpoint.img")
    deadline = time.monotonic() + 300
    while not os.path.exists(named) and time.monotonic() < deadline:
        time.sleep(0.5)
    with open(named, "rb") as f:
        assert windows_in(f.read()) >= len(WINDOWS) // 2
    assert windows_in(allocated_bytes(image)) == 0


def test_a_plaintext_checkpoint_left_by_an_older_adaptd_moves_into_the_store(fresh_daemon):
    d = fresh_daemon
    client = d.admin
    image, root = store(d)
    sid = durable(client)
    pid = hold_marker_and_stop(client, sid)

    # What an adaptd before the store left: the image in the sandbox's own directory.
    d.kill()
    in_store = os.path.join(root, "sandboxes", sid, "checkpoint")
    old = os.path.join(d.state_dir, "sandboxes", sid, "checkpoint")
    shutil.copytree(in_store, old)
    shutil.rmtree(in_store)
    d.start(port=d.port)

    assert not os.path.exists(old), "the plaintext checkpoint is still on the host disk"
    assert os.path.exists(os.path.join(in_store, "checkpoint.img"))
    status, body = client.api("POST", "/v1/sandboxes/%s/start" % sid, {})
    assert status in (200, 202), (status, body)
    client.wait_for_status(sid, "running", 300)
    wait_for_agent(client, sid)
    assert out(client, sid, "test -d /proc/%s && echo alive" % pid) == "alive\n"


def test_a_deleted_sandboxs_checkpoint_gives_its_blocks_back(fresh_daemon):
    d = fresh_daemon
    client = d.admin
    image, root = store(d)
    sid = durable(client)
    hold_marker_and_stop(client, sid)
    size = os.path.getsize(os.path.join(root, "sandboxes", sid, "checkpoint", "checkpoint.img"))
    mounts = open("/proc/mounts").read().splitlines()
    store_mount = [m for m in mounts if m.split()[1] == os.path.join(d.state_dir, "checkpoint-store")]
    assert store_mount and "discard" in store_mount[0].split()[3].split(","), store_mount
    # The image's blocks are allocated once the store's writes reach it.
    os.sync()
    before = os.stat(image).st_blocks * 512
    client.delete(sid)
    assert not os.path.exists(os.path.join(root, "sandboxes", sid))
    # ext4 discards freed blocks at its next journal commit; the loop device punches them out.
    deadline = time.monotonic() + 60
    while os.stat(image).st_blocks * 512 > before - size // 2 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert os.stat(image).st_blocks * 512 <= before - size // 2, (before, size)
