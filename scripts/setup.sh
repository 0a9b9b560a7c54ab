#!/usr/bin/env bash
# setup.sh: one command, as root on a fresh Debian 12, from a checkout to a running adaptd.
# Installs the packages, builds adapt (Release), installs adaptd and adapt into /usr/local/bin
# (adapt-shim, adapt-pause and adapt-agent into /usr/local/libexec/adapt),
# builds the default and environment images and starts adaptd on 127.0.0.1:8080 unless one already answers there.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

listen=127.0.0.1:8080
state_dir=/var/lib/adapt
images_dir=$state_dir/images
log=/var/log/adaptd.log
bin_dir=/usr/local/bin
libexec_dir=/usr/local/libexec/adapt

if [ "$(id -u)" -ne 0 ]; then
  echo "setup: run as root (adaptd drives gVisor, mounts and cgroups)" >&2
  exit 1
fi

scripts/install-deps.sh
scripts/build.sh build -DCMAKE_BUILD_TYPE=Release

# Copy then rename, so a running adaptd keeps its (unlinked) binary and never sees a half-written one.
install_binary() {
  local src=$1 dst=$2/$(basename "$1")
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

if healthy; then
  echo "setup: an adaptd already answers on http://$listen; leaving it running"
else
  mkdir -p "$(dirname "$log")"
  nohup "$bin_dir/adaptd" --listen "$listen" --state-dir "$state_dir" --images-dir "$images_dir" \
    >>"$log" 2>&1 </dev/null &
  pid=$!
  for _ in $(seq 1 120); do
    healthy && break
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "setup: adaptd exited during start-up; the end of $log:" >&2
      tail -n 30 "$log" >&2
      exit 1
    fi
    sleep 0.5
  done
  if ! healthy; then
    echo "setup: adaptd (pid $pid) did not answer http://$listen/healthz within 60 s; see $log" >&2
    exit 1
  fi
  echo "setup: started adaptd (pid $pid), logging to $log"
fi

cat <<MSG

adaptd listens on http://$listen
admin API key:   $state_dir/admin.key (mode 0600)

Use the CLI:
  export ADAPT_URL=http://$listen
  export ADAPT_API_KEY=\$(cat $state_dir/admin.key)
  adapt sandbox create --cpu 2 --memory 4096 --disk 8192 --ttl 3600 --label name=research-worker
  adapt sandbox list --limit 50
  adapt sandbox get <sandbox-id>
  adapt sandbox delete <sandbox-id>
MSG
