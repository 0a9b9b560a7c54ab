"""A sandbox's life: startup modes (seed 001, "Startup and sandbox lifetime"), deletion."""

import json
import os
import time


def test_command_that_exits_nonzero_fails_with_its_exit_code_and_output(admin):
    sbx = admin.run(["sh", "-c", "echo hello; echo oops >&2; exit 3"])
    assert sbx["status"] == "failed", sbx
    assert sbx["terminationReason"] == "failed"
    st = sbx["startup"]
    assert st["exitCode"] == 3
    assert st["stdout"] == "hello\n"
    assert st["stderr"] == "oops\n"
    assert st["truncated"] is False
    assert st["startedAt"] and st["finishedAt"]


def test_command_that_exits_zero_completes(admin):
    sbx = admin.run(["sh", "-c", "echo fine"])
    assert sbx["status"] == "completed", sbx
    assert sbx["terminationReason"] == "completed"
    assert sbx["startup"]["exitCode"] == 0
    assert sbx["startup"]["stdout"] == "fine\n"
    assert sbx["startup"]["signal"] is None


def test_command_killed_by_a_signal_fails_and_names_the_signal(admin):
    sbx = admin.run(["sh", "-c", "kill -KILL $$"])
    assert sbx["status"] == "failed", sbx
    assert sbx["startup"]["signal"] in ("SIGKILL", "KILL", 9), sbx["startup"]


def test_command_that_cannot_be_launched_fails_with_an_error(admin):
    sbx = admin.run(["/no/such/program"])
    assert sbx["status"] == "failed", sbx
    assert sbx["terminationReason"] == "failed"
    err = sbx["startup"]["error"] or sbx.get("error") or ""
    assert err, "a launch error must say why: %s" % json.dumps(sbx)


def test_interactive_sandbox_runs_until_deleted_and_its_record_stays_readable(admin):
    sbx = admin.create({"labels": {"name": "interactive-e2e"}})
    assert sbx["startup"] is None
    assert sbx["status"] in ("provisioning", "running")
    sid = sbx["id"]
    admin.wait_for_status(sid, "running", 60)
    time.sleep(3)
    assert admin.get(sid)["status"] == "running", "an interactive sandbox must stay running"
    assert sid in [s["id"] for s in admin.list_all()]

    status, _ = admin.api("DELETE", "/v1/sandboxes/" + sid)
    assert status in (202, 204)
    if status == 202:
        assert admin.get(sid)["status"] in ("deleting", "deleted")
    gone = admin.wait_for_status(sid, "deleted", 60)
    assert gone["deletedAt"]
    assert sid not in [s["id"] for s in admin.list_all()], "deleted sandboxes leave lists"

    status, _ = admin.api("DELETE", "/v1/sandboxes/" + sid)
    assert status == 204, "repeating a completed deletion is safe"
    assert admin.get(sid)["status"] == "deleted"


def test_a_deleted_running_sandbox_ends_cancelled_and_an_ended_ones_result_survives_deletion(admin):
    # Seed 001: "terminationReason distinguishes completed, failed, cancelled and expired and
    # survives deletion"; "Final startup output remains in the sandbox record after deletion";
    # "completed, failed, and deleting sandboxes remain visible until deletion finishes".
    running = admin.create({"startup": {"mode": "command", "argv": ["sleep", "600"]}})
    admin.wait_for_status(running["id"], "running", 60)
    done = admin.run(["sh", "-c", "echo kept; exit 0"])
    failed = admin.run(["sh", "-c", "echo gone >&2; exit 4"])
    listed = [s["id"] for s in admin.list_all()]
    assert done["id"] in listed and failed["id"] in listed, "ended sandboxes stay listed"
    for sid in (running["id"], done["id"], failed["id"]):
        status, _ = admin.api("DELETE", "/v1/sandboxes/" + sid)
        assert status in (202, 204), status
        admin.wait_for_status(sid, "deleted", 60)
    assert admin.get(running["id"])["terminationReason"] == "cancelled"
    kept = admin.get(done["id"])
    assert kept["terminationReason"] == "completed", kept
    assert kept["startup"]["exitCode"] == 0 and kept["startup"]["stdout"] == "kept\n", kept
    lost = admin.get(failed["id"])
    assert lost["terminationReason"] == "failed", lost
    assert lost["startup"]["exitCode"] == 4 and lost["startup"]["stderr"] == "gone\n", lost
    listed = [s["id"] for s in admin.list_all()]
    assert not {running["id"], done["id"], failed["id"]} & set(listed), "deleted ones leave lists"


def test_an_ended_sandboxs_disk_stays_until_its_original_expiry_then_is_cleaned_up(daemon, admin):
    # Seed 001: "Completion releases compute ... Local disks remain until the original expiry
    # or explicit deletion"; "Expired sandboxes are cleaned up automatically".
    ttl = 8
    sbx = admin.run(["sh", "-c", "echo done"], ttlSeconds=ttl)
    sid = sbx["id"]
    assert sbx["status"] == "completed", sbx
    disk = os.path.join(daemon.state_dir, "sandboxes", sid, "disk.img")
    assert os.path.exists(disk), "the completed sandbox's disk is kept until its expiry"
    assert sid in [s["id"] for s in admin.list_all()]
    ended = admin.wait_for_status(sid, "deleted", ttl + 60)
    assert not os.path.exists(disk), "the expired sandbox's disk is deleted"
    assert ended["terminationReason"] == "completed", ended
    assert ended["startup"]["stdout"] == "done\n", ended
    assert sid not in [s["id"] for s in admin.list_all()]


def test_unknown_sandbox_is_404(admin):
    status, body = admin.api("GET", "/v1/sandboxes/sbx_doesnotexist")
    assert status == 404
    assert body["error"]["code"] == "not_found"
    status, _ = admin.api("DELETE", "/v1/sandboxes/sbx_doesnotexist")
    assert status == 404


# --- image mode: ENTRYPOINT followed by CMD ---------------------------------------------------

def test_image_mode_runs_the_default_images_cmd(admin):
    # debian:12's CMD is /bin/bash; with no terminal and no input it exits at once, status 0.
    sbx = admin.create({"startup": {"mode": "image"}})
    end = admin.wait_end(sbx["id"])
    assert end["status"] == "completed", end
    assert end["startup"]["exitCode"] == 0


def test_image_mode_entrypoint_override_with_args(admin):
    sbx = admin.run(startup={"mode": "image", "entrypoint": ["/bin/echo", "a"], "args": ["b"]})
    assert sbx["status"] == "completed", sbx
    assert sbx["startup"]["stdout"] == "a b\n"


def test_image_mode_args_replace_cmd_and_become_argv_when_entrypoint_is_null(admin):
    sbx = admin.run(startup={"mode": "image", "args": ["/bin/sh", "-c", "echo hi"]})
    assert sbx["status"] == "completed", sbx
    assert sbx["startup"]["stdout"] == "hi\n"


def test_image_mode_args_are_not_appended_to_the_images_cmd(admin):
    # args replace CMD (/bin/bash): the program is "-c", which cannot be launched. Were they
    # appended to CMD, bash would print "hi".
    sbx = admin.run(startup={"mode": "image", "args": ["-c", "echo hi"]})
    assert sbx["status"] == "failed", sbx
    assert sbx["startup"]["stdout"] == ""


def test_image_mode_entrypoint_override_clears_the_inherited_cmd(admin):
    sbx = admin.run(startup={"mode": "image", "entrypoint": ["/bin/echo", "x"]})
    assert sbx["status"] == "completed", sbx
    assert sbx["startup"]["stdout"] == "x\n", "CMD /bin/bash must not be appended"


def test_image_mode_empty_entrypoint_clears_it_and_args_run(admin):
    sbx = admin.run(startup={"mode": "image", "entrypoint": [], "args": ["/bin/echo", "z"]})
    assert sbx["status"] == "completed", sbx
    assert sbx["startup"]["stdout"] == "z\n"


def _assert_nothing_to_run_is_a_clear_error(admin, startup):
    status, body = admin.api("POST", "/v1/sandboxes", {"startup": startup})
    if status == 201:
        admin.daemon.created.append((admin, body["id"]))
        end = admin.wait_end(body["id"])
        assert end["status"] == "failed", end
        err = end["startup"]["error"] or end.get("error") or ""
        assert "nothing to run" in err.lower() or "empty" in err.lower() or "no command" in err.lower(), end
        assert end["startup"]["exitCode"] is None
    else:
        assert status == 400, (status, body)
        assert body["error"]["code"] == "invalid_argument"
        assert body["error"]["message"]


def test_image_mode_empty_entrypoint_and_args_is_a_clear_error(admin):
    _assert_nothing_to_run_is_a_clear_error(admin, {"mode": "image", "entrypoint": [], "args": []})


def test_image_mode_empty_args_with_null_entrypoint_is_a_clear_error(admin):
    _assert_nothing_to_run_is_a_clear_error(admin, {"mode": "image", "args": []})


def test_command_mode_empty_argv_is_a_clear_error(admin):
    _assert_nothing_to_run_is_a_clear_error(admin, {"mode": "command", "argv": []})


# --- command mode details ---------------------------------------------------------------------

def test_command_mode_has_no_implicit_shell_expansion(admin):
    sbx = admin.run(["/bin/echo", "$HOME", "*", "a;b"])
    assert sbx["status"] == "completed", sbx
    assert sbx["startup"]["stdout"] == "$HOME * a;b\n"


def test_command_mode_argv0_is_found_on_the_images_path(admin):
    sbx = admin.run(["echo", "found"])
    assert sbx["status"] == "completed", sbx
    assert sbx["startup"]["stdout"] == "found\n"


def test_default_cwd_is_root_and_startup_cwd_overrides_it(admin):
    sbx = admin.run(["/bin/pwd"])
    assert sbx["startup"]["stdout"] == "/\n", sbx
    sbx = admin.run(["/bin/pwd"], startup={"cwd": "/tmp"})
    assert sbx["status"] == "completed", sbx
    assert sbx["startup"]["stdout"] == "/tmp\n"


def test_default_user_is_the_images_and_startup_user_overrides_it(admin):
    sbx = admin.run(["id", "-u"])
    assert sbx["startup"]["stdout"] == "0\n", sbx
    sbx = admin.run(["sh", "-c", "id -u; id -g"], startup={"user": "1000:1000"})
    assert sbx["status"] == "completed", sbx
    assert sbx["startup"]["stdout"] == "1000\n1000\n"


def test_image_environment_is_inherited(admin):
    sbx = admin.run(["sh", "-c", 'test "$LANG" = C.UTF-8 && echo inherited'])
    assert sbx["status"] == "completed", sbx
    assert sbx["startup"]["stdout"] == "inherited\n"


def test_env_reaches_the_command_and_only_its_names_appear_in_the_sandbox(admin):
    value = "v4lue-of-greeting-81234"
    # The values are split in the script ("a""b" is "ab" to sh) so that argv does not hold them.
    sbx = admin.run(
        ["sh", "-c", 'test "$GREETING" = "v4lue-of-""greeting-81234" && test "$LANG" = "from-""env" && echo match'],
        env={"GREETING": value, "LANG": "from-env"},
    )
    assert sbx["status"] == "completed", sbx
    assert sbx["startup"]["stdout"] == "match\n", "env must override the image's environment"
    assert sorted(sbx["environmentNames"]) == ["GREETING", "LANG"]
    everything = json.dumps(sbx) + json.dumps(admin.get(sbx["id"])) + json.dumps(admin.list_all())
    assert value not in everything
    assert "from-env" not in everything


def test_env_values_are_redacted_from_startup_output(admin):
    value = "s3cr3t-t0ken-value-5521"
    sbx = admin.run(["sh", "-c", 'echo "token=$TOKEN"; echo "$TOKEN" >&2'], env={"TOKEN": value})
    assert sbx["status"] == "completed", sbx
    out, err = sbx["startup"]["stdout"], sbx["startup"]["stderr"]
    assert value not in out and value not in err
    assert out.startswith("token=") and len(out) > len("token=\n"), "the rest of the line stays"
    assert err.strip(), "a redaction marker stands in for the value"
