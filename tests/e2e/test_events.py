"""Status events as Server-Sent Events."""

import http.client
import json
import os
import subprocess
import threading
import time
import types

from harness import ADAPT, EventStream

SLEEPY = {"mode": "command", "argv": ["sh", "-c", "sleep 2; echo done"]}


def statuses_until_end(stream, sandbox_id, end=("completed", "failed", "deleted")):
    seen = []
    for ev in stream.events():
        data = ev.get("data")
        if not isinstance(data, dict) or data.get("sandboxId") != sandbox_id:
            continue
        assert ev.get("event") == "status", ev
        assert ev.get("id"), "events carry an id so clients can resume"
        assert data.get("at")
        seen.append(data["status"])
        if data["status"] in end:
            break
    return seen


def test_org_event_stream_shows_a_sandboxs_whole_life(org):
    # Subscribe first, then create: every change of the new sandbox must arrive. The create
    # waits a moment in a thread, in case the server sends its headers only with a first event.
    result = {}

    def create_soon():
        time.sleep(1.5)
        result["sbx"] = org.create({"startup": SLEEPY})

    t = threading.Thread(target=create_soon)
    t.start()
    try:
        with EventStream(org, "/v1/events", timeout=120) as stream:
            assert stream.status == 200
            assert stream.content_type.startswith("text/event-stream")
            t.join(60)
            sid = result["sbx"]["id"]
            seen = statuses_until_end(stream, sid)
    finally:
        t.join(60)
    assert seen == ["provisioning", "running", "completed"], seen


def test_sandbox_event_stream_follows_one_sandbox_to_its_end(org):
    other = org.create({"startup": SLEEPY})
    sbx = org.create({"startup": SLEEPY})
    with EventStream(org, "/v1/sandboxes/%s/events" % sbx["id"], timeout=120) as stream:
        assert stream.status == 200
        assert stream.content_type.startswith("text/event-stream")
        seen = []
        for ev in stream.events():
            data = ev["data"]
            assert data["sandboxId"] == sbx["id"], "only this sandbox's events: %r" % ev
            seen.append(data["status"])
            if data["status"] in ("completed", "failed"):
                break
    order = ["provisioning", "running", "completed"]
    assert seen and seen[-1] == "completed", seen
    assert seen == sorted(seen, key=order.index), "in order, without repeats: %r" % seen
    assert len(set(seen)) == len(seen)
    org.wait_end(other["id"])


def test_events_of_an_unknown_sandbox_are_404(org):
    status, body = org.api("GET", "/v1/sandboxes/sbx_doesnotexist/events")
    assert status == 404, (status, body)


# --- The organization stream: heartbeats, resuming, and a resume point not kept -------------

def open_stream(client, path="/v1/events", last_event_id=None, timeout=60):
    conn = http.client.HTTPConnection("127.0.0.1", client.daemon.port, timeout=timeout)
    headers = {"Authorization": "Bearer " + client.key, "Accept": "text/event-stream"}
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    conn.request("GET", path, headers=headers)
    return conn, conn.getresponse()


def frames(resp):
    """Yields each frame as a dict (comments as {"comment": text}) until the stream ends."""
    frame = {}
    while True:
        line = resp.fp.readline()
        if not line:
            return
        line = line.decode("utf-8").rstrip("\r\n")
        if line == "":
            if frame:
                if "data" in frame:
                    frame["data"] = json.loads(frame["data"])
                yield frame
            frame = {}
        elif line.startswith(":"):
            frame.setdefault("comment", line[1:].strip())
        else:
            field, _, value = line.partition(":")
            frame[field] = value[1:] if value.startswith(" ") else value


def test_an_idle_stream_says_it_is_open_then_carries_heartbeats(org):
    conn, resp = open_stream(org, timeout=30)
    try:
        assert resp.status == 200
        started = time.monotonic()
        got = frames(resp)
        assert next(got) == {"comment": "open"}, "a comment at once, before any event"
        assert next(got) == {"comment": "heartbeat"}, "an idle stream carries only heartbeats"
        waited = time.monotonic() - started
        assert 10 <= waited <= 25, "heartbeats come every 15 s, not more often: %.1f s" % waited
    finally:
        conn.close()


def test_a_key_revoked_while_its_stream_is_open_sees_nothing_more(org):
    status, made = org.api("POST", "/v1/keys", {"name": "watcher"})
    assert status == 201, made
    watcher = types.SimpleNamespace(daemon=org.daemon, key=made["key"])
    conn, resp = open_stream(watcher, timeout=60)
    try:
        assert resp.status == 200
        got = frames(resp)
        assert next(got) == {"comment": "open"}
        assert org.api("DELETE", "/v1/keys/" + made["id"])[0] == 204
        time.sleep(1.5)  # past the stream's once-a-second check of its key
        sbx = org.create({"startup": SLEEPY})
        # The stream ends (a socket timeout here would fail the test) without the new sandbox.
        rest = list(got)
        assert not [f for f in rest if isinstance(f.get("data"), dict) and f["data"].get("sandboxId") == sbx["id"]], rest
    finally:
        conn.close()


def test_reconnecting_with_last_event_id_replays_what_was_missed(org):
    sbx = org.create({"startup": SLEEPY})
    org.wait_end(sbx["id"])
    conn, resp = open_stream(org, path="/v1/sandboxes/%s/events" % sbx["id"])
    seen = []
    for f in frames(resp):
        if f.get("event") == "status":
            seen.append((int(f["id"]), f["data"]["status"]))
            if f["data"]["status"] == "completed":
                break
    conn.close()
    first_id = seen[0][0]
    # Resume the organization's stream right after the first event: the rest comes again.
    conn, resp = open_stream(org, last_event_id=first_id, timeout=30)
    try:
        replayed = []
        for f in frames(resp):
            assert f.get("event") != "reset", "a recent point is kept: %r" % f
            if f.get("event") == "status" and f["data"]["sandboxId"] == sbx["id"]:
                replayed.append((int(f["id"]), f["data"]["status"]))
                if f["data"]["status"] == "completed":
                    break
    finally:
        conn.close()
    assert replayed == seen[1:], (replayed, seen)


def test_a_resume_point_not_kept_answers_reset_then_follows_from_now(org):
    conn, resp = open_stream(org, last_event_id=999999999999, timeout=120)
    try:
        assert resp.status == 200
        got = frames(resp)
        assert next(got) == {"comment": "open"}
        reset = next(got)
        assert reset["event"] == "reset", reset
        assert "newer than any event" in reset["data"]["reason"], reset
        assert int(reset["id"]) == reset["data"]["lastEventId"] < 999999999999
        sbx = org.create({"startup": SLEEPY})
        statuses = []
        for f in got:
            if f.get("event") == "status" and f["data"]["sandboxId"] == sbx["id"]:
                assert int(f["id"]) > reset["data"]["lastEventId"]
                statuses.append(f["data"]["status"])
                if f["data"]["status"] == "completed":
                    break
        assert statuses == ["provisioning", "running", "completed"], statuses
    finally:
        conn.close()


def test_a_last_event_id_that_is_not_an_id_is_400(org):
    for bad in ("abc", "-1", "1" * 19):
        conn, resp = open_stream(org, last_event_id=bad)
        body = json.loads(resp.read())
        conn.close()
        assert resp.status == 400, (bad, resp.status, body)
        assert body["error"]["field"] == "Last-Event-ID", body


def test_cli_sandbox_list_watch_lists_then_prints_a_line_per_event(org):
    before = org.create({"startup": SLEEPY})
    org.wait_end(before["id"])
    env = dict(os.environ, ADAPT_URL=org.daemon.url, ADAPT_API_KEY=org.key)
    env.pop("ADAPT_CONFIG", None)
    watch = subprocess.Popen([ADAPT, "sandbox", "list", "--watch", "--json"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    try:
        listed = json.loads(watch.stdout.readline())
        assert [s["id"] for s in listed["items"]] == [before["id"]], listed
        sbx = org.create({"startup": SLEEPY})
        statuses = []
        while True:
            line = json.loads(watch.stdout.readline())
            assert line["event"] == "status", line
            if line["sandboxId"] == sbx["id"]:
                statuses.append(line["status"])
                if line["status"] == "completed":
                    break
        assert statuses == ["provisioning", "running", "completed"], statuses
    finally:
        watch.kill()
        watch.wait(10)
    # Without --json: the table, then "AT  ID  STATUS" lines.
    watch = subprocess.Popen([ADAPT, "sandbox", "list", "--watch"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert "ID" in watch.stdout.readline()
        rows = watch.stdout.readline() + watch.stdout.readline()
        assert before["id"] in rows and sbx["id"] in rows, rows
        org.delete(before["id"])
        for _ in range(20):
            line = watch.stdout.readline().split()
            if len(line) == 3 and line[1:] == [before["id"], "deleted"]:
                break
        else:
            raise AssertionError("no deleted line for %s" % before["id"])
    finally:
        watch.kill()
        watch.wait(10)
