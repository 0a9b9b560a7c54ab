"""Two adaptds on one host (the benchmarks run beside the adaptd setup.sh started): one that
would take a running adaptd's network name (its nftables table, which a start replaces whole)
or its addresses (an overlapping --network-pool) is refused at start-up with a sentence that
names the other and the flags to choose, and the running adaptd's rules are left exactly as
they were. A claim whose adaptd ended counts for nothing."""

import subprocess

import pytest

import harness


def nft_table(name):
    r = subprocess.run(["nft", "list", "table", "inet", name], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def refused(**overrides):
    """Starts another adaptd with `overrides`; the start-up failure it printed."""
    other = harness.Daemon()
    for key, value in overrides.items():
        setattr(other, key, value)
    with pytest.raises(AssertionError) as failure:
        other.start()
    assert other.proc.wait(timeout=30) != 0
    # A refused start leaves nothing mounted (its state directory's bind of itself included).
    assert not harness.mounts_under(other.base), harness.mounts_under(other.base)
    # Not other.close(): with the running adaptd's name it would delete that one's table.
    subprocess.run(["rm", "-rf", "--one-file-system", other.base], check=False)
    return str(failure.value)


def test_a_second_adaptd_with_a_running_ones_name_or_addresses_is_refused(fresh_daemon):
    d = fresh_daemon
    client = d.new_org()
    sbx = client.create({"network": {"egress": "none"}})
    client.wait_for_status(sbx["id"], "running", 90)
    before = nft_table(d.network_name)

    said = refused(network_name=d.network_name)
    assert ("another adaptd on this host uses the network name '%s' (nftables table inet %s); "
            "give this adaptd a --network-name and a --network-pool of its own"
            % (d.network_name, d.network_name)) in said, said

    said = refused(network_pool=d.network_pool)
    assert ("the network pool %s overlaps %s of the adaptd running with --network-name %s"
            % (d.network_pool, d.network_pool, d.network_name)) in said, said

    assert nft_table(d.network_name) == before
    status, cmd = client.api("POST", "/v1/sandboxes/%s/commands" % sbx["id"],
                             {"command": "echo still", "timeoutSeconds": 60})
    assert status == 200 and cmd["stdout"] == "still\n", cmd


def test_the_name_and_pool_of_an_adaptd_that_ended_are_free_again(fresh_daemon):
    d = fresh_daemon
    name, pool = d.network_name, d.network_pool
    d.stop()
    # Its table stays (a restart finds it); the claim went with the process.
    again = harness.Daemon()
    again.network_name, again.network_pool = name, pool
    again.start()
    try:
        assert again.new_org().api("GET", "/v1/sandboxes")[0] == 200
    finally:
        again.close()
