#!/usr/bin/env bash
# build.sh [BUILD_DIR] [extra cmake args...]
# Configures and builds the repository into BUILD_DIR (default: build). JOBS overrides the
# parallelism (default 2, the size of our machines); TARGETS the targets (default: all, the
# programs; `test-binaries` is every test binary, `all test-binaries` both).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-build}
[ $# -gt 0 ] && shift
case $build_dir in
  /*) ;;
  *) build_dir=$repo/$build_dir ;;
esac

# ccache hashes the compile commands with paths relative to the checkout, so that a clone in
# another folder reuses what an earlier build compiled, for a build with ADAPT_UNITY_BUILD=OFF
# only: CMake's unity files include each source by its absolute path, which ccache does not
# rewrite, so a unity build (the default) in another folder compiles nearly everything again.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$repo}
cmake -S "$repo" -B "$build_dir" "$@"
read -r -a targets <<<"${TARGETS:-all}"
cmake --build "$build_dir" -j "${JOBS:-2}" --target "${targets[@]}"
