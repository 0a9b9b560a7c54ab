#!/usr/bin/env bash
# test.sh: everything CI checks, from a fresh Debian 12 machine (as root).
#   1. packages (scripts/install-deps.sh), then the formatting of every source
#      (scripts/format-check.sh: clang-format and the root .clang-format)
#   2. build/ (Release: scripts/build-release.sh, exactly what setup.sh builds and installs),
#      then its test binaries in the same tree (target test-binaries, which setup.sh leaves out)
#   3. the default image and the node/gcc/rust/blender environment images into build/images
#      (cached between runs), beside the Release build
#   4. build-asan/ (ASan + UBSan), then its unit tests (scripts/unit-tests.sh: each binary
#      once, whole), and a bounded libFuzzer run
#      (fuzz/run.sh), all in the background at a low CPU priority from here to the end
#   5. build/'s unit tests (scripts/unit-tests.sh, in the background at nice 10 from here to
#      the end) and its runtime tests (ctest -L runtime),
#      then the quick start (scripts/quickstart-check.sh: setup.sh
#      into a scratch prefix, then README's quick-start block against that adaptd), then the
#      end-to-end tests (tests/e2e, pytest) against the real adaptd and adapt binaries, then
#      the reliability suites (tests/reliability)
# Every stage runs even when an earlier, unrelated one failed; the exit status is non-zero if
# anything failed, and the last line is the summary.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

logs=$(mktemp -d /tmp/adapt-test.XXXXXX)
failed_stages=()
stage_lines=()
total_passed=0
total_failed=0

note() { echo; echo "==> $*"; }

# run_stage NAME DIR CMD...: runs CMD in DIR with its output shown and kept in $logs/NAME.log.
run_stage() {
  local name=$1 dir=$2
  shift 2
  local start rc
  start=$(date +%s)
  note "$name: $*"
  (cd "$dir" && "$@") 2>&1 | tee "$logs/$name.log"
  rc=${PIPESTATUS[0]}
  record_stage "$name" "$rc" "$(( $(date +%s) - start ))s"
  return "$rc"
}

# record_stage NAME RC TOOK: adds the stage's summary line ("ok (TOOK)" or FAILED).
record_stage() {
  if [ "$2" -eq 0 ]; then
    stage_lines+=("$(printf '  %-12s ok (%s)' "$1" "$3")")
  else
    stage_lines+=("$(printf '  %-12s FAILED, exit %s (%s)' "$1" "$2" "$3")")
    failed_stages+=("$1")
  fi
}

skip_stage() {
  stage_lines+=("$(printf '  %-12s skipped (%s)' "$1" "$2")")
  failed_stages+=("$1")
}

# count_ctest NAME: adds the counts from ctest's closing line to the totals.
count_ctest() {
  local line
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$logs/$1.log" | tail -n 1)
  if [ -n "$line" ]; then
    local failed total
    failed=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
    total=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"$line")
    total_passed=$(( total_passed + total - failed ))
    total_failed=$(( total_failed + failed ))
  fi
}

# count_pytest NAME: adds the counts from pytest's closing line to the totals.
count_pytest() {
  local line n
  line=$(grep -E '[0-9]+ (passed|failed|errors?)' "$logs/$1.log" | tail -n 1)
  [ -n "$line" ] || return 0
  n=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+' || true)
  total_passed=$(( total_passed + ${n:-0} ))
  n=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+' || true)
  total_failed=$(( total_failed + ${n:-0} ))
  n=$(grep -oE '[0-9]+ errors?' <<<"$line" | grep -oE '[0-9]+' || true)
  total_failed=$(( total_failed + ${n:-0} ))
}

# The Debian interpreter has python3-pytest; a python3 earlier on PATH (pyenv) may not.
pick_python() {
  local p
  for p in "${PYTHON:-}" /usr/bin/python3 python3; do
    [ -n "$p" ] || continue
    if "$p" -c 'import pytest' >/dev/null 2>&1; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

# start_beside NAME DIR CMD...: runs CMD in DIR in the background, its output in $logs/NAME.log,
# its exit status and seconds in $logs/NAME.rc and NAME.took, its command line in NAME.cmd;
# beside_pid is its pid.
start_beside() {
  local name=$1 dir=$2
  shift 2
  echo "$*" >"$logs/$name.cmd"
  ( start=$(date +%s)
    cd "$dir" && "$@" >"$logs/$name.log" 2>&1
    echo $? >"$logs/$name.rc"
    echo $(( $(date +%s) - start )) >"$logs/$name.took" ) &
  beside_pid=$!
}

# finish_beside NAME WHAT: shows a finished background stage's log, adds its stage line.
finish_beside() {
  local name=$1 rc took
  note "$name: $(cat "$logs/$name.cmd")"
  cat "$logs/$name.log"
  rc=$(cat "$logs/$name.rc" 2>/dev/null || echo 1)
  took=$(cat "$logs/$name.took" 2>/dev/null || echo "?")
  record_stage "$name" "$rc" "${took}s, $2"
}

started=$(date +%s)

run_stage deps . scripts/install-deps.sh || true
run_stage format . scripts/format-check.sh || true

build_ok=0
image_ok=0
# The images are mostly downloads and dpkg: they build in the background while the compiler
# uses the cores, and their stage is reported (with its log) once the Release build is done.
image_started=$(date +%s)
(scripts/build-image.sh build/images debian node gcc rust blender >"$logs/image.log" 2>&1
 echo $? >"$logs/image.rc") &
image_pid=$!
# setup.sh's own build line: the Release build a new user gets is the one every stage below
# tests (a Release-only -Werror once broke setup.sh while CI built RelWithDebInfo). No -g:
# it costs about 40% more compile time and a far slower link here.
run_stage build . scripts/build-release.sh build && build_ok=1
# The ASan build and its unit tests are pure computation; the stages after the Release build
# (the e2e tests above all) mostly wait on sandboxes. So build-asan/ is compiled, then its unit
# tests run, in the background at a low CPU priority (nice 10) beside the unit tests, the quick start,
# the e2e tests and the reliability suites: they take the cores those leave idle and yield them
# whenever a sandbox needs them. On a fresh machine (no warm ccache, as CI) the ASan build alone
# took about 13 minutes in the foreground. Line tables only (-g1): sanitizer reports keep
# file:line, and the compile is faster than -g. Compiled with clang (installed for the fuzzers):
# it compiled the sanitized sources in 42% less time than GCC 12 (10 unity batches, 63 s against
# 109 s), and a second compiler's warnings (-Werror) check the code the Release build's GCC
# compiles.
asan_build=(nice -n 10 env "TARGETS=all test-binaries" scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DADAPT_SANITIZE=ON
  "-DCMAKE_CXX_FLAGS_DEBUG=-g1" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
start_beside build-asan . "${asan_build[@]}"
asan_build_pid=$beside_pid
( wait_for_file() { while [ ! -f "$1" ]; do sleep 5; done; }
  wait_for_file "$logs/build-asan.took"
  if [ "$(cat "$logs/build-asan.rc")" -eq 0 ]; then
    # Each test binary once, whole (scripts/unit-tests.sh): ctest's process per test cost
    # about 0.5 s a start with these binaries, 16 minutes for 1,650 tests.
    echo "nice -n 10 scripts/unit-tests.sh build-asan" >"$logs/unit-asan.cmd"
    start=$(date +%s)
    nice -n 10 scripts/unit-tests.sh build-asan >"$logs/unit-asan.log" 2>&1
    echo $? >"$logs/unit-asan.rc"
    echo $(( $(date +%s) - start )) >"$logs/unit-asan.took"
  fi ) &
unit_asan_pid=$!
wait "$image_pid"
note "image: scripts/build-image.sh build/images debian node gcc rust blender (in the background since $(date -d @"$image_started" +%T))"
cat "$logs/image.log"
image_rc=$(cat "$logs/image.rc" 2>/dev/null || echo 1)
image_took=$(( $(date +%s) - image_started ))
[ "$image_rc" -eq 0 ] && image_ok=1
record_stage image "$image_rc" "${image_took}s, beside the Release build"

# libFuzzer harnesses (fuzz/, clang: a small build of their own): kept regression inputs
# replayed, then 10 s per target; in the background as the ASan build and its tests are.
start_beside fuzz . nice -n 10 fuzz/run.sh 10
fuzz_pid=$beside_pid

# The test binaries, in setup.sh's tree and configuration (its build leaves them out).
tests_ok=0
if [ "$build_ok" -eq 1 ]; then
  TARGETS=test-binaries run_stage build-tests . scripts/build-release.sh build && tests_ok=1
else
  skip_stage build-tests "build failed"
fi

# The unit tests as the ASan build's run: each binary once, whole (ctest's process per test
# took 346 s of CI's critical path against about 140 s), so both builds check the tests
# together. In the background at nice 10 from here, as the ASan build's are (they already run
# beside the e2e tests, so the two kinds of test share nothing that one would break for the
# other): their ~200 s left the path to the e2e stage, which waits far more than it computes.
# Then the runtime tests against real runsc, a process per test.
unit_pid=
if [ "$tests_ok" -eq 1 ]; then
  start_beside unit . nice -n 10 scripts/unit-tests.sh build
  unit_pid=$beside_pid
  run_stage runtime build ctest -L runtime --output-on-failure --timeout 600
  count_ctest runtime
else
  skip_stage unit "build-tests failed"
  skip_stage runtime "build-tests failed"
fi

# README's first command and quick start, as a new user runs them (scripts/quickstart-check.sh):
# setup.sh into a scratch prefix and state directory (its build is the one above, its images
# are build/images), then the README's own quick-start block against that adaptd; about a
# minute. Its last line counts its checks like pytest's.
if [ "$build_ok" -eq 1 ] && [ "$image_ok" -eq 1 ]; then
  ADAPT_QUICKSTART_IMAGES_DIR=$repo/build/images \
    run_stage quickstart . timeout -s TERM -k 30 900 scripts/quickstart-check.sh
  count_pytest quickstart
else
  skip_stage quickstart "build or image failed"
fi

# The MCP tests' npm clients, pinned by tests/mcp/package-lock.json; ~/.npm caches them, so
# a rerun without the registry still installs.
run_stage npm . tests/mcp/install.sh || true
# The TypeScript SDK (sdk/typescript): tsc and @types/node pinned by its package-lock.json,
# then dist/ built; its e2e tests (tests/e2e/test_sdk_typescript.py) run dist/ with node.
run_stage npm-sdk . sdk/typescript/install.sh || true
# The dashboard (web/): preact, esbuild and playwright-core pinned by its package-lock.json;
# then the committed bundle (web/dist, what adaptd embeds) must be what web/src builds to, and
# the frontend's own unit tests (web/test, node's test runner) pass.
run_stage npm-web . web/install.sh && run_stage web-bundle . web/build.sh --check || true
run_stage web-unit . node --test web/test/ || true


# The end-to-end tests run as three pytest processes side by side (ADAPT_E2E_JOBS=1: one; any
# other value: three).
# Most of their time is spent waiting (sandbox teardowns, restarts, expiries, CLI start-up), not
# computing: on a 2-core machine two processes took about 1,270 s each; three, split by the
# files' measured times, took 655, 668 and (badly balanced) 1,545 s, every test passing, the
# cores 20 to 80% busy after the first minute: balanced, about 960 s each. Files that share a
# host-global resource stay in one process, in order: the network stand-in of test_network.py
# (`standin`: a netns, the 198.51.100.0/24 route) is used by the first six files of e2e_shard0
# (standin_netns also holds a lock, so a file that forgets this waits rather than breaks
# another shard's route). The other files only balance the shards (the logs' --durations tell
# how to rebalance); any file not named here (a new one) runs in e2e-2. Each shard's adaptds
# take their own address pools (ADAPT_E2E_SHARD and ADAPT_E2E_SHARDS, tests/e2e/harness.py),
# and each shard has its own log, stage line and counts.
e2e_shard0=(tests/e2e/test_network.py tests/e2e/test_network_hostnames.py tests/e2e/test_network_ipv6.py
  tests/e2e/test_warm_pool.py tests/e2e/test_checkpoint_network.py
  tests/e2e/test_checkpoint_fork.py tests/e2e/test_account.py tests/e2e/test_apps_supervision.py
  tests/e2e/test_auth.py tests/e2e/test_automation_reattach.py tests/e2e/test_automations.py
  tests/e2e/test_checkpoint_encryption.py tests/e2e/test_commands.py tests/e2e/test_dashboard.py
  tests/e2e/test_dashboard_keys.py tests/e2e/test_dashboard_live.py tests/e2e/test_database.py
  tests/e2e/test_database_external.py tests/e2e/test_database_lifecycle.py
  tests/e2e/test_database_slots.py tests/e2e/test_event_retention.py tests/e2e/test_events.py
  tests/e2e/test_helpers_layout.py tests/e2e/test_idempotency_creates.py
  tests/e2e/test_json_limits.py tests/e2e/test_limits.py tests/e2e/test_list_contract.py
  tests/e2e/test_mcp_cors.py tests/e2e/test_mcp_hostile.py tests/e2e/test_mcp_oauth.py
  tests/e2e/test_network_pool_full.py tests/e2e/test_object_artifacts.py tests/e2e/test_output.py
  tests/e2e/test_s3_upload_list.py tests/e2e/test_sdk_images.py tests/e2e/test_secrets.py
  tests/e2e/test_sites.py tests/e2e/test_sites_limits.py tests/e2e/test_storage.py
  tests/e2e/test_users.py)
e2e_shard1=(tests/e2e/test_apps.py tests/e2e/test_apps_drain.py tests/e2e/test_apps_readiness.py
  tests/e2e/test_automation_controllers.py tests/e2e/test_cli.py
  tests/e2e/test_connection_limits.py tests/e2e/test_dashboard_sessions.py
  tests/e2e/test_database_cancel.py tests/e2e/test_enforcement.py tests/e2e/test_fairness.py
  tests/e2e/test_hostile_bytes.py tests/e2e/test_idempotency.py tests/e2e/test_image_policy.py
  tests/e2e/test_images.py tests/e2e/test_images_import.py tests/e2e/test_images_slow_registry.py
  tests/e2e/test_lifecycle.py tests/e2e/test_metering.py tests/e2e/test_metering_events.py
  tests/e2e/test_named_checkpoints.py tests/e2e/test_objects.py tests/e2e/test_openapi.py
  tests/e2e/test_openapi_hostile.py tests/e2e/test_operations.py tests/e2e/test_python.py
  tests/e2e/test_recovery.py tests/e2e/test_redaction_edges.py tests/e2e/test_s3_hardening.py
  tests/e2e/test_sandbox_wait_and_gpus.py tests/e2e/test_sdk_python.py
  tests/e2e/test_sdk_typescript.py tests/e2e/test_setup_script.py
  tests/e2e/test_stop_start_cycles.py tests/e2e/test_storage_restore.py)

if [ "$build_ok" -eq 1 ] && [ "$image_ok" -eq 1 ]; then
  if python=$(pick_python); then
    # SIGTERM at the limit lets the e2e fixtures stop their adaptd and delete their sandboxes.
    # --durations: the log names the slowest tests, so that the stage's time can be kept down.
    pytest_e2e=(timeout -s TERM -k 60 2400 "$python" -m pytest -q -p no:cacheprovider --durations=30)
    if [ "${ADAPT_E2E_JOBS:-3}" -ge 2 ]; then
      ignored=()
      for f in "${e2e_shard0[@]}" "${e2e_shard1[@]}"; do ignored+=("--ignore=$f"); done
      note "e2e: three shards side by side (logs shown when all are done)"
      e2e_env=(env "ADAPT_BUILD_DIR=$repo/build" "ADAPT_IMAGES_DIR=$repo/build/images" ADAPT_E2E_SHARDS=3)
      start_beside e2e-0 . "${e2e_env[@]}" ADAPT_E2E_SHARD=0 "${pytest_e2e[@]}" "${e2e_shard0[@]}"
      shard0_pid=$beside_pid
      start_beside e2e-1 . "${e2e_env[@]}" ADAPT_E2E_SHARD=1 "${pytest_e2e[@]}" "${e2e_shard1[@]}"
      shard1_pid=$beside_pid
      start_beside e2e-2 . "${e2e_env[@]}" ADAPT_E2E_SHARD=2 "${pytest_e2e[@]}" "${ignored[@]}" tests/e2e
      wait "$shard0_pid" "$shard1_pid" "$beside_pid"
      for shard in e2e-0 e2e-1 e2e-2; do
        finish_beside "$shard" "beside the other e2e shards"
        count_pytest "$shard"
      done
    else
      ADAPT_BUILD_DIR=$repo/build ADAPT_IMAGES_DIR=$repo/build/images \
        run_stage e2e . "${pytest_e2e[@]}" tests/e2e
      count_pytest e2e
    fi
  else
    skip_stage e2e "no python3 with pytest"
  fi
else
  skip_stage e2e "build or image failed"
fi

# The reliability suites (tests/reliability: crash points, leaks, abuse, isolation, load),
# after e2e; ~5 minutes on 2 cores. ADAPT_LEAK_CYCLES=1000 is the long leak run (README).
if [ "$build_ok" -eq 1 ] && [ "$image_ok" -eq 1 ]; then
  if python=$(pick_python); then
    ADAPT_BUILD_DIR=$repo/build ADAPT_IMAGES_DIR=$repo/build/images \
      run_stage reliability . timeout -s TERM -k 60 900 "$python" -m pytest -q -p no:cacheprovider \
      --durations=20 tests/reliability
    count_pytest reliability
  else
    skip_stage reliability "no python3 with pytest"
  fi
else
  skip_stage reliability "build or image failed"
fi

if [ -n "$unit_pid" ]; then
  wait "$unit_pid"
  finish_beside unit "in the background since the test binaries were built"
  count_ctest unit
fi
wait "$asan_build_pid"
finish_beside build-asan "in the background since the Release build"
wait "$unit_asan_pid"
if [ -f "$logs/unit-asan.cmd" ]; then
  finish_beside unit-asan "in the background after the ASan build"
  count_ctest unit-asan
else
  skip_stage unit-asan "build-asan failed"
fi
wait "$fuzz_pid"
finish_beside fuzz "in the background since the Release build"

echo
echo "==> stages ($(( $(date +%s) - started )) s in all)"
printf '%s\n' "${stage_lines[@]}"
if [ ${#failed_stages[@]} -gt 0 ]; then
  # The logs above may be cut by whoever shows only the output's end: the failing tests' names
  # and first error lines come again here, just before the summary.
  for stage in "${failed_stages[@]}"; do
    [ -f "$logs/$stage.log" ] || continue
    grep -E '^(FAILED|ERROR) |^[0-9]+/[0-9]+ Test +#[0-9]+: .*(Failed|Timeout|Exception)|^E  +[A-Za-z]*(Error|Exception)|^\[  FAILED  \] [A-Za-z]|^unit-tests: .*: exit' \
      "$logs/$stage.log" | cut -c1-300 | tail -n 12 | sed "s/^/  $stage: /"
  done
  echo "failed stages: ${failed_stages[*]} (logs in $logs)"
  echo "summary: $total_passed passed, $(( total_failed > 0 ? total_failed : 1 )) failed"
  exit 1
fi
rm -rf "$logs"
echo "summary: $total_passed passed, $total_failed failed"
