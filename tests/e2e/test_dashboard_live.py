"""What the dashboard follows live (issue 21), in Debian's chromium driven by playwright-core
(tests/e2e/dashboard/live.mjs): a sandbox's startup output streams on its page and its first
line is there before the startup ends; the apps page follows `/v1/events` (`event: app`) as
another client scales and deletes an app, without a reload."""
import os
import subprocess

import harness
from test_dashboard import NODE, WEB, browser_env

SCRIPT = os.path.join(os.path.dirname(__file__), "dashboard", "live.mjs")
# Each line waits for a file that the browser makes through the page's "Run a command".
STARTUP = ("while [ ! -e /tmp/go-first ]; do sleep 0.2; done; echo first-line; "
           "while [ ! -e /tmp/go-second ]; do sleep 0.2; done; echo second-line; echo to-stderr >&2")


def test_startup_output_and_apps_follow_live_in_a_browser(daemon, tmp_path):
    assert os.path.isdir(os.path.join(WEB, "node_modules", "playwright-core")), "run web/install.sh first"
    org = daemon.new_org()
    name = harness.unique("streams")
    startup = org.create({"labels": {"name": name},
                          "startup": {"mode": "command", "argv": ["/bin/sh", "-c", STARTUP]}})
    org.wait_for_status(startup["id"], "running", 90)
    source = org.create({})
    sid = org.wait_for_status(source["id"], "running", 90)["id"]
    status, cmd = org.api("POST", "/v1/sandboxes/%s/commands" % sid,
                          {"command": "mkdir -p /workspace/site && echo hi > /workspace/site/index.html",
                           "timeoutSeconds": 60})
    assert status == 200 and cmd["exitCode"] == 0, cmd
    status, app = org.api("POST", "/v1/apps", {"sandboxId": sid, "name": "live-web", "sourcePath": "/workspace/site",
                                               "startCommand": "exec python3 -m http.server 8000", "port": 8000})
    assert status == 201 and app["readyReplicas"] == 1, app
    artifacts = os.environ.get("ADAPT_E2E_ARTIFACTS") or str(tmp_path / "screenshots")
    os.makedirs(artifacts, exist_ok=True)
    env = browser_env(ADAPT_URL=daemon.url, WEB_DIR=WEB, ARTIFACTS=artifacts, API_KEY=org.key,
               STARTUP_ID=startup["id"], STARTUP_NAME=name, APP_NAME=app["name"], APP_ID=app["id"])
    run = subprocess.run([NODE, SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    print(run.stdout)
    assert run.returncode == 0 and "ALL STEPS PASSED" in run.stdout, run.stdout + run.stderr
    # What the browser saw, as the API records it.
    done = org.get(startup["id"])
    assert done["status"] == "completed" and done["startup"]["stdout"] == "first-line\nsecond-line\n", done
    assert org.api("GET", "/v1/apps/" + app["id"])[0] == 404
    for shot in ("startup-streaming", "apps-live"):
        assert os.path.getsize(os.path.join(artifacts, shot + ".png")) > 1000
