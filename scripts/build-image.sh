#!/usr/bin/env bash
# build-image.sh IMAGES_DIR [IMAGE...]
# Builds adapt's local images from Debian 12 packages with mmdebstrap (minbase, the everyday
# tools below, and a user `sandbox` with uid/gid 1000), each into IMAGES_DIR/<dir>/{rootfs,config.json}:
#   debian   "debian:12", the default image (python3, pip, venv, psql), also the `python` environment
#   node     "adapt-env/node:debian12"    (nodejs)      the `node` environment
#   gcc      "adapt-env/gcc:debian12"     (gcc, g++)    the `gcc` environment
#   rust     "adapt-env/rust:debian12"    (rustc, cargo) the `rust` environment
#   blender  "adapt-env/blender:debian12" (blender)     the `blender` environment (large)
# Every image also holds the tools an assistant's first commands reach for (EVERYDAY below).
# Without IMAGE, builds debian. Idempotent: an image whose marker file names the same package
# list is left alone; one built from another list is rebuilt.
# Each image is built in a temporary directory beside it and renamed into place once complete,
# so a killed build leaves no half-made image behind (its leftovers are removed by the next run).
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 IMAGES_DIR [debian|node|gcc|rust|blender...]" >&2
  exit 2
fi

images_dir=$1
shift
[ $# -gt 0 ] || set -- debian
suite=bookworm
mirror=${ADAPT_DEBIAN_MIRROR:-http://deb.debian.org/debian}
marker=.adapt-image-complete
# ps/free/top, HTTPS with the system's CA bundle, git, a pager, archives, file types, JSON.
EVERYDAY=procps,ca-certificates,curl,git,less,unzip,zip,xz-utils,bzip2,file,jq

for image in "$@"; do
  case $image in
    debian|node|gcc|rust|blender) ;;
    *) echo "build-image: unknown image '$image' (debian, node, gcc, rust, blender)" >&2; exit 2 ;;
  esac
done

if [ "$(id -u)" -ne 0 ]; then
  echo "build-image: must run as root (mmdebstrap mode root)" >&2
  exit 1
fi

mkdir -p "$images_dir"
images_dir=$(cd "$images_dir" && pwd)

# One build at a time per images dir.
exec 9>"$images_dir/.build-image.lock"
flock 9

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

# build_one NAME REFERENCE PACKAGES CHECK [HOOK]: builds one image, CHECK an executable it must
# have, HOOK a further mmdebstrap customize hook.
build_one() {
local name=$1 reference=$2 packages=$EVERYDAY,$3 check=$4 hook=${5:-true}
local final=$images_dir/$name
if grep -qxF "packages=$packages" "$final/$marker" 2>/dev/null; then
  echo "build-image: $final already built"
  return 0
fi
for stale in "$images_dir"/."$name".tmp.*; do
  [ -e "$stale" ] && remove_tree "$stale"
done
# An image directory without its marker is a leftover of an older, interrupted layout.
remove_tree "$final"

tmp=$(mktemp -d "$images_dir/.$name.tmp.XXXXXX")
log=$tmp.log
trap 'remove_tree "$tmp"; rm -f "$log"' EXIT
trap 'exit 130' INT TERM

echo "build-image: building $reference into $final (mmdebstrap $suite: $packages)"
local start=$(date +%s)
if ! mmdebstrap --mode=root --variant=minbase --include="$packages" \
    --customize-hook='chroot "$1" groupadd --gid 1000 sandbox' \
    --customize-hook='chroot "$1" useradd --uid 1000 --gid 1000 --create-home --shell /bin/bash sandbox' \
    --customize-hook="$hook" \
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
test -x "$tmp/rootfs$check"
for tool in ps curl git less unzip; do test -x "$tmp/rootfs/usr/bin/$tool"; done
grep -q '^sandbox:x:1000:1000:' "$tmp/rootfs/etc/passwd"

chmod 0755 "$tmp"
{ date -u +%Y-%m-%dT%H:%M:%SZ; echo "packages=$packages"; } >"$tmp/$marker"
sync -f "$tmp/$marker" 2>/dev/null || sync
mv -T "$tmp" "$final"
trap - EXIT
rm -f "$log"
echo "build-image: built $reference in $(( $(date +%s) - start )) s, $(du -sm "$final" | cut -f1) MiB"
}

for image in "$@"; do
  case $image in
    # Debian marks its Python externally managed (PEP 668): in a sandbox, `pip install` into
    # the system is what people expect, as in Docker's python images. psql (postgresql-client)
    # is how people reach the organization's database (DATABASE_URL, the PG* variables).
    debian) build_one debian_12 debian:12 python3,python3-pip,python3-venv,postgresql-client /usr/bin/pip3 \
      'printf "[global]\nbreak-system-packages = true\n" >"$1/etc/pip.conf" && test -x "$1/usr/bin/psql"' ;;
    node) build_one adapt-env_node_debian12 adapt-env/node:debian12 nodejs /usr/bin/node ;;
    gcc) build_one adapt-env_gcc_debian12 adapt-env/gcc:debian12 gcc,g++,libc6-dev /usr/bin/g++ ;;
    rust) build_one adapt-env_rust_debian12 adapt-env/rust:debian12 rustc,cargo /usr/bin/rustc ;;
    blender) build_one adapt-env_blender_debian12 adapt-env/blender:debian12 blender /usr/bin/blender ;;
  esac
done
