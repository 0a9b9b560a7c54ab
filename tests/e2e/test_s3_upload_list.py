"""Storage gateway: ListMultipartUploads with the real awscli. An organization's storage token
lists its unfinished uploads (prefix, delimiter, pages by key and upload id markers) so that a
client can find and abort the ones it left; another organization's token never sees them."""

import json
import re
import subprocess
import urllib.parse

from test_objects import RCLONE, aws, gateway, rclone_env, storage_token


def create(tok, key):
    p = aws(tok, "s3api", "create-multipart-upload", "--bucket", "objects", "--key", key)
    return json.loads(p.stdout)["UploadId"]


def list_uploads(tok, *args):
    p = aws(tok, "s3api", "list-multipart-uploads", "--bucket", "objects", *args)
    return json.loads(p.stdout or "{}")


def pairs(page):
    return [(u["Key"], u["UploadId"]) for u in page.get("Uploads", [])]


def test_list_multipart_uploads_pages_filters_and_stays_in_its_organization(daemon, org):
    tok = storage_token(org)
    b1 = create(tok, "lmu/b.bin")
    a = create(tok, "lmu/a.bin")
    b2 = create(tok, "lmu/b.bin")
    c = create(tok, "lmu/dir/c.bin")
    z = create(tok, "other/z.bin")

    # Key order, then the order they began in.
    whole = list_uploads(tok)
    assert pairs(whole) == [("lmu/a.bin", a), ("lmu/b.bin", b1), ("lmu/b.bin", b2),
                            ("lmu/dir/c.bin", c), ("other/z.bin", z)]
    first = whole["Uploads"][0]
    assert first["StorageClass"] == "STANDARD"
    assert first["Owner"]["ID"] == first["Initiator"]["ID"] == org.org_id
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", first["Initiated"])

    mine = [("lmu/a.bin", a), ("lmu/b.bin", b1), ("lmu/b.bin", b2), ("lmu/dir/c.bin", c)]
    assert pairs(list_uploads(tok, "--prefix", "lmu/")) == mine

    rolled = list_uploads(tok, "--prefix", "lmu/", "--delimiter", "/")
    assert pairs(rolled) == mine[:3]
    assert [p["Prefix"] for p in rolled["CommonPrefixes"]] == ["lmu/dir/"]

    # One page by hand (--max-uploads turns the cli's own paging off), then the rest from its
    # markers: nothing repeated, nothing skipped, across two uploads of one key.
    page = list_uploads(tok, "--no-paginate", "--prefix", "lmu/", "--max-uploads", "2")
    assert page["IsTruncated"] is True and page["MaxUploads"] == 2
    assert pairs(page) == mine[:2]
    assert (page["NextKeyMarker"], page["NextUploadIdMarker"]) == ("lmu/b.bin", b1)
    rest = list_uploads(tok, "--prefix", "lmu/", "--max-uploads", "2",
                        "--key-marker", page["NextKeyMarker"],
                        "--upload-id-marker", page["NextUploadIdMarker"])
    assert rest["IsTruncated"] is False and pairs(rest) == mine[2:]
    # The cli's own paging, one upload a page, follows the markers to the same list.
    assert pairs(list_uploads(tok, "--prefix", "lmu/", "--page-size", "1")) == mine

    for bad in ("0", "1001", "ten"):
        status, body = gateway(tok, "GET", "/objects?uploads&max-uploads=" + bad)
        assert status == 400 and b"<Code>InvalidArgument</Code>" in body, body

    # Keys come back escaped in the XML and whole in the cli's output.
    odd = "esc/a&b<c>'\"d.bin"
    status, body = gateway(tok, "POST", "/objects/" + urllib.parse.quote(odd) + "?uploads")
    assert status == 200, body
    assert [k for k, _ in pairs(list_uploads(tok, "--prefix", "esc/"))] == [odd]
    status, body = gateway(tok, "GET", "/objects?uploads&prefix=esc/&encoding-type=url")
    assert status == 200 and b"<EncodingType>url</EncodingType>" in body, body
    assert ("<Key>%s</Key>" % urllib.parse.quote(odd)).encode() in body, body

    # Another organization's token lists nothing of them, and cannot abort them.
    other = storage_token(daemon.new_org())
    assert pairs(list_uploads(other)) == []
    assert pairs(list_uploads(other, "--prefix", "lmu/")) == []
    p = aws(other, "s3api", "abort-multipart-upload", "--bucket", "objects", "--key", "lmu/a.bin",
            "--upload-id", a, check=False)
    assert p.returncode != 0 and "NoSuchUpload" in p.stderr

    # Aborted, an upload is no longer listed; the others still are.
    aws(tok, "s3api", "abort-multipart-upload", "--bucket", "objects", "--key", "lmu/b.bin",
        "--upload-id", b1)
    assert pairs(list_uploads(tok, "--prefix", "lmu/")) == [mine[0]] + mine[2:]

    # What the cleanup a client does with the list leaves: nothing.
    for u in list_uploads(tok)["Uploads"]:
        assert gateway(tok, "DELETE", "/objects/" + urllib.parse.quote(u["Key"]) +
                       "?uploadId=" + u["UploadId"])[0] == 204
    assert pairs(list_uploads(tok)) == []


def test_rclone_cleanup_finds_and_aborts_only_its_organizations_uploads(daemon, org):
    tok = storage_token(org)
    other = storage_token(daemon.new_org())
    mine = [create(tok, "rc/a.bin"), create(tok, "rc/deep/b.bin")]
    theirs = create(other, "rc/a.bin")
    env = rclone_env(tok)
    p = subprocess.run([RCLONE, "backend", "list-multipart-uploads", "gw:objects"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    listed = json.loads(p.stdout)["objects"]  # by bucket name
    assert sorted(u["UploadId"] for u in listed) == sorted(mine)
    # max-age 0: every upload begun before now goes.
    p = subprocess.run([RCLONE, "backend", "cleanup", "gw:objects", "-o", "max-age=0s"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert pairs(list_uploads(tok)) == []
    assert pairs(list_uploads(other)) == [("rc/a.bin", theirs)]
    assert gateway(other, "DELETE", "/objects/rc/a.bin?uploadId=" + theirs)[0] == 204
