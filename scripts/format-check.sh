#!/usr/bin/env bash
# format-check.sh: checks that every C and C++ source under src/, bench/ and fuzz/ is formatted
# as the root .clang-format says (Debian 12's clang-format, 14; CLANG_FORMAT names another).
# Prints each file that is not and exits 1; `clang-format -i FILE...` formats them.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
format=${CLANG_FORMAT:-clang-format}
if ! command -v "$format" >/dev/null 2>&1; then
  echo "format-check: $format not found (scripts/install-deps.sh installs it)" >&2
  exit 2
fi

# fuzz/seeds and fuzz/regressions hold fuzzer inputs, not sources.
mapfile -t files < <(find src bench fuzz \( -path fuzz/seeds -o -path fuzz/regressions \) -prune \
                       -o -type f \( -name '*.h' -o -name '*.cc' -o -name '*.c' \) -print | sort)
# One clang-format for all of them (--dry-run: nothing is written); each difference is reported
# as "FILE:LINE:COL: error: code should be clang-formatted".
report=$(printf '%s\0' "${files[@]}" | xargs -0 "$format" --style=file --dry-run --Werror 2>&1) \
  && rc=0 || rc=$?
if [ "$rc" -ne 0 ]; then
  mapfile -t unformatted < <(sed -n -E 's/^(.*):[0-9]+:[0-9]+: error: code should be clang-formatted.*/\1/p' \
                               <<<"$report" | sort -u)
  if [ ${#unformatted[@]} -eq 0 ]; then
    # Not a formatting difference (an unreadable file, a bad .clang-format): say what it was.
    echo "format-check: $format failed:"
    echo "$report" | head -20
    exit 1
  fi
  echo "format-check: ${#unformatted[@]} of ${#files[@]} files differ from .clang-format ($("$format" --version | grep -o 'version [0-9.]*')):"
  printf '  %s\n' "${unformatted[@]}"
  echo "format-check: 'clang-format -i FILE...' formats them"
  exit 1
fi
echo "format-check: all ${#files[@]} files formatted"
