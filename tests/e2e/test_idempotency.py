"""Idempotency-Key on create: same key and body, same sandbox; never a second run."""

from harness import unique

ECHO = {"startup": {"mode": "command", "argv": ["sh", "-c", "echo ran-once"]}, "labels": {"name": "idem"}}


def post(client, body, key):
    return client.api("POST", "/v1/sandboxes", body, headers={"Idempotency-Key": key})


def test_same_key_and_body_returns_the_same_sandbox_and_runs_once(org):
    key = unique("idem")
    status, first = post(org, ECHO, key)
    assert status == 201, (status, first)
    org.daemon.created.append((org, first["id"]))
    status, second = post(org, ECHO, key)
    assert status == 201, (status, second)
    assert second["id"] == first["id"]

    done = org.wait_end(first["id"])
    assert done["status"] == "completed", done
    status, third = post(org, ECHO, key)
    assert status == 201 and third["id"] == first["id"]
    assert third["status"] == "completed", "a completed command is never re-run"
    assert third["startup"]["startedAt"] == done["startup"]["startedAt"]
    assert third["startup"]["stdout"] == "ran-once\n"
    assert [s["id"] for s in org.list_all()] == [first["id"]]


def test_same_key_with_a_different_body_is_409(org):
    key = unique("idem")
    status, first = post(org, ECHO, key)
    assert status == 201
    org.daemon.created.append((org, first["id"]))
    other = dict(ECHO, labels={"name": "different"})
    status, body = post(org, other, key)
    assert status == 409, (status, body)
    assert body["error"]["code"] == "conflict"
    assert [s["id"] for s in org.list_all()] == [first["id"]]


def test_different_keys_create_different_sandboxes(org):
    ids = set()
    for _ in range(2):
        status, sbx = post(org, ECHO, unique("idem"))
        assert status == 201
        org.daemon.created.append((org, sbx["id"]))
        ids.add(sbx["id"])
    assert len(ids) == 2
    assert len(org.list_all()) == 2


def test_key_longer_than_255_characters_is_400(org):
    status, body = post(org, ECHO, "k" * 256)
    assert status == 400, (status, body)
    assert org.list_all() == []
    status, sbx = post(org, ECHO, "k" * 255)
    assert status == 201, (status, sbx)
    org.daemon.created.append((org, sbx["id"]))


def test_keys_of_one_organization_do_not_reach_another(daemon):
    a, b = daemon.new_org(), daemon.new_org()
    key = unique("shared")
    status, sa = post(a, ECHO, key)
    assert status == 201
    daemon.created.append((a, sa["id"]))
    status, sb = post(b, ECHO, key)
    assert status in (201, 409), (status, sb)
    if status == 201:
        daemon.created.append((b, sb["id"]))
        assert sb["id"] != sa["id"], "org B must never receive org A's sandbox"
