#!/usr/bin/env bash
# install.sh: installs the TypeScript SDK's build tools at the versions package-lock.json pins
# (typescript, @types/node; the SDK itself has no runtime dependencies) and compiles src/ into
# dist/ (ESM + .d.ts). ~/.npm caches the packages, so a rerun works without the registry.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
npm ci --prefer-offline --no-audit --no-fund
npx --no-install tsc -p tsconfig.json
test -f dist/index.js && test -f dist/index.d.ts
echo "sdk/typescript: built dist/ with $(npx --no-install tsc --version)"
