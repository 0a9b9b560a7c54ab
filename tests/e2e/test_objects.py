"""Object storage: /v1/objects, storage tokens, signed links, and the storage gateway with the
real awscli and rclone (Debian packages): upload, list, download, multipart, and refusals
(another organization's token, expired/revoked tokens, traversal keys, bad signatures)."""

import hashlib
import http.client
import os
import subprocess
import time
import urllib.parse

import pytest

AWS = "/usr/bin/aws"
RCLONE = "/usr/bin/rclone"


def put(client, key, data, ctype="application/octet-stream"):
    path = "/v1/objects/content?key=" + urllib.parse.quote(key, safe="")
    return client.request("PUT", path, raw=data, headers={"Content-Type": ctype})


def get(client, key, method="GET", auth=None):
    path = "/v1/objects/content?key=" + urllib.parse.quote(key, safe="")
    return client.request(method, path, key=auth)


def rclone_env(tok):
    """The environment that makes rclone's remote `gw:` the gateway, signed with `tok`."""
    env = dict(os.environ)
    env.pop("AWS_CA_BUNDLE", None)  # rclone's SDK refuses a custom CA bundle with its transport
    env.update({
        "RCLONE_CONFIG": "/dev/null",
        "RCLONE_CONFIG_GW_TYPE": "s3",
        "RCLONE_CONFIG_GW_PROVIDER": "Other",
        "RCLONE_CONFIG_GW_ACCESS_KEY_ID": tok["accessKeyId"],
        "RCLONE_CONFIG_GW_SECRET_ACCESS_KEY": tok["secretAccessKey"],
        "RCLONE_CONFIG_GW_ENDPOINT": tok["local"],
        "RCLONE_CONFIG_GW_REGION": "us-east-1",
        "RCLONE_CONFIG_GW_FORCE_PATH_STYLE": "true",
    })
    return env


def storage_token(client, **body):
    status, tok = client.api("POST", "/v1/storage-tokens", body)
    assert status == 201, tok
    port = int(tok["endpoint"].rsplit(":", 1)[1])
    tok["local"] = "http://127.0.0.1:%d" % port
    tok["port"] = port
    return tok


def aws_env(tok, secret=None):
    env = dict(os.environ)
    env.update({
        "AWS_ACCESS_KEY_ID": tok["accessKeyId"],
        "AWS_SECRET_ACCESS_KEY": secret or tok["secretAccessKey"],
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_CONFIG_FILE": "/dev/null",
        "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
        "AWS_EC2_METADATA_DISABLED": "true",
    })
    return env


def aws(tok, *args, secret=None, check=True):
    p = subprocess.run([AWS, "--endpoint-url", tok["local"], *args], capture_output=True, text=True,
                       env=aws_env(tok, secret), timeout=300)
    if check:
        assert p.returncode == 0, (args, p.stdout, p.stderr)
    return p


def gateway(tok, method, path, body=None, token=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", tok["port"], timeout=60)
    h = dict(headers or {})
    if token is not False:
        h["Authorization"] = "Bearer " + (token or tok["token"])
    conn.request(method, path, body=body, headers=h)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, data


def until(pred, timeout):
    """Polls pred until it holds or timeout seconds pass; returns whether it held."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.2)
    return pred()


def sha(data):
    return hashlib.sha256(data).hexdigest()


def test_rest_objects_roundtrip_list_and_delete(org):
    data = os.urandom(300000)
    status, obj, _, _ = put(org, "docs/a.bin", data)
    assert status == 200, obj
    assert obj["size"] == len(data) and obj["sha256"] == sha(data)
    assert obj["etag"] == hashlib.md5(data).hexdigest()
    for k in ("docs/b.txt", "docs/sub/c.txt", "top.txt"):
        assert put(org, k, b"x " + k.encode(), "text/plain")[0] == 200
    status, _, body, headers = get(org, "docs/a.bin")
    assert status == 200 and body == data
    status, _, body, headers = get(org, "docs/b.txt", "HEAD")
    assert status == 200 and body == b"" and headers["content-length"] == str(len(b"x docs/b.txt"))
    assert headers["content-type"].startswith("text/plain")
    status, page = org.api("GET", "/v1/objects?prefix=docs/&delimiter=/")
    assert status == 200
    assert [o["key"] for o in page["items"]] == ["docs/a.bin", "docs/b.txt"]
    assert page["commonPrefixes"] == ["docs/sub/"] and page["nextCursor"] is None
    # Pages of one, every key once.
    keys, cursor = [], None
    for _ in range(10):
        q = "/v1/objects?limit=1" + ("&cursor=" + cursor if cursor else "")
        status, page = org.api("GET", q)
        assert status == 200, page
        keys += [o["key"] for o in page["items"]]
        cursor = page["nextCursor"]
        if not cursor:
            break
    assert keys == ["docs/a.bin", "docs/b.txt", "docs/sub/c.txt", "top.txt"]
    status, _, _, _ = org.request("DELETE", "/v1/objects/content?key=top.txt")
    assert status == 204
    assert get(org, "top.txt")[0] == 404
    assert org.api("GET", "/v1/objects?limit=0")[0] == 400
    assert org.api("GET", "/v1/objects?bogus=1")[0] == 400


def test_other_organizations_see_nothing(daemon, org):
    other = daemon.new_org()
    assert put(org, "private/x.txt", b"mine")[0] == 200
    assert get(other, "private/x.txt")[0] == 404
    assert other.request("DELETE", "/v1/objects/content?key=private/x.txt")[0] == 404
    status, page = other.api("GET", "/v1/objects")
    assert status == 200 and page["items"] == []
    assert other.api("POST", "/v1/objects/url", {"key": "private/x.txt"})[0] == 404
    # Through the gateway, the other organization's token sees its own (empty) namespace.
    tok = storage_token(other)
    status, _ = gateway(tok, "GET", "/objects/private/x.txt")
    assert status == 404
    p = aws(tok, "s3api", "list-objects-v2", "--bucket", "objects")
    assert "private/x.txt" not in p.stdout
    assert get(org, "private/x.txt")[2] == b"mine"


@pytest.mark.parametrize("key", ["../x", "a/../b", "/etc/passwd", "a//b", "%2e%2e/x", "a/%2E%2E/b",
                                 "..%2fx", "a\\..\\b", "./a", "a/"])
def test_traversal_keys_are_refused(org, key):
    status, err, _, _ = put(org, key, b"nope")
    assert status == 400, (key, status, err)
    assert err["error"]["field"] == "key"
    status, page = org.api("GET", "/v1/objects")
    assert page["items"] == []


def test_gateway_refuses_traversal_in_raw_paths(org):
    tok = storage_token(org)
    for raw in ("/objects/../x", "/objects/a/../../x", "/objects/%2e%2e/x", "/objects/%2E%2e%2Fx",
                "/objects/a/%252e%252e/b", "/objects/%2fetc/passwd"):
        status, body = gateway(tok, "PUT", raw, body=b"nope")
        assert status == 400, (raw, status, body)
        assert b"InvalidArgument" in body
    status, page = org.api("GET", "/v1/objects")
    assert page["items"] == []


def test_storage_tokens_are_storage_only_and_revocable(org, daemon):
    tok = storage_token(org, name="ci")
    for path in ("/v1/sandboxes", "/v1/objects", "/v1/storage-tokens"):
        assert org.api("GET", path, key=tok["token"])[0] == 401, path
    assert org.api("GET", "/v1/objects", key=tok["accessKeyId"])[0] == 401
    status, body = gateway(tok, "PUT", "/objects/t.txt", body=b"hello")
    assert status == 200, body
    status, body = gateway(tok, "GET", "/objects/t.txt")
    assert (status, body) == (200, b"hello")
    status, listed = org.api("GET", "/v1/storage-tokens")
    assert any(t["id"] == tok["id"] and not t["revoked"] for t in listed["items"])
    assert "token" not in listed["items"][0] and "secretAccessKey" not in listed["items"][0]
    other = daemon.new_org()
    assert other.request("DELETE", "/v1/storage-tokens/" + tok["id"])[0] == 404
    assert org.request("DELETE", "/v1/storage-tokens/" + tok["id"])[0] == 204
    assert gateway(tok, "GET", "/objects/t.txt")[0] == 403
    p = aws(tok, "s3", "ls", "s3://objects/", check=False)
    assert p.returncode != 0 and "InvalidAccessKeyId" in p.stderr
    assert gateway(tok, "GET", "/objects/t.txt", token=False)[0] == 403
    assert gateway(tok, "GET", "/objects/t.txt", token=tok["accessKeyId"] + ".0000")[0] == 403
    assert org.api("POST", "/v1/storage-tokens", {"ttlSeconds": 0})[0] == 400
    assert org.api("POST", "/v1/storage-tokens", {"bogus": 1})[0] == 400


def test_expired_token_is_refused(org):
    tok = storage_token(org, ttlSeconds=1)
    # Refused once its second is over (polled, not slept: no test waits longer than needed).
    assert until(lambda: gateway(tok, "GET", "/objects/")[0] == 403, timeout=30)
    p = aws(tok, "s3", "ls", "s3://objects/", check=False)
    assert p.returncode != 0 and "InvalidAccessKeyId" in p.stderr


def test_bad_signature_is_refused(org):
    tok = storage_token(org)
    p = aws(tok, "s3", "ls", "s3://objects/", secret="0" * 40, check=False)
    assert p.returncode != 0 and "SignatureDoesNotMatch" in p.stderr
    # A wrong payload hash is refused too, and stores nothing.
    status, body = gateway(tok, "PUT", "/objects/h.txt", body=b"abc",
                           headers={"x-amz-content-sha256": "0" * 64})
    assert status == 400 and b"XAmzContentSHA256Mismatch" in body
    assert get(org, "h.txt")[0] == 404


def test_awscli_upload_list_download_multipart(org, tmp_path):
    tok = storage_token(org)
    small = tmp_path / "small.txt"
    small.write_bytes(b"hello from awscli\n")
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(20 * 1024 * 1024 + 12345))  # over awscli's 8 MiB threshold
    aws(tok, "s3", "cp", str(small), "s3://objects/aws/small.txt")
    aws(tok, "s3", "cp", str(big), "s3://objects/aws/deep/big.bin")
    p = aws(tok, "s3", "ls", "s3://objects/aws/")
    assert "small.txt" in p.stdout and "PRE deep/" in p.stdout
    p = aws(tok, "s3api", "list-objects-v2", "--bucket", "objects", "--prefix", "aws/",
            "--max-items", "1")
    assert "NextToken" in p.stdout and "aws/deep/big.bin" in p.stdout
    # Multipart: S3's "-N" ETag, and the REST API sees the same bytes.
    status, page = org.api("GET", "/v1/objects?prefix=aws/deep/")
    (obj,) = page["items"]
    assert obj["etag"].endswith("-3") and obj["size"] == big.stat().st_size
    assert obj["sha256"] == sha(big.read_bytes())
    out = tmp_path / "out"
    aws(tok, "s3", "cp", "--recursive", "s3://objects/aws/", str(out))
    assert (out / "small.txt").read_bytes() == small.read_bytes()
    assert sha((out / "deep" / "big.bin").read_bytes()) == sha(big.read_bytes())
    aws(tok, "s3", "rm", "s3://objects/aws/small.txt")
    assert get(org, "aws/small.txt")[0] == 404
    p = aws(tok, "s3", "cp", "s3://objects/aws/missing", str(tmp_path / "m"), check=False)
    assert p.returncode != 0


def test_rclone_copy_list_check_and_multipart(org, tmp_path):
    tok = storage_token(org)
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "a.txt").write_bytes(b"alpha\n")
    (src / "sub" / "b.txt").write_bytes(b"beta\n")
    (src / "sub" / "large.bin").write_bytes(os.urandom(12 * 1024 * 1024))
    env = rclone_env(tok)

    def rclone(*args, check=True):
        p = subprocess.run([RCLONE, "--s3-upload-cutoff", "5M", "--s3-chunk-size", "5M", *args],
                           capture_output=True, text=True, env=env, timeout=300)
        if check:
            assert p.returncode == 0, (args, p.stdout, p.stderr)
        return p

    rclone("copy", str(src), "gw:objects/rc")
    p = rclone("lsf", "-R", "gw:objects/rc")
    assert sorted(p.stdout.split()) == ["a.txt", "sub/", "sub/b.txt", "sub/large.bin"]
    rclone("check", str(src), "gw:objects/rc")
    status, page = org.api("GET", "/v1/objects?prefix=rc/sub/large.bin")
    assert page["items"][0]["etag"].endswith("-3")  # 12 MiB in 5 MiB parts
    rclone("copy", "gw:objects/rc", str(tmp_path / "back"))
    assert (tmp_path / "back" / "sub" / "large.bin").read_bytes() == (src / "sub" / "large.bin").read_bytes()
    rclone("delete", "gw:objects/rc/sub")
    p = rclone("lsf", "-R", "gw:objects/rc")
    assert p.stdout.split() == ["a.txt"]


def test_an_html_object_is_a_file_to_save_never_a_page_of_the_dashboards_origin(org):
    # The API's origin is the dashboard's: an object served inline as text/html ran its
    # script with a signed-in user's session (stored XSS; a sandbox can upload one).
    page = b"<script>fetch('/v1/keys', {method: 'POST'})</script>"
    status, _, _, _ = org.request("PUT", "/v1/objects/content?key=pages/x%22y.html", raw=page,
                                  headers={"Content-Type": "text/html"})
    assert status == 200
    status, link = org.api("POST", "/v1/objects/url", {"key": 'pages/x"y.html'})
    assert status == 200, link
    u = urllib.parse.urlsplit(link["url"])
    for path, key in (("/v1/objects/content?key=pages/x%22y.html", None),
                      (u.path + "?" + u.query, "")):
        status, _, body, headers = org.request("GET", path, key=key)
        assert (status, body) == (200, page), (path, status)
        assert headers["content-disposition"] == 'attachment; filename="x_y.html"', headers
        assert headers["x-content-type-options"] == "nosniff", headers
        assert headers["content-security-policy"] == "sandbox", headers


def test_signed_links_are_read_only_for_one_object_and_expire(org):
    assert put(org, "share/report.txt", b"the report")[0] == 200
    assert put(org, "share/other.txt", b"other")[0] == 200
    status, link = org.api("POST", "/v1/objects/url", {"key": "share/report.txt", "ttlSeconds": 3})
    assert status == 200, link
    u = urllib.parse.urlsplit(link["url"])
    target = u.path + "?" + u.query
    status, _, body, headers = org.request("GET", target, key="")
    assert (status, body) == (200, b"the report")
    assert "report.txt" in headers["content-disposition"]
    # Another key or organization under the same signature, or writing: refused.
    assert org.request("GET", target.replace("report.txt", "other.txt"), key="")[0] == 401
    assert org.request("PUT", target, key="", raw=b"x")[0] in (404, 405)
    assert org.request("GET", target.replace("signature=", "signature=0"), key="")[0] == 401
    # After its 3 s the same link is refused, saying it expired.
    assert until(lambda: org.request("GET", target, key="")[0] == 403, timeout=30)
    status, err, _, _ = org.request("GET", target, key="")
    assert status == 403 and "expired" in err["error"]["message"]
    assert org.api("POST", "/v1/objects/url", {"key": "share/none"})[0] == 404
    assert org.api("POST", "/v1/objects/url", {"key": "share/report.txt", "ttlSeconds": 0})[0] == 400


def test_cli_object_commands(org, tmp_path):
    f = tmp_path / "cli.txt"
    f.write_text("from the cli\n")
    p = org.cli("object", "put", str(f), "cli/one.txt", "--content-type", "text/plain")
    assert p.returncode == 0, p.stderr
    p = org.cli("object", "ls", "cli/")
    assert p.returncode == 0 and "cli/one.txt" in p.stdout
    p = org.cli("object", "get", "cli/one.txt", str(tmp_path / "got.txt"))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "got.txt").read_text() == "from the cli\n"
    p = org.cli("object", "url", "cli/one.txt", "--ttl", "60")
    assert p.returncode == 0 and "/v1/objects/download?" in p.stdout
    p = org.cli("object", "rm", "cli/one.txt")
    assert p.returncode == 0, p.stderr
    p = org.cli("object", "get", "cli/one.txt", str(tmp_path / "gone.txt"))
    assert p.returncode != 0 and "not found" in p.stderr
    p = org.cli("object", "put", str(f), "../escape")
    assert p.returncode != 0 and "key" in p.stderr


def test_cli_storage_tokens_work_with_awscli_as_printed(daemon, org):
    """`adapt object token create` prints the variables awscli reads; a new user pastes them."""
    p = org.cli("object", "token", "create", "--name", "from-cli", "--ttl", "600")
    assert p.returncode == 0, p.stderr
    printed = dict(line[len("export "):].split("=", 1) for line in p.stdout.splitlines()
                   if line.startswith("export "))
    assert set(printed) == {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL"}
    env = aws_env({"accessKeyId": "", "secretAccessKey": ""})
    env.update(printed)
    assert put(org, "tok/cli.txt", b"listed through awscli")[0] == 200

    def aws_cli():
        # Debian 12's awscli (2.9) predates AWS_ENDPOINT_URL: the flag, as the CLI's hint says.
        return subprocess.run([AWS, "--endpoint-url", printed["AWS_ENDPOINT_URL"], "s3", "ls",
                               "s3://objects/tok/"], capture_output=True, text=True, env=env,
                              timeout=120)

    listed = aws_cli()
    assert listed.returncode == 0 and "cli.txt" in listed.stdout, listed.stderr
    assert 'aws --endpoint-url "$AWS_ENDPOINT_URL"' in p.stdout
    token_id = printed["AWS_ACCESS_KEY_ID"]
    p = org.cli("object", "token", "ls")
    assert p.returncode == 0 and token_id in p.stdout and "from-cli" in p.stdout, p.stderr
    # Another organization can neither see nor revoke it.
    other = daemon.new_org()
    assert token_id not in other.cli("object", "token", "ls").stdout
    assert other.cli("object", "token", "rm", token_id).returncode != 0
    assert aws_cli().returncode == 0
    p = org.cli("object", "token", "rm", token_id)
    assert p.returncode == 0 and "revoked" in p.stdout, p.stderr
    refused = aws_cli()
    assert refused.returncode != 0
    p = org.cli("object", "token", "create", "--ttl", "0")
    assert p.returncode != 0 and "ttlSeconds" in p.stderr


SANDBOX_PUT = r"""
import os, urllib.request
ep, tok = os.environ["SANDBOX_STORAGE_ENDPOINT"], os.environ["SANDBOX_STORAGE_TOKEN"]
req = urllib.request.Request(ep + "/objects/from-sandbox/hello.txt", data=b"hi from inside",
                             method="PUT", headers={"Authorization": "Bearer " + tok})
print(urllib.request.urlopen(req, timeout=20).status)
with urllib.request.urlopen(urllib.request.Request(ep + "/objects/from-sandbox/hello.txt",
        headers={"Authorization": "Bearer " + tok}), timeout=20) as r:
    print(r.read().decode())
"""


def test_attached_sandbox_reaches_the_gateway_with_its_token(org, daemon):
    sbx = org.create({})
    org.wait_for_status(sbx["id"], "running", 90)
    other = daemon.new_org()
    assert other.api("POST", "/v1/sandboxes/%s/object-storage" % sbx["id"], {})[0] == 404
    assert org.api("POST", "/v1/sandboxes/%s/object-storage" % sbx["id"], {"bogus": 1})[0] == 400
    status, att = org.api("POST", "/v1/sandboxes/%s/object-storage" % sbx["id"], {"ttlSeconds": 600})
    assert status == 200, att
    assert att["endpoint"].startswith("http://10.") and att["restarted"] is True
    # The restart (stop without a checkpoint, then start) gives the sandbox's first process
    # the new environment too.
    org.wait_for_status(sbx["id"], "running", 90)
    status, init = org.api("POST", "/v1/sandboxes/%s/commands" % sbx["id"],
                           {"command": "tr '\\0' '\\n' < /proc/1/environ", "timeoutSeconds": 30})
    # (values are redacted from output, as every sandbox env value is)
    assert status == 200 and "SANDBOX_STORAGE_ENDPOINT=[REDACTED]" in init["stdout"], init
    assert "SANDBOX_STORAGE_TOKEN=[REDACTED]" in init["stdout"], init
    status, cmd = org.api("POST", "/v1/sandboxes/%s/commands" % sbx["id"],
                          {"argv": ["python3", "-c", SANDBOX_PUT], "timeoutSeconds": 60})
    assert status == 200 and cmd["exitCode"] == 0, (cmd["stdout"], cmd["stderr"])
    assert cmd["stdout"].split("\n")[:2] == ["200", "hi from inside"], cmd
    assert get(org, "from-sandbox/hello.txt")[2] == b"hi from inside"
    # Attaching again revokes the sandbox's previous token.
    status, tokens = org.api("GET", "/v1/storage-tokens")
    first = [t for t in tokens["items"] if t.get("sandboxId") == sbx["id"]]
    assert len(first) == 1 and not first[0]["revoked"]
    assert org.api("POST", "/v1/sandboxes/%s/object-storage" % sbx["id"], {})[0] == 200
    status, tokens = org.api("GET", "/v1/storage-tokens")
    mine = {t["id"]: t["revoked"] for t in tokens["items"] if t.get("sandboxId") == sbx["id"]}
    assert len(mine) == 2 and mine[first[0]["id"]] is True


def ranged(tok, key, value):
    """A gateway GET of `key` with `Range: value`: (status, body, Content-Range)."""
    conn = http.client.HTTPConnection("127.0.0.1", tok["port"], timeout=60)
    conn.request("GET", "/objects/" + key,
                 headers={"Authorization": "Bearer " + tok["token"], "Range": value})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, data, r.getheader("Content-Range")


def test_gateway_byte_ranges(org):
    tok = storage_token(org, name="ranges")
    assert gateway(tok, "PUT", "/objects/r.txt", body=b"0123456789")[0] == 200
    assert gateway(tok, "PUT", "/objects/empty.txt", body=b"")[0] == 200
    assert ranged(tok, "r.txt", "bytes=2-4") == (206, b"234", "bytes 2-4/10")
    assert ranged(tok, "r.txt", "bytes=7-") == (206, b"789", "bytes 7-9/10")
    assert ranged(tok, "r.txt", "bytes=8-100") == (206, b"89", "bytes 8-9/10")
    assert ranged(tok, "r.txt", "bytes=-3") == (206, b"789", "bytes 7-9/10")
    assert ranged(tok, "r.txt", "bytes=-30") == (206, b"0123456789", "bytes 0-9/10")
    # No byte of the object is in these: 416, saying the object's size.
    for value in ("bytes=10-", "bytes=-0"):
        status, _, content_range = ranged(tok, "r.txt", value)
        assert (status, content_range) == (416, "bytes */10"), value
    for value in ("bytes=0-", "bytes=-1"):
        status, _, content_range = ranged(tok, "empty.txt", value)
        assert (status, content_range) == (416, "bytes */0"), value
    # What does not parse is ignored, as RFC 9110 says: the whole object. Several ranges too.
    for value in ("bytes=--3", "bytes=3-2", "bytes=1x-2", "bytes= 1-2", "bytes=1-2junk",
                  "bytes=18446744073709551616-", "items=0-1", "bytes=0-1,3-4", "bytes=-"):
        assert ranged(tok, "r.txt", value) == (200, b"0123456789", None), value
