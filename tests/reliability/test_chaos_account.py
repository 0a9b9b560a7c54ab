"""The account's verbs at once, beside sandbox creates, stops, starts and deletes, from two
organizations: no answer is a 5xx, and once everything is deleted the host holds nothing
more than before (leaks.py).

Each worker picks, from a seeded random stream, one verb: jobs (submitted, cancelled, deleted)
and their runs (listed, cancelled), automations on the organization's sandboxes (schedules and
controllers: created, triggered, disabled, enabled, deleted), objects (put, get, deleted,
listed, presigned), secrets (set, deleted), storage volumes and tokens, and the sandbox verbs
that change what those meet (create, stop, start, delete). A chaos run like this by hand
(2026-12-06, three minutes, eight threads) answered no 5xx; this keeps it.

ADAPT_CHAOS_SECONDS and ADAPT_CHAOS_SEED as for test_chaos.py (default 45 s here).
"""

import os
import time

import leaks
from test_chaos import Chaos, run_chaos

SECONDS = float(os.environ.get("ADAPT_CHAOS_ACCOUNT_SECONDS",
                               os.environ.get("ADAPT_CHAOS_SECONDS", "45")))
VERBS = ["create", "stop", "start", "delete", "job", "job", "job-cancel", "job-delete",
         "run-cancel", "runs", "schedule", "controller", "trigger", "disable", "enable",
         "unautomate", "object-put", "object-get", "object-delete", "objects", "object-url",
         "secret", "unsecret", "volume", "token"]


class AccountChaos(Chaos):
    def __init__(self, orgs):
        super().__init__(orgs)
        self.jobs = [[] for _ in orgs]
        self.automations = [[] for _ in orgs]

    def keep(self, ids, o, status, body):
        if status in (200, 201) and body and body.get("id"):
            with self.mu:
                ids[o].append(body["id"])

    def pick(self, ids, o, rnd):
        with self.mu:
            return rnd.choice(ids[o]) if ids[o] else None

    def verb(self, o, rnd):
        client = self.orgs[o]
        with self.mu:
            sids = list(self.pools[o])
        verb = rnd.choice(VERBS)
        if verb == "create" or not sids:
            return self.create(o, rnd)
        sid = rnd.choice(sids)
        key = "k%d" % rnd.randint(0, 4)
        if verb in ("stop", "start"):
            self.call(verb, client, "POST", "/v1/sandboxes/%s/%s" % (sid, verb))
        elif verb == "delete":
            self.call(verb, client, "DELETE", "/v1/sandboxes/" + sid)
            with self.mu:
                if sid in self.pools[o]:
                    self.pools[o].remove(sid)
        elif verb == "job":
            body = {"command": "echo job; sleep %d" % rnd.randint(0, 3),
                    "maxAttempts": rnd.randint(1, 2), "timeoutSeconds": 60}
            if rnd.random() < 0.3:
                body["network"] = {"egress": "none"}
            self.keep(self.jobs, o, *self.call(verb, client, "POST", "/v1/jobs", body))
        elif verb in ("job-cancel", "job-delete"):
            job = self.pick(self.jobs, o, rnd)
            if job and verb == "job-cancel":
                self.call(verb, client, "POST", "/v1/jobs/%s/cancel" % job)
            elif job:
                self.call(verb, client, "DELETE", "/v1/jobs/" + job)
        elif verb in ("runs", "run-cancel"):
            status, page = self.call(verb, client, "GET", "/v1/runs?limit=20")
            runs = page.get("items", []) if status == 200 and page else []
            if runs and verb == "run-cancel":
                self.call(verb, client, "POST", "/v1/runs/%s/cancel" % rnd.choice(runs)["id"])
        elif verb == "schedule":
            body = {"sandboxId": sid, "command": "echo tick", "name": "a%d" % rnd.randint(0, 999),
                    "intervalSeconds": rnd.choice([60, 300])}
            self.keep(self.automations, o,
                      *self.call(verb, client, "POST", "/v1/automations", body))
        elif verb == "controller":
            body = {"kind": "controller", "sandboxId": sid, "name": "c%d" % rnd.randint(0, 999),
                    "desiredState": rnd.choice(["running", "hibernated"])}
            self.keep(self.automations, o,
                      *self.call(verb, client, "POST", "/v1/automations", body))
        elif verb in ("trigger", "disable", "enable", "unautomate"):
            auto = self.pick(self.automations, o, rnd)
            if not auto:
                return
            if verb == "unautomate":
                self.call(verb, client, "DELETE", "/v1/automations/" + auto)
                return
            if verb == "trigger":
                self.call(verb, client, "POST", "/v1/automations/%s/trigger" % auto)
                return
            status, seen = self.call("automation", client, "GET", "/v1/automations/" + auto)
            if status == 200 and seen:
                self.call(verb, client, "POST", "/v1/automations/%s/%s" % (auto, verb),
                          headers={"If-Match": '"%s"' % seen.get("version", "")})
        elif verb == "object-put":
            self.call(verb, client, "PUT", "/v1/objects/content?key=" + key,
                      raw=os.urandom(rnd.randint(0, 2 << 20)))
        elif verb == "object-get":
            self.call(verb, client, "GET", "/v1/objects/content?key=" + key)
        elif verb == "object-delete":
            self.call(verb, client, "DELETE", "/v1/objects/content?key=" + key)
        elif verb == "objects":
            self.call(verb, client, "GET", "/v1/objects?limit=50")
        elif verb == "object-url":
            self.call(verb, client, "POST", "/v1/objects/url", {"key": key})
        elif verb == "secret":
            self.call(verb, client, "POST", "/v1/secrets",
                      {"name": "S%d" % rnd.randint(0, 3), "value": "v%d" % rnd.randint(0, 99)})
        elif verb == "unsecret":
            self.call(verb, client, "DELETE", "/v1/secrets/S%d" % rnd.randint(0, 3))
        elif verb == "volume":
            self.call(verb, client, "POST", "/v1/storage", {"name": "st%d" % rnd.randint(0, 1)})
        elif verb == "token":
            self.call(verb, client, "POST", "/v1/storage-tokens", {"name": "t", "ttlSeconds": 600})


def items(client, path):
    status, page = client.api("GET", path)
    assert status == 200, (path, status, page)
    return page["items"]


def clean_up(client, made):
    """Everything the chaos left: automations first (a controller starts sandboxes), then the
    jobs' runs and the sandboxes, objects, volumes and secrets."""
    for auto in items(client, "/v1/automations?limit=200"):
        status, _ = client.api("DELETE", "/v1/automations/" + auto["id"])
        assert status == 204, (auto["id"], status)
    deadline = time.monotonic() + 300
    while True:
        for job in items(client, "/v1/jobs?limit=200"):
            if job["status"] == "queued":
                client.api("POST", "/v1/jobs/%s/cancel" % job["id"])
        running = [r for r in items(client, "/v1/runs?limit=200") if r["status"] == "running"]
        for run in running:
            client.api("POST", "/v1/runs/%s/cancel" % run["id"])
        live = [j for j in items(client, "/v1/jobs?limit=200") if j["status"] in ("queued", "running")]
        if not live:
            break
        assert time.monotonic() < deadline, live
        time.sleep(1)
    # Also the sandboxes a controller made (a replacement for one that stopped or was
    # deleted): deleting an automation leaves its sandboxes, as seed 000 says.
    made = set(made) | {s["id"] for s in items(client, "/v1/sandboxes?limit=200")}
    for sid in made:
        status, _ = client.api("DELETE", "/v1/sandboxes/" + sid)
        assert status in (202, 204, 404), (sid, status)
    for sid in made:
        client.wait_for_status(sid, "deleted", 300)
    for obj in items(client, "/v1/objects?limit=200"):
        client.api("DELETE", "/v1/objects/content?key=" + obj["key"])
    for vol in items(client, "/v1/storage"):
        if vol["name"].startswith("st"):
            status, body = client.api("DELETE", "/v1/storage/%s?confirm=%s" % (vol["name"],
                                                                               vol["name"]))
            assert status in (202, 204), (vol["name"], status, body)
    for n in range(4):
        client.api("DELETE", "/v1/secrets/S%d" % n)


def test_every_account_verb_at_once_answers_no_5xx_and_leaves_nothing_behind(fresh_daemon):
    d = fresh_daemon
    chaos, before = run_chaos(d, AccountChaos, SECONDS)
    for verb in ("job 201", "schedule 201", "controller 201", "object-put 200", "secret 201",
                 "stop 200"):
        assert chaos.seen.get(verb, 0) > 0, (verb, sorted(chaos.seen.items()))
    for client in chaos.orgs:
        clean_up(client, [sid for c, sid in chaos.made if c is client])
    grew = leaks.settled_growth(d, before, timeout=60)
    assert grew == {}, "after the chaos the host holds more: %r" % grew
