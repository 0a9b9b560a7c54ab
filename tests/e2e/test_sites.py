"""Static websites: an object prefix with index.html published as an immutable release,
served by the ingress under its own hostname; a new publish is a new release."""

import http.client
import urllib.parse


def put(client, key, data, ctype):
    path = "/v1/objects/content?key=" + urllib.parse.quote(key, safe="")
    status, obj, _, _ = client.request("PUT", path, raw=data, headers={"Content-Type": ctype})
    assert status == 200, obj


def fetch(url, path=None):
    u = urllib.parse.urlsplit(url)
    assert u.scheme == "http"
    conn = http.client.HTTPConnection("127.0.0.1", u.port, timeout=30)
    conn.request("GET", path or u.path, headers={"Host": u.netloc})
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, body, r.getheader("content-type")


def test_site_serves_its_release_and_keeps_it(org, daemon):
    put(org, "web/index.html", b"<h1>v1</h1>", "text/html")
    put(org, "web/css/site.css", b"body{}", "text/css")
    status, site = org.api("POST", "/v1/sites", {"source": "web", "name": "demo"})
    assert status == 201, site
    assert site["url"].endswith("/index.html") and all(u.endswith("/index.html") for u in site["urls"])
    # The whole wire object: the site, and the release it serves.
    assert set(site) == {"id", "name", "hostname", "releaseId", "url", "urls", "createdAt",
                         "source", "files", "publishedAt"}, site
    assert site["id"].startswith("site_") and site["releaseId"].startswith("rel_")
    assert (site["name"], site["source"], site["files"]) == ("demo", "web/", 2)
    assert site["hostname"].startswith("demo-") and site["url"] == site["urls"][0]
    assert site["url"].startswith("https://" + site["hostname"])
    assert site["createdAt"].endswith("Z") and site["publishedAt"].endswith("Z")
    http_url = [u for u in site["urls"] if u.startswith("http://")][0]
    assert fetch(http_url)[:2] == (200, b"<h1>v1</h1>")
    status, body, ctype = fetch(http_url, "/css/site.css")
    assert (status, body) == (200, b"body{}") and ctype.startswith("text/css")
    assert fetch(http_url, "/")[1] == b"<h1>v1</h1>"
    assert fetch(http_url, "/missing.html")[0] == 404
    # The source changes (and goes): the release does not.
    put(org, "web/index.html", b"<h1>v2</h1>", "text/html")
    assert org.request("DELETE", "/v1/objects/content?key=web/css/site.css")[0] == 204
    assert fetch(http_url)[1] == b"<h1>v1</h1>"
    assert fetch(http_url, "/css/site.css")[1] == b"body{}"
    # Publishing again: a new release at the same hostname.
    status, again = org.api("POST", "/v1/sites", {"source": "web/", "name": "demo"})
    assert status == 201, again
    assert again["id"] == site["id"] and again["hostname"] == site["hostname"]
    assert again["releaseId"] != site["releaseId"]
    assert fetch(http_url)[1] == b"<h1>v2</h1>"
    assert fetch(http_url, "/css/site.css")[0] == 404
    assert (again["files"], again["createdAt"]) == (1, site["createdAt"])
    status, listed = org.api("GET", "/v1/sites")
    assert [s["id"] for s in listed["items"]] == [site["id"]]
    assert listed["items"][0]["releaseId"] == again["releaseId"] and listed["items"][0]["files"] == 1
    status, read = org.api("GET", "/v1/sites/" + site["id"])
    assert status == 200 and read == listed["items"][0], read
    # Other organizations: 404.
    other = daemon.new_org()
    assert other.api("GET", "/v1/sites/" + site["id"])[0] == 404
    assert other.request("DELETE", "/v1/sites/" + site["id"])[0] == 404
    assert other.api("POST", "/v1/sites", {"source": "web/"})[0] == 400  # not theirs: no index.html
    p = org.cli("site", "ls")
    assert p.returncode == 0 and "demo" in p.stdout
    assert org.request("DELETE", "/v1/sites/" + site["id"])[0] == 204
    assert fetch(http_url)[0] == 404


def test_publish_needs_index_html(org):
    put(org, "noindex/page.html", b"x", "text/html")
    status, err = org.api("POST", "/v1/sites", {"source": "noindex"})
    assert status == 400
    assert err["error"]["field"] == "source" and "index.html" in err["error"]["message"]
    assert org.api("POST", "/v1/sites", {"source": "../etc"})[0] == 400
    assert org.api("POST", "/v1/sites", {"source": "noindex", "name": "Bad Name"})[0] == 400
    assert org.api("POST", "/v1/sites", {"source": "noindex", "extra": 1})[0] == 400
    p = org.cli("site", "publish", "noindex")
    assert p.returncode != 0 and "index.html" in p.stderr
