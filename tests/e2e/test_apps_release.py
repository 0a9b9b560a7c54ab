"""Deployed apps' releases (issue 20): stored as zstd tars, downloaded by each replica itself
from the storage gateway with a reference that reads that one release and nothing else, an
older plain-tar release still deployed, and a deleted app's releases removed only after the
grace period (--app-release-grace-seconds), also across a restart; an app keeps its serving
release and the newest others (10 in all), the older ones' blobs removed and a rollback to
one a clear 404; releases count against the object storage quota (--object-quota-bytes), a
deploy past it refused with the quota error. Only loopback (the
ingress) and the replicas' own addresses (in namespaces adaptd made) are contacted; the
gateway is reached from inside a replica."""

import base64
import io
import os
import tarfile
import time


import harness
from test_apps import deploy, fetch, running, sh, wait_ready

GRACE = 8
ZSTD_MAGIC = "28b52ffd"
QUOTA = 4 << 20  # far above what the other tests here deploy


d = harness.module_daemon(["--app-release-grace-seconds", str(GRACE),
                           "--object-quota-bytes", str(QUOTA)])
client = harness.module_org


def blobs_dir(d):
    return os.path.join(d.state_dir, "objects", "blobs")


def retired_dir(d):
    return os.path.join(d.state_dir, "objects", "retired")


def in_replica(client, replica, script):
    """Runs a python3 script inside the replica; its stdout."""
    encoded = base64.b64encode(script.encode()).decode()
    return sh(client, replica,
              "python3 -c \"import base64; exec(base64.b64decode('%s'))\"" % encoded)


def get_script(url, method="GET"):
    return ("import urllib.request, urllib.error\n"
            "req = urllib.request.Request(%r, method=%r)\n"
            "try:\n"
            "    r = urllib.request.urlopen(req, timeout=20)\n"
            "    print(r.status, r.read(4).hex())\n"
            "except urllib.error.HTTPError as e:\n"
            "    print(e.code, e.read().decode()[:300].replace(chr(10), ' '))\n" % (url, method))


def test_each_replica_downloads_its_zstd_release_with_a_reference_to_it_alone(d, client):
    sid = running(client)
    sh(client, sid, "mkdir -p /workspace/site && echo fetched > /workspace/site/index.html")
    status, body = client.api("PUT", "/v1/objects/content?key=private/other.txt",
                              raw=b"not for replicas\n")
    assert status in (200, 201), body
    app = deploy(client, sid, name="fetch", buildCommand=None)
    assert fetch(app, "/index.html", retry=()) == (200, "fetched\n")
    replica = app["replicaSandboxes"][0]["sandboxId"]

    # The replica fetched the release itself: its own output says so, and what it was handed
    # is a URL of the storage gateway, not the release.
    logs = client.api("GET", "/v1/apps/%s/logs" % app["id"])[1]["items"]
    assert any("fetch-release:" in item["stderr"] and "unpacked into /workspace" in item["stderr"]
               for item in logs), logs
    url = sh(client, replica, "cat /tmp/.adapt-release-url").strip()
    assert url.startswith("http://") and "/_releases/" in url and "signature=" in url, url
    blob = url.split("/_releases/")[1].split("?")[0]
    assert os.path.exists(os.path.join(blobs_dir(d), blob)), blob
    with open(os.path.join(blobs_dir(d), blob), "rb") as f:
        assert f.read(4).hex() == ZSTD_MAGIC  # stored compressed

    # The reference reads exactly that release, compressed, and nothing else.
    answer = in_replica(client, replica, get_script(url))
    assert answer.split() == ["200", ZSTD_MAGIC], (url, answer, d.log_tail(40))
    base, query = url.split("?", 1)
    gateway = base.split("/_releases/")[0]
    for other, expect in ((base + "x?" + query, "403"),                    # another blob name
                          (url.replace("signature=", "signature=0"), "403"),
                          (gateway + "/objects/private/other.txt?" + query, "403"),
                          (gateway + "/objects?list-type=2&" + query, "403"),
                          (gateway + "/?" + query, "403")):
        answer = in_replica(client, replica, get_script(other))
        assert answer.startswith(expect), (other, answer)
    answer = in_replica(client, replica, get_script(url, "PUT"))
    assert answer.startswith("405"), answer
    # Another expiry under the same signature is refused too.
    later = url.split("expires=")[0] + "expires=9" + url.split("expires=")[1]
    assert in_replica(client, replica, get_script(later)).startswith("403")
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
    client.delete(sid)


def test_a_plain_tar_release_from_an_older_store_still_deploys(d, client):
    sid = running(client)
    sh(client, sid, "mkdir -p /workspace/site && echo zstd > /workspace/site/index.html")
    app = deploy(client, sid, name="oldtar", buildCommand=None)
    replica = app["replicaSandboxes"][0]["sandboxId"]
    url = sh(client, replica, "cat /tmp/.adapt-release-url").strip()
    blob = url.split("/_releases/")[1].split("?")[0]
    # What the previous version stored: the tar itself, uncompressed.
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        body = b"plain tar\n"
        info = tarfile.TarInfo("index.html")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    with open(os.path.join(blobs_dir(d), blob), "wb") as f:
        f.write(data.getvalue())
    status, scaled = client.api("POST", "/v1/apps/%s/scale" % app["id"], {"replicas": 2})
    assert status == 200, scaled
    now = wait_ready(client, app["id"], 2)
    fresh = [r["sandboxId"] for r in now["replicaSandboxes"] if r["sandboxId"] != replica]
    assert sh(client, fresh[0], "cat /workspace/index.html") == "plain tar\n"
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
    client.delete(sid)


def retired(d, blob):
    return [n for n in os.listdir(retired_dir(d)) if n.endswith("." + blob)] \
        if os.path.isdir(retired_dir(d)) else []


def wait_gone(d, blob, timeout=60):
    deadline = time.monotonic() + timeout
    while retired(d, blob):
        assert time.monotonic() < deadline, retired(d, blob)
        time.sleep(0.5)


def test_a_deleted_apps_releases_go_after_the_grace_period_even_across_a_restart(d, client):
    sid = running(client)
    sh(client, sid, "mkdir -p /workspace/site && echo grace > /workspace/site/index.html")
    blobs = []
    for name in ("grace", "restart"):
        app = deploy(client, sid, name=name, buildCommand=None)
        url = sh(client, app["replicaSandboxes"][0]["sandboxId"],
                 "cat /tmp/.adapt-release-url").strip()
        blobs.append((app, url.split("/_releases/")[1].split("?")[0]))
    # The same bytes in two apps are stored once: deleting one app keeps the other's release.
    assert blobs[0][1] == blobs[1][1], blobs
    (first, blob), (second, _) = blobs
    assert client.api("DELETE", "/v1/apps/" + first["id"])[0] == 204
    assert os.path.exists(os.path.join(blobs_dir(d), blob)) and not retired(d, blob)
    assert fetch(second, "/index.html", retry=()) == (200, "grace\n")

    # The last app using it is deleted: the release is kept aside for the grace period.
    assert client.api("DELETE", "/v1/apps/" + second["id"])[0] == 204
    assert not os.path.exists(os.path.join(blobs_dir(d), blob))
    assert len(retired(d, blob)) == 1, os.listdir(retired_dir(d))
    wait_gone(d, blob)

    # Deleted just before adaptd is killed: the restarted adaptd still removes it when due,
    # and not before (its start-up sweep of unreferenced blobs leaves it alone).
    sh(client, sid, "echo restart > /workspace/site/index.html")
    app = deploy(client, sid, name="again", buildCommand=None)
    url = sh(client, app["replicaSandboxes"][0]["sandboxId"], "cat /tmp/.adapt-release-url")
    blob = url.strip().split("/_releases/")[1].split("?")[0]
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
    [kept] = retired(d, blob)
    d.kill()
    assert retired(d, blob) == [kept]  # killed within the grace period
    d.start(port=d.port)
    wait_gone(d, blob)
    client.delete(sid)


def test_an_app_keeps_ten_releases_and_rolling_back_to_a_pruned_one_is_a_404(d, client):
    sid = running(client)
    sh(client, sid, "mkdir -p /workspace/site")
    ids = []
    for i in range(12):
        sh(client, sid, "echo %d > /workspace/site/index.html" % i)
        app = deploy(client, sid, name="kept", buildCommand=None, replicas=0)
        ids.append(app["releaseId"])
        if i == 9:
            files = len(os.listdir(blobs_dir(d)))
    assert len(set(ids)) == 12, ids
    status, listed = client.api("GET", "/v1/apps/%s/releases" % app["id"])
    assert status == 200, listed
    assert [r["id"] for r in listed["items"]] == list(reversed(ids[2:])), listed
    # Each later release's blob took the place of a pruned one's.
    assert len(os.listdir(blobs_dir(d))) == files
    status, err = client.api("POST", "/v1/apps/%s/rollback" % app["id"], {"releaseId": ids[0]})
    assert status == 404 and err["error"]["field"] == "releaseId", err
    assert "keeps the release it serves" in err["error"]["message"], err
    # The oldest kept one rolls back; the next deploy prunes around it while it serves.
    status, back = client.api("POST", "/v1/apps/%s/rollback" % app["id"], {"releaseId": ids[2]})
    assert status == 200 and back["releaseId"] == ids[2], back
    sh(client, sid, "echo 12 > /workspace/site/index.html")
    newest = deploy(client, sid, name="kept", buildCommand=None, replicas=0)["releaseId"]
    listed = client.api("GET", "/v1/apps/%s/releases" % app["id"])[1]
    assert [r["id"] for r in listed["items"]] == [newest] + list(reversed(ids[4:])) + [ids[2]]
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
    client.delete(sid)


def test_a_deploy_past_the_object_quota_is_refused_and_keeps_nothing(d):
    client = d.new_org()
    sid = running(client)
    # Incompressible: the release is at least as large as the file.
    sh(client, sid, "mkdir -p /workspace/site && head -c 65536 /dev/urandom > /workspace/site/r")
    filler = b"f" * (QUOTA - 32768)
    status, body, _, _ = client.request("PUT", "/v1/objects/content?key=filler.bin", raw=filler,
                                        headers={"Content-Type": "application/octet-stream"})
    assert status == 200, body
    files = len(os.listdir(blobs_dir(d)))
    status, answer = client.api("POST", "/v1/apps", {
        "sandboxId": sid, "name": "big", "sourcePath": "/workspace/site",
        "startCommand": "python3 -m http.server 8000", "port": 8000, "replicas": 0})
    if status == 202:  # the deploy outlasted the request's wait: its operation tells
        deadline = time.monotonic() + 300
        while answer["phase"] == "Running" and time.monotonic() < deadline:
            time.sleep(0.5)
            answer = client.api("GET", "/v1/operations/" + answer["id"])[1]
        assert answer["phase"] == "Failed", answer
        message = answer["error"]
    else:
        assert status == 429, answer
        message = answer["error"]["message"]
    assert "object storage quota exceeded" in message and str(QUOTA) in message, message
    assert "/" not in message, message  # no host path
    assert len(os.listdir(blobs_dir(d))) == files
    # With room made, the same deploy goes.
    assert client.request("DELETE", "/v1/objects/content?key=filler.bin")[0] == 204
    app = deploy(client, sid, name="big", buildCommand=None, replicas=0)
    assert client.api("DELETE", "/v1/apps/" + app["id"])[0] == 204
    client.delete(sid)
