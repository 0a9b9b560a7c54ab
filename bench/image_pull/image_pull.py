#!/usr/bin/env python3
"""Image pull + unpack: adapt's /v1/images against `skopeo copy` + `umoci unpack`, in one run.

Starts Debian's docker-registry on loopback and pushes one image to it: the root filesystem of
build/images/debian_12 as --layers gzip layers (split by top-level directory). Then, --runs
times each, from a cold store:
  adapt  POST /v1/images {"reference"} and GET /v1/operations/{id} every 20 ms until Completed
         (download, sha256 check and unpack of every layer into adapt's layer store); then the
         image is deleted and the store emptied by its garbage collection (not timed).
  peer   skopeo copy docker://REF oci:DIR:TAG, then umoci unpack --image DIR:TAG BUNDLE (as root,
         ownership kept); both removed afterwards (not timed).
And sandbox create latency (POST -> a command-mode /bin/true completed) of that image with its
layers cached against a first create that pulls it.
Prints the medians and the ratios as figures (bench/figures.py: pull + unpack against skopeo+umoci,
create with cached layers against a first pull); writes them, beside every sample, to
bench/results/image_pull.json.
Needs root, a built tree, docker-registry, skopeo and umoci.
"""

import argparse
import gzip
import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))
import harness  # noqa: E402
import registry as reg  # noqa: E402
sys.path.insert(0, os.path.join(REPO, "bench"))
import figures  # noqa: E402


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def rootfs_layers(rootfs, n):
    """The rootfs as n gzip layers (top-level entries dealt round-robin by size), without device
    nodes: an image built by docker or buildah has none (/dev is the runtime's), and adaptd
    refuses a layer that holds one."""
    tops = sorted(os.listdir(rootfs))
    groups = [[] for _ in range(n)]
    for i, name in enumerate(tops):
        groups[i % n].append(name)
    layers = []
    for names in groups:
        raw = io.BytesIO()
        with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as t:
            for name in names:
                t.add(os.path.join(rootfs, name), arcname=name,
                      filter=lambda m: None if m.ischr() or m.isblk() else m)
        tar = raw.getvalue()
        layers.append((gzip.compress(tar, compresslevel=6, mtime=0), tar,
                       "application/vnd.oci.image.layer.v1.tar+gzip"))
    return layers


def timed(fn):
    start = time.monotonic()
    fn()
    return time.monotonic() - start


def adapt_pull(client, ref):
    status, img = client.api("POST", "/v1/images", {"reference": ref})
    assert status == 202, img
    while True:
        status, op = client.api("GET", "/v1/operations/" + img["id"])
        assert status == 200, op
        if op["phase"] == "Completed":
            return img["id"]
        assert op["phase"] != "Failed", op
        time.sleep(0.02)


def empty_store(daemon, client, image_id):
    assert client.api("DELETE", "/v1/images/" + image_id)[0] == 204
    layers = os.path.join(daemon.state_dir, "image-store", "layers")
    deadline = time.monotonic() + 120
    while os.listdir(layers):
        assert time.monotonic() < deadline, "garbage collection did not empty the store"
        time.sleep(0.05)


def peer_pull(ref, workdir):
    oci, bundle = os.path.join(workdir, "oci"), os.path.join(workdir, "bundle")
    subprocess.run([reg.SKOPEO, "copy", "--quiet", "--insecure-policy", "--src-tls-verify=false",
                    "docker://" + ref, "oci:%s:bench" % oci], check=True)
    subprocess.run(["umoci", "unpack", "--image", "%s:bench" % oci, bundle], check=True,
                   stdout=subprocess.DEVNULL)
    return oci, bundle


def create_run(client, ref):
    start = time.monotonic()
    sbx = client.create({"image": ref, "startup": {"mode": "command", "argv": ["/bin/true"]}})
    end = client.wait_end(sbx["id"])
    took = time.monotonic() - start
    assert end["status"] == "completed", end
    client.delete(sbx["id"])
    return took


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--rootfs", default=os.path.join(harness.IMAGES_DIR, "debian_12", "rootfs"))
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "results", "image_pull.json"))
    args, _ = ap.parse_known_args()  # bench/run.sh passes every benchmark the same flags
    for tool in (reg.REGISTRY, reg.SKOPEO, shutil.which("umoci") or "umoci"):
        if not shutil.which(tool):
            raise SystemExit("image_pull needs %s (scripts/install-deps.sh)" % tool)

    workdir = tempfile.mkdtemp(prefix="adapt-bench-pull-", dir="/tmp")
    registry = daemon = None
    try:
        log("building %d layers from %s" % (args.layers, args.rootfs))
        layout = reg.Layout(rootfs_layers(args.rootfs, args.layers),
                            {"config": {"Cmd": ["/bin/sh"]}})
        size = sum(os.path.getsize(os.path.join(layout.path, "blobs/sha256", d.split(":")[1]))
                   for d in layout.layer_digests)
        registry = reg.Registry()
        ref = registry.push(layout, "bench/rootfs:1")
        layout.close()
        daemon = harness.Daemon()
        daemon.start()
        client = daemon.admin

        adapt_s, peer_s = [], []
        for i in range(args.runs):
            t0 = time.monotonic()
            image_id = adapt_pull(client, ref)
            adapt_s.append(time.monotonic() - t0)
            empty_store(daemon, client, image_id)
            run_dir = tempfile.mkdtemp(dir=workdir)
            peer_s.append(timed(lambda: peer_pull(ref, run_dir)))
            subprocess.run(["rm", "-rf", "--one-file-system", run_dir], check=True)
            log("run %d: adapt %.2f s, skopeo+umoci %.2f s" % (i + 1, adapt_s[-1], peer_s[-1]))

        cold = create_run(client, ref)  # the store is empty: this create pulls
        warm = [create_run(client, ref) for _ in range(args.runs)]

        a, p = statistics.median(adapt_s), statistics.median(peer_s)
        w = statistics.median(warm)
        print("image: %d layers, %.1f MiB compressed, from a registry on loopback" %
              (args.layers, size / (1 << 20)))
        rows = [
            figures.figure("image pull + unpack (median of %d)" % args.runs, "s", round(a, 2),
                           "skopeo copy + umoci unpack", round(p, 2), "lower"),
            figures.figure("create -> /bin/true done, layers cached (median of %d)" % args.runs, "s",
                           round(w, 2), "the same create, first pull", round(cold, 2), "lower"),
        ]
        figures.print_table(rows)
        figures.write_report(args.out, "image_pull", rows, {
            "runs": args.runs, "layers": args.layers, "compressed_bytes": size, "adapt_s": adapt_s,
            "peer_s": peer_s, "create_cold_s": cold, "create_warm_s": warm})
    finally:
        if daemon:
            daemon.delete_everything()
            daemon.close()
        if registry:
            registry.close()
        subprocess.run(["rm", "-rf", "--one-file-system", workdir])


if __name__ == "__main__":
    main()
