"""Create/delete cycles leave nothing behind (leaks.py lists what is counted).

ADAPT_LEAK_CYCLES sets the number of cycles (default 4, CI); the documented long run is
ADAPT_LEAK_CYCLES=1000. Growth is compared object by object against a snapshot taken after
the warm-up, so one object left behind by any cycle fails the test: 4 cycles (8 sandboxes, two
rounds of two concurrent cycles) show a per-cycle leak as surely as 10 did, at half the time;
leaks that only a rare interleaving makes are the long run's to find. Each cycle creates a networked interactive sandbox, runs a command in
it through the agent, creates a command-mode sandbox that ends by itself, and deletes both,
ADAPT_LEAK_PARALLEL (default 2) cycles at a time. Before the counted cycles, two warm-up
cycles let adaptd open what it keeps for its whole life (store, agent hub, nftables table).
"""

import os
from concurrent.futures import ThreadPoolExecutor

import leaks
from harness import run_command

CYCLES = int(os.environ.get("ADAPT_LEAK_CYCLES", "4"))
PARALLEL = int(os.environ.get("ADAPT_LEAK_PARALLEL", "2"))


def cycle(client, n):
    interactive = client.create({"labels": {"leak": str(n)}})["id"]
    oneshot = client.create({"startup": {"mode": "command", "argv": ["echo", "cycle"]},
                             "network": {"egress": "none"}})["id"]
    client.wait_for_status(interactive, "running", 120)
    cmd = run_command(client, interactive, command="echo $((6 * 7))", waitSeconds=60)
    assert cmd["status"] == "exited" and cmd["stdout"] == "42\n", cmd
    end = client.wait_end(oneshot)
    assert end["status"] == "completed" and end["startup"]["stdout"] == "cycle\n", end
    client.delete(interactive)
    client.delete(oneshot)
    return [interactive, oneshot]


def test_create_delete_cycles_leave_nothing_behind(fresh_daemon):
    d = fresh_daemon
    client = d.admin
    for n in range(2):
        cycle(client, -1 - n)
    before = leaks.snapshot(d)
    ids = []
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        for made in pool.map(lambda n: cycle(client, n), range(CYCLES)):
            ids.extend(made)
    assert len(set(ids)) == 2 * CYCLES
    grew = leaks.settled_growth(d, before)
    assert grew == {}, "after %d create/delete cycles the host holds more: %r" % (CYCLES, grew)
    held = leaks.settled_holdings(d, ids)
    assert held == {}, "still held for deleted sandboxes: %r" % held
    # The records say what happened: every sandbox is deleted, none lost or duplicated.
    statuses = {i: client.get(i)["status"] for i in ids}
    assert set(statuses.values()) == {"deleted"}, statuses
