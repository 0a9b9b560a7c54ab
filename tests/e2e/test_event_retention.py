"""The events' retention (--event-retention-seconds): events older than it go, oldest first, by
a pass that runs every quarter of it here (every minute at the default of 7 days); a sandbox's
newest status event stays as its state; a recent event stays; a client that resumes behind the
pruned events is told to list again (`reset`)."""

import time

import pytest

import harness
from conftest import close_daemon
from test_automations import parse_time, wait_until
from test_events import frames, open_stream

RETENTION = 40  # seconds: a pass every 10 s


@pytest.fixture
def short_retention():
    d = harness.Daemon(extra_args=["--event-retention-seconds", str(RETENTION)])
    d.start()
    yield d
    close_daemon(d)


def first_status(client, sandbox_id):
    """The first status event the sandbox's stream sends (the oldest kept): (id, status, at)."""
    conn, resp = open_stream(client, path="/v1/sandboxes/%s/events" % sandbox_id, timeout=60)
    try:
        assert resp.status == 200, resp.status
        for f in frames(resp):
            if f.get("event") == "status":
                return int(f["id"]), f["data"]["status"], parse_time(f["data"]["at"])
    finally:
        conn.close()
    raise AssertionError("the stream of %s ended without a status event" % sandbox_id)


def test_old_events_go_and_a_sandboxs_state_and_recent_events_stay(short_retention):
    org = short_retention.new_org()
    old = org.create({})["id"]
    org.wait_for_status(old, "running")
    first_id, status, at = first_status(org, old)
    assert status == "provisioning", status

    # Half the retention later, a second sandbox: its events are recent when the first
    # sandbox's creation goes, half a retention before they may go themselves.
    time.sleep(max(0.0, at + RETENTION / 2 - time.time()))
    recent = org.create({})["id"]
    org.wait_for_status(recent, "running")

    wait_until("the old sandbox's creation to go",
               lambda: first_status(org, old)[1] != "provisioning", timeout=4 * RETENTION)
    # Its newest status is its state: it stays however old.
    kept_id, kept_status, _ = first_status(org, old)
    assert kept_status == "running" and kept_id > first_id, (kept_id, kept_status)
    # The recent sandbox's creation is younger than the retention: it stays.
    assert first_status(org, recent)[1] == "provisioning"

    # A stream resumed from before the pruned event may have missed some: it lists again.
    conn, resp = open_stream(org, last_event_id=first_id - 1, timeout=60)
    try:
        assert resp.status == 200
        got = frames(resp)
        assert next(got) == {"comment": "open"}
        reset = next(got)
        assert reset["event"] == "reset", reset
        assert "older than the events kept" in reset["data"]["reason"], reset
        assert reset["data"]["lastEventId"] > first_id, reset
    finally:
        conn.close()
