#!/usr/bin/env bash
# install.sh: installs the dashboard's npm packages at the versions package-lock.json pins
# (preact, esbuild, and playwright-core for the browser tests). ~/.npm caches them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
npm ci --prefer-offline --no-audit --no-fund
node_modules/.bin/esbuild --version
