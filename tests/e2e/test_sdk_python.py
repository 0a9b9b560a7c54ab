"""The Python SDK (sdk/python, issue 23) against a real adaptd: installed with pip as a user
would, then every test drives adaptd through it only."""

import hashlib
import os
import subprocess
import sys
import time
import tracemalloc
import urllib.request

import pytest

from harness import unique
from sdk_support import README_OUTPUT, DroppingProxy, pip_install_python_sdk, readme_example

MIB = 1 << 20


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return pip_install_python_sdk(tmp_path_factory.mktemp("sdk-python"))


@pytest.fixture(scope="module")
def adapt(installed):
    path = installed
    sys.path.insert(0, path)
    # The source tree's modules (test_sdk_models imports them) come back afterwards: typing's
    # hints resolve through sys.modules, so a leftover installed copy would confuse them.
    before = {m: sys.modules.pop(m) for m in list(sys.modules) if m == "adapt" or m.startswith("adapt.")}
    import adapt as module
    assert module.__file__.startswith(path), module.__file__
    yield module
    sys.path.remove(path)
    for name in [m for m in sys.modules if m == "adapt" or m.startswith("adapt.")]:
        del sys.modules[name]
    sys.modules.update(before)


@pytest.fixture
def client(adapt, daemon, org):
    return adapt.Client(url=daemon.url, api_key=org.key)


def test_create_from_the_environment_runs_commands_and_round_trips_files(adapt, daemon, org, monkeypatch):
    monkeypatch.setenv("ADAPT_URL", daemon.url)
    monkeypatch.setenv("ADAPT_API_KEY", org.key)
    with adapt.Sandbox.create(name="sdk-py", cpu=1, memory_mib=512, labels={"team": "sdk"}) as sb:
        assert sb.status == "running"
        assert sb.info.memory_mib == 512 and sb.info.labels == {"name": "sdk-py", "team": "sdk"}
        assert isinstance(sb.info.network, adapt.Network)
        daemon.created.append((org, sb.id))

        r = sb.commands.run(["echo", "hello"])
        assert (r.exit_code, r.stdout, r.status) == (0, "hello\n", "exited")
        r = sb.commands.run("echo out; echo err >&2; exit 3")
        assert (r.exit_code, r.stdout, r.stderr) == (3, "out\n", "err\n")
        with pytest.raises(adapt.CommandFailed, match="exited with 3"):
            sb.commands.run("exit 3", check=True)

        sb.files.mkdir("/tmp/sdk", parents=True)
        written = sb.files.write("/tmp/sdk/note.txt", "from python", mode="0600")
        assert (written.path, written.size) == ("/tmp/sdk/note.txt", 11)
        assert sb.files.read_text("/tmp/sdk/note.txt") == "from python"
        binary = bytes(range(256)) * 3
        sb.files.write("/tmp/sdk/bin", binary)
        assert sb.files.read("/tmp/sdk/bin") == binary
        entries = {e.name: e for e in sb.files.list("/tmp/sdk")}
        assert entries["note.txt"].type == "file" and entries["note.txt"].mode == "0600"
        assert entries["bin"].size == len(binary)
        assert sb.files.stat("/tmp/sdk/note.txt").size == 11
        sb.files.remove("/tmp/sdk", recursive=True)
        assert not sb.files.exists("/tmp/sdk")

        r = sb.run_python("import sys; print(sys.version_info[0]); sys.exit(4)")
        assert (r.exit_code, r.stdout) == (4, "3\n"), r
        sid = sb.id
    # Leaving the block deleted it.
    status, body = org.api("GET", "/v1/sandboxes/" + sid)
    assert status == 200 and body["status"] in ("deleting", "deleted"), body


def test_output_streams_while_the_command_runs_and_a_long_one_is_waited(client, adapt):
    sb = client.sandboxes.create()
    chunks = []
    r = sb.commands.run("echo first; sleep 3; echo second >&2; echo third",
                        on_stdout=lambda t: chunks.append(("out", t, time.monotonic())),
                        on_stderr=lambda t: chunks.append(("err", t, time.monotonic())))
    ended = time.monotonic()
    assert r.exit_code == 0 and r.stdout == "first\nthird\n" and r.stderr == "second\n"
    assert "".join(t for k, t, _ in chunks if k == "out") == "first\nthird\n"
    assert "".join(t for k, t, _ in chunks if k == "err") == "second\n"
    assert ended - chunks[0][2] >= 2, "the first line arrived only when the command ended"

    handle = sb.commands.start(["sh", "-c", "sleep 2; echo done"])
    assert handle.result.status == "running" and handle.id.startswith("cmd_")
    result = handle.wait()
    assert (result.status, result.exit_code, result.stdout) == ("exited", 0, "done\n")

    sleeper = sb.commands.start(["sleep", "600"])
    killed = sleeper.kill()
    assert killed.status == "killed" and killed.done
    assert [c.id for c in sb.commands.list(page_size=1)][:3] == [sleeper.id, handle.id, r.id]
    # A command longer than the client's HTTP timeout: adaptd holds the POST up to waitSeconds.
    short = adapt.Sandbox(adapt.Client(url=client.url, api_key=client.transport.api_key, timeout=3), sb.info)
    assert short.commands.run("sleep 6; echo slow").stdout == "slow\n"
    sb.delete()
    assert sb.refresh().status == "deleted"


def test_errors_are_typed_and_carry_the_field(client, adapt, daemon):
    with pytest.raises(adapt.InvalidArgument) as e:
        client.sandboxes.create(memory_mib=1)
    assert e.value.field == "memoryMiB" and e.value.status == 400 and e.value.code == "invalid_argument"
    assert "memoryMiB" in str(e.value)
    with pytest.raises(adapt.InvalidArgument) as e:
        client.sandboxes.create(labels={"platform.x": "y"})
    assert e.value.field == "labels.platform.x"
    assert list(client.sandboxes.list()) == [], "bad input created something"

    other = adapt.Client(url=daemon.url, api_key=daemon.new_org().key)
    theirs = other.sandboxes.create(wait=False)
    daemon.created.append((daemon.admin, theirs.id))
    with pytest.raises(adapt.NotFound) as e:
        client.sandboxes.get(theirs.id)
    assert e.value.status == 404 and e.value.code == "not_found"
    handle = adapt.Sandbox(client, theirs.info)  # a handle forged around another org's id
    for call in (lambda: handle.commands.run(["true"]), lambda: handle.files.read("/etc/hostname"),
                 lambda: handle.delete()):
        with pytest.raises(adapt.NotFound):
            call()
    assert other.sandboxes.get(theirs.id).status != "deleted"
    other.sandboxes.delete(theirs.id)

    with pytest.raises(adapt.Unauthenticated):
        list(adapt.Client(url=daemon.url, api_key="adapt_wrong").sandboxes.list())
    with pytest.raises(adapt.Unavailable):
        adapt.Client(url="http://127.0.0.1:1", api_key="k", max_retries=0).sandboxes.get("sbx_x")


def test_list_follows_next_cursor_across_pages(client):
    created = [client.sandboxes.create(wait=False, name=unique("page")) for _ in range(3)]
    listed = [s.id for s in client.sandboxes.list(page_size=2)]
    assert listed == [s.id for s in reversed(created)]
    assert [s.id for s in client.sandboxes.list(query=created[1].info.labels["name"])] == [created[1].id]
    for s in created:
        s.delete(wait=False)


def test_a_create_whose_answer_was_cut_is_retried_with_its_key_and_makes_one_sandbox(adapt, daemon, org):
    proxy = DroppingProxy(daemon.port, lambda m, p: m == "POST" and p == "/v1/sandboxes")
    try:
        client = adapt.Client(url=proxy.url, api_key=org.key)
        sb = client.sandboxes.create(wait=False, name="retried")
        daemon.created.append((org, sb.id))
    finally:
        proxy.close()
    posts = [h for m, p, h in proxy.seen if m == "POST"]
    assert proxy.dropped == 1 and len(posts) == 2
    assert posts[0]["idempotency-key"] == posts[1]["idempotency-key"]
    assert [s["id"] for s in org.list_all()] == [sb.id]


def test_a_hundred_mib_streams_both_ways_with_flat_memory(client, tmp_path):
    sb = client.sandboxes.create(disk_mib=1024)
    src, dst = tmp_path / "up.bin", tmp_path / "down.bin"
    digest = hashlib.sha256()
    with open(src, "wb") as f:
        block = os.urandom(MIB)
        for i in range(100):
            chunk = block[i:] + block[:i]
            digest.update(chunk)
            f.write(chunk)
    tracemalloc.start()
    try:
        written = sb.files.upload(src, "/tmp/big.bin")

        def chunks():  # a generator body goes out chunked, with no length known
            with open(src, "rb") as f:
                while True:
                    b = f.read(MIB)
                    if not b:
                        return
                    yield b
        sb.files.write("/tmp/big2.bin", chunks())
        got = sb.files.download("/tmp/big.bin", dst)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert written.size == 100 * MIB and got == 100 * MIB
    assert peak < 16 * MIB, "the SDK held %d MiB of Python objects moving 100 MiB" % (peak // MIB)
    h = hashlib.sha256()
    with open(dst, "rb") as f:
        for b in iter(lambda: f.read(MIB), b""):
            h.update(b)
    assert h.hexdigest() == digest.hexdigest()
    remote = sb.commands.run("sha256sum /tmp/big.bin /tmp/big2.bin | cut -d' ' -f1 | uniq")
    assert remote.stdout.split() == [digest.hexdigest()]
    sb.delete()


def test_archives_round_trip(client, tmp_path):
    import io
    import tarfile
    sb = client.sandboxes.create()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in (("a.txt", b"alpha"), ("d/b.txt", b"beta")):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tar.addfile(ti, io.BytesIO(data))
    buf.seek(0)
    sb.files.upload_archive(buf, "/tmp/tree")
    assert sb.files.read("/tmp/tree/d/b.txt") == b"beta"
    out = tmp_path / "tree.tar"
    assert sb.files.download_archive("/tmp/tree", out) > 0
    with tarfile.open(out) as tar:
        names = {m.name.lstrip("./") for m in tar.getmembers() if m.isfile()}
        assert names == {"a.txt", "d/b.txt"}
    # A name beside the download that exists already (a symlink a sandbox's files brought, at
    # the name the SDK once wrote to) is never followed: the download is a new file.
    victim = tmp_path / "victim"
    victim.write_bytes(b"mine")
    got = tmp_path / "got.txt"
    os.symlink(victim, str(got) + ".part")
    assert sb.files.download("/tmp/tree/a.txt", got) == 5
    assert victim.read_bytes() == b"mine" and got.read_bytes() == b"alpha"
    assert not got.is_symlink()
    mask = os.umask(0)
    os.umask(mask)
    assert got.stat().st_mode & 0o777 == 0o666 & ~mask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["got.txt", "got.txt.part", "tree.tar", "victim"]
    sb.delete()


def test_the_readme_example_runs_as_written(installed, daemon, org):
    env = dict(os.environ, ADAPT_URL=daemon.url, ADAPT_API_KEY=org.key, PYTHONPATH=installed)
    r = subprocess.run([sys.executable, "-c", readme_example("python")], capture_output=True,
                       text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == README_OUTPUT.format(lang="python")
    assert [s["status"] for s in org.list_all()] in ([], ["deleting"]), "the with block did not delete it"


@pytest.mark.parametrize("answer", [(503, {}), (429, {"Retry-After": "1"})], ids=["503", "429"])
def test_a_transient_refusal_is_retried(adapt, daemon, org, answer):
    proxy = DroppingProxy(daemon.port, lambda m, p: m == "GET", answer=answer)
    try:
        started = time.monotonic()
        assert list(adapt.Client(url=proxy.url, api_key=org.key).sandboxes.list()) == []
        took = time.monotonic() - started
    finally:
        proxy.close()
    assert proxy.dropped == 1 and len(proxy.seen) == 2
    if answer[0] == 429:
        assert took >= 1, "Retry-After was not waited"
    # max_retries=0: the refusal reaches the caller, typed.
    proxy = DroppingProxy(daemon.port, lambda m, p: m == "GET", answer=answer)
    try:
        with pytest.raises(adapt.Unavailable if answer[0] == 503 else adapt.RateLimited) as e:
            list(adapt.Client(url=proxy.url, api_key=org.key, max_retries=0).sandboxes.list())
    finally:
        proxy.close()
    assert e.value.status == answer[0] and e.value.message == "try again"


def test_secrets_objects_storage_and_endpoints(client, adapt):
    name = "SDK_" + unique("s").replace("-", "_").upper()
    assert client.secrets.set(name, "first-value").version == 1
    assert client.secrets.set(name, "second-value").version == 2
    assert client.secrets.get(name).version == 2
    assert name in [s.name for s in client.secrets.list()]
    client.secrets.delete(name)
    with pytest.raises(adapt.NotFound):
        client.secrets.get(name)

    obj = client.objects.put("sdk/a.txt", b"object bytes", content_type="text/plain")
    assert (obj.key, obj.size, obj.content_type) == ("sdk/a.txt", 12, "text/plain")
    assert obj.sha256 == hashlib.sha256(b"object bytes").hexdigest()
    assert client.objects.get("sdk/a.txt") == b"object bytes"
    assert client.objects.exists("sdk/a.txt") and not client.objects.exists("sdk/none.txt")
    assert client.health() is True
    assert [o.key for o in client.objects.list(prefix="sdk/")] == ["sdk/a.txt"]
    link = client.objects.link("sdk/a.txt", ttl_seconds=60)
    assert link.key == "sdk/a.txt" and link.size == 12
    url = link.url if "://" in link.url else client.url + link.url
    with urllib.request.urlopen(url, timeout=30) as r:  # no credentials: the link is the key
        assert r.read() == b"object bytes"
    token = client.objects.create_token(name="sdk", ttl_seconds=600)
    assert token.bucket == "objects" and token.access_key_id and token.secret_access_key
    assert [(t.id, t.revoked) for t in client.objects.list_tokens()] == [(token.id, False)]
    client.objects.revoke_token(token.id)
    assert [t.revoked for t in client.objects.list_tokens() if t.id == token.id] in ([True], [])
    client.objects.delete("sdk/a.txt")
    with pytest.raises(adapt.NotFound):
        client.objects.get("sdk/a.txt")

    vol = client.storage.create("sdk-notes", size_mib=64)
    assert (vol.name, vol.size_mib, vol.status, vol.default_) == ("sdk-notes", 64, "ready", False)
    assert client.storage.get("sdk-notes").id == vol.id
    assert {("default", True), ("sdk-notes", False)} <= {(v.name, v.default_) for v in client.storage.list()}
    client.storage.delete("sdk-notes")
    with pytest.raises(adapt.NotFound):
        client.storage.get("sdk-notes")

    sb = client.sandboxes.create()
    ep = sb.endpoints.create(8000)
    assert ep.port == 8000 and ep.sandbox_id == sb.id and ep.id.startswith("ep_")
    assert [e.id for e in sb.endpoints.list()] == [ep.id]
    sb.endpoints.delete(ep.id)
    att = sb.attach_object_storage(ttl_seconds=600)
    assert att.sandbox_id == sb.id and set(att.variables) >= {"SANDBOX_STORAGE_ENDPOINT", "SANDBOX_STORAGE_TOKEN"}
    assert att.restarted is True and sb.status == "running"  # waited for the restart
    # (every env value is redacted from output)
    env = sb.commands.run("echo SANDBOX_STORAGE_ENDPOINT=$SANDBOX_STORAGE_ENDPOINT").stdout
    assert env == "SANDBOX_STORAGE_ENDPOINT=[REDACTED]\n", env
    assert sb.endpoints.list() == []
    with pytest.raises(adapt.InvalidArgument) as e:
        sb.endpoints.create(0)
    assert e.value.field == "port"
    sb.delete()


def test_endpoints_by_port_artifacts_and_python_on_its_route(client, adapt):
    sb = client.sandboxes.create()
    a, b, c = sb.endpoints.create(8000), sb.endpoints.create(8000), sb.endpoints.create(9000)
    every = client.sandboxes.endpoints()  # the organization's, newest first
    assert [e.id for e in every] == [c.id, b.id, a.id]
    assert all(isinstance(e, adapt.Endpoint) and e.sandbox_id == sb.id for e in every)
    assert sorted(sb.endpoints.delete_by_port(8000)) == sorted([a.id, b.id])
    assert [e.id for e in sb.endpoints.list()] == [c.id]
    assert sb.endpoints.delete_by_port(8000) == []  # none left is no error
    with pytest.raises(adapt.InvalidArgument) as e:
        sb.endpoints.delete_by_port(0)
    assert e.value.field == "port"
    assert [x.id for x in client.sandboxes.endpoints()] == [c.id]

    sb.commands.run("mkdir -p /workspace/out && printf 'report\\n' > /workspace/out/report.txt"
                    " && printf x > /workspace/.env", check=True)
    art = sb.artifacts.save("out/report.txt", ttl_seconds=60)
    assert isinstance(art, adapt.Artifact) and (art.key, art.size) == ("artifacts/%s/report.txt" % sb.id, 7)
    assert art.sha256 == hashlib.sha256(b"report\n").hexdigest() and art.expires_at
    with urllib.request.urlopen(art.url, timeout=30) as r:  # no credentials: the link is the key
        assert r.read() == b"report\n"
    mine = sb.artifacts.save("/workspace/out/report.txt", key="sdk/mine.txt")
    assert mine.key == "sdk/mine.txt" and client.objects.get("sdk/mine.txt") == b"report\n"
    with pytest.raises(adapt.InvalidArgument) as e:
        sb.artifacts.save(".env")  # looks like a credential: refused, nothing stored
    assert e.value.field == "path"
    listed = sb.artifacts.list()
    assert (listed.sandbox_id, listed.prefix, listed.next_cursor) == (sb.id, "artifacts/%s/" % sb.id, None)
    assert [o.key for o in listed.items] == [art.key] and isinstance(listed.items[0], adapt.StoredObject)

    r = sb.run_python("import sys; print(6 * 7); sys.exit(3)")
    assert (r.status, r.exit_code, r.stdout) == ("exited", 3, "42\n"), r
    assert sb.commands.get(r.id).result.stdout == "42\n"
    chunks = []
    r = sb.run_python("print('a', flush=True)\nimport time\ntime.sleep(1)\nprint('b')",
                      on_stdout=chunks.append, timeout=30)
    assert (r.exit_code, r.stdout, "".join(chunks)) == (0, "a\nb\n", "a\nb\n"), r
    with pytest.raises(adapt.CommandFailed, match="python exited with 2"):
        sb.run_python("raise SystemExit(2)", check=True)
    assert sb.run_python("import os; print(os.getcwd())", cwd="/tmp").stdout == "/tmp\n"
    # No python3 on the sandbox's PATH: what an image without Python looks like to the run.
    nopy = client.sandboxes.create(env={"PATH": "/tmp/nopy"})
    with pytest.raises(adapt.Unsupported) as e:
        nopy.run_python("print(1)")
    assert e.value.status == 422 and "python3" in e.value.message and nopy.id in e.value.message
    streamed = nopy.run_python("print(1)", on_stderr=lambda t: None)  # answered before the end
    assert (streamed.exit_code, streamed.stderr) == (127, adapt.commands.PYTHON_MISSING + "\n"), streamed
    nopy.delete(wait=False)
    sb.delete()


def test_org_events_raise_events_reset_when_the_resume_point_is_not_kept(client, adapt):
    with pytest.raises(adapt.EventsReset) as e:
        next(client.sandboxes.events(last_event_id="999999999999", timeout=30))
    assert e.value.code == "events_reset" and "newer than any event" in e.value.message
    assert 0 <= int(e.value.last_event_id) < 999999999999


def test_events_stop_start_and_sites(client, adapt):
    sb = client.sandboxes.create(startup_class="instant")
    seen = []
    for ev in sb.events():
        seen.append(ev.status)
        if ev.status == "running":
            break
    assert seen[0] == "provisioning" and seen[-1] == "running" and ev.sandbox_id == sb.id and ev.id
    sb.files.write("/tmp/kept.txt", "x")
    assert sb.stop().status == "hibernated" and sb.info.hibernation.workspace == "discarded"
    with pytest.raises(adapt.Conflict):
        sb.stop()
    assert sb.start().status == "running"
    assert sb.commands.run(["echo", "back"]).stdout == "back\n"
    sb.delete()

    client.objects.put("web/index.html", b"<h1>sdk</h1>", content_type="text/html")
    site = client.sites.publish("web", name="sdk-site")
    assert site.name == "sdk-site" and site.url.endswith("/index.html") and site.urls
    assert [s.id for s in client.sites.list()] == [site.id]
    assert client.sites.get(site.id).release_id == site.release_id
    client.sites.delete(site.id)
    with pytest.raises(adapt.NotFound):
        client.sites.get(site.id)


def test_a_refresh_that_waits_and_the_gpu_types(client):
    sb = client.sandboxes.create(wait=False)
    assert sb.refresh(wait_seconds=60).status == "running"
    sb.delete()
    gpus = client.gpu_types()
    assert gpus["items"] == [] and "GPU" in gpus["explanation"]


def test_an_organization_makes_lists_and_revokes_its_own_keys(adapt, daemon, org):
    client = adapt.Client(url=daemon.url, api_key=org.key)
    made = client.keys.create(name="py-own", ttl_seconds=3600)
    assert made.key.startswith("adapt_") and made.org_id == org.org_id and made.name == "py-own"
    assert made.expires_at is not None
    listed = {k.id: k for k in client.keys.list()}
    assert made.id in listed and listed[made.id].expires_at == made.expires_at
    assert not hasattr(listed[made.id], "key")
    theirs = adapt.Client(url=daemon.url, api_key=made.key)
    assert list(theirs.sandboxes.list()) == []
    client.keys.revoke(made.id)
    with pytest.raises(adapt.Unauthenticated):
        list(theirs.sandboxes.list())
    with pytest.raises(adapt.NotFound):
        client.keys.revoke(made.id)


def test_organizations_and_keys_with_the_admin_key(adapt, daemon, org):
    admin = adapt.Client(url=daemon.url, api_key=daemon.admin.key)
    made = admin.orgs.create(unique("sdk-py"))
    assert made.id.startswith("org_") and made.admin is False
    assert made.id in [o.id for o in admin.orgs.list()]
    key = admin.orgs.create_key(made.id, name="ci")
    assert key.key.startswith("adapt_") and key.org_id == made.id and key.name == "ci"
    theirs = adapt.Client(url=daemon.url, api_key=key.key)
    assert list(theirs.sandboxes.list()) == []
    assert [k.id for k in admin.orgs.list_keys(made.id)] == [key.id]
    admin.orgs.delete_key(made.id, key.id)
    with pytest.raises(adapt.Unauthenticated):
        list(theirs.sandboxes.list())
    with pytest.raises(adapt.Conflict) as e:
        admin.orgs.create(made.name)
    assert e.value.status == 409
    # An ordinary organization's key may not make organizations.
    with pytest.raises(adapt.PermissionDenied) as e:
        adapt.Client(url=daemon.url, api_key=org.key).orgs.create(unique("nope"))
    assert (e.value.status, e.value.code) == (403, "permission_denied")


def test_fork_of_a_kept_checkpoint(adapt, client):
    sb = client.sandboxes.create(startup_class="durable")
    sb.files.write("/root/sdk.txt", b"from the sdk\n")
    taken = sb.create_checkpoint("sdk-base", keep=True)
    assert taken.keep is True and taken.platform == "ptrace" and taken.runsc_version, taken
    assert [c.name for c in sb.list_checkpoints()] == ["sdk-base"]
    fork = sb.fork_checkpoint("sdk-base", labels={"name": "sdk-fork"})
    try:
        assert fork.id != sb.id and fork.info.status == "running"
        assert fork.info.operation_id
        op = client.images.operation(fork.info.operation_id)
        assert op.kind == "fork" and op.sandbox_id == fork.id, op
        deadline = time.monotonic() + 30
        while True:  # the agent reconnects just after the restore
            try:
                assert fork.files.read_text("/root/sdk.txt") == "from the sdk\n"
                break
            except adapt.AdaptError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
    finally:
        fork.delete()
    sb.delete()
    assert [c.name for c in client.sandboxes.get(sb.id).list_checkpoints()] == ["sdk-base"]
    # The organization's listing, a page of one at a time: the deleted sandbox's kept one.
    listed = [c for c in client.sandboxes.checkpoints(kept=True, page_size=1) if c.sandbox_id == sb.id]
    assert [(c.name, c.sandbox_deleted) for c in listed] == [("sdk-base", True)], listed
    assert [c.name for c in client.sandboxes.checkpoints(sandbox_id=sb.id)] == ["sdk-base"]
    sb.delete_checkpoint("sdk-base")
    assert list(client.sandboxes.checkpoints(sandbox_id=sb.id)) == []


def test_an_app_rolled_back_through_its_operation(client, adapt):
    """rollback() with a server wait of 0 gets the operation and polls it to the app."""
    sb = client.sandboxes.create(startup_class="instant")
    sb.commands.run("mkdir -p /workspace/site && echo v1 > /workspace/site/index.html", check=True)
    serve = "exec python3 -m http.server 8000"
    first = client.apps.deploy(sb.id, serve, 8000, name="sdkroll", source_path="/workspace/site")
    try:
        sb.commands.run("echo v2 > /workspace/site/index.html", check=True)
        second = client.apps.deploy(sb.id, serve, 8000, name="sdkroll", source_path="/workspace/site")
        assert second.id == first.id and second.release_id != first.release_id, second
        back = client.apps.rollback(first.id, wait_seconds=0)
        assert isinstance(back, adapt.App) and back.release_id == first.release_id, back
        assert back.ready_replicas >= 1, back
        with pytest.raises(adapt.Conflict, match="has no release before"):
            client.apps.rollback(first.id)
        again = client.apps.rollback(first.id, second.release_id, wait_seconds=0)
        assert again.release_id == second.release_id, again
        with pytest.raises(adapt.InvalidArgument) as e:
            client.apps.rollback(first.id, wait_seconds=601)
        assert e.value.field == "waitSeconds"
    finally:
        client.apps.delete(first.id)
        sb.delete()
