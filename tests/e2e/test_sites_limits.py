"""Static sites' bounds on disk: a site keeps its live release and the newest others (10 in
all), the older ones' copies removed from disk; the copies count against the organization's
object storage quota (--object-quota-bytes), a publish past it refused 429 with nothing
copied; an organization has at most 100 sites. Only loopback (the API and the ingress) is
contacted."""

import os

import pytest

import harness
from conftest import close_daemon
from test_sites import fetch, put

PAGE = 10000
QUOTA = PAGE * 12 - 1  # the source object and ten releases fit; an eleventh copy does not


@pytest.fixture(scope="module")
def limited():
    d = harness.Daemon(extra_args=["--object-quota-bytes", str(QUOTA)])
    d.start()
    yield d
    close_daemon(d)


def blob_files(d):
    return len(os.listdir(os.path.join(d.state_dir, "objects", "blobs")))


def used(client):
    status, account = client.api("GET", "/v1/account")
    assert status == 200, account
    return account["usage"]["objectStorageBytes"]


def test_a_site_keeps_ten_releases_and_they_count_against_the_quota(limited):
    client = limited.new_org()
    page = b"<h1>" + b"x" * (PAGE - 9) + b"</h1>"
    assert len(page) == PAGE
    put(client, "web/index.html", page, "text/html")
    releases = []
    for _ in range(12):
        status, site = client.api("POST", "/v1/sites", {"source": "web", "name": "demo"})
        assert status == 201, (site, limited.log_tail(40))
        releases.append(site["releaseId"])
    # The object and ten releases (one file each) are all that is on disk, and counted.
    assert blob_files(limited) == 11
    assert used(client) == PAGE * 11
    http_url = [u for u in site["urls"] if u.startswith("http://")][0]
    assert fetch(http_url)[:2] == (200, page)
    # A second site would pass the quota: refused, nothing copied.
    status, err = client.api("POST", "/v1/sites", {"source": "web", "name": "other"})
    assert status == 429, err
    assert "object storage quota" in err["error"]["message"], err
    assert str(QUOTA) in err["error"]["message"] and "/" not in err["error"]["message"], err
    assert blob_files(limited) == 11
    # So would an object: releases count as objects do.
    status, obj, _, _ = client.request("PUT", "/v1/objects/content?key=more.bin", raw=page,
                                       headers={"Content-Type": "application/octet-stream"})
    assert status == 429, obj
    # Deleting the site frees its releases.
    assert client.request("DELETE", "/v1/sites/" + site["id"])[0] == 204
    assert used(client) == PAGE and blob_files(limited) == 1
    assert client.request("DELETE", "/v1/objects/content?key=web/index.html")[0] == 204


def test_an_organization_has_at_most_one_hundred_sites(limited):
    client = limited.new_org()
    put(client, "tiny/index.html", b"<p>hi</p>", "text/html")
    for i in range(100):
        status, site = client.api("POST", "/v1/sites", {"source": "tiny", "name": "s%d" % i})
        assert status == 201, site
    status, err = client.api("POST", "/v1/sites", {"source": "tiny", "name": "one-more"})
    assert status == 429, err
    assert "100 sites" in err["error"]["message"], err
    # A new release of an existing site is not a new site.
    assert client.api("POST", "/v1/sites", {"source": "tiny", "name": "s0"})[0] == 201
    # Another organization has its own count.
    other = limited.new_org()
    put(other, "tiny/index.html", b"<p>hi</p>", "text/html")
    assert other.api("POST", "/v1/sites", {"source": "tiny", "name": "one-more"})[0] == 201
