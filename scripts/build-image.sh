#!/usr/bin/env bash
# build-image.sh IMAGES_DIR
# Builds adapt's default image "debian:12" (Debian 12 minbase + python3, plus a user `sandbox`
# with uid/gid 1000) into IMAGES_DIR/debian_12/{rootfs,config.json}.
# Idempotent: an image whose marker file exists is left alone. The image is built in a temporary
# directory beside it and renamed into place once complete, so a killed build leaves no
# half-made image behind (its leftovers are removed by the next run).
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 IMAGES_DIR" >&2
  exit 2
fi

images_dir=$1
name=debian_12
suite=bookworm
mirror=${ADAPT_DEBIAN_MIRROR:-http://deb.debian.org/debian}
marker=.adapt-image-complete
final=$images_dir/$name

if [ -f "$final/$marker" ]; then
  echo "build-image: $final already built"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "build-image: must run as root (mmdebstrap mode root)" >&2
  exit 1
fi

mkdir -p "$images_dir"
images_dir=$(cd "$images_dir" && pwd)
final=$images_dir/$name

# One build at a time per images dir.
exec 9>"$images_dir/.build-image.lock"
flock 9
if [ -f "$final/$marker" ]; then
  echo "build-image: $final already built"
  exit 0
fi

# Unmounts everything below $1 (deepest first); mmdebstrap mounts /proc, /sys and /dev into the
# chroot while it runs, and a killed build can leave them behind.
unmount_below() {
  local dir=$1
  awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done
}

# Removes a directory without ever crossing into another filesystem (a leftover bind mount of
# /dev must never be emptied).
remove_tree() {
  local dir=$1
  [ -e "$dir" ] || return 0
  unmount_below "$dir"
  rm -rf --one-file-system "$dir"
}

for stale in "$images_dir"/."$name".tmp.*; do
  [ -e "$stale" ] && remove_tree "$stale"
done
# An image directory without its marker is a leftover of an older, interrupted layout.
remove_tree "$final"

tmp=$(mktemp -d "$images_dir/.$name.tmp.XXXXXX")
log=$tmp.log
cleanup() {
  remove_tree "$tmp"
  rm -f "$log"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "build-image: building debian:12 into $final (mmdebstrap $suite, ~1 minute)"
start=$(date +%s)
if ! mmdebstrap --mode=root --variant=minbase --include=python3 \
    --customize-hook='chroot "$1" groupadd --gid 1000 sandbox' \
    --customize-hook='chroot "$1" useradd --uid 1000 --gid 1000 --create-home --shell /bin/bash sandbox' \
    "$suite" "$tmp/rootfs" "$mirror" >"$log" 2>&1; then
  echo "build-image: mmdebstrap failed; its last lines:" >&2
  tail -n 30 "$log" >&2
  exit 1
fi

cat >"$tmp/config.json" <<'JSON'
{"Entrypoint":null,"Cmd":["/bin/bash"],"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","LANG=C.UTF-8"],"WorkingDir":"","User":""}
JSON

# Sanity checks before the image is published.
test -x "$tmp/rootfs/bin/bash"
test -x "$tmp/rootfs/usr/bin/python3"
grep -q '^sandbox:x:1000:1000:' "$tmp/rootfs/etc/passwd"

chmod 0755 "$tmp"
date -u +%Y-%m-%dT%H:%M:%SZ >"$tmp/$marker"
sync -f "$tmp/$marker" 2>/dev/null || sync
mv -T "$tmp" "$final"
trap - EXIT
rm -f "$log"
echo "build-image: built $final in $(( $(date +%s) - start )) s"
