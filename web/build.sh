#!/usr/bin/env bash
# build.sh: bundles web/src into web/dist (committed; adaptd embeds it, see
# src/dashboard/embed_assets.cmake). Needs `npm ci` in web/ first (web/install.sh).
# build.sh --check: builds into a scratch directory and fails unless web/dist matches it, so
# that the committed bundle is always what its sources and package-lock.json make.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
out=dist
if [ "${1:-}" = "--check" ]; then
  out=$(mktemp -d /tmp/adapt-web.XXXXXX)
  trap 'rm -rf "$out"' EXIT
fi
esbuild=node_modules/.bin/esbuild
"$esbuild" src/main.jsx --bundle --minify --format=esm --target=es2020 --jsx=automatic \
  --jsx-import-source=preact --legal-comments=none --log-level=warning --outfile="$out/app.js"
"$esbuild" src/app.css --bundle --minify --log-level=warning --outfile="$out/app.css"
cp src/index.html "$out/index.html"
if [ "$out" != dist ]; then
  if ! diff -r dist "$out" >/dev/null; then
    echo "web/dist does not match web/src: run web/build.sh and commit web/dist" >&2
    diff -r dist "$out" | head -20 >&2 || true
    exit 1
  fi
  echo "web/dist matches web/src"
fi
