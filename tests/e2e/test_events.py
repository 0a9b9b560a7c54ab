"""Status events as Server-Sent Events."""

import threading
import time

from harness import EventStream

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
