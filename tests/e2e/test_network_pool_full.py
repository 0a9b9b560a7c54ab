"""A sandbox whose network cannot be made fails with the reason and leaves nothing behind.

adaptd attaches a sandbox's network on a thread of its own while the runtime makes the root
filesystem (issue 22: neither waits for the other). A full address pool makes the attach
fail while (or after) the root filesystem is made: the sandbox fails with the pool's
sentence, its root filesystem is unmounted, and the sandboxes that hold the pool run on."""

import harness


def mounts_naming(sandbox_id):
    with open("/proc/mounts") as f:
        return [line for line in f if sandbox_id in line]


def test_a_full_network_pool_fails_the_create_and_leaves_nothing_mounted():
    d = harness.Daemon()
    # A /28, the smallest pool adaptd takes: a /30 per sandbox, so four sandboxes fill it.
    d.network_pool = d.network_pool.replace("/20", "/28")
    d.start()
    try:
        a = d.admin
        holders = [a.create({})["id"] for _ in range(4)]
        for sid in holders:
            a.wait_for_status(sid, "running")
        first = holders[0]

        second = a.create({})["id"]
        sbx = a.wait_end(second)
        assert sbx["status"] == "failed", sbx
        assert "the sandbox network pool %s is full" % d.network_pool in sbx["error"], sbx
        assert mounts_naming(second) == []
        # A sandbox without a network needs no address: the pool does not stop it.
        alone = a.create({"network": {"egress": "none"}})["id"]
        a.wait_for_status(alone, "running")

        # The first runs on, with its network.
        status, done = a.api("POST", "/v1/sandboxes/%s/commands" % first,
                             {"argv": ["cat", "/etc/resolv.conf"]})
        assert status == 200 and done["exitCode"] == 0, done
        assert "nameserver" in done["stdout"], done

        # Deleted, it gives its addresses back, and the next sandbox with a network runs.
        a.delete(first)
        third = a.create({})["id"]
        a.wait_for_status(third, "running")
        assert mounts_naming(second) == []
    finally:
        d.close()
