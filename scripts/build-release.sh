#!/usr/bin/env bash
# build-release.sh [BUILD_DIR]: the Release build (default BUILD_DIR: build) that setup.sh
# installs and that test.sh tests, end-to-end tests included. Both call this one line, so CI
# builds exactly what a new user builds: GCC 12's Release-only warnings (-O3, -Werror) once
# broke setup.sh while the RelWithDebInfo build CI ran was clean. JOBS and TARGETS as in
# build.sh (setup.sh builds the programs; test.sh then adds TARGETS=test-binaries).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exec "$repo/scripts/build.sh" "${1:-build}" -DCMAKE_BUILD_TYPE=Release
