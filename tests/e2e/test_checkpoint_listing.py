"""The organization's checkpoints across its sandboxes (GET /v1/checkpoints, CLI `adapt sandbox
checkpoint list` without a sandbox id): real checkpoints of real runsc sandboxes. An
organization sees its live sandboxes' checkpoints and the kept ones of its deleted sandboxes,
newest first and paged, and never another organization's; bad limits, cursors and filters
are 400s in API.md's error format that change nothing."""

import json
import os
import urllib.parse

import yaml

from harness import REPO
from test_named_checkpoints import checkpoints_path, running_sandbox, take
from test_openapi import assert_matches, schema

SPEC = yaml.safe_load(open(os.path.join(REPO, "docs", "openapi.yaml")))
OP = SPEC["paths"]["/v1/checkpoints"]["get"]


def listing(client, expect=200, **query):
    path = "/v1/checkpoints" + ("?" + urllib.parse.urlencode(query) if query else "")
    status, page = client.api("GET", path)
    assert status == expect, (path, status, page)
    assert str(status) in OP["responses"], (path, status)
    if status == 200:
        assert_matches(SPEC, OP["responses"]["200"]["content"]["application/json"]["schema"], page)
    else:
        assert_matches(SPEC, schema(SPEC, "Error"), page)
    return page


def names(page):
    return [(c["sandboxId"], c["name"]) for c in page["items"]]


def walk(client, limit, **query):
    """Every page of `limit` items, following nextCursor; the items in order and the page count."""
    items, cursor, pages = [], None, 0
    while True:
        q = dict(query, limit=limit, **({"cursor": cursor} if cursor else {}))
        page = listing(client, **q)
        pages += 1
        items += names(page)
        cursor = page["nextCursor"]
        if cursor is None:
            return items, pages
        assert pages < 20


def test_the_listing_shows_exactly_the_organizations_live_and_kept_checkpoints(daemon, org):
    other = daemon.new_org()
    # Organization A: a sandbox deleted with one checkpoint kept and one not, and a live one.
    gone = running_sandbox(org, {"labels": {"name": "forgotten"}})
    take(org, gone, "first")
    status, _ = org.api("POST", checkpoints_path(gone), {"name": "kept", "keep": True})
    assert status == 201
    take(org, gone, "dropped")
    live = running_sandbox(org, {"labels": {"name": "still-here"}})
    take(org, live, "live-one")
    # Organization B: a live sandbox's checkpoint and a deleted sandbox's kept one.
    theirs = running_sandbox(other)
    take(other, theirs, "theirs")
    theirs_gone = running_sandbox(other)
    status, _ = other.api("POST", checkpoints_path(theirs_gone), {"name": "theirs-kept", "keep": True})
    assert status == 201
    try:
        before = {c["name"]: c for c in listing(org)["items"]}
        assert set(before) == {"first", "kept", "dropped", "live-one"}, before
        assert not any(c["sandboxDeleted"] for c in before.values()), before
        org.delete(gone)
        other.delete(theirs_gone)

        page = listing(org)
        assert page["nextCursor"] is None, page
        # Newest first (live-one was taken last); of the deleted sandbox only the kept one.
        assert names(page) == [(live, "live-one"), (gone, "kept")], page
        kept, newest = page["items"][1], page["items"][0]
        assert kept["keep"] is True and kept["sandboxDeleted"] is True, kept
        assert kept["sandboxLabels"] == {"name": "forgotten"}, kept
        assert kept["sizeBytes"] == before["kept"]["sizeBytes"] > 0, kept
        assert kept["createdAt"] == before["kept"]["createdAt"], kept
        assert newest["keep"] is False and newest["sandboxDeleted"] is False, newest
        assert newest["sandboxLabels"] == {"name": "still-here"}, newest
        # The per-sandbox listing answers the same shape.
        status, per_sandbox = org.api("GET", checkpoints_path(gone))
        assert status == 200 and per_sandbox["items"] == [kept], per_sandbox

        # Pages of one walk the same list; the filters narrow it.
        assert walk(org, 1) == (names(page), 2)
        assert names(listing(org, kept="true")) == [(gone, "kept")]
        assert names(listing(org, kept="false")) == [(live, "live-one")]
        assert names(listing(org, sandboxId=gone)) == [(gone, "kept")]
        assert names(listing(org, sandboxId=live, kept="true")) == []

        # The other organization sees only its own, and A's sandbox ids list nothing for it.
        theirs_page = listing(other)
        assert names(theirs_page) == [(theirs_gone, "theirs-kept"), (theirs, "theirs")], theirs_page
        for sid in (gone, live):
            assert listing(other, sandboxId=sid)["items"] == []
        for sid in (theirs, theirs_gone):
            assert listing(org, sandboxId=sid)["items"] == []
        for p in (listing(other, kept="true"), listing(other, limit=200)):
            assert not {s for s, _ in names(p)} & {gone, live}, p

        # Deleting the kept checkpoint takes it off the listing.
        status, body = org.api("DELETE", checkpoints_path(gone, "kept"))
        assert status == 204, body
        assert names(listing(org)) == [(live, "live-one")]
    finally:
        org.api("DELETE", checkpoints_path(gone, "kept"))
        other.api("DELETE", checkpoints_path(theirs_gone, "theirs-kept"))


def test_bad_limits_cursors_and_filters_are_400s_that_change_nothing(org):
    sid = running_sandbox(org)
    take(org, sid, "one")
    take(org, sid, "two")
    first = listing(org, limit=1)
    assert first["nextCursor"], first
    for query, field in ((dict(limit=0), "limit"), (dict(limit=201), "limit"),
                         (dict(limit="ten"), "limit"), (dict(limit=""), "limit"),
                         (dict(cursor="bogus"), "cursor"), (dict(cursor="c5"), "cursor"),
                         (dict(cursor=first["nextCursor"] + ".x"), "cursor"),
                         (dict(cursor=first["nextCursor"][:-3] + "Two"), "cursor"),
                         (dict(cursor="k1.../../etc.x"), "cursor"),
                         (dict(sandboxId="nonsense"), "sandboxId"),
                         (dict(sandboxId="../sbx_x"), "sandboxId"),
                         (dict(kept="yes"), "kept"), (dict(kept="1"), "kept"),
                         (dict(sandbox=sid), "sandbox")):
        body = listing(org, expect=400, **query)
        assert body["error"]["code"] == "invalid_argument", (query, body)
        assert body["error"]["field"] == field, (query, body)
    # Nothing changed: both still listed, the cursor still leads to the second.
    assert names(listing(org)) == [(sid, "two"), (sid, "one")]
    assert names(listing(org, cursor=first["nextCursor"])) == [(sid, "one")]
    status, body = org.api("GET", "/v1/checkpoints", key="adapt_not_a_key")
    assert status == 401 and str(status) in OP["responses"], body


def test_cli_lists_the_organizations_checkpoints_without_a_sandbox_id(org):
    sid = running_sandbox(org, {"labels": {"name": "cli-listed"}})
    status, _ = org.api("POST", checkpoints_path(sid), {"name": "cli-kept", "keep": True})
    assert status == 201
    take(org, sid, "cli-not")
    org.delete(sid)
    try:
        r = org.cli("sandbox", "checkpoint", "ls")
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert lines[0].split() == ["SANDBOX", "SANDBOX", "NAME", "SANDBOX", "STATE", "NAME",
                                    "KEEP", "BYTES", "CREATED"], r.stdout
        assert len(lines) == 2 and lines[1].split()[:5] == [sid, "cli-listed", "deleted",
                                                            "cli-kept", "yes"], r.stdout
        r = org.cli("--json", "sandbox", "checkpoint", "list", "--kept", "--limit", "5")
        assert r.returncode == 0, r.stderr
        page = json.loads(r.stdout)
        assert names(page) == [(sid, "cli-kept")] and page["nextCursor"] is None, page
        # The organization's flags beside a sandbox id: a usage error, exit 2.
        r = org.cli("sandbox", "checkpoint", "list", sid, "--kept")
        assert r.returncode == 2, (r.stdout, r.stderr)
        r = org.cli("sandbox", "checkpoint", "list", "--limit", "0")
        assert r.returncode == 1 and "limit" in r.stderr, (r.stdout, r.stderr)
    finally:
        org.api("DELETE", checkpoints_path(sid, "cli-kept"))
