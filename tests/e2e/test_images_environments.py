"""/v1/environments: seed 000's aliases and the image sources; an alias as `image`."""

import os

import pytest

import harness
from conftest import close_daemon


def test_environments_list_the_seed_aliases(org):
    status, body = org.api("GET", "/v1/environments")
    assert status == 200, body
    envs = {e["alias"]: e for e in body["environments"]}
    assert list(envs) == ["python", "node", "gcc", "rust", "blender"]
    assert envs["python"]["available"] is True and envs["python"]["reason"] is None
    for alias in ("node", "gcc", "rust", "blender"):
        if not envs[alias]["available"]:
            assert alias in envs[alias]["reason"], envs[alias]
    assert body["imageSources"] and isinstance(body["developerPublicImages"], bool)


def test_python_alias_runs_python(org):
    end = org.run(["python3", "-c", "print(6*7)"], image="python")
    assert end["status"] == "completed", end
    assert end["startup"]["stdout"] == "42\n"
    assert end["image"] == "debian:12"


def test_unavailable_alias_is_a_clear_422(tmp_path):
    # An adaptd whose images directory holds the default image only: every other alias is
    # unavailable there, whatever this host has built.
    images = tmp_path / "images"
    images.mkdir()
    (images / "debian_12").symlink_to(os.path.join(harness.IMAGES_DIR, "debian_12"))
    d = harness.Daemon(images_dir=str(images))
    d.start()
    try:
        org = d.new_org()
        status, body = org.api("GET", "/v1/environments")
        assert status == 200, body
        envs = {e["alias"]: e for e in body["environments"]}
        assert envs["python"]["available"] is True
        for alias in ("node", "gcc", "rust", "blender"):
            assert envs[alias]["available"] is False, envs[alias]
            assert "adapt-env/%s:debian12" % alias in envs[alias]["reason"], envs[alias]
            assert "scripts/build-image.sh IMAGES_DIR " + alias in envs[alias]["reason"]
        status, resp = org.api("POST", "/v1/sandboxes", {"image": "blender"})
        assert status == 422, resp
        assert resp["error"]["code"] == "unsupported"
        assert "blender" in resp["error"]["message"]
        status, page = org.api("GET", "/v1/sandboxes")
        assert status == 200 and page["items"] == [], page  # nothing was made
    finally:
        close_daemon(d)


def env_available(org, alias):
    status, body = org.api("GET", "/v1/environments")
    assert status == 200, body
    env = {e["alias"]: e for e in body["environments"]}[alias]
    if not env["available"]:
        # scripts/test.sh and setup.sh build all four; a developer's own tree may lack some.
        pytest.skip("environment image not built here: " + env["reason"])
    return env


def run_in(org, alias, script, **fields):
    env_available(org, alias)
    fields.setdefault("memoryMiB", 2048)
    end = org.run(["/bin/sh", "-c", script], timeout=600, image=alias, **fields)
    assert end["status"] == "completed", end
    assert end["image"] == "adapt-env/%s:debian12" % alias, end
    return end["startup"]


def test_node_alias_runs_node(org):
    out = run_in(org, "node", "node -e 'console.log([1,2,3].map(x => x * 7).join(\",\"))'")
    assert out["stdout"] == "7,14,21\n", out


def test_gcc_alias_compiles_and_runs_c_and_cpp(org):
    script = """cd /tmp
cat > a.c <<'E'
#include <stdio.h>
int main(void) { printf("c %d\\n", 6 * 7); return 0; }
E
cat > b.cc <<'E'
#include <iostream>
int main() { std::cout << "cpp " << 6 * 7 << std::endl; }
E
gcc -O2 -o a a.c && ./a && g++ -O2 -o b b.cc && ./b
"""
    out = run_in(org, "gcc", script)
    assert out["stdout"] == "c 42\ncpp 42\n", out


def test_rust_alias_compiles_and_runs_rust(org):
    script = """cd /tmp
cat > m.rs <<'E'
fn main() { println!("rust {}", 6 * 7); }
E
rustc -O -o m m.rs && ./m && cargo --version | cut -d' ' -f1
"""
    out = run_in(org, "rust", script)
    assert out["stdout"] == "rust 42\ncargo\n", out


def test_blender_alias_runs_blender_headless(org):
    out = run_in(org, "blender", "blender --background --factory-startup --version | head -n 1")
    assert out["stdout"].startswith("Blender "), out
