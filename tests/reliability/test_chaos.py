"""Every sandbox verb at once on a few sandboxes, from two organizations: no answer is a 5xx,
and once the sandboxes are deleted the host holds nothing more than before (leaks.py).

Each worker picks, from a seeded random stream, one of its organization's sandboxes
(durable or instant, networked or not) and one verb: commands (some killed), file uploads,
downloads, listings and archives, python, stats, stop, start, named checkpoints, roll backs,
forks, endpoints, object storage, deletes. Verbs meet each other in every order: a download
while a checkpoint is taken, a command while the sandbox stops, a delete during a roll back.
What a verb answers depends on what it met (409, 404, 201...); what it must never answer is
a 5xx, adaptd's own failure. A chaos run like this (2026-12-06) found three: a file operation
caught by its sandbox's end, one that met a checkpoint under way, and a checkpoint that met a
download in flight, which lost the sandbox's processes.

ADAPT_CHAOS_SECONDS sets how long the verbs run (default 75) and ADAPT_CHAOS_SEED the seed
(default 1); the same seed picks the same verbs, though what they meet depends on timing.
"""

import http.client
import os
import random
import threading
import time

import leaks

SECONDS = float(os.environ.get("ADAPT_CHAOS_SECONDS", "75"))
SEED = int(os.environ.get("ADAPT_CHAOS_SEED", "1"))
WORKERS = 6
VERBS = ["command", "command", "kill", "upload", "download", "list", "archive", "python",
         "stats", "stop", "start", "checkpoint", "restore", "fork", "endpoint", "storage",
         "delete"]


class Chaos:
    def __init__(self, orgs):
        self.orgs = orgs
        self.pools = [[] for _ in orgs]
        self.made = []
        self.failures = []  # (verb, method, path, status, body): 5xx answers
        self.seen = {}      # "verb status" -> count
        # sandbox id -> [[start, end or None]] of its stops (restarts too), deletes, roll backs
        self.ends = {}
        self.mu = threading.Lock()

    def call(self, verb, client, method, path, body=None, raw=None, headers=None, transfer_of=None):
        started = time.monotonic()
        try:
            status, parsed, payload, _ = client.request(method, path, body=body, raw=raw,
                                                        headers=headers, timeout=300)
        except (http.client.IncompleteRead, ConnectionError):
            # A transfer whose sandbox was stopped, deleted or rolled back meanwhile ends when
            # that kills its file tool (after at most 5 s); once the answer's headers are out,
            # only a closed connection can say so. That is the transfer's documented end, not a
            # failure; a cut that met none of those is.
            if transfer_of is None or not self.ended_during(transfer_of, started):
                raise
            with self.mu:
                self.seen[verb + " cut"] = self.seen.get(verb + " cut", 0) + 1
            return 0, None
        with self.mu:
            key = "%s %d" % (verb, status)
            self.seen[key] = self.seen.get(key, 0) + 1
            if status >= 500:
                self.failures.append((verb, method, path, status, payload[:300]))
        return status, parsed

    def ending(self, verb, client, method, path, sid, body=None):
        """A stop, delete, roll back or restart of `sid`, its span kept for ended_during (an
        attach of object storage stops a running sandbox before it answers)."""
        span = [time.monotonic(), None]
        with self.mu:
            self.ends.setdefault(sid, []).append(span)
        try:
            return self.call(verb, client, method, path, body=body)
        finally:
            span[1] = time.monotonic()

    def ended_during(self, sid, since):
        with self.mu:
            return any(end is None or end >= since for _, end in self.ends.get(sid, []))

    def add(self, o, status, body):
        if status == 201:
            with self.mu:
                self.pools[o].append(body["id"])
                self.made.append((self.orgs[o], body["id"]))

    def create(self, o, rnd):
        body = {"ttlSeconds": 900, "labels": {"name": "chaos"}}
        if rnd.random() < 0.6:
            body["startupClass"] = "durable"
        if rnd.random() < 0.3:
            body["network"] = {"egress": "none"}
        self.add(o, *self.call("create", self.orgs[o], "POST", "/v1/sandboxes", body))

    def verb(self, o, rnd):
        client = self.orgs[o]
        with self.mu:
            ids = list(self.pools[o])
        if len(ids) < 3:
            return self.create(o, rnd)
        sid, verb = rnd.choice(ids), rnd.choice(VERBS)
        base = "/v1/sandboxes/" + sid
        name = "c%d" % rnd.randint(0, 1)
        path = "/workspace/f%d" % rnd.randint(0, 2)
        if verb == "command":
            self.call(verb, client, "POST", base + "/commands",
                      {"command": "echo hi; sleep %d" % rnd.randint(0, 2),
                       "waitSeconds": rnd.randint(0, 5)})
        elif verb == "kill":
            status, body = self.call(verb, client, "POST", base + "/commands",
                                     {"argv": ["sleep", "30"], "waitSeconds": 0})
            if body and body.get("id"):
                self.call(verb, client, "DELETE", base + "/commands/" + body["id"])
        elif verb == "upload":
            self.call(verb, client, "PUT", base + "/files?path=" + path,
                      raw=os.urandom(rnd.randint(0, 3 << 20)), transfer_of=sid)
        elif verb == "download":
            self.call(verb, client, "GET", base + "/files?path=" + path, transfer_of=sid)
        elif verb == "list":
            self.call(verb, client, "GET", base + "/files?path=/workspace&list=1")
        elif verb == "archive":
            self.call(verb, client, "GET", base + "/archive?path=/workspace", transfer_of=sid)
        elif verb == "python":
            self.call(verb, client, "POST", base + "/python", {"code": "print(6*7)",
                                                               "waitSeconds": 5})
        elif verb == "stats":
            self.call(verb, client, "GET", base + "/stats")
        elif verb == "stop":
            self.ending(verb, client, "POST", base + "/stop", sid)
        elif verb == "start":
            self.call(verb, client, "POST", base + "/start")
        elif verb == "checkpoint":
            self.call(verb, client, "POST", base + "/checkpoints", {"name": name})
        elif verb == "restore":
            self.ending(verb, client, "POST", base + "/checkpoints/%s/restore" % name, sid)
        elif verb == "fork":
            self.add(o, *self.call(verb, client, "POST", "/v1/sandboxes",
                                   {"fromCheckpoint": sid + "/" + name, "ttlSeconds": 900}))
        elif verb == "endpoint":
            self.call(verb, client, "POST", base + "/endpoints", {"port": 8000})
        elif verb == "storage":
            # A running sandbox restarts once to take the storage's variables (README, Object
            # storage): its transfers in flight end with that stop, as with any stop.
            self.ending(verb, client, "POST", base + "/object-storage", sid, body={})
        elif verb == "delete":
            self.ending(verb, client, "DELETE", base, sid)
            with self.mu:
                if sid in self.pools[o]:
                    self.pools[o].remove(sid)

    def worker(self, n, until):
        rnd = random.Random(SEED * 1000 + n)
        o = n % len(self.orgs)
        while time.monotonic() < until:
            try:
                self.verb(o, rnd)
            except Exception as e:  # a reset or a timeout is adaptd's failure too
                with self.mu:
                    self.failures.append(("exception", repr(e)[:300]))


def run_chaos(d, make, seconds):
    """Two organizations of daemon `d`, warmed up, then `make(orgs)`'s workers for `seconds`.
    Returns the chaos (asserted to have answered no 5xx) and the host's snapshot before it."""
    orgs = [d.new_org(), d.new_org()]
    # Warm-up: each organization's default storage (mounted for its durable sandboxes and
    # kept), adaptd's agent hub and nftables table, a disk template of the default size.
    for client in orgs:
        sid = client.create({"startupClass": "durable"})["id"]
        client.wait_for_status(sid, "running", 120)
        client.delete(sid)
    before = leaks.snapshot(d)
    chaos = make(orgs)
    until = time.monotonic() + seconds
    threads = [threading.Thread(target=chaos.worker, args=(n, until)) for n in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 600)
    assert not any(t.is_alive() for t in threads), "a verb did not answer within 10 minutes"
    print("chaos answers:", sorted(chaos.seen.items()))
    assert chaos.failures == [], chaos.failures
    return chaos, before


def test_every_verb_at_once_answers_no_5xx_and_leaves_nothing_behind(fresh_daemon):
    d = fresh_daemon
    chaos, before = run_chaos(d, Chaos, SECONDS)
    # Some verbs met sandboxes in the states they are for, not only refusals.
    for verb in ("command 200", "upload 200", "stop 200", "start 202", "checkpoint 201"):
        assert chaos.seen.get(verb, 0) > 0, (verb, sorted(chaos.seen.items()))
    for client, sid in chaos.made:
        status, _ = client.api("DELETE", "/v1/sandboxes/" + sid)
        assert status in (202, 204), (sid, status)
    for client, sid in chaos.made:
        client.wait_for_status(sid, "deleted", 300)
    grew = leaks.settled_growth(d, before, timeout=60)
    assert grew == {}, "after the chaos the host holds more: %r" % grew
