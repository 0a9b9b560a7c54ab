"""A real OCI registry for the image tests: Debian's docker-registry on loopback, and OCI
image layouts built here and pushed into it with skopeo."""

import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
import urllib.request

import harness

REGISTRY = shutil.which("docker-registry") or "/usr/bin/docker-registry"
SKOPEO = shutil.which("skopeo") or "/usr/bin/skopeo"
BUSYBOX = "/bin/busybox" if os.path.exists("/bin/busybox") else "/usr/bin/busybox"


def private_registry():
    """A Registry behind htpasswd basic auth with one user, alice; its password is .password
    (the htpasswd file lives in the registry's own directory, removed by close())."""
    import crypt
    import uuid

    password = "s3cret-" + uuid.uuid4().hex
    htpasswd = tempfile.mktemp(prefix="adapt-htpasswd-", dir="/tmp")
    with open(htpasswd, "w") as f:
        f.write("alice:%s\n" % crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH)))
    r = Registry("auth:\n  htpasswd:\n    realm: basic-realm\n    path: %s\n" % htpasswd)
    r.password = password
    r.cleanup_paths = [htpasswd]
    return r


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Registry:
    def __init__(self, extra_config=""):
        self.base = tempfile.mkdtemp(prefix="adapt-registry-", dir="/tmp")
        self.port = harness.free_port()
        self.host = "127.0.0.1:%d" % self.port
        self.log_path = os.path.join(self.base, "registry.log")
        with open(os.path.join(self.base, "config.yml"), "w") as f:
            f.write(
                "version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: false\n"
                "storage:\n  filesystem:\n    rootdirectory: %s/data\n  delete:\n    enabled: true\n"
                "http:\n  addr: %s\n%s" % (self.base, self.host, extra_config)
            )
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([REGISTRY, "serve", os.path.join(self.base, "config.yml")],
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen("http://%s/v2/" % self.host, timeout=2)
                break
            except urllib.error.HTTPError:
                break  # 401: up, with auth
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("docker-registry did not start:\n" + self.log())
                time.sleep(0.1)

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def blob_gets(self, digest):
        """How many GETs of the blob the registry answered with 200."""
        return sum(1 for line in self.log().splitlines()
                   if '"GET /v2/' in line and "/blobs/" + digest in line and '" 200 ' in line)

    def blob_path(self, digest):
        hexd = digest.split(":")[1]
        return os.path.join(self.base, "data/docker/registry/v2/blobs/sha256", hexd[:2], hexd, "data")

    def push(self, layout, name, fmt=None, all_platforms=False, creds=None):
        cmd = [SKOPEO, "copy", "--insecure-policy", "--dest-tls-verify=false"]
        if fmt:
            cmd += ["--format", fmt]
        if all_platforms:
            cmd += ["--all"]
        if creds:
            cmd += ["--dest-creds", creds]
        cmd += ["oci:%s:latest" % layout.path, "docker://%s/%s" % (self.host, name)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, "skopeo copy failed: %s %s" % (r.stdout, r.stderr)
        return "%s/%s" % (self.host, name)

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.base, ignore_errors=True)
        for path in getattr(self, "cleanup_paths", []):
            if os.path.exists(path):
                os.unlink(path)


def layer(entries, compress=True, zstd=False):
    """entries: (path, kind, data, uid) with kind 'f' file, 'd' dir, 'l' symlink."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as t:
        for path, kind, data, uid in entries:
            info = tarfile.TarInfo(path)
            info.uid = info.gid = uid
            info.mtime = 1700000000
            if kind == "d":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                t.addfile(info)
            elif kind == "l":
                info.type, info.linkname = tarfile.SYMTYPE, data
                t.addfile(info)
            else:
                data = data if isinstance(data, bytes) else data.encode()
                info.size, info.mode = len(data), 0o755 if path.endswith("busybox") else 0o644
                t.addfile(info, io.BytesIO(data))
    tar = raw.getvalue()
    if zstd:
        out = subprocess.run(["zstd", "-q", "-c"], input=tar, capture_output=True, check=True).stdout
        return out, tar, "application/vnd.oci.image.layer.v1.tar+zstd"
    if not compress:
        return tar, tar, "application/vnd.oci.image.layer.v1.tar"
    return gzip.compress(tar, mtime=0), tar, "application/vnd.oci.image.layer.v1.tar+gzip"


def busybox_base(extra=()):
    with open(BUSYBOX, "rb") as f:
        bb = f.read()
    entries = [("bin", "d", None, 0), ("bin/busybox", "f", bb, 0)]
    for applet in ("sh", "ls", "cat", "id", "stat", "test", "echo", "pwd", "sleep", "true"):
        entries.append(("bin/" + applet, "l", "busybox", 0))
    entries += [
        ("etc", "d", None, 0),
        ("etc/passwd", "f", "root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000:app:/home/app:/bin/sh\n", 0),
        ("etc/group", "f", "root:x:0:\napp:x:1000:\n", 0),
        ("etc/motd", "f", "base layer\n", 0),
        ("var", "d", None, 0), ("var/cache", "d", None, 0),
        ("var/cache/a", "f", "a\n", 0),
        ("owned", "d", None, 0), ("owned/file", "f", "x\n", 1234),
    ]
    return entries + list(extra)


class Layout:
    """An OCI image layout with one image (or an index of several platforms)."""

    def __init__(self, layers, config, platforms=None):
        self.path = tempfile.mkdtemp(prefix="adapt-layout-", dir="/tmp")
        os.makedirs(os.path.join(self.path, "blobs/sha256"))
        with open(os.path.join(self.path, "oci-layout"), "w") as f:
            json.dump({"imageLayoutVersion": "1.0.0"}, f)
        self.layer_digests = []
        # The layers' diff ids (sha256 of the uncompressed tars): adaptd's layer store names
        # layers by these.
        self.diff_ids = [sha256(l[1]) for l in layers]
        platforms = platforms or [("linux", "amd64")]
        descs = []
        for os_name, arch in platforms:
            cfg = dict(config)
            cfg.update({"os": os_name, "architecture": arch,
                        "rootfs": {"type": "layers", "diff_ids": [sha256(l[1]) for l in layers]}})
            layer_descs = []
            for blob, _, media in layers:
                layer_descs.append(self.blob(blob, media))
                self.layer_digests.append(sha256(blob))
            manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                        "config": self.blob(json.dumps(cfg).encode(), "application/vnd.oci.image.config.v1+json"),
                        "layers": layer_descs}
            d = self.blob(json.dumps(manifest).encode(), "application/vnd.oci.image.manifest.v1+json")
            d["platform"] = {"os": os_name, "architecture": arch}
            descs.append(d)
        if len(descs) == 1 and platforms == [("linux", "amd64")]:
            top = descs[0]
            top.pop("platform")
        else:
            index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": descs}
            top = self.blob(json.dumps(index).encode(), "application/vnd.oci.image.index.v1+json")
        top["annotations"] = {"org.opencontainers.image.ref.name": "latest"}
        with open(os.path.join(self.path, "index.json"), "w") as f:
            json.dump({"schemaVersion": 2, "manifests": [top]}, f)

    def blob(self, data, media):
        d = sha256(data)
        with open(os.path.join(self.path, "blobs/sha256", d.split(":")[1]), "wb") as f:
            f.write(data)
        return {"mediaType": media, "digest": d, "size": len(data)}

    def close(self):
        shutil.rmtree(self.path, ignore_errors=True)
