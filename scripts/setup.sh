#!/usr/bin/env bash
# setup.sh: one command, as root on a fresh Debian 12, from a checkout to a running adaptd.
# Installs the packages, builds adapt (Release: scripts/build-release.sh, the build test.sh
# tests), installs adaptd and adapt into PREFIX/bin (adapt-shim, adapt-pause and adapt-agent
# into PREFIX/libexec/adapt), builds the default and environment images and starts adaptd:
#   - where systemd is the init system, as the unit adaptd.service (scripts/adaptd-unit.sh):
#     started at boot after the network, restarted on failure; log: `journalctl -u adaptd`.
#     Rerunning setup.sh restarts it on the new binaries; its sandboxes keep running.
#   - elsewhere, in the background (log: ADAPT_LOG, pid in STATE_DIR/adaptd.pid), unless an
#     adaptd already answers on the listen address; nothing restarts it after a reboot.
# At every start adaptd reconciles its sandboxes (README, Crash safety): after a reboot the
# ones that were running are recorded as failed, hibernated ones stay startable.
#
# Environment overrides (adaptd's defaults when unset; setup.sh passes them as flags):
#   ADAPT_PREFIX=/usr/local           where bin/ and libexec/adapt/ go
#   ADAPT_STATE_DIR=/var/lib/adapt    --state-dir (database, admin.key, sandboxes)
#   ADAPT_IMAGES_DIR=STATE_DIR/images --images-dir; images already built there are kept
#   ADAPT_LISTEN=127.0.0.1:8080       --listen (the REST API)
#   ADAPT_INGRESS_HTTP, ADAPT_INGRESS_HTTPS   --ingress-http/--ingress-https (endpoints)
#   ADAPT_STORAGE_LISTEN              --storage-listen (the S3-compatible storage gateway)
#   ADAPT_DATABASE_LISTEN             --database-listen (the sandboxes' PostgreSQL proxy)
#   ADAPT_NETWORK_NAME                --network-name (nftables table and netns prefix)
#   ADAPT_NETWORK_POOL, ADAPT_NETWORK_POOL6   --network-pool/--network-pool6 (addresses)
#   ADAPT_DNS                         --dns
#   ADAPT_SERVICE=auto                systemd, background, or auto (systemd when it is init)
#   ADAPT_LOG=/var/log/adaptd.log     adaptd's log when started in the background
#   ADAPT_SKIP_BLENDER=1              skips the (large) blender environment image
# scripts/quickstart-check.sh runs this script with scratch values for all of them (CI).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

prefix=${ADAPT_PREFIX:-/usr/local}
state_dir=${ADAPT_STATE_DIR:-/var/lib/adapt}
images_dir=${ADAPT_IMAGES_DIR:-$state_dir/images}
listen=${ADAPT_LISTEN:-127.0.0.1:8080}
log=${ADAPT_LOG:-/var/log/adaptd.log}
service=${ADAPT_SERVICE:-auto}
bin_dir=$prefix/bin
libexec_dir=$prefix/libexec/adapt
unit=/etc/systemd/system/adaptd.service

case $service in
  auto) if [ -d /run/systemd/system ]; then service=systemd; else service=background; fi ;;
  systemd | background) ;;
  *) echo "setup: ADAPT_SERVICE must be systemd, background or auto, not '$service'" >&2; exit 2 ;;
esac

if [ "$(id -u)" -ne 0 ]; then
  echo "setup: run as root (adaptd drives gVisor, mounts and cgroups)" >&2
  exit 1
fi

# adaptd's flags: the ones always given, then each override that is set.
adaptd_args=(--listen "$listen" --state-dir "$state_dir" --images-dir "$images_dir")
add_flag() {
  local flag=$1 value=${!2:-}
  [ -z "$value" ] || adaptd_args+=("$flag" "$value")
}
add_flag --ingress-http ADAPT_INGRESS_HTTP
add_flag --ingress-https ADAPT_INGRESS_HTTPS
add_flag --storage-listen ADAPT_STORAGE_LISTEN
add_flag --database-listen ADAPT_DATABASE_LISTEN
add_flag --network-name ADAPT_NETWORK_NAME
add_flag --network-pool ADAPT_NETWORK_POOL
add_flag --network-pool6 ADAPT_NETWORK_POOL6
add_flag --dns ADAPT_DNS

scripts/install-deps.sh
scripts/build-release.sh build

# Copy then rename, so a running adaptd keeps its (unlinked) binary and never sees a half-written one.
install_binary() {
  local src=$1 dst
  dst=$2/$(basename "$1")
  mkdir -p "$2"
  install -m 0755 "$src" "$dst.new"
  mv -f "$dst.new" "$dst"
}
install_binary build/bin/adaptd "$bin_dir"
install_binary build/bin/adapt "$bin_dir"
# adaptd finds its helpers in ../libexec/adapt.
install_binary build/bin/adapt-shim "$libexec_dir"
install_binary build/bin/adapt-pause "$libexec_dir"
install_binary build/bin/adapt-agent "$libexec_dir"
install_binary build/bin/adapt-statx.so "$libexec_dir"
echo "setup: installed $bin_dir/adaptd, $bin_dir/adapt and their helpers in $libexec_dir"

mkdir -p "$state_dir"
chmod 0700 "$state_dir"
# The default image and every environment's (blender is large: ADAPT_SKIP_BLENDER=1 skips it).
envs="debian node gcc rust"
[ "${ADAPT_SKIP_BLENDER:-0}" = 1 ] || envs="$envs blender"
scripts/build-image.sh "$images_dir" $envs

healthy() { curl -fsS --max-time 2 "http://$listen/healthz" >/dev/null 2>&1; }

# wait_healthy WHAT: up to 60 s for /healthz; WHAT says where to look when it never answers.
wait_healthy() {
  for _ in $(seq 1 120); do
    healthy && return 0
    if [ -n "${pid:-}" ] && ! kill -0 "$pid" 2>/dev/null; then
      echo "setup: adaptd exited during start-up; $1" >&2
      return 1
    fi
    sleep 0.5
  done
  echo "setup: adaptd did not answer http://$listen/healthz within 60 s; $1" >&2
  return 1
}

start_with_systemd() {
  scripts/adaptd-unit.sh "$bin_dir/adaptd" "${adaptd_args[@]}" >"$unit.new"
  mv -f "$unit.new" "$unit"
  systemctl daemon-reload
  if healthy && ! systemctl is-active --quiet adaptd; then
    # Another adaptd (an earlier background start) holds the port: the unit would fail to bind.
    systemctl enable adaptd
    echo "setup: an adaptd not run by systemd answers on http://$listen; installed and enabled" \
      "$unit for the next boot (stop that adaptd, then: systemctl start adaptd)"
    return 0
  fi
  systemctl enable adaptd
  # restart: a running adaptd picks up the new binaries; its sandboxes are adopted (KillMode=process).
  systemctl restart adaptd
  if ! wait_healthy "see: journalctl -u adaptd"; then
    journalctl -u adaptd -n 30 --no-pager >&2 || true
    exit 1
  fi
  echo "setup: adaptd runs as the systemd unit adaptd ($unit), logging to the journal" \
    "(journalctl -u adaptd)"
}

start_in_background() {
  if healthy; then
    echo "setup: an adaptd already answers on http://$listen; leaving it running"
    return 0
  fi
  mkdir -p "$(dirname "$log")"
  nohup "$bin_dir/adaptd" "${adaptd_args[@]}" >>"$log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$state_dir/adaptd.pid"
  if ! wait_healthy "the end of $log:"; then
    tail -n 30 "$log" >&2
    exit 1
  fi
  echo "setup: started adaptd (pid $pid, in $state_dir/adaptd.pid), logging to $log;" \
    "it is not restarted after a reboot (no systemd): rerun setup.sh then"
}

if [ "$service" = systemd ]; then start_with_systemd; else start_in_background; fi

# A prefix outside the usual PATH needs it in the user's.
path_line=
case ":$PATH:" in *":$bin_dir:"*) ;; *) path_line="PATH=$bin_dir:\$PATH " ;; esac

cat <<MSG

adaptd listens on http://$listen
admin API key:   $state_dir/admin.key (mode 0600)

Use the CLI (README.md, "The two commands"):
  export ${path_line}ADAPT_URL=http://$listen ADAPT_API_KEY=\$(cat $state_dir/admin.key)
  SANDBOX_ID=\$(adapt sandbox create --quiet --label name=research-worker)
  adapt sandbox exec "\$SANDBOX_ID" -- python3 -c 'print("hello")'
  adapt sandbox delete "\$SANDBOX_ID"
MSG
