"""Organization secrets (/v1/secrets) and sandboxes that attach them (seed 001: "attached
secrets override image environment values and are supplied to startup before execution",
"environmentNames and environmentSources show the variable names and secret versions captured
at creation", the 32 KiB startup environment, values redacted from output)."""

import hashlib
import json
import os
import sqlite3
import time

from harness import poll_command, run_command, unique


def set_secret(client, name, value, expect=(200, 201)):
    status, body = client.api("POST", "/v1/secrets", {"name": name, "value": value})
    assert status in expect if isinstance(expect, tuple) else status == expect, (status, body)
    return body


def test_secret_versions_and_no_api_answer_holds_the_value(daemon, org):
    value1, value2 = unique("first-value"), unique("second-value")
    status, v1 = org.api("POST", "/v1/secrets", {"name": "API_TOKEN", "value": value1})
    assert status == 201, v1
    assert v1["name"] == "API_TOKEN" and v1["version"] == 1
    assert v1["createdAt"] and v1["updatedAt"]
    status, v2 = org.api("POST", "/v1/secrets", {"name": "API_TOKEN", "value": value2})
    assert status == 200, v2
    assert v2["version"] == 2 and v2["createdAt"] == v1["createdAt"]

    status, listed = org.api("GET", "/v1/secrets")
    assert status == 200
    assert [(s["name"], s["version"]) for s in listed["items"]] == [("API_TOKEN", 2)]
    status, got = org.api("GET", "/v1/secrets/API_TOKEN")
    assert status == 200 and got["version"] == 2
    for answer in (v1, v2, listed, got):
        text = repr(answer)
        assert value1 not in text and value2 not in text and "value" not in answer

    # Sealed at rest, and never written to adaptd's log.
    with open(os.path.join(daemon.state_dir, "adapt.db"), "rb") as f:
        db = f.read()
    assert value2.encode() not in db and value1.encode() not in db
    with open(daemon.log_path, "rb") as f:
        assert value2.encode() not in f.read()

    status, _ = org.api("DELETE", "/v1/secrets/API_TOKEN")
    assert status == 204
    status, body = org.api("GET", "/v1/secrets/API_TOKEN")
    assert status == 404 and body["error"]["code"] == "not_found"
    status, _ = org.api("DELETE", "/v1/secrets/API_TOKEN")
    assert status == 404


def test_bad_secret_requests_are_400_and_change_nothing(org):
    for body, field in [
        ({"name": "bad-name", "value": "x"}, "name"),
        ({"name": "9LIVES", "value": "x"}, "name"),
        ({"value": "x"}, "name"),
        ({"name": "OK"}, "value"),
        ({"name": "OK", "value": 7}, "value"),
        ({"name": "OK", "value": "x" * (32 * 1024 + 1)}, "value"),
        ({"name": "OK", "value": "x", "extra": True}, "extra"),
    ]:
        status, err = org.api("POST", "/v1/secrets", body)
        assert status == 400, (body, status, err)
        assert err["error"]["field"] == field, (body, err)
    status, err = org.api("POST", "/v1/secrets", raw=b"{not json")
    assert status == 400, err
    assert org.api("GET", "/v1/secrets")[1]["items"] == []


def test_sandbox_startup_gets_the_secret_redacted_with_its_captured_version(org):
    value = unique("tok-secret")
    set_secret(org, "DEPLOY_TOKEN", "old-" + value)
    set_secret(org, "DEPLOY_TOKEN", value)
    # The secret overrides a local env variable of the same name; PATH shows that secrets
    # override the image's environment too.
    set_secret(org, "PATH", "/usr/bin:/bin")
    # The value is checked by its hash, so that the sandbox's own argv does not hold it.
    digest = hashlib.sha256((value + "\n").encode()).hexdigest()
    script = ('test "$(echo "$DEPLOY_TOKEN" | sha256sum | cut -d" " -f1)" = %s && '
              'test "$PATH" = /usr/bin:/bin && echo "token=$DEPLOY_TOKEN"' % digest)
    sbx = org.run(["/bin/sh", "-c", script], env={"DEPLOY_TOKEN": "local", "MODE": "e2e"},
                  secrets=["DEPLOY_TOKEN", "PATH"])
    assert sbx["status"] == "completed", sbx
    assert sbx["startup"]["stdout"].startswith("token="), sbx["startup"]
    assert value not in sbx["startup"]["stdout"], "secret values are redacted from output"
    assert sorted(sbx["secrets"]) == ["DEPLOY_TOKEN", "PATH"]
    sources = {s["name"]: s for s in sbx["environmentSources"]}
    assert sources["DEPLOY_TOKEN"] == {"name": "DEPLOY_TOKEN", "source": "secret", "version": 2}
    assert sources["PATH"]["version"] == 1
    assert sources["MODE"]["source"] == "env"
    assert sorted(sbx["environmentNames"]) == ["DEPLOY_TOKEN", "MODE", "PATH"]

    # A later version does not change what the sandbox captured.
    set_secret(org, "DEPLOY_TOKEN", "newer-" + value)
    again = org.get(sbx["id"])
    assert {s["name"]: s for s in again["environmentSources"]}["DEPLOY_TOKEN"]["version"] == 2
    assert value not in repr(again)


def test_commands_in_a_sandbox_see_the_secret_redacted(org):
    value = unique("cmd-secret")
    set_secret(org, "DB_PASSWORD", value)
    sbx = org.create({"secrets": ["DB_PASSWORD"]})
    org.wait_for_status(sbx["id"], "running", 120)
    cmd = run_command(org, sbx["id"], argv=["/bin/sh", "-c", 'echo "pw=$DB_PASSWORD"; echo "${#DB_PASSWORD}"'],
                      waitSeconds=30)
    if cmd["status"] == "running":
        cmd = poll_command(org, sbx["id"], cmd["id"])
    assert cmd["exitCode"] == 0, cmd
    assert value not in cmd["stdout"], cmd
    assert cmd["stdout"].splitlines()[1] == str(len(value)), cmd


def test_unknown_or_other_organizations_secret_is_400_naming_the_field(daemon, org):
    set_secret(org, "SHARED_NAME", unique("mine"))
    other = daemon.new_org()
    status, err = org.api("POST", "/v1/sandboxes", {"secrets": ["SHARED_NAME", "NOT_THERE"]})
    assert status == 400 and err["error"]["field"] == "secrets[1]", err
    assert "NOT_THERE" in err["error"]["message"], err
    status, err = other.api("POST", "/v1/sandboxes", {"secrets": ["SHARED_NAME"]})
    assert status == 400 and err["error"]["field"] == "secrets[0]", err
    assert other.list_all() == []
    assert other.api("GET", "/v1/secrets/SHARED_NAME")[0] == 404
    assert other.api("DELETE", "/v1/secrets/SHARED_NAME")[0] == 404
    assert other.api("GET", "/v1/secrets")[1]["items"] == []
    assert org.api("GET", "/v1/secrets/SHARED_NAME")[0] == 200
    for body, field in [({"secrets": "X"}, "secrets"), ({"secrets": ["bad-name"]}, "secrets[0]"),
                        ({"secrets": ["SHARED_NAME", "SHARED_NAME"]}, "secrets[1]")]:
        status, err = org.api("POST", "/v1/sandboxes", body)
        assert status == 400 and err["error"]["field"] == field, (body, err)
    assert org.list_all() == []


def test_secrets_count_toward_the_32_kib_startup_environment(org):
    set_secret(org, "BIG_ONE", "s" * (20 * 1024))
    status, err = org.api("POST", "/v1/sandboxes", {"env": {"LOCAL": "e" * (13 * 1024)}, "secrets": ["BIG_ONE"],
                                                    "startup": {"mode": "command", "argv": ["true"]}})
    assert status == 400, err
    assert "32 KiB" in err["error"]["message"], err
    assert org.list_all() == []


def test_cli_secret_set_ls_rm(org):
    value = unique("cli-secret")
    done = org.cli("secret", "set", "CLI_TOKEN", input=value + "\n")
    assert done.returncode == 0, done.stderr
    assert "version 1" in done.stdout and value not in done.stdout
    # The stdin value lost its trailing newline: a sandbox sees exactly the token.
    sbx = org.run(["/bin/sh", "-c", 'test "$CLI_TOKEN" = "%s"' % value], secrets=["CLI_TOKEN"])
    assert sbx["status"] == "completed", sbx
    done = org.cli("secret", "set", "CLI_TOKEN", "--value", value + "-2")
    assert done.returncode == 0 and "version 2" in done.stdout, done.stderr
    listed = org.cli("secret", "ls")
    assert listed.returncode == 0 and "CLI_TOKEN" in listed.stdout and value not in listed.stdout
    as_json = org.cli("secret", "ls", "--json")
    assert as_json.returncode == 0 and '"version": 2' in as_json.stdout, as_json
    done = org.cli("secret", "rm", "CLI_TOKEN")
    assert done.returncode == 0, done.stderr
    done = org.cli("secret", "rm", "CLI_TOKEN")
    assert done.returncode != 0 and "not found" in done.stderr


def db_bytes(daemon):
    state = daemon.state_dir
    data = b""
    for name in os.listdir(state):
        if name.startswith("adapt.db"):
            with open(os.path.join(state, name), "rb") as f:
                data += f.read()
    return data


def host_cmdlines_holding(value):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if value.encode() in f.read():
                    found.append(pid)
        except OSError:
            pass
    return found


def test_secret_values_are_sealed_at_rest_kept_off_command_lines_and_dropped_on_delete(daemon, org):
    value = unique("rest-secret")
    local = unique("local-value")
    set_secret(org, "REST_TOKEN", value)
    sbx = org.create({"secrets": ["REST_TOKEN"], "env": {"LOCAL_VALUE": local}})
    sid = sbx["id"]
    org.wait_for_status(sid, "running", 120)
    # Neither the captured secret nor a local value sits in the store in plaintext.
    raw = db_bytes(daemon)
    assert value.encode() not in raw and local.encode() not in raw
    # The bundle holding the startup environment is the host's only: 0600 in a 0700 dir.
    bundle = os.path.join(daemon.state_dir, "sandboxes", sid)
    assert os.stat(bundle).st_mode & 0o777 == 0o700
    assert os.stat(os.path.join(bundle, "config.json")).st_mode & 0o777 == 0o600
    # Through runsc exec (the agent gone), a command's environment is on no host command line.
    pids = run_command(org, sid, command="for p in /proc/[0-9]*; do tr '\\000' ' ' < $p/cmdline "
                       "2>/dev/null | grep -q '^/.adapt/adapt-agent serve' && echo ${p#/proc/}; "
                       "done")["stdout"].split()
    assert len(pids) == 1, pids
    run_command(org, sid, command="kill -9 %s; sleep 1" % pids[0], waitSeconds=30)
    deadline = time.monotonic() + 20
    while True:
        cmd = run_command(org, sid, expect=202, argv=["sleep", "4"], env={"CMD_TOKEN": value},
                          waitSeconds=0)
        if cmd["servedBy"] == "runsc-exec":
            break
        poll_command(org, sid, cmd["id"])
        assert time.monotonic() < deadline, cmd
        time.sleep(0.2)
    seen = []
    for _ in range(15):
        seen += host_cmdlines_holding(value)
        time.sleep(0.1)
    done = poll_command(org, sid, cmd["id"])
    assert done["exitCode"] == 0, done
    assert seen == [], "the secret was on the command line of host pids %s" % seen
    org.delete(sid)
    assert not os.path.exists(bundle)
    raw = db_bytes(daemon)
    assert value.encode() not in raw and local.encode() not in raw
    # Deleted, the sandbox keeps the names it had (environmentSources), not the values.
    gone = org.get(sid)
    assert {s["name"] for s in gone["environmentSources"]} == {"REST_TOKEN", "LOCAL_VALUE"}, gone
    db = sqlite3.connect(os.path.join(daemon.state_dir, "adapt.db"))
    try:
        (env,) = db.execute("SELECT env FROM sandboxes WHERE id = ?", (sid,)).fetchone()
    finally:
        db.close()
    assert json.loads(env) == {"REST_TOKEN": "", "LOCAL_VALUE": ""}, env
