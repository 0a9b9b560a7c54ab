#!/usr/bin/env bash
# unit-tests.sh BUILD_DIR: runs every unit-test binary that ctest registered in BUILD_DIR once,
# whole, instead of once per test as ctest does. ctest starts a process per test: 1,650 starts
# of a 300 MB sanitizer binary cost about 0.5 s each, 16 minutes of the ASan stage against
# about 3 for the tests themselves; with the Release build 346 s of CI against about 140. test.sh
# runs both builds' unit tests with it; running a binary's tests together also checks them for
# state one leaves behind for the next. Each binary has TIMEOUT seconds (default 1200).
# The last line has ctest's shape ("N% tests passed, F tests failed out of T"), so test.sh
# counts it as it counts ctest's; a binary's output is shown only when one of its tests failed.
set -uo pipefail

build_dir=${1:?usage: unit-tests.sh BUILD_DIR}
timeout_s=${TIMEOUT:-1200}

# The binaries in the order ctest lists their tests: each test's command is its binary
# followed by a --gtest_filter for that test.
mapfile -t binaries < <(ctest --test-dir "$build_dir" -L unit --show-only=json-v1 |
  python3 -c '
import json, sys
seen = []
for test in json.load(sys.stdin)["tests"]:
    binary = test["command"][0]
    if binary not in seen:
        seen.append(binary)
print("\n".join(seen))')
if [ ${#binaries[@]} -eq 0 ]; then
  echo "unit-tests: ctest in $build_dir lists no unit tests" >&2
  exit 1
fi

passed=0
failed=0
failed_binaries=()
for binary in "${binaries[@]}"; do
  name=$(basename "$binary")
  expected=$("$binary" --gtest_list_tests | grep -c '^  ')
  start=$(date +%s)
  output=$(cd "$(dirname "$binary")" && timeout -s ABRT -k 30 "$timeout_s" "$binary" 2>&1)
  rc=$?
  took=$(( $(date +%s) - start ))
  ran_passed=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) tests?\.$/\1/p' <<<"$output" | tail -n 1)
  ran_passed=${ran_passed:-0}
  if [ "$rc" -eq 0 ] && [ "$ran_passed" -eq "$expected" ]; then
    echo "unit-tests: $name: $expected passed (${took}s)"
    passed=$(( passed + expected ))
    continue
  fi
  # A failed test, a crash (a sanitizer report ends the process) or the timeout: the tests the
  # binary did not report passed count as failed, and its whole output is shown (after a
  # timeout, its last "[ RUN      ]" line names the test that did not end).
  echo "$output"
  echo "unit-tests: $name: exit $rc, $ran_passed of $expected passed (${took}s)"
  passed=$(( passed + ran_passed ))
  failed=$(( failed + expected - ran_passed ))
  failed_binaries+=("$name")
done

total=$(( passed + failed ))
echo
if [ "$failed" -gt 0 ]; then
  echo "unit-tests: failed in ${failed_binaries[*]}"
fi
echo "$(( total > 0 ? passed * 100 / total : 0 ))% tests passed, $failed tests failed out of $total"
[ "$failed" -eq 0 ]
