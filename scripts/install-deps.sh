#!/usr/bin/env bash
# Installs every Debian package adapt needs to build and test. Idempotent: when all of them are
# already installed it changes nothing and does not touch the network.
set -euo pipefail

packages=(
  # build
  build-essential cmake g++ pkg-config ccache lld
  libboost-dev libboost-system-dev nlohmann-json3-dev libspdlog-dev
  libsqlitecpp-dev libsqlite3-dev libcli11-dev libssl-dev libcurl4-openssl-dev
  libgtest-dev googletest
  libarchive-dev
  # run sandboxes and build images
  runsc mmdebstrap e2fsprogs iproute2 util-linux procps ca-certificates curl
  # cron schedules' IANA time zones (/usr/share/zoneinfo, read by core/time_zone.cc)
  tzdata
  # end-to-end tests
  python3 python3-pytest python3-yaml
  # the dashboard's browser tests (tests/e2e/test_dashboard.py: playwright-core drives it)
  chromium
  # the Python SDK (sdk/python): installed with pip in its tests, checked by mypy --strict
  python3-pip python3-mypy
  # per-account PostgreSQL (src/database): the server adaptd supervises, its client tools, libpq
  postgresql-15 postgresql-client-15 libpq-dev
  # sandbox networks (src/net): libnftables, and nft/ip for tests and inspection; conntrack
  # forgets a deleted sandbox's tracked flows before its address is used again
  libnftables-dev nftables conntrack
  # images: layer unpacking (gzip, zstd), and a real registry plus a pusher for the image tests
  libarchive-dev libzstd-dev docker-registry skopeo busybox-static python3-cryptography zstd
  # libFuzzer harnesses (fuzz/): clang with its fuzzer and sanitizer runtimes
  clang libclang-rt-14-dev
  # scripts/format-check.sh (the root .clang-format)
  clang-format
  # object storage: real S3 clients against the storage gateway (tests/e2e/test_objects.py)
  awscli rclone
  # security profiles: the test's Debian-format repository (dpkg-deb, dpkg-scanpackages)
  dpkg-dev
  # bench/image_pull's peer (skopeo copy + umoci unpack)
  umoci
)

# The MCP e2e tests' npm clients (tests/mcp; Node 22 itself comes from npm) need node and npm.
# A machine whose nodejs already bundles npm (NodeSource's) conflicts with Debian's npm package,
# so Debian's pair is only asked for when either command is missing.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages (${missing[*]}); run as root" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends --no-upgrade \
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
  "${missing[@]}" >/dev/null
echo "install-deps: done"
