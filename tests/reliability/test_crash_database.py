"""adaptd crashes while it makes an organization's PostgreSQL database (issue 19).

The first database also makes adaptd's cluster (initdb), whose initdb and bootstrap backend
outlive a killed adaptd. Whatever the crash cut, the next start repairs it before the API
answers: the cluster is made again if it was half-made, and every database left provisioning
is finished, so the organization that asked finds it ready without asking again, and the others
can make theirs. Fault points (src/base/fault_point.h) crash adaptd at an exact step; the
SIGKILL tests cut the first create at a few moments, as an operator's kill -9 would.
"""

import os
import threading
import time

import pytest

from conftest import close_daemon, start_daemon
from test_crash_points import restart, try_api, wait_for_crash


@pytest.fixture
def own_daemon():
    d = start_daemon()
    yield d
    if d.proc is None or d.proc.poll() is not None:
        d.start(port=d.port)
    close_daemon(d)


def cut_create_at(d, client, fault):
    """Restarts adaptd armed with `fault`, lets `client`'s POST /v1/database reach it, and
    starts adaptd again unarmed on the same state."""
    restart(d, fault)
    try_api(client, "POST", "/v1/database")
    wait_for_crash(d, fault)
    restart(d)


def assert_ready_at_once(org):
    """Ready at the first look after the restart: start-up finished it, not this call."""
    status, db = org.api("GET", "/v1/database")
    assert status == 200 and db["status"] == "ready", db
    status, dump = org.api("POST", "/v1/database/dump")
    assert status == 201, dump


def assert_others_can_make_theirs(d):
    other = d.new_org()
    status, db = other.api("POST", "/v1/database")
    assert status == 200 and db["status"] == "ready", db
    status, err = other.api("DELETE", "/v1/database?confirm=" + other.org_id)
    assert status == 204, err


def assert_cluster_configured(d):
    data = os.path.join(d.state_dir, "postgres", "data")
    with open(os.path.join(data, "postgresql.conf")) as f:
        assert "include 'adapt.conf'" in f.read()
    assert not os.path.exists(os.path.join(d.state_dir, "postgres", "data.partial"))


def test_a_crash_after_initdb_leaves_a_cluster_the_next_start_makes_again(own_daemon):
    d = own_daemon
    org = d.new_org()
    cut_create_at(d, org, "database.initdb.after_initdb")
    assert_ready_at_once(org)
    assert_cluster_configured(d)
    assert_others_can_make_theirs(d)


def test_a_create_cut_after_its_record_is_finished_at_start_up(own_daemon):
    d = own_daemon
    first = d.new_org()
    status, db = first.api("POST", "/v1/database")
    assert status == 200 and db["status"] == "ready", db
    cut = d.new_org()
    cut_create_at(d, cut, "database.create.after_record")
    assert_ready_at_once(cut)
    assert_ready_at_once(first)
    # And stays so across another restart.
    assert d.stop() == 0, d.log_tail()
    d.start(port=d.port)
    assert_ready_at_once(cut)


@pytest.mark.parametrize("delay", [0.05, 0.3, 0.8, 2.0])
def test_adaptd_killed_during_the_first_create_repairs_everything_at_the_next_start(own_daemon, delay):
    d = own_daemon
    org = d.new_org()
    cut = threading.Thread(target=try_api, args=(org, "POST", "/v1/database"))
    cut.start()
    time.sleep(delay)
    d.kill()
    cut.join(timeout=30)
    d.start(port=d.port)
    status, db = org.api("GET", "/v1/database")
    assert status == 200, db
    if db["status"] == "not_created":  # killed before the record: nothing to finish
        status, db = org.api("POST", "/v1/database")
        assert status == 200, db
    assert db["status"] == "ready", (db, d.log_tail())
    assert_ready_at_once(org)
    assert_cluster_configured(d)
    assert_others_can_make_theirs(d)
