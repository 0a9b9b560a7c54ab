#!/usr/bin/env bash
# adaptd-unit.sh ADAPTD [ARG...]: prints the systemd unit (adaptd.service) that runs
# `ADAPTD ARG...`. setup.sh installs it as /etc/systemd/system/adaptd.service where systemd is
# the init system; tests/e2e/test_setup_script.py checks it with `systemd-analyze verify`.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 ADAPTD [ARG...]" >&2
  exit 2
fi

# systemd's command-line syntax: % and $ are specifier and variable characters (doubled to be
# literal); a word with a space is quoted. Quotes and backslashes would need escaping that no
# path or address of ours has: refused rather than half-supported.
exec_start=
for word in "$@"; do
  case $word in
    *[\"\'\\]* | *$'\n'*)
      echo "adaptd-unit: cannot put '$word' in ExecStart (quote, backslash or newline)" >&2
      exit 2 ;;
  esac
  word=${word//%/%%}
  word=${word//\$/\$\$}
  case $word in
    '' | *[[:space:]]*) word="\"$word\"" ;;
  esac
  exec_start+="${exec_start:+ }$word"
done

cat <<UNIT
[Unit]
Description=adaptd, the adapt sandbox server
# Sandboxes' networks and the storage gateway need the host's network up.
Wants=network-online.target
After=network-online.target nftables.service

[Service]
Type=simple
ExecStart=$exec_start
Restart=on-failure
RestartSec=2
# Only adaptd is stopped: each sandbox's monitor (adapt-shim) and runsc outlive it on purpose,
# and the next start adopts them (README, Crash safety). The default, control-group, would kill
# every sandbox at each restart or upgrade. The sandboxes themselves run in the cgroups
# /adapt/<id> that runsc makes at the hierarchy's root, outside this unit's.
KillMode=process
# adaptd waits up to 10 s for open response streams when it stops.
TimeoutStopSec=60
# Each sandbox holds pipes, sockets and a disk image open, and runsc starts many threads.
LimitNOFILE=1048576
LimitNPROC=infinity
TasksMax=infinity
LimitCORE=infinity
# Under memory pressure the kernel should pick a sandbox (each has its cgroup's limit), not
# the server that records its end.
OOMScoreAdjust=-500

[Install]
WantedBy=multi-user.target
UNIT
