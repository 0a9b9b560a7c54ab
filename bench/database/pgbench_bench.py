#!/usr/bin/env python3
"""bench/database: what the way from a sandbox to its organization's PostgreSQL database costs
(issue 19). Prints figures, never passes or fails.

pgbench (the host's /usr/lib/postgresql/15/bin/pgbench, from postgresql-15) runs the same
one-statement script (`SELECT 1;`) for --seconds each, as the organization's role into its
database, in one run:
- adapt: inside a sandbox created with "database": true, through DATABASE_URL's host and port
  (gVisor's netstack, the veth, adaptd's database proxy, the server's Unix socket). The image
  has psql but not pgbench (Debian puts it in the server package), so the host's binary is
  uploaded into the sandbox: both sides run the same binary against the same libpq (bookworm's).
- peer: on the host, straight to the server's Unix socket (<state>/postgres/run), the fastest
  way there is; adaptd's server has no TCP listener to compare with.
Figures: connection set-up (pgbench -C: a new connection, SCRAM-SHA-256 included, for each
statement: the average connection time and the transactions/s) and a simple query round trip
on one open connection (latency average and transactions/s). Needs root, a built tree and the
default image. Writes bench/results/database.json.
"""

import argparse
import glob
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))
sys.path.insert(0, os.path.dirname(HERE))

import figures  # noqa: E402
import harness  # noqa: E402

PGBENCH = "/usr/lib/postgresql/15/bin/pgbench"
SCRIPT = "SELECT 1;\n"


def command(c, sid, argv, wait=600):
    status, cmd = c.api("POST", "/v1/sandboxes/%s/commands" % sid,
                        {"argv": argv, "timeoutSeconds": wait, "waitSeconds": 60})
    deadline = time.monotonic() + wait
    while status == 202 or (status == 200 and cmd.get("status") == "running"):
        assert time.monotonic() < deadline, cmd
        time.sleep(1)
        status, cmd = c.api("GET", "/v1/sandboxes/%s/commands/%s" % (sid, cmd["id"]))
    assert status == 200 and cmd.get("exitCode") == 0, cmd
    return cmd["stdout"]


def upload(c, sid, path, data):
    status, _, body, _ = c.request("PUT", "/v1/sandboxes/%s/files?path=%s" % (sid, path), raw=data,
                                   headers={"Content-Type": "application/octet-stream"}, timeout=600)
    assert status == 200, (status, body[:200])


def parse(out):
    """pgbench's summary: tps, latency average (ms) and, with -C, average connection time (ms)."""
    def number(pattern):
        m = re.search(pattern, out)
        return float(m.group(1)) if m else None
    tps = number(r"tps = ([0-9.]+)")
    assert tps, out
    return {"tps": tps, "latency_ms": number(r"latency average = ([0-9.]+) ms"),
            "connect_ms": number(r"average connection time = ([0-9.]+) ms")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=10, help="each pgbench run")
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "results", "database.json"))
    args = ap.parse_args()
    if not os.access(PGBENCH, os.X_OK):
        raise SystemExit("%s is missing: apt-get install postgresql-15 (scripts/install-deps.sh)" % PGBENCH)
    rows = []
    d = harness.Daemon()
    d.start()
    try:
        c = d.new_org()
        sbx = c.create({"database": True})
        sid = c.wait_for_status(sbx["id"], "running", timeout=180)["id"]
        harness.wait_for_agent(c, sid)
        with open(PGBENCH, "rb") as f:
            upload(c, sid, "/tmp/pgbench", f.read())
        upload(c, sid, "/tmp/select1.sql", SCRIPT.encode())
        command(c, sid, ["chmod", "755", "/tmp/pgbench"])
        # The role and password, reversed so that output redaction keeps out of the way.
        user, password = (v[::-1] for v in command(c, sid, [
            "python3", "-c", "import os; print(os.environ['PGUSER'][::-1], os.environ['PGPASSWORD'][::-1])"]).split())

        [socket_path] = [p for p in glob.glob(os.path.join(d.state_dir, "postgres", "run", ".s.PGSQL.*"))
                         if not p.endswith(".lock")]
        host_env = dict(os.environ, PGHOST=os.path.dirname(socket_path),
                        PGPORT=socket_path.rsplit(".", 1)[1], PGUSER=user, PGDATABASE=user,
                        PGPASSWORD=password)
        script = os.path.join(d.base, "select1.sql")
        with open(script, "w") as f:
            f.write(SCRIPT)

        def in_sandbox(*flags):
            return parse(command(c, sid, ["/tmp/pgbench", "-n", "-f", "/tmp/select1.sql",
                                          "-T", str(args.seconds)] + list(flags)))

        def on_host(*flags):
            r = subprocess.run([PGBENCH, "-n", "-f", script, "-T", str(args.seconds)] + list(flags),
                               env=host_env, capture_output=True, text=True, timeout=args.seconds + 120)
            assert r.returncode == 0, (r.stdout, r.stderr)
            return parse(r.stdout)

        peer = "the host to the server's Unix socket"
        fresh_adapt, fresh_host = in_sandbox("-C"), on_host("-C")
        rows.append(figures.figure("connection set-up (pgbench -C, average connection time)", "ms",
                                   fresh_adapt["connect_ms"], peer, fresh_host["connect_ms"], "lower"))
        rows.append(figures.figure("new connection + SELECT 1 (pgbench -C)", "tx/s",
                                   fresh_adapt["tps"], peer, fresh_host["tps"], "higher"))
        open_adapt, open_host = in_sandbox(), on_host()
        rows.append(figures.figure("SELECT 1 round trip on one connection (latency average)", "ms",
                                   open_adapt["latency_ms"], peer, open_host["latency_ms"], "lower"))
        rows.append(figures.figure("SELECT 1 on one connection", "tx/s",
                                   open_adapt["tps"], peer, open_host["tps"], "higher"))
    finally:
        d.close()
    figures.print_table(rows)
    figures.write_report(args.out, "database", rows, {"seconds": args.seconds, "script": SCRIPT.strip()})


if __name__ == "__main__":
    main()
