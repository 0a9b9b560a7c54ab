#!/usr/bin/env bash
# fuzz/run.sh [SECONDS] [BUILD_DIR]: builds the libFuzzer harnesses with clang (a separate
# small build, see CMakeLists.txt), replays every kept regression input, then fuzzes each
# target for SECONDS (default 20) from its seeds and regressions. A crash fails the run; its
# input is copied to fuzz/regressions/<target>/ so that, once fixed, it is replayed forever.
set -euo pipefail

fuzz_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
seconds=${1:-20}
build=${2:-$fuzz_dir/../build-fuzz}
targets=(http_request json_requests json_entry_points sandbox_wire untrusted_replies)

cmake -S "$fuzz_dir" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "${JOBS:-2}"

work=$(mktemp -d /tmp/adapt-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT
failed=0
for t in "${targets[@]}"; do
  bin=$build/fuzz_$t
  regressions=$fuzz_dir/regressions/$t
  mkdir -p "$regressions" "$work/$t/corpus" "$work/$t/artifacts"
  # Replay: every kept input must now pass.
  kept=$(find "$regressions" -type f ! -name '.*' | sort)
  if [ -n "$kept" ]; then
    if ! "$bin" -runs=0 $kept >"$work/$t/replay.log" 2>&1; then
      echo "fuzz: $t: a kept regression input fails again:"; tail -40 "$work/$t/replay.log"
      failed=1
      continue
    fi
    echo "fuzz: $t: $(echo "$kept" | wc -l) regression inputs replayed"
  fi
  cp "$fuzz_dir/seeds/$t"/* "$work/$t/corpus/"
  set +e
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/$t/artifacts/" "$work/$t/corpus" "$regressions" >"$work/$t/fuzz.log" 2>&1
  rc=$?
  set -e
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$t/fuzz.log" | grep -o '[0-9]*$' || echo '?')
  if [ $rc -ne 0 ]; then
    echo "fuzz: $t: FAILED after $seconds s (exit $rc):"
    tail -60 "$work/$t/fuzz.log"
    for a in "$work/$t/artifacts"/*; do
      [ -f "$a" ] || continue
      cp "$a" "$regressions/"
      echo "fuzz: $t: input kept as fuzz/regressions/$t/$(basename "$a")"
    done
    failed=1
  else
    echo "fuzz: $t: ok, $runs inputs in $seconds s"
  fi
done
exit $failed
