"""Storage gateway, the rest of the S3 subset: ListParts, expiry of unfinished multipart
uploads, the per-organization object quota, presigned URLs made by `aws s3 presign`, and
aws-chunked (STREAMING-AWS4-HMAC-SHA256-PAYLOAD) uploads signed by hand in this file, so that
the gateway's chunk signatures are checked against an independent implementation."""

import datetime
import hashlib
import hmac
import http.client
import json
import os
import re
import subprocess
import time
import urllib.parse

import pytest

import harness
from conftest import close_daemon
from test_objects import aws, gateway, get, put, storage_token

QUOTA = 1000000
# Seconds an unfinished multipart upload lives on the limited daemon: short, so that the test
# waits seconds, not half a minute. Only the expiry test makes multipart uploads there, and it
# makes them through the gateway directly (milliseconds), not with the slow awscli.
MAX_AGE = 5


@pytest.fixture(scope="module")
def limited():
    """An adaptd with a 1 MB object quota per organization and 5 s multipart expiry."""
    d = harness.Daemon(extra_args=["--object-quota-bytes", str(QUOTA),
                                   "--multipart-max-age", str(MAX_AGE)])
    d.start()
    yield d
    close_daemon(d)


def wait_until(pred, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.25)
    return pred()


def test_list_parts_of_an_unfinished_upload(org, tmp_path):
    tok = storage_token(org)
    p = aws(tok, "s3api", "create-multipart-upload", "--bucket", "objects", "--key", "mp/x.bin")
    upload = json.loads(p.stdout)["UploadId"]
    part = tmp_path / "part"
    part.write_bytes(os.urandom(300000))
    etag = json.loads(aws(tok, "s3api", "upload-part", "--bucket", "objects", "--key", "mp/x.bin",
                          "--upload-id", upload, "--part-number", "2",
                          "--body", str(part)).stdout)["ETag"]
    parts = json.loads(aws(tok, "s3api", "list-parts", "--bucket", "objects", "--key", "mp/x.bin",
                           "--upload-id", upload).stdout)["Parts"]
    assert [(x["PartNumber"], x["Size"], x["ETag"]) for x in parts] == [(2, 300000, etag)]
    assert etag.strip('"') == hashlib.md5(part.read_bytes()).hexdigest()
    # Each part answers the time it was stored, not the time of the listing.
    stored = os.path.join(org.daemon.state_dir, "objects", "uploads", upload, "00002")
    os.utime(stored, (1577836800, 1577836800))  # 2020-01-01
    parts = json.loads(aws(tok, "s3api", "list-parts", "--bucket", "objects", "--key", "mp/x.bin",
                           "--upload-id", upload).stdout)["Parts"]
    assert parts[0]["LastModified"].startswith("2020-01-01T00:00:00"), parts
    # Another organization's token does not see the upload.
    other = storage_token(org.daemon.new_org())
    p = aws(other, "s3api", "list-parts", "--bucket", "objects", "--key", "mp/x.bin",
            "--upload-id", upload, check=False)
    assert p.returncode != 0 and "NoSuchUpload" in p.stderr
    # Aborted, it is gone (the shared daemon keeps unfinished uploads for a day).
    assert gateway(tok, "DELETE", "/objects/mp/x.bin?uploadId=" + upload)[0] == 204
    assert gateway(tok, "GET", "/objects/mp/x.bin?uploadId=" + upload)[0] == 404


def test_unfinished_uploads_expire(limited):
    org = limited.new_org()
    tok = storage_token(org)
    # Started and given a part through the gateway (bearer token): milliseconds, well inside
    # MAX_AGE, so the upload is seen before the sweeper may take it.
    status, body = gateway(tok, "POST", "/objects/mp/x.bin?uploads")
    assert status == 200, body
    upload = re.search(rb"<UploadId>([^<]+)</UploadId>", body).group(1).decode()
    data = os.urandom(300000)
    status, body = gateway(tok, "PUT", "/objects/mp/x.bin?partNumber=2&uploadId=" + upload, body=data)
    assert status == 200, body
    uploads_dir = os.path.join(limited.state_dir, "objects", "uploads")
    assert os.listdir(uploads_dir) == [upload]

    # Left unfinished past the configured age, the upload and its parts are removed.
    assert wait_until(lambda: os.listdir(uploads_dir) == [], timeout=60)
    p = aws(tok, "s3api", "list-parts", "--bucket", "objects", "--key", "mp/x.bin",
            "--upload-id", upload, check=False)
    assert p.returncode != 0 and "NoSuchUpload" in p.stderr
    etag = hashlib.md5(data).hexdigest()
    p = aws(tok, "s3api", "complete-multipart-upload", "--bucket", "objects", "--key", "mp/x.bin",
            "--upload-id", upload, "--multipart-upload",
            json.dumps({"Parts": [{"PartNumber": 2, "ETag": '"%s"' % etag}]}), check=False)
    assert p.returncode != 0 and "NoSuchUpload" in p.stderr
    assert get(org, "mp/x.bin")[0] == 404


def test_quota_refuses_what_would_exceed_it(limited, tmp_path):
    org = limited.new_org()
    tok = storage_token(org)
    assert put(org, "q/a.bin", os.urandom(600000))[0] == 200
    status, page = org.api("GET", "/v1/objects")
    assert page["usage"] == {"usedBytes": 600000, "quotaBytes": QUOTA}, page

    # REST: API.md's error format, 429 resource_exhausted, and nothing is stored.
    status, err = put(org, "q/b.bin", os.urandom(600000))[:2]
    assert status == 429, err
    assert err["error"]["code"] == "resource_exhausted" and "quota" in err["error"]["message"]
    assert get(org, "q/b.bin")[0] == 404
    # S3: 403 QuotaExceeded (S3 clients retry 429 and 503; a full quota stays full).
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(600000))
    p = aws(tok, "s3", "cp", str(big), "s3://objects/q/c.bin", check=False)
    assert p.returncode != 0 and "QuotaExceeded" in p.stderr, p.stderr
    assert get(org, "q/c.bin")[0] == 404
    assert org.api("GET", "/v1/objects")[1]["usage"]["usedBytes"] == 600000

    # Replacing an object counts its old bytes as freed; other organizations have their own.
    assert put(org, "q/a.bin", os.urandom(900000))[0] == 200
    other = limited.new_org()
    assert put(other, "q/a.bin", os.urandom(900000))[0] == 200
    # Deleting frees the space.
    assert org.request("DELETE", "/v1/objects/content?key=q/a.bin")[0] == 204
    assert org.api("GET", "/v1/objects")[1]["usage"]["usedBytes"] == 0
    aws(tok, "s3", "cp", str(big), "s3://objects/q/c.bin")


def test_unfinished_multipart_parts_count_against_the_quota(limited):
    org = limited.new_org()
    tok = storage_token(org)
    status, body = gateway(tok, "POST", "/objects/mp/big.bin?uploads")
    assert status == 200, body
    upload = re.search(rb"<UploadId>([^<]+)</UploadId>", body).group(1).decode()
    part = "/objects/mp/big.bin?partNumber=%d&uploadId=" + upload
    assert gateway(tok, "PUT", part % 1, body=os.urandom(600000))[0] == 200
    # The stored part is in the organization's usage...
    assert org.api("GET", "/v1/objects")[1]["usage"]["usedBytes"] == 600000
    # ...so a second part, or an object, past the quota is refused and stores nothing.
    status, body = gateway(tok, "PUT", part % 2, body=os.urandom(600000))
    assert status == 403 and b"QuotaExceeded" in body, body
    status, err = put(org, "q/x.bin", os.urandom(600000))[:2]
    assert status == 429 and err["error"]["code"] == "resource_exhausted", err
    assert org.api("GET", "/v1/objects")[1]["usage"]["usedBytes"] == 600000
    # Replacing a part counts its new size only.
    assert gateway(tok, "PUT", part % 1, body=os.urandom(700000))[0] == 200
    assert org.api("GET", "/v1/objects")[1]["usage"]["usedBytes"] == 700000
    # Aborting frees it.
    assert gateway(tok, "DELETE", "/objects/mp/big.bin?uploadId=" + upload)[0] == 204
    assert org.api("GET", "/v1/objects")[1]["usage"]["usedBytes"] == 0
    assert put(org, "q/x.bin", os.urandom(600000))[0] == 200


def curl(url):
    p = subprocess.run(["curl", "-s", "-o", "-", "-w", "\n%{http_code}", url],
                       capture_output=True, timeout=60)
    body, _, code = p.stdout.rpartition(b"\n")
    return int(code), body


def test_presigned_urls_work_until_they_expire(org):
    tok = storage_token(org)
    data = os.urandom(5000)
    assert put(org, "pre/obj.bin", data)[0] == 200
    url = aws(tok, "s3", "presign", "s3://objects/pre/obj.bin", "--expires-in", "4").stdout.strip()
    assert "X-Amz-Signature=" in url and "X-Amz-Credential=" in url, url
    status, body = curl(url)
    assert status == 200 and body == data

    # Any change to the signed URL is refused.
    sig = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["X-Amz-Signature"][0]
    tampered = url.replace(sig, ("0" if sig[0] != "0" else "1") + sig[1:])
    status, body = curl(tampered)
    assert status == 403 and b"SignatureDoesNotMatch" in body, body
    status, body = curl(url.replace("pre/obj.bin", "pre/other.bin"))
    assert status == 403 and b"SignatureDoesNotMatch" in body, body
    status, body = curl(url.replace("X-Amz-Expires=4", "X-Amz-Expires=3600"))
    assert status == 403 and b"SignatureDoesNotMatch" in body, body

    # After X-Amz-Expires the same URL is refused.
    assert wait_until(lambda: curl(url)[0] == 403, timeout=30)
    status, body = curl(url)
    assert b"expired" in body, body

    # A revoked token's presigned URL stops working at once.
    url = aws(tok, "s3", "presign", "s3://objects/pre/obj.bin", "--expires-in", "600").stdout.strip()
    assert curl(url)[0] == 200
    assert org.api("DELETE", "/v1/storage-tokens/" + tok["accessKeyId"])[0] == 204
    status, body = curl(url)
    assert status == 403 and b"InvalidAccessKeyId" in body, body


def _hmac(key, msg):
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def chunked_put(tok, key, data, chunk=65536, break_chunk=None):
    """PUT with Content-Encoding: aws-chunked, signed per chunk as the AWS SDKs do."""
    now = datetime.datetime.now(datetime.timezone.utc)
    amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    scope = "%s/us-east-1/s3/aws4_request" % day
    host = "127.0.0.1:%d" % tok["port"]
    path = "/objects/" + urllib.parse.quote(key, safe="/")
    headers = {
        "content-encoding": "aws-chunked",
        "host": host,
        "x-amz-content-sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
        "x-amz-date": amz_date,
        "x-amz-decoded-content-length": str(len(data)),
    }
    pieces = [data[i:i + chunk] for i in range(0, len(data), chunk)] + [b""]
    sizes = [len(p) for p in pieces]
    body_len = sum(len("%x;chunk-signature=" % s) + 64 + 2 + s + 2 for s in sizes)
    headers["content-length"] = str(body_len)
    names = sorted(headers)
    canonical = "\n".join(["PUT", path, "", "".join("%s:%s\n" % (n, headers[n]) for n in names),
                           ";".join(names), "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"])
    k = _hmac(("AWS4" + tok["secretAccessKey"]).encode(), day)
    for part in ("us-east-1", "s3", "aws4_request"):
        k = _hmac(k, part)
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    seed = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = ("AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s"
                                % (tok["accessKeyId"], scope, ";".join(names), seed))
    body, previous = b"", seed
    empty = hashlib.sha256(b"").hexdigest()
    for i, p in enumerate(pieces):
        sts = "\n".join(["AWS4-HMAC-SHA256-PAYLOAD", amz_date, scope, previous, empty,
                         hashlib.sha256(p).hexdigest()])
        sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
        previous = sig
        if i == break_chunk:
            sig = "0" * 64
        body += b"%x;chunk-signature=%s\r\n" % (len(p), sig.encode()) + p + b"\r\n"
    assert len(body) == body_len
    conn = http.client.HTTPConnection("127.0.0.1", tok["port"], timeout=60)
    conn.request("PUT", path, body=body, headers=headers)
    r = conn.getresponse()
    out = r.status, r.read()
    conn.close()
    return out


def test_aws_chunked_uploads_verify_every_chunk(org):
    tok = storage_token(org)
    data = os.urandom(200000)  # three full chunks and a short one
    status, body = chunked_put(tok, "chunked/ok.bin", data)
    assert status == 200, body
    status, _, got, _ = get(org, "chunked/ok.bin")
    assert status == 200 and got == data
    status, page = org.api("GET", "/v1/objects?prefix=chunked/")
    assert page["items"][0]["size"] == len(data)

    # A wrong signature on the second chunk: refused, and nothing is stored.
    status, body = chunked_put(tok, "chunked/bad.bin", data, break_chunk=1)
    assert status == 403 and b"SignatureDoesNotMatch" in body, body
    assert get(org, "chunked/bad.bin")[0] == 404
    # An empty object is one final chunk.
    status, body = chunked_put(tok, "chunked/empty", b"")
    assert status == 200, body
    assert get(org, "chunked/empty")[:3:2] == (200, b"")
